// The ONNX operator table: which ai.onnx op types kiln imports and how. One line per op;
// translateDirect for ops whose opset-17 form is the IR op itself. Ops missing here are
// refused with an "unsupported operator" error naming the node.
#include <algorithm>
#include <array>
#include <initializer_list>

#include "kiln/support/diagnostics.h"
#include "onnx_translators.h"

namespace kiln::import::detail {

namespace {

using ir::OpKind;

#define DIRECT(Name) OnnxOpEntry{#Name, OpKind::Name, translateDirect}

const auto kOnnxOps = std::to_array<OnnxOpEntry>({
    // elementwise, one operand
    DIRECT(Abs), DIRECT(Neg), DIRECT(Exp), DIRECT(Log), DIRECT(Sqrt), DIRECT(Reciprocal),
    DIRECT(Relu), DIRECT(Sigmoid), DIRECT(Tanh), DIRECT(Erf), DIRECT(Floor), DIRECT(Ceil),
    DIRECT(Round), DIRECT(Sign), DIRECT(Sin), DIRECT(Cos), DIRECT(Not), DIRECT(LeakyRelu),
    DIRECT(Elu), DIRECT(Selu), DIRECT(HardSigmoid), DIRECT(HardSwish), DIRECT(Softplus),
    DIRECT(Softsign), DIRECT(Identity), DIRECT(Dropout), DIRECT(Shrink), DIRECT(Celu),
    DIRECT(ThresholdedRelu),
    {"Clip", OpKind::Clip, translateClip},
    {"Cast", OpKind::Cast, translateCast},
    // elementwise with broadcasting
    DIRECT(Add), DIRECT(Sub), DIRECT(Mul), DIRECT(Div), DIRECT(Pow), DIRECT(Mod), DIRECT(Max),
    DIRECT(Min), DIRECT(Sum), DIRECT(Mean), DIRECT(And), DIRECT(Or), DIRECT(Xor), DIRECT(Equal),
    DIRECT(Less), DIRECT(LessOrEqual), DIRECT(Greater), DIRECT(GreaterOrEqual), DIRECT(Where),
    {"PRelu", OpKind::PRelu, translatePRelu},
    // neural-network compute
    DIRECT(Conv), DIRECT(ConvTranspose), DIRECT(MatMul), DIRECT(Gemm), DIRECT(MaxPool), DIRECT(AveragePool),
    DIRECT(GlobalAveragePool), DIRECT(GlobalMaxPool), DIRECT(LayerNormalization),
    DIRECT(Softmax), DIRECT(LogSoftmax), DIRECT(InstanceNormalization), DIRECT(LRN),
    {"BatchNormalization", OpKind::BatchNormalization, translateBatchNorm},
    // reductions
    DIRECT(ReduceSum), DIRECT(ReduceMean), DIRECT(ReduceMax), DIRECT(ReduceMin),
    DIRECT(ReduceProd), DIRECT(ReduceL2), DIRECT(ReduceL1), DIRECT(ReduceSumSquare),
    DIRECT(ReduceLogSum), DIRECT(ReduceLogSumExp), DIRECT(ArgMax), DIRECT(ArgMin), DIRECT(CumSum),
    {"TopK", OpKind::TopK, translateTopK},
    // data movement
    DIRECT(Reshape), DIRECT(Flatten), DIRECT(Squeeze), DIRECT(Unsqueeze), DIRECT(Transpose),
    DIRECT(Concat), DIRECT(Split), DIRECT(Slice), DIRECT(Gather), DIRECT(GatherElements),
    DIRECT(ScatterND), DIRECT(Pad), DIRECT(Expand),
    DIRECT(Tile),
    {"DepthToSpace", std::nullopt, translateDepthToSpace},
    {"Trilu", std::nullopt, translateTrilu},
    {"Einsum", std::nullopt, translateEinsum},
    {"OneHot", std::nullopt, translateOneHot},
    {"SpaceToDepth", std::nullopt, translateSpaceToDepth},
    {"Resize", std::nullopt, translateResize},
    {"Upsample", std::nullopt, translateResize},
    // shape arithmetic and constants
    DIRECT(Shape), DIRECT(Size), DIRECT(Range),
    {"ConstantOfShape", OpKind::ConstantOfShape, translateConstantOfShape},
    {"Constant", std::nullopt, translateConstant},
});

#undef DIRECT

}  // namespace

const OnnxOpEntry* findOnnxOp(std::string_view domain, std::string_view opType) {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  for (const OnnxOpEntry& entry : kOnnxOps) {
    if (entry.opType == opType) return &entry;
  }
  return nullptr;
}

bool isSupportedOnnxOp(std::string_view domain, std::string_view opType) {
  return findOnnxOp(domain, opType) != nullptr;
}

std::string unsupportedOpAdvice(std::string_view domain, std::string_view opType) {
  auto among = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), opType) != names.end();
  };
  if (domain == "ai.onnx.preview.training" ||
      among({"Gradient", "Momentum", "Adagrad", "Adam"})) {
    return "; it is a training op and kiln compiles inference graphs only: export the model "
           "for inference (e.g. torch.onnx.export of model.eval()) without gradient or "
           "optimizer nodes";
  }
  if (opType.starts_with("Sequence") || opType.starts_with("Optional") ||
      among({"SplitToSequence", "ConcatFromSequence"})) {
    return "; sequence and optional values are not supported, kiln compiles tensors only: "
           "export the model with a fixed number of tensor inputs and outputs instead of lists";
  }
  if (among({"NonZero", "Unique", "NonMaxSuppression", "Compress"})) {
    return "; its output shape depends on the input data and kiln needs static shapes: do "
           "this step outside the model (e.g. in post-processing) or use a fixed-size form";
  }
  if (among({"If", "Loop", "Scan"})) {
    return "; control flow is not supported: export the model traced for one fixed input "
           "shape, without data-dependent branches or loops";
  }
  return "";
}

std::vector<std::string_view> supportedOnnxOps() {
  std::vector<std::string_view> names;
  for (const OnnxOpEntry& entry : kOnnxOps) names.push_back(entry.opType);
  return names;
}

std::string onnxNodeRef(std::string_view name, int index) {
  return name.empty() ? "#" + std::to_string(index) : "'" + std::string(name) + "'";
}

std::string OnnxTranslation::describe(const OnnxNode& node) {
  return "node " + onnxNodeRef(node.name, node.index) + " (" + node.opType + ")";
}

void OnnxTranslation::fail(const OnnxNode& node, const std::string& why) const {
  throw CompileError(displayName + ": " + describe(node) + ": " + why);
}

}  // namespace kiln::import::detail
