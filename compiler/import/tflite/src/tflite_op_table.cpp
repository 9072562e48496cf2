// The TFLite builtin operators kiln imports: builtin code -> translator. Each translator
// handles the float and the quantized form of its operator (by the data's dtype).
#include <algorithm>
#include <array>
#include <utility>

#include "tflite_translation.h"

namespace kiln::import::tflite {
namespace {

constexpr std::pair<int32_t, TranslateFn> kTable[] = {
    {0, translateBinary},           // ADD
    {1, translatePool},             // AVERAGE_POOL_2D
    {2, translateConcatenation},    // CONCATENATION
    {3, translateConv2D},           // CONV_2D
    {4, translateDepthwiseConv2D},  // DEPTHWISE_CONV_2D
    {6, translateDequantize},       // DEQUANTIZE
    {9, translateFullyConnected},   // FULLY_CONNECTED
    {14, translateActivation},      // LOGISTIC
    {17, translatePool},            // MAX_POOL_2D
    {18, translateBinary},          // MUL
    {19, translateActivation},      // RELU
    {20, translateActivation},      // RELU_N1_TO_1
    {21, translateActivation},      // RELU6
    {22, translateReshape},         // RESHAPE
    {25, translateSoftmax},         // SOFTMAX
    {28, translateActivation},      // TANH
    {34, translatePad},             // PAD
    {39, translateTranspose},       // TRANSPOSE
    {40, translateMean},            // MEAN
    {41, translateBinary},          // SUB
    {43, translateReshape},         // SQUEEZE
    {45, translateStridedSlice},    // STRIDED_SLICE
    {60, translatePad},             // PADV2
    {67, translateTransposeConv},   // TRANSPOSE_CONV
    {98, translateActivation},      // LEAKY_RELU
    {114, translateQuantize},       // QUANTIZE
    {117, translateActivation},     // HARD_SWISH
};

}  // namespace

TranslateFn findTranslator(int32_t code) {
  for (const auto& [c, fn] : kTable)
    if (c == code) return fn;
  return nullptr;
}

std::vector<int32_t> supportedCodes() {
  std::vector<int32_t> codes;
  for (const auto& entry : kTable) codes.push_back(entry.first);
  return codes;
}

}  // namespace kiln::import::tflite
