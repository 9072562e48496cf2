// Elementwise kernels: an expression over broadcast inputs, evaluated per output element.
// Output axes whose access pattern is contiguous for every input are merged first, so a
// same-shape operation is one flat loop and a per-channel one is [outer, inner].
#include <algorithm>

#include "codegen_error.h"
#include "emitters.h"
#include "kernel_builder.h"
#include "math_approx.h"

namespace kiln::codegen::detail {
namespace {

bool isUnsigned(ElemType type) { return type == ElemType::U8 || type == ElemType::Bool; }

llvm::Value* castValue(KernelBuilder& kb, llvm::Value* v, ElemType from, ElemType to) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Type* target = kb.elemType(to);
  if (from == to) return v;
  if (to == ElemType::Bool) {
    return isFloat(from) ? b.CreateFCmpUNE(v, kb.f32(0.0f))
                         : b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (isFloat(from)) {
    return isUnsigned(to) ? b.CreateFPToUI(v, target) : b.CreateFPToSI(v, target);
  }
  if (isFloat(to)) return isUnsigned(from) ? b.CreateUIToFP(v, target) : b.CreateSIToFP(v, target);
  return isUnsigned(from) ? b.CreateZExtOrTrunc(v, target) : b.CreateSExtOrTrunc(v, target);
}

llvm::Value* evalBinary(KernelBuilder& kb, ExprOp op, ElemType type, llvm::Value* x,
                        llvm::Value* y) {
  llvm::IRBuilder<>& b = kb.b();
  bool fp = isFloat(type);
  bool uns = isUnsigned(type);
  switch (op) {
    case ExprOp::Add:
      return fp ? b.CreateFAdd(x, y) : b.CreateAdd(x, y);
    case ExprOp::Sub:
      return fp ? b.CreateFSub(x, y) : b.CreateSub(x, y);
    case ExprOp::Mul:
      return fp ? b.CreateFMul(x, y) : b.CreateMul(x, y);
    case ExprOp::Div: {
      if (fp) return b.CreateFDiv(x, y);
      // Integer division by zero is undefined in LLVM: divide by 1 instead (result unspecified).
      llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
      llvm::Value* one = llvm::ConstantInt::get(y->getType(), 1);
      llvm::Value* safe = b.CreateSelect(b.CreateICmpEQ(y, zero), one, y);
      return uns ? b.CreateUDiv(x, safe) : b.CreateSDiv(x, safe);
    }
    case ExprOp::Max:
      if (uns) return b.CreateSelect(b.CreateICmpUGT(x, y), x, y);
      return kb.maxValue(x, y);
    case ExprOp::Min:
      if (uns) return b.CreateSelect(b.CreateICmpULT(x, y), x, y);
      return kb.minValue(x, y);
    case ExprOp::And:
      return b.CreateAnd(x, y);
    case ExprOp::Or:
      return b.CreateOr(x, y);
    case ExprOp::Xor:
      return b.CreateXor(x, y);
    case ExprOp::Equal:
      return fp ? b.CreateFCmpOEQ(x, y) : b.CreateICmpEQ(x, y);
    case ExprOp::Less:
      return fp ? b.CreateFCmpOLT(x, y) : uns ? b.CreateICmpULT(x, y) : b.CreateICmpSLT(x, y);
    case ExprOp::Greater:
      return fp ? b.CreateFCmpOGT(x, y) : uns ? b.CreateICmpUGT(x, y) : b.CreateICmpSGT(x, y);
    default:
      break;
  }
  return nullptr;
}

llvm::Value* evalUnary(KernelBuilder& kb, const ExprNode& node, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  bool fp = isFloat(node.type);
  llvm::Value* zero = fp ? kb.f32(0.0f) : llvm::ConstantInt::get(x->getType(), 0);
  switch (node.op) {
    case ExprOp::Neg:
      return fp ? b.CreateFNeg(x) : b.CreateNeg(x);
    case ExprOp::Abs:
      if (fp) return b.CreateSelect(b.CreateFCmpOLT(x, zero), b.CreateFNeg(x), x);
      return b.CreateSelect(b.CreateICmpSLT(x, zero), b.CreateNeg(x), x);
    case ExprOp::Relu:
      return kb.maxValue(x, zero);
    case ExprOp::Not:
      return b.CreateNot(x);
    case ExprOp::LeakyRelu:
      return b.CreateSelect(b.CreateFCmpOLT(x, zero), b.CreateFMul(x, kb.f32(node.alpha)), x);
    case ExprOp::Clip: {
      llvm::Value* lo = kb.constant(node.type, node.alpha);
      llvm::Value* hi = kb.constant(node.type, node.beta);
      return kb.minValue(kb.maxValue(x, lo), hi);
    }
    case ExprOp::Sigmoid:
      return emitSigmoid(kb, x);
    case ExprOp::Tanh:
      return emitTanh(kb, x);
    case ExprOp::Exp:
      return emitExp(kb, x);
    case ExprOp::Log:
      return emitLog(kb, x);
    case ExprOp::Floor:
      return emitFloor(kb, x);
    case ExprOp::Ceil:
      return b.CreateFNeg(emitFloor(kb, b.CreateFNeg(x)));
    case ExprOp::Erf:
      return emitErf(kb, x);
    case ExprOp::Sqrt:
      return emitSqrt(kb, x);
    default:
      break;
  }
  return nullptr;
}

// Merges output axes i and i+1 wherever every operand walks them as one contiguous axis.
void mergeAxes(std::vector<int64_t>& extents, std::vector<std::vector<int64_t>>& strides) {
  for (size_t i = extents.size(); i-- > 1;) {
    bool mergeable = std::all_of(strides.begin(), strides.end(),
                                 [&](const auto& s) { return s[i - 1] == s[i] * extents[i]; });
    if (!mergeable) continue;
    extents[i - 1] *= extents[i];
    extents.erase(extents.begin() + static_cast<long>(i));
    for (auto& s : strides) {
      s[i - 1] = s[i];
      s.erase(s.begin() + static_cast<long>(i));
    }
  }
}

}  // namespace

uint32_t emitElementwise(KernelBuilder& kb) {
  const KernelDesc& desc = kb.desc();
  const std::vector<int64_t>& outShape = desc.output.shape;
  // Strides of every input and of the output over the output's axes.
  std::vector<int64_t> extents = outShape;
  std::vector<std::vector<int64_t>> strides;
  for (const BufferDesc& in : desc.inputs) strides.push_back(broadcastStrides(in.shape, outShape));
  strides.push_back(rowMajorStrides(outShape));
  if (extents.empty()) {
    extents.push_back(1);
    for (auto& s : strides) s.push_back(0);
  }
  mergeAxes(extents, strides);

  // Split all axes but the innermost over workgroups; a single axis is split in chunks.
  std::vector<int64_t> outerExtents(extents.begin(), extents.end() - 1);
  int64_t inner = extents.back();
  int64_t outer = 1;
  for (int64_t e : outerExtents) outer *= e;
  int64_t chunk = inner;
  if (outerExtents.empty()) {
    chunk = std::min<int64_t>(inner, kMinElementsPerWorkgroup);
    outer = (inner + chunk - 1) / chunk;
  }

  const std::vector<ExprNode>& nodes = desc.expr.nodes;
  kb.forWorkgroupShare(outer, [&](llvm::Value* o) {
    llvm::IRBuilder<>& b = kb.b();
    std::vector<llvm::Value*> bases;
    llvm::Value* begin = kb.index(0);
    llvm::Value* end = kb.index(inner);
    if (outerExtents.empty()) {
      begin = b.CreateMul(o, kb.index(chunk));
      llvm::Value* chunkEnd = b.CreateAdd(begin, kb.index(chunk));
      end = b.CreateSelect(b.CreateICmpSLT(chunkEnd, end), chunkEnd, end);
      for (size_t k = 0; k < strides.size(); ++k) bases.push_back(kb.index(0));
    } else {
      std::vector<llvm::Value*> coords = kb.decompose(o, outerExtents);
      for (const auto& s : strides) {
        bases.push_back(kb.linearize(coords, std::vector<int64_t>(s.begin(), s.end() - 1)));
      }
    }
    kb.forRange(begin, end, [&](llvm::Value* j) {
      auto offset = [&](size_t operand) {
        int64_t step = strides[operand].back();
        if (step == 0) return bases[operand];
        llvm::Value* scaled = step == 1 ? j : b.CreateMul(j, kb.index(step));
        return b.CreateAdd(bases[operand], scaled);
      };
      std::vector<llvm::Value*> values(nodes.size());
      for (size_t n = 0; n < nodes.size(); ++n) {
        const ExprNode& node = nodes[n];
        llvm::Value* a = node.a >= 0 ? values[node.a] : nullptr;
        llvm::Value* c = node.b >= 0 ? values[node.b] : nullptr;
        switch (node.op) {
          case ExprOp::Input:
            values[n] = kb.load(node.input, desc.inputs[node.input].type, offset(node.input));
            break;
          case ExprOp::Constant:
            values[n] = kb.constant(node.type, node.alpha);
            break;
          case ExprOp::Cast:
            values[n] = castValue(kb, a, nodes[node.a].type, node.type);
            break;
          case ExprOp::Where:
            values[n] = b.CreateSelect(a, c, values[node.c]);
            break;
          case ExprOp::Add:
          case ExprOp::Sub:
          case ExprOp::Mul:
          case ExprOp::Div:
          case ExprOp::Max:
          case ExprOp::Min:
          case ExprOp::Equal:
          case ExprOp::Less:
          case ExprOp::Greater:
          case ExprOp::And:
          case ExprOp::Or:
          case ExprOp::Xor:
            values[n] = evalBinary(kb, node.op, nodes[node.a].type, a, c);
            break;
          default:
            values[n] = evalUnary(kb, node, a);
            break;
        }
      }
      kb.store(kb.outputBinding(), desc.output.type, offset(strides.size() - 1), values.back());
    });
  });
  return workgroupsFor(outer, chunk);
}

}  // namespace kiln::codegen::detail
