// KernelDesc helpers: element types, expression building, the canonical identity key used to
// merge identical kernels, and the consistency check run before emission.
#include "kiln/codegen/kernel_desc.h"

#include <sstream>

#include "codegen_error.h"

namespace kiln::codegen {

uint32_t elemSize(ElemType type) {
  switch (type) {
    case ElemType::F32:
      return 4;
    case ElemType::I8:
    case ElemType::U8:
    case ElemType::Bool:
      return 1;
    case ElemType::I16:
      return 2;
    case ElemType::I32:
      return 4;
    case ElemType::I64:
    case ElemType::F64:
      return 8;
  }
  return 0;
}

const char* elemTypeName(ElemType type) {
  switch (type) {
    case ElemType::F32:
      return "f32";
    case ElemType::I8:
      return "i8";
    case ElemType::U8:
      return "u8";
    case ElemType::I16:
      return "i16";
    case ElemType::I32:
      return "i32";
    case ElemType::I64:
      return "i64";
    case ElemType::Bool:
      return "bool";
    case ElemType::F64:
      return "f64";
  }
  return "?";
}

bool isFloat(ElemType type) { return type == ElemType::F32 || type == ElemType::F64; }

bool evaluatesOnVectors(const std::vector<ExprNode>& nodes) {
  for (const ExprNode& node : nodes) {
    if (node.type != ElemType::F32) return false;
    switch (node.op) {
      case ExprOp::Input:
      case ExprOp::Result:
      case ExprOp::Constant:
      case ExprOp::Neg:
      case ExprOp::Abs:
      case ExprOp::Relu:
      case ExprOp::LeakyRelu:
      case ExprOp::Clip:
      case ExprOp::Add:
      case ExprOp::Sub:
      case ExprOp::Mul:
      case ExprOp::Div:
      case ExprOp::Max:
      case ExprOp::Min:
      // math_approx.h's polynomials take vectors as well as scalars.
      case ExprOp::Sigmoid:
      case ExprOp::Tanh:
      case ExprOp::Exp:
      case ExprOp::Log:
      case ExprOp::Erf:
        break;
      default:
        return false;
    }
  }
  return true;
}

int64_t BufferDesc::elementCount() const {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

int32_t ElementwiseExpr::addInput(int32_t input, ElemType type) {
  ExprNode node;
  node.op = ExprOp::Input;
  node.type = type;
  node.input = input;
  nodes.push_back(node);
  return static_cast<int32_t>(nodes.size() - 1);
}

int32_t ElementwiseExpr::addConstant(double value, ElemType type) {
  ExprNode node;
  node.op = ExprOp::Constant;
  node.type = type;
  node.alpha = value;
  nodes.push_back(node);
  return static_cast<int32_t>(nodes.size() - 1);
}

int32_t ElementwiseExpr::addUnary(ExprOp op, int32_t a, double alpha, double beta) {
  ExprNode node;
  node.op = op;
  node.type = op == ExprOp::Not ? ElemType::Bool : nodes.at(a).type;
  node.a = a;
  node.alpha = alpha;
  node.beta = beta;
  nodes.push_back(node);
  return static_cast<int32_t>(nodes.size() - 1);
}

int32_t ElementwiseExpr::addCast(int32_t a, ElemType to) {
  int32_t n = addUnary(ExprOp::Cast, a);
  nodes[n].type = to;
  return n;
}

int32_t ElementwiseExpr::addBinary(ExprOp op, int32_t a, int32_t b) {
  ExprNode node;
  node.op = op;
  bool compare = op == ExprOp::Equal || op == ExprOp::Less || op == ExprOp::Greater ||
                 op == ExprOp::And || op == ExprOp::Or || op == ExprOp::Xor;
  node.type = compare ? ElemType::Bool : nodes.at(a).type;
  node.a = a;
  node.b = b;
  nodes.push_back(node);
  return static_cast<int32_t>(nodes.size() - 1);
}

int32_t ElementwiseExpr::addWhere(int32_t cond, int32_t a, int32_t b) {
  ExprNode node;
  node.op = ExprOp::Where;
  node.type = nodes.at(a).type;
  node.a = cond;
  node.b = a;
  node.c = b;
  nodes.push_back(node);
  return static_cast<int32_t>(nodes.size() - 1);
}

namespace {

void printList(std::ostream& os, const char* label, const std::vector<int64_t>& v) {
  os << label << '[';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  os << ']';
}

void printExpr(std::ostream& os, const ElementwiseExpr& expr) {
  for (const ExprNode& n : expr.nodes) {
    os << " {" << static_cast<int>(n.op) << ' ' << static_cast<int>(n.type) << ' ' << n.a << ' '
       << n.b << ' ' << n.c << ' ' << n.input << ' ' << n.alpha << ' ' << n.beta << '}';
  }
}

void printBuffer(std::ostream& os, const BufferDesc& buffer) {
  os << elemTypeName(buffer.type);
  printList(os, "", buffer.shape);
  if (!buffer.rowGroups.empty()) printList(os, " rows", buffer.rowGroups);
}

}  // namespace

std::string KernelDesc::key() const {
  std::ostringstream os;
  os.precision(17);
  os << "kind" << static_cast<int>(kind) << " alias" << bindingsMayAlias << " wq" << workQueues
     << " ts" << threadSplit
     << " in(";
  for (const BufferDesc& in : inputs) printBuffer(os, in), os << ' ';
  os << ") out ";
  printBuffer(os, output);
  for (const BufferDesc& extra : extraOutputs) os << ' ', printBuffer(os, extra);
  switch (kind) {
    case KernelKind::Elementwise:
      printExpr(os, expr);
      break;
    case KernelKind::Conv:
    case KernelKind::Pool:
      os << " k" << kernelShape[0] << 'x' << kernelShape[1] << " s" << strides[0] << 'x'
         << strides[1] << " d" << dilations[0] << 'x' << dilations[1] << " p" << pads[0] << ','
         << pads[1] << ',' << pads[2] << ',' << pads[3] << " g" << groups << " pool"
         << static_cast<int>(poolKind) << " cip" << countIncludePad << " depth" << depthKernel
         << ',' << depthStride << ',' << depthDilation << ',' << depthPadBegin << ','
         << depthPadEnd << " wl" << static_cast<int>(weightLayout) << " wp" << weightPanel
         << " wt" << winogradTile;
      if (pooled()) {
        printList(os, " conv", convOutput);
        os << " pk" << poolKernel[0] << 'x' << poolKernel[1] << " ps" << poolStrides[0] << 'x'
           << poolStrides[1] << " pp" << poolPads[0] << ',' << poolPads[1] << ',' << poolPads[2]
           << ',' << poolPads[3];
      }
      [[fallthrough]];
    case KernelKind::MatMul:
      os << " act" << static_cast<int>(epilogue.act) << ' ' << epilogue.alpha << ' '
         << epilogue.beta << " t" << transA << transB << " ab" << alpha << ' ' << beta
         << " bp" << bPanel;
      printList(os, " chain", epilogue.shape);
      printExpr(os, epilogue.chain);
      os << " chainInputs" << epilogue.inputCount << " tail" << tailB << ',' << tailBias << ','
         << tailTransB << ',' << tailAlpha << ',' << tailBeta;
      if (kind == KernelKind::Conv && tailB >= 0) {
        os << " ts" << tailStrides[0] << 'x' << tailStrides[1] << " tp" << tailPads[0] << ','
           << tailPads[1] << ',' << tailPads[2] << ',' << tailPads[3];
        printExpr(os, tailChain);
      }
      break;
    case KernelKind::Reduce:
      os << " r" << static_cast<int>(reduceKind);
      printList(os, " axes", axes);
      break;
    case KernelKind::Softmax:
    case KernelKind::Concat:
    case KernelKind::Gather:
    case KernelKind::Split:
      os << " axis" << axis << " log" << logSoftmax;
      break;
    case KernelKind::Transpose:
      printList(os, " perm", perm);
      break;
    case KernelKind::Tile:
    case KernelKind::ScatterND:
      break;  // fully described by the shapes
    case KernelKind::ConvTranspose:
      os << " s" << strides[0] << 'x' << strides[1] << " d" << dilations[0] << 'x' << dilations[1]
         << " p" << pads[0] << ',' << pads[1] << ',' << pads[2] << ',' << pads[3] << " g"
         << groups << " depth" << depthStride << ',' << depthDilation << ',' << depthPadBegin;
      break;
    case KernelKind::LayerNorm:
    case KernelKind::InstanceNorm:
      os << " axis" << axis << " eps" << epsilon;
      break;
    case KernelKind::Lrn:
      os << " size" << lrnSize << " ab" << alpha << ' ' << beta << " bias" << lrnBias;
      break;
    case KernelKind::ArgReduce:
    case KernelKind::TopK:
    case KernelKind::GatherElements:
    case KernelKind::CumSum:
      os << " axis" << axis << " largest" << largest << " last" << selectLastIndex << " scan"
         << exclusive << reverse;
      break;
    case KernelKind::Quantized:
      os << QuantDesc::key(*this);
      break;
    case KernelKind::Slice:
    case KernelKind::Pad:
      printList(os, " starts", starts);
      printList(os, " steps", steps);
      os << " mode" << static_cast<int>(padMode) << ' ' << padValue;
      break;
  }
  return os.str();
}

}  // namespace kiln::codegen
