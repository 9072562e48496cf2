// Matrix-product kernels (emit_matmul.cpp, emit_matmul_chain.cpp, matmul_tiles.cpp): the
// register-tiled forms on the host's vectors (and on 4-lane SSE, and the plain loops of a
// microcontroller target where they differ) against a straightforward double-precision
// reference: batch-1 products, edge tiles in both directions, long and short K, transposes,
// alpha/beta, every bias broadcast form, batched MatMul with broadcast batch axes, fused
// epilogues and fused two-product chains; and each of these with B packed in column panels as
// the compile-time packer leaves a constant B (matmul_pack.h). Every case runs with several
// workgroup splits.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "kiln/codegen/matmul_pack.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::product;
using testing::randomFloats;
using testing::runKernel;

BufferDesc f32(std::vector<int64_t> shape) { return {ElemType::F32, std::move(shape)}; }

void expectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << "element " << i;
}

// Y = act(alpha * op(A) op(B) + beta * C), A and B with optional (broadcast) batch axes.
struct Product {
  std::vector<int64_t> aBatch, bBatch;
  int64_t M, N, K;
  bool transA = false, transB = false;
  float alpha = 1.0f, beta = 1.0f;
  std::vector<int64_t> bias;  // shape of C (empty: none)
  Activation act = Activation::None;
};

std::vector<int64_t> broadcastBatch(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i + a.size() >= out.size() ? a[i + a.size() - out.size()] : 1;
    int64_t y = i + b.size() >= out.size() ? b[i + b.size() - out.size()] : 1;
    out[i] = std::max(x, y);
  }
  return out;
}

// Index of `coords` (of `shape`) in a buffer of `from` broadcast to `shape`.
int64_t broadcastIndex(const std::vector<int64_t>& coords, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& from) {
  int64_t index = 0;
  size_t skip = shape.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    index = index * from[i] + (from[i] == 1 ? 0 : coords[skip + i]);
  return index;
}

std::vector<float> referenceProduct(const Product& p, const std::vector<float>& a,
                                    const std::vector<float>& b, const std::vector<float>& c) {
  std::vector<int64_t> batch = broadcastBatch(p.aBatch, p.bBatch);
  std::vector<int64_t> aBatchDims = p.aBatch, bBatchDims = p.bBatch;
  int64_t batches = product(batch);
  std::vector<int64_t> outShape = batch;
  outShape.push_back(p.M);
  outShape.push_back(p.N);
  std::vector<float> y(size_t(batches * p.M * p.N));
  for (int64_t t = 0; t < batches; ++t) {
    std::vector<int64_t> coords(batch.size());
    for (int64_t r = t, i = int64_t(batch.size()) - 1; i >= 0; --i) {
      coords[size_t(i)] = r % batch[size_t(i)];
      r /= batch[size_t(i)];
    }
    int64_t aOff = broadcastIndex(coords, batch, aBatchDims) * p.M * p.K;
    int64_t bOff = broadcastIndex(coords, batch, bBatchDims) * p.K * p.N;
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t n = 0; n < p.N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < p.K; ++k) {
          double av = a[size_t(aOff + (p.transA ? k * p.M + m : m * p.K + k))];
          double bv = b[size_t(bOff + (p.transB ? n * p.K + k : k * p.N + n))];
          acc += av * bv;
        }
        double v = p.alpha * acc;
        if (!p.bias.empty()) {
          std::vector<int64_t> full = coords;
          full.push_back(m);
          full.push_back(n);
          v += p.beta * c[size_t(broadcastIndex(full, outShape, p.bias))];
        }
        float f = float(v);
        if (p.act == Activation::Relu) f = std::max(f, 0.0f);
        if (p.act == Activation::Sigmoid) f = float(1.0 / (1.0 + std::exp(-v)));
        y[size_t((t * p.M + m) * p.N + n)] = f;
      }
  }
  return y;
}

