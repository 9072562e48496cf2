// ONNX ops that kiln imports as a few IR ops rather than one: DepthToSpace and SpaceToDepth
// (Reshape -> Transpose -> Reshape, as the ONNX specification defines them), Trilu (Where with
// a constant triangle mask), OneHot (Equal against constant class numbers), and TopK, whose K
// must be known when compiling. The helpers build the intermediate IR ops with their types
// from the IR's rules; the last op takes the ONNX output's name.
#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/support/diagnostics.h"
#include "onnx_translators.h"

namespace kiln::import::detail {

using ir::DType;
using ir::TensorType;

ir::Value* buildOp(OnnxTranslation& t, const OnnxNode& node, ir::OpKind kind,
                   std::vector<ir::Value*> operands, ir::AttributeMap attrs,
                   const std::string& name) {
  ir::RuleResult inferred;
  try {
    inferred = ir::inferResultTypes(ir::RuleInput{kind, operands, attrs, 1});
  } catch (const CompileError& error) {
    t.fail(node, error.what());
  }
  KILN_ASSERT(inferred.types.at(0), "decomposition op without a static type");
  ir::Op* op = t.graph.createOp(kind, std::move(operands), {*inferred.types[0]}, std::move(attrs),
                                ir::SourceInfo{node.name, node.opType}, nullptr, {name});
  return op->result(0);
}

ir::Value* constantI64(OnnxTranslation& t, const std::string& hint,
                       const std::vector<int64_t>& values) {
  TensorType type(DType::I64, {static_cast<int64_t>(values.size())});
  return t.graph.addConstant(t.graph.uniqueName(hint), type,
                             ir::makeConstantBytesInt(type, values));
}

void checkDecomposedResult(OnnxTranslation& t, const OnnxNode& node, const ir::Value* result) {
  const std::optional<TensorType>& onnx = node.outputTypes.at(0);
  if (onnx && !result->type().sameShapeAndDType(*onnx)) {
    t.fail(node, "kiln computes " + result->type().toString() + " for output '" +
                     node.outputNames.at(0) + "' but ONNX shape inference gives " +
                     onnx->toString());
  }
}

namespace {

// x [N, C, H, W] with its blocksize checked; `what` names the divisibility requirement.
int64_t blockSizeOf(OnnxTranslation& t, const OnnxNode& node) {
  if (!node.attrs.has("blocksize")) t.fail(node, "attribute 'blocksize' is required");
  int64_t block = node.attrs.getInt("blocksize");
  if (block < 1) t.fail(node, "blocksize must be positive, it is " + std::to_string(block));
  const ir::Value* x = node.inputs.at(0);
  if (!x || x->type().rank() != 4)
    t.fail(node, "input must have rank 4 (N x C x H x W), it has shape " +
                     (x ? ir::shapeToString(x->shape()) : std::string("none")));
  return block;
}

ir::Value* reshapeTransposeReshape(OnnxTranslation& t, const OnnxNode& node,
                                   const std::vector<int64_t>& first,
                                   const std::vector<int64_t>& perm,
                                   const std::vector<int64_t>& last) {
  const std::string& out = node.outputNames.at(0);
  ir::Value* x = buildOp(t, node, ir::OpKind::Reshape,
                         {node.inputs[0], constantI64(t, out + ".blocks", first)});
  ir::AttributeMap attrs;
  attrs.set("perm", perm);
  x = buildOp(t, node, ir::OpKind::Transpose, {x}, attrs);
  x = buildOp(t, node, ir::OpKind::Reshape, {x, constantI64(t, out + ".shape", last)}, {}, out);
  checkDecomposedResult(t, node, x);
  return x;
}

}  // namespace

std::vector<ir::Value*> translateDepthToSpace(OnnxTranslation& t, const OnnxNode& node,
                                              std::optional<ir::OpKind>) {
  int64_t b = blockSizeOf(t, node);
  const ir::Shape& s = node.inputs[0]->shape();
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (c % (b * b) != 0)
    t.fail(node, "channels " + std::to_string(c) +
                     " are not a multiple of blocksize^2 = " + std::to_string(b * b));
  std::string mode = node.attrs.getString("mode", "DCR");
  std::vector<int64_t> last = {n, c / (b * b), h * b, w * b};
  if (mode == "DCR")
    return {
        reshapeTransposeReshape(t, node, {n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2}, last)};
  if (mode == "CRD")
    return {
        reshapeTransposeReshape(t, node, {n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3}, last)};
  t.fail(node, "mode '" + mode + "' is not DCR or CRD");
}

std::vector<ir::Value*> translateSpaceToDepth(OnnxTranslation& t, const OnnxNode& node,
                                              std::optional<ir::OpKind>) {
  int64_t b = blockSizeOf(t, node);
  const ir::Shape& s = node.inputs[0]->shape();
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (h % b != 0 || w % b != 0)
    t.fail(node, "height " + std::to_string(h) + " and width " + std::to_string(w) +
                     " must be multiples of blocksize " + std::to_string(b));
  return {reshapeTransposeReshape(t, node, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4},
                                  {n, c * b * b, h / b, w / b})};
}

