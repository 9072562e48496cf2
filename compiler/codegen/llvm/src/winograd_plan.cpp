// The Winograd convolution kernel's policy and weight transform (see winograd_plan.h).
// LLVM-free.
#include "kiln/codegen/winograd_plan.h"

#include <algorithm>
#include <cassert>

namespace kiln::codegen {
namespace {

// Below this many input or output channels the transforms cost more than the multiplies
// they save.
constexpr int64_t kMinChannels = 16;

}  // namespace

WinogradPlan winogradPlan(const KernelDesc& d, VectorUnit unit) {
  ConvGemmTile tile = convGemmTile(d, unit);
  if (!tile.applies()) return {};
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  if (ws[2] != 3 || ws[3] != 3) return {};
  if (d.strides != std::array<int64_t, 2>{1, 1} || d.dilations != std::array<int64_t, 2>{1, 1})
    return {};
  if (ws[0] < kMinChannels || ws[1] < kMinChannels) return {};
  WinogradPlan plan;
  plan.tile = tile;
  // F(4x4): a quarter of the multiplies, worth its larger transforms where the map has
  // several 4 x 4 tiles per row; F(2x2) on small maps (7 x 7 would compute 8 x 8 either
  // way, in 4 tiles of F(4x4) that fill half a vector).
  const int64_t oh = ys[2], ow = ys[3];
  plan.m = oh >= 16 && ow >= 16 ? 4 : 2;
  return plan;
}

WinogradMatrices winogradMatrices(int64_t m) {
  WinogradMatrices w;
  w.m = m;
  w.alpha = m + 2;
  if (m == 2) {
    w.bt = {1, 0, -1, 0,  //
            0, 1, 1,  0,  //
            0, -1, 1, 0,  //
            0, 1, 0,  -1};
    w.g = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
    w.at = {1, 1, 1, 0,  //
            0, 1, -1, -1};
  } else {
    assert(m == 4 && "F(2x2) and F(4x4) only");
    w.bt = {4, 0, -5, 0,  1, 0,  //
            0, -4, -4, 1, 1, 0,  //
            0, 4, -4, -1, 1, 0,  //
            0, -2, -1, 2, 1, 0,  //
            0, 2, -1, -2, 1, 0,  //
            0, 4, 0,  -5, 0, 1};
    w.g = {1.0 / 4,  0,         0,          //
           -1.0 / 6, -1.0 / 6,  -1.0 / 6,   //
           -1.0 / 6, 1.0 / 6,   -1.0 / 6,   //
           1.0 / 24, 1.0 / 12,  1.0 / 6,    //
           1.0 / 24, -1.0 / 12, 1.0 / 6,    //
           0,        0,         1};
    w.at = {1, 1, 1,  1, 1,  0,  //
            0, 1, -1, 2, -2, 0,  //
            0, 1, 1,  4, 4,  0,  //
            0, 1, -1, 8, -8, 1};
  }
  return w;
}

std::vector<float> winogradTransformWeights(const std::vector<float>& weights, int64_t oc,
                                            int64_t c, int64_t m, int64_t mr) {
  assert(int64_t(weights.size()) == oc * c * 9 && mr > 0);
  const WinogradMatrices w = winogradMatrices(m);
  const int64_t a = w.alpha, positions = a * a;
  // U[pos][o][i] = (G g G^T)[pos], as positions x (oc x c) matrices.
  std::vector<float> u(size_t(positions * oc * c));
  for (int64_t o = 0; o < oc; ++o) {
    for (int64_t i = 0; i < c; ++i) {
      const float* g = weights.data() + (o * c + i) * 9;
      double gg[6][3];  // G g
      for (int64_t r = 0; r < a; ++r)
        for (int64_t k = 0; k < 3; ++k) {
          double sum = 0;
          for (int64_t j = 0; j < 3; ++j) sum += w.g[r * 3 + j] * double(g[j * 3 + k]);
          gg[r][k] = sum;
        }
      for (int64_t r = 0; r < a; ++r)
        for (int64_t s = 0; s < a; ++s) {
          double sum = 0;
          for (int64_t k = 0; k < 3; ++k) sum += gg[r][k] * w.g[s * 3 + k];
          u[size_t(((r * a + s) * oc + o) * c + i)] = float(sum);
        }
    }
  }
  // Panels of mr output channels, each holding every position's [c][rows] block in turn.
  std::vector<float> packed(u.size());
  for (int64_t first = 0; first < oc; first += mr) {
    const int64_t rows = std::min(mr, oc - first);
    float* panel = packed.data() + first * positions * c;
    for (int64_t pos = 0; pos < positions; ++pos)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t m = 0; m < rows; ++m)
          panel[(pos * c + i) * rows + m] = u[size_t((pos * oc + first + m) * c + i)];
  }
  return packed;
}

}  // namespace kiln::codegen