KernelDesc productDesc(const Product& p) {
  KernelDesc d;
  d.kind = KernelKind::MatMul;
  d.name = "product";
  std::vector<int64_t> a = p.aBatch, b = p.bBatch;
  a.push_back(p.transA ? p.K : p.M);
  a.push_back(p.transA ? p.M : p.K);
  b.push_back(p.transB ? p.N : p.K);
  b.push_back(p.transB ? p.K : p.N);
  d.inputs = {f32(a), f32(b)};
  if (!p.bias.empty()) d.inputs.push_back(f32(p.bias));
  std::vector<int64_t> out = broadcastBatch(p.aBatch, p.bBatch);
  out.push_back(p.M);
  out.push_back(p.N);
  d.output = f32(out);
  d.transA = p.transA;
  d.transB = p.transB;
  d.alpha = p.alpha;
  d.beta = p.beta;
  d.epilogue.act = p.act;
  return d;
}

// The vector unit of a friendly target name (the packer's policy input).
VectorUnit unitOf(const std::string& target) {
  TargetRequest request;
  request.name = target;
  return vectorUnitOf(target == "host" ? testing::hostTarget() : resolveTarget(request));
}

// Packs d's B (`b`, the model's layout) in column panels as the packer would (d.bPanel set);
// the policy must take the product.
std::vector<float> packB(KernelDesc& d, const std::vector<float>& b, const std::string& target) {
  MatMulPanelTile tile = matMulPanelTile(d, unitOf(target));
  if (!tile.applies()) throw std::runtime_error("no panel tile on " + target + " for " + d.key());
  const std::vector<int64_t>& bs = d.inputs[1].shape;
  const int64_t n = d.transB ? bs[bs.size() - 2] : bs.back();
  const int64_t k = d.transB ? bs.back() : bs[bs.size() - 2];
  d.bPanel = tile.nr;
  return packMatMulPanels(b, k, n, d.transB, tile.nr);
}

// `packed`: B in column panels (packMatMulPanels, KernelDesc::bPanel) as for a constant B.
void checkProduct(const Product& p, const std::string& target = "host", bool packed = false) {
  KernelDesc d = productDesc(p);
  auto a = randomFloats(size_t(product(d.inputs[0].shape)), 11);
  auto b = randomFloats(size_t(product(d.inputs[1].shape)), 12);
  std::vector<float> c;
  std::vector<std::vector<float>> inputs = {a, packed ? packB(d, b, target) : b};
  if (!p.bias.empty()) inputs.push_back(c = randomFloats(size_t(product(p.bias)), 13));
  expectClose(runKernel(d, inputs, {1, 2, 3, 16}, target), referenceProduct(p, a, b, c));
}
// On `target`, or by default on AVX2 (whose panels take every case here) and on AVX-512
// where this machine has it and its wider panels apply.
void checkPacked(const Product& p, const std::string& target = "") {
  if (!target.empty()) return checkProduct(p, target, true);
  for (const std::string& name : testing::runnableVectorTargets()) {
    SCOPED_TRACE(name);
    if (name == "x86_64-v3" || matMulPanelTile(productDesc(p), unitOf(name)).applies())
      checkProduct(p, name, true);
  }
}

TEST(MatMulKernels, BatchOneWithTransposedWeights) {
  // torch's Linear: weights [N][K], dot-product tiles of 8 columns (N 37: an edge of 5),
  // K 300 (a masked K tail of 4 lanes).
  checkProduct({{}, {}, 1, 37, 300, false, true, 1.0f, 1.0f, {37}, Activation::None});
  checkProduct({{}, {}, 1, 8, 16, false, true, 1.0f, 1.0f, {1, 8}, Activation::Relu});
  checkProduct({{}, {}, 1, 3, 5, false, true, 2.0f, 0.5f, {1}, Activation::None});
}

TEST(MatMulKernels, BatchOneWithRowMajorWeights) {
  // Broadcast tiles of 4 vectors; N 203 leaves a tile of 11 columns (a masked vector).
  checkProduct({{}, {}, 1, 203, 77, false, false, 1.0f, 1.0f, {203}, Activation::Relu});
  checkProduct({{}, {}, 1, 64, 1, false, false, 0.5f, 1.0f, {}, Activation::None});
}

