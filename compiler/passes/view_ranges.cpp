// Contiguity of Concat / Split / Slice parts (see view_ranges.h).
#include "view_ranges.h"

#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"

namespace kiln::passes {
namespace {

// Byte offsets of consecutive parts along `axis` of `whole`, if each part is contiguous:
// every dim of `whole` before the axis is 1 and no part is empty.
std::optional<std::vector<uint64_t>> partOffsets(const ir::TensorType& whole,
                                                 const std::vector<const ir::Value*>& parts,
                                                 int64_t axis) {
  for (int64_t d = 0; d < axis; ++d)
    if (whole.shape[size_t(d)] != 1) return std::nullopt;
  std::vector<uint64_t> offsets;
  uint64_t offset = 0;
  for (const ir::Value* part : parts) {
    if (!part || part->type().numElements() == 0) return std::nullopt;
    offsets.push_back(offset);
    offset += part->type().byteSize();
  }
  if (offset != whole.byteSize()) return std::nullopt;
  return offsets;
}

}  // namespace

std::optional<std::vector<uint64_t>> concatOperandOffsets(const ir::Op& concat) {
  const ir::TensorType& whole = concat.result()->type();
  int64_t axis = ir::normalizeAxis(concat.attrs().getInt("axis"), int64_t(whole.shape.size()));
  std::vector<const ir::Value*> parts(concat.operands().begin(), concat.operands().end());
  return partOffsets(whole, parts, axis);
}

std::optional<std::vector<uint64_t>> splitResultOffsets(const ir::Op& split) {
  const ir::TensorType& whole = split.operand(0)->type();
  int64_t axis = ir::normalizeAxis(split.attrs().getInt("axis", 0), int64_t(whole.shape.size()));
  std::vector<const ir::Value*> parts;
  for (size_t i = 0; i < split.numResults(); ++i) parts.push_back(split.result(i));
  return partOffsets(whole, parts, axis);
}

std::optional<uint64_t> sliceResultOffset(const ir::Op& slice) {
  for (size_t i = 1; i < slice.numOperands(); ++i)
    if (slice.operand(i) && !slice.operand(i)->isConstant()) return std::nullopt;
  auto ints = [&](size_t i) {
    const ir::Value* v = slice.optionalOperand(i);
    return v ? ir::constantInts(v) : std::vector<int64_t>();
  };
  const ir::Shape& in = slice.operand(0)->shape();
  ir::SliceGeometry g = ir::resolveSlice(in, ints(1), ints(2), ints(3), ints(4));
  if (ir::numElements(g.output) == 0) return std::nullopt;
  // k: the last dim the result does not cover fully; dims after it are full, dims before
  // it must have one element.
  size_t rank = in.size();
  size_t k = 0;
  for (size_t d = 0; d < rank; ++d)
    if (g.output[d] != in[d] || (g.output[d] > 1 && g.steps[d] != 1)) k = d;
  for (size_t d = 0; d < rank; ++d) {
    if (g.output[d] > 1 && g.steps[d] != 1) return std::nullopt;
    if (d < k && g.output[d] != 1) return std::nullopt;
    if (d > k && g.output[d] != in[d]) return std::nullopt;
  }
  uint64_t offset = 0, stride = 1;
  for (size_t d = rank; d-- > 0;) {
    offset += uint64_t(g.starts[d]) * stride;
    stride *= uint64_t(in[d]);
  }
  return offset * ir::dtypeSize(slice.operand(0)->dtype());
}

}  // namespace kiln::passes