// Trilu(x, k?) {upper = 1}: Where(mask, x, 0) with the triangle mask of the last two dims
// computed here (k must be known when compiling).
std::vector<ir::Value*> translateTrilu(OnnxTranslation& t, const OnnxNode& node,
                                       std::optional<ir::OpKind>) {
  ir::Value* x = node.inputs.at(0);
  if (x->type().rank() < 2)
    t.fail(node, "input must have rank >= 2, it has shape " + ir::shapeToString(x->shape()));
  int64_t k = 0;
  if (node.inputs.size() > 1 && node.inputs[1]) {
    auto contents = t.shapeValues.get(node.inputs[1]);
    if (!contents || contents->size() != 1)
      t.fail(node, "k ('" + node.inputs[1]->name() +
                       "') must be a constant scalar; kiln needs it when compiling");
    k = (*contents)[0];
  }
  bool upper = node.attrs.getInt("upper", 1) != 0;
  const ir::Shape& s = x->shape();
  const int64_t rows = s[s.size() - 2], cols = s.back();
  TensorType maskType(DType::Bool, {rows, cols});
  std::vector<double> mask(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask[size_t(i * cols + j)] = upper ? j - i >= k : j - i <= k;
  const std::string& out = node.outputNames.at(0);
  ir::Value* keep = t.graph.addConstant(t.graph.uniqueName(out + ".mask"), maskType,
                                        ir::makeConstantBytes(maskType, mask));
  TensorType zeroType(x->dtype(), {});
  double zero[] = {0.0};
  ir::Value* fill = t.graph.addConstant(t.graph.uniqueName(out + ".zero"), zeroType,
                                        ir::makeConstantBytes(zeroType, zero));
  ir::Value* y = buildOp(t, node, ir::OpKind::Where, {keep, x, fill}, {}, out);
  checkDecomposedResult(t, node, y);
  return {y};
}

// OneHot(indices, depth, values [off, on]) {axis = -1}: Where(Equal(Unsqueeze(indices'),
// classes), on, off), negative indices shifted by depth; depth must be known when compiling.
std::vector<ir::Value*> translateOneHot(OnnxTranslation& t, const OnnxNode& node,
                                        std::optional<ir::OpKind>) {
  ir::Value* indices = node.inputs.at(0);
  ir::Value* values = node.inputs.at(2);
  std::optional<std::vector<int64_t>> depthValue = t.shapeValues.get(node.inputs.at(1));
  if (!depthValue && node.inputs[1]->isConstant()) {
    std::vector<double> d = ir::constantDoubles(node.inputs[1]);
    if (d.size() == 1) depthValue = std::vector<int64_t>{static_cast<int64_t>(d[0])};
  }
  if (!depthValue || depthValue->size() != 1 || (*depthValue)[0] < 1)
    t.fail(node, "depth ('" + node.inputs[1]->name() +
                     "') must be a positive constant; kiln needs static shapes");
  const int64_t depth = (*depthValue)[0];
  const int64_t rank = indices->type().rank() + 1;
  int64_t axis = node.attrs.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    t.fail(node,
           "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  const std::string& out = node.outputNames.at(0);
  auto scalar = [&](DType dtype, double v) {
    TensorType type(dtype, {});
    double data[] = {v};
    return t.graph.addConstant(t.graph.uniqueName(out + ".c"), type,
                               ir::makeConstantBytes(type, data));
  };
  ir::Value* idx = indices;
  if (idx->dtype() != DType::I64) {
    ir::AttributeMap cast;
    cast.set("to", static_cast<int64_t>(DType::I64));
    idx = buildOp(t, node, ir::OpKind::Cast, {idx}, cast);
  }
  ir::Value* negative = buildOp(t, node, ir::OpKind::Less, {idx, scalar(DType::I64, 0)});
  ir::Value* shifted = buildOp(t, node, ir::OpKind::Add, {idx, scalar(DType::I64, double(depth))});
  idx = buildOp(t, node, ir::OpKind::Where, {negative, shifted, idx});
  idx = buildOp(t, node, ir::OpKind::Unsqueeze, {idx, constantI64(t, out + ".axis", {axis})});
  std::vector<int64_t> classes(static_cast<size_t>(depth));
  for (int64_t i = 0; i < depth; ++i) classes[size_t(i)] = i;
  ir::Shape classShape(static_cast<size_t>(rank), 1);
  classShape[size_t(axis)] = depth;
  TensorType classType(DType::I64, classShape);
  ir::Value* classValues = t.graph.addConstant(t.graph.uniqueName(out + ".classes"), classType,
                                               ir::makeConstantBytesInt(classType, classes));
  ir::Value* hot = buildOp(t, node, ir::OpKind::Equal, {idx, classValues});
  if (values->type().numElements() != 2)
    t.fail(node, "values must hold [off, on], it has shape " + ir::shapeToString(values->shape()));
  ir::Value* pair =
      values->type().rank() == 1
          ? values
          : buildOp(t, node, ir::OpKind::Reshape, {values, constantI64(t, out + ".pair", {2})});
  ir::Value* off = buildOp(t, node, ir::OpKind::Gather, {pair, scalar(DType::I64, 0)});
  ir::Value* on = buildOp(t, node, ir::OpKind::Gather, {pair, scalar(DType::I64, 1)});
  ir::Value* y = buildOp(t, node, ir::OpKind::Where, {hot, on, off}, {}, out);
  checkDecomposedResult(t, node, y);
  return {y};
}

// TopK: K must be a constant (or computed from static shapes); a K known only at run time
// gives a data-dependent output shape.
std::vector<ir::Value*> translateTopK(OnnxTranslation& t, const OnnxNode& node,
                                      std::optional<ir::OpKind> kind) {
  for (const auto& [name, type] : node.otherAttrs)
    t.fail(node, "attribute '" + name + "' of type " + type + " is not supported");
  std::vector<ir::Value*> operands = node.inputs;
  ir::Value* k = operands.size() > 1 ? operands[1] : nullptr;
  if (k && !k->isConstant() && !t.shapeValues.get(k)) {
    t.fail(node, "K ('" + k->name() +
                     "') is known only at run time, so the output shape depends on the data; "
                     "kiln needs static shapes: make K a constant (an initializer) in the model" +
                     (k->isInput() ? ", or give its value when compiling: --fix-input=" +
                                         k->name() + "=@VALUES.npy"
                                   : std::string()));
  }
  return emitOp(t, node, *kind, std::move(operands), node.attrs);
}

}  // namespace kiln::import::detail