TEST(MatMulKernels, TallProductsWithEdgeTiles) {
  // 6 x 16 broadcast tiles: M 13 (an edge of 1 row), N 45 (13 columns), scales and a full C.
  checkProduct({{}, {}, 13, 45, 129, false, false, 0.5f, 2.0f, {13, 45}, Activation::Relu});
  // 2 x 4 dot tiles: M 7, N 11, K 70 (tail 6); C broadcast along the rows.
  checkProduct({{}, {}, 7, 11, 70, false, true, 1.0f, -1.0f, {7, 1}, Activation::None});
  // Three rows (a 3 x 16 tile), N below one vector.
  checkProduct({{}, {}, 3, 5, 9, false, false, 1.0f, 1.0f, {5}, Activation::None});
}

TEST(MatMulKernels, TransposedA) {
  checkProduct({{}, {}, 9, 17, 20, true, false, 1.5f, 1.0f, {17}, Activation::None});
  checkProduct({{}, {}, 1, 12, 33, true, false, 1.0f, 1.0f, {}, Activation::None});
  // transA and transB together: neither tile form, the plain loops.
  checkProduct({{}, {}, 5, 6, 7, true, true, 0.5f, 2.0f, {6}, Activation::Relu});
}

TEST(MatMulKernels, BatchedWithBroadcastBatchAxes) {
  // [2,1,5,24] x [3,24,19] -> [2,3,5,19]
  checkProduct({{2, 1}, {3}, 5, 19, 24, false, false, 1.0f, 1.0f, {}, Activation::None});
  // Attention scores: Q [2,4,7,16] x K^T with K stored [2,4,7,16] (transB): dot tiles.
  checkProduct({{2, 4}, {2, 4}, 7, 7, 16, false, true, 1.0f, 1.0f, {}, Activation::None});
  // A matrix times a batch of matrices, and a batched column.
  checkProduct({{}, {4}, 6, 10, 8, false, false, 1.0f, 1.0f, {}, Activation::None});
  checkProduct({{3}, {}, 6, 1, 33, false, false, 1.0f, 1.0f, {}, Activation::None});
  // Shared weights: the batch axes fold into the rows (30 rows of 6 x 16 tiles), with a bias
  // per column; a bias varying along the rows keeps the batch loop.
  checkProduct({{2, 3}, {}, 5, 19, 24, false, false, 1.0f, 1.0f, {19}, Activation::Relu});
  checkProduct({{4}, {}, 7, 10, 16, false, false, 1.0f, 1.0f, {7, 1}, Activation::None});
  checkProduct({{2, 1}, {1, 1}, 5, 9, 8, false, false, 1.0f, 1.0f, {1, 9}, Activation::None});
}

TEST(MatMulKernels, PolynomialActivationLaneByLane) {
  checkProduct({{}, {}, 2, 21, 19, false, true, 1.0f, 1.0f, {21}, Activation::Sigmoid});
  checkProduct({{}, {}, 4, 21, 19, false, false, 1.0f, 1.0f, {21}, Activation::Sigmoid});
}

TEST(MatMulKernels, FourLaneVectors) {
  checkProduct({{}, {}, 1, 37, 30, false, true, 1.0f, 1.0f, {37}, Activation::Relu}, "x86_64");
  checkProduct({{}, {}, 8, 19, 30, false, false, 1.0f, 1.0f, {19}, Activation::None}, "x86_64");
}

TEST(MatMulKernels, FusedResidualChainOnAccumulators) {
  // Y = A x B + C, then + R (a fused Add reading an [M, N] input): the chain evaluates on the
  // accumulator vectors, including the masked edge vector.
  for (bool transB : {false, true}) {
    const int64_t M = 3, N = 27, K = 12;
    Product p{{}, {}, M, N, K, false, transB, 1.0f, 1.0f, {N}, Activation::None};
    KernelDesc d = productDesc(p);
    d.inputs.push_back(f32({M, N}));
    ElementwiseExpr& e = d.epilogue.chain;
    int32_t result = int32_t(e.nodes.size());
    e.nodes.push_back({ExprOp::Result, ElemType::F32});
    e.addBinary(ExprOp::Add, result, e.addInput(3, ElemType::F32));
    d.epilogue.inputCount = 1;
    d.epilogue.shape = d.output.shape;
    auto a = randomFloats(size_t(M * K), 21), b = randomFloats(size_t(K * N), 22);
    auto c = randomFloats(size_t(N), 23), r = randomFloats(size_t(M * N), 24);
    std::vector<float> want = referenceProduct(p, a, b, c);
    for (size_t i = 0; i < want.size(); ++i) want[i] += r[i];
    expectClose(runKernel(d, {a, b, c, r}, {1, 2, 7}), want);
  }
}

// ---- B packed in column panels (a constant B, packMatMulWeights) -----------------------------

TEST(MatMulKernels, PackedBatchOne) {
  // GEMV with row-major weights on 32-column panels: N 37 (a last panel of 5 columns, one
  // masked vector), K odd (the K split's remainder), K 1; scales, every bias form, Relu.
  checkPacked({{}, {}, 1, 37, 301, false, false, 1.0f, 1.0f, {37}, Activation::None});
  checkPacked({{}, {}, 1, 37, 301, false, false, 0.5f, 2.0f, {1, 37}, Activation::Relu});
  checkPacked({{}, {}, 1, 8, 1, false, false, 1.0f, 1.0f, {1}, Activation::None});
  checkPacked({{}, {}, 1, 100, 64, false, false, 1.0f, -0.5f, {100}, Activation::Relu});
  checkPacked({{}, {}, 1, 12, 33, true, false, 1.0f, 1.0f, {}, Activation::None});  // transA
}

TEST(MatMulKernels, PackedTallProducts) {
  // 6 x 16 tiles on 16-column panels: M 3, 7 (an edge row), 64 (edge of 4 rows); N 45 (a last
  // panel of 13 columns), K odd; both weight layouts, scales, row and column biases.
  for (bool transB : {false, true}) {
    checkPacked({{}, {}, 3, 45, 33, false, transB, 1.0f, 1.0f, {45}, Activation::None});
    checkPacked({{}, {}, 7, 45, 129, false, transB, 0.5f, 2.0f, {7, 45}, Activation::Relu});
    checkPacked({{}, {}, 64, 50, 77, false, transB, 1.0f, 1.0f, {64, 1}, Activation::None});
    checkPacked({{}, {}, 2, 19, 9, false, transB, 1.0f, 1.0f, {}, Activation::Sigmoid});
  }
  // transA, and transA with transB (unpacked: the plain loops; packed: tiles).
  checkPacked({{}, {}, 9, 17, 21, true, false, 1.5f, 1.0f, {17}, Activation::None});
  checkPacked({{}, {}, 5, 26, 7, true, true, 0.5f, 2.0f, {26}, Activation::Relu});
}

TEST(MatMulKernels, PackedSharedWeightsOverBatches) {
  // A transformer's Linear: [1, 16, K] x [K, N] + bias (batch folded into rows), B with a
  // leading 1 axis, and batches whose row-varying bias keeps the batch loop.
  checkPacked({{1}, {}, 16, 48, 35, false, false, 1.0f, 1.0f, {48}, Activation::None});
  checkPacked({{2, 3}, {1}, 5, 19, 24, false, false, 1.0f, 1.0f, {19}, Activation::Relu});
  checkPacked({{4}, {}, 7, 10, 16, false, false, 1.0f, 1.0f, {7, 1}, Activation::None});
}

TEST(MatMulKernels, PackedInKBlocks) {
  // K of 3 blocks or more (256 steps each): partial sums through the output between blocks,
  // the scale, bias and activation after the last. K 800: a first block, two middle ones and
  // a last of 32; K 768: one middle block; edge rows and columns, both weight layouts, transA.
  checkPacked({{}, {}, 13, 45, 800, false, false, 0.5f, 2.0f, {13, 45}, Activation::Relu});
  checkPacked({{}, {}, 7, 19, 768, false, true, 1.0f, 1.0f, {19}, Activation::None});
  checkPacked({{}, {}, 9, 40, 1001, true, false, 1.0f, 1.0f, {9, 1}, Activation::Sigmoid});
  checkPacked({{2}, {}, 5, 17, 777, false, true, 1.0f, 1.0f, {2, 1, 17}, Activation::None});
  // One panel, 23 row tiles: groups of 2 row tiles per work item (a 1-tile last group).
  checkPacked({{}, {}, 135, 16, 770, false, false, 1.0f, 1.0f, {16}, Activation::None});
}

TEST(MatMulKernels, PackedFourLaneVectors) {
  checkPacked({{}, {}, 1, 37, 30, false, false, 1.0f, 1.0f, {37}, Activation::Relu}, "x86_64");
  checkPacked({{}, {}, 8, 19, 31, false, true, 1.0f, 1.0f, {19}, Activation::None}, "x86_64");
}

TEST(MatMulKernels, PackedResidualChainOnAccumulators) {
  for (int64_t K : {13, 900}) {  // one pass, and K blocks
  const int64_t M = 7, N = 27;
  Product p{{}, {}, M, N, K, false, true, 1.0f, 1.0f, {N}, Activation::None};
  KernelDesc d = productDesc(p);
  d.inputs.push_back(f32({M, N}));
  ElementwiseExpr& e = d.epilogue.chain;
  int32_t result = int32_t(e.nodes.size());
  e.nodes.push_back({ExprOp::Result, ElemType::F32});
  e.addBinary(ExprOp::Add, result, e.addInput(3, ElemType::F32));
  d.epilogue.inputCount = 1;
  d.epilogue.shape = d.output.shape;
  auto a = randomFloats(size_t(M * K), 21), b = randomFloats(size_t(K * N), 22);
  auto c = randomFloats(size_t(N), 23), r = randomFloats(size_t(M * N), 24);
  std::vector<float> want = referenceProduct(p, a, b, c);
  for (size_t i = 0; i < want.size(); ++i) want[i] += r[i];
  expectClose(runKernel(d, {a, packB(d, b, "host"), c, r}, {1, 2, 7}), want);
  }
}

// A fused MLP head: Y = tailAlpha * act(alpha * A op(W1) + beta * c1) op(W2) + tailBeta * c2.
KernelDesc chainDesc(int64_t M, int64_t K, int64_t N1, int64_t N2, bool transB, bool tailTransB) {
  KernelDesc d;
  d.kind = KernelKind::MatMul;
  d.name = "mlp";
  d.inputs = {f32({M, K}), f32(transB ? std::vector<int64_t>{N1, K} : std::vector<int64_t>{K, N1}),
              f32({N1}),
              f32(tailTransB ? std::vector<int64_t>{N2, N1} : std::vector<int64_t>{N1, N2}),
              f32({N2})};
  d.output = f32({M, N2});
  d.transB = transB;
  d.alpha = 0.75f;
  d.epilogue.act = Activation::Relu;
  d.epilogue.inputCount = 2;  // the second product's weights and bias
  d.epilogue.shape = {M, N1};
  d.tailB = 3;
  d.tailBias = 4;
  d.tailTransB = tailTransB;
  d.tailAlpha = 1.5f;
  d.tailBeta = 0.5f;
  return d;
}

// `packed`: the first weights in column panels, as for a constant.
void checkChain(int64_t M, int64_t K, int64_t N1, int64_t N2, bool transB, bool tailTransB,
                const std::string& target = "host", bool packed = false) {
  KernelDesc d = chainDesc(M, K, N1, N2, transB, tailTransB);
  auto a = randomFloats(size_t(M * K), 31), w1 = randomFloats(size_t(K * N1), 32);
  auto c1 = randomFloats(size_t(N1), 33), w2 = randomFloats(size_t(N1 * N2), 34);
  auto c2 = randomFloats(size_t(N2), 35);
  std::vector<float> want(size_t(M * N2));
  for (int64_t m = 0; m < M; ++m) {
    std::vector<double> h(static_cast<size_t>(N1));
    for (int64_t j = 0; j < N1; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += double(a[size_t(m * K + k)]) * w1[size_t(transB ? j * K + k : k * N1 + j)];
      h[size_t(j)] = std::max(0.0, 0.75 * acc + c1[size_t(j)]);
    }
    for (int64_t n = 0; n < N2; ++n) {
      double acc = 0;
      for (int64_t j = 0; j < N1; ++j)
        acc += h[size_t(j)] * w2[size_t(tailTransB ? n * N1 + j : j * N2 + n)];
      want[size_t(m * N2 + n)] = float(1.5 * acc + 0.5 * c2[size_t(n)]);
    }
  }
  std::vector<float> b = packed ? packB(d, w1, target) : w1;
  expectClose(runKernel(d, {a, b, c1, w2, c2}, {1, 2, 5}, target), want);
}

TEST(MatMulKernels, FusedChainsBatchOne) {
  checkChain(1, 200, 37, 10, true, true);  // torch's MLP head: both transposed
  checkChain(1, 50, 64, 3, false, false);  // row-major weights, N2 below a vector
  checkChain(1, 17, 5, 12, true, false);   // hidden row shorter than a vector
}

TEST(MatMulKernels, FusedChainsSeveralRows) {
  checkChain(3, 40, 19, 10, true, true);
  checkChain(4, 9, 33, 21, false, true);
  checkChain(2, 30, 12, 7, true, true, "x86_64");
  // Blocks of rows: 6-row broadcast tiles (13 rows: blocks of 6, 6 and 1), 2-row dot tiles
  // (5 rows), and a hidden row too long for more than one row per block.
  checkChain(13, 20, 24, 9, false, true);
  checkChain(5, 33, 19, 6, true, false);
  checkChain(3, 8, 1500, 4, true, true);
}

TEST(MatMulKernels, FusedChainsPackedFirstWeights) {
  checkChain(1, 256, 24, 10, false, true, "host", true);
  checkChain(1, 201, 37, 10, false, false, "host", true);
  checkChain(3, 40, 19, 10, false, true, "host", true);
  checkChain(13, 21, 24, 9, true, false, "host", true);    // blocks of 6, 6 and 1 rows
  checkChain(3, 8, 1500, 4, false, true, "host", true);    // one row per block
  checkChain(2, 30, 12, 7, true, true, "x86_64", true);
}

// Targets this machine cannot run: the tiles become multiply-adds on AVX-512's 16-lane zmm
// registers and on NEON's 4-lane registers, for both tile forms and the fused chain.
TEST(MatMulKernels, TilesUseEachTargetsVectors) {
  std::vector<KernelDesc> kernels = {
      productDesc({{}, {}, 1, 100, 64, false, true, 1.0f, 1.0f, {100}, Activation::Relu}),
      productDesc({{}, {}, 13, 45, 64, false, false, 1.0f, 1.0f, {45}, Activation::None}),
      chainDesc(1, 64, 40, 10, true, true),
      productDesc({{}, {}, 13, 45, 800, false, true, 1.0f, 1.0f, {45}, Activation::None})};
  kernels[1].name = "tall";
  kernels[2].name = "mlp";
  kernels[3].name = "packed";  // in K blocks, its B in the target's column panels
  struct Case {
    const char* target;
    const char* multiplyAdd;
    const char* registers;
  };
  for (const Case& c : {Case{"x86_64-v4", "vfmadd", "zmm"}, Case{"aarch64", "fmla", ".4s"}}) {
    TargetRequest request;
    request.name = c.target;
    TargetConfig target = resolveTarget(request);
    kernels[3].bPanel = matMulPanelTile(kernels[3], vectorUnitOf(target)).nr;
    ASSERT_GT(kernels[3].bPanel, 0);
    CodegenResult result = generateKernels(kernels, target);
    testing::TempFile file(result.bytes, ".so");
    std::string text = testing::runTool("llvm-objdump", "-d --no-show-raw-insn " + file.path());
    int vectorMultiplyAdds = 0;
    for (size_t at = text.find(c.multiplyAdd); at != std::string::npos;
         at = text.find(c.multiplyAdd, at + 1)) {
      std::string line = text.substr(at, text.find('\n', at) - at);
      vectorMultiplyAdds += line.find(c.registers) != std::string::npos;
    }
    EXPECT_GE(vectorMultiplyAdds, 16) << c.target;
  }
}

}  // namespace
}  // namespace kiln::codegen
