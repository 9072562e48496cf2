// Runs hand-written artifacts through the interpreter (static kernel library, inline executor)
// and checks outputs against hand-computed values; also the call-time argument checks, the
// trace hook, DEBUG names, external constants and introspection.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime_fixture.h"

namespace kiln::testing {
namespace {

void expectMain(const MainResult& got, const MainResult& want) {
  for (int i = 0; i < 16; ++i) {
    EXPECT_FLOAT_EQ(got.out[i], want.out[i]) << "out[" << i << "]";
    EXPECT_FLOAT_EQ(got.twice[i], want.twice[i]) << "twice[" << i << "]";
  }
  EXPECT_FLOAT_EQ(got.total, want.total);
}

TEST(Interpreter, StaticLibraryArtifactRunsWithoutElf) {
  Loaded::Options options;
  options.elfLoader = false;
  Loaded loaded(writeArtifact(standardSpec(Kernels::kStatic)), options);
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  Context context(loaded.module());
  ASSERT_EQ(context.status(), KILN_OK);
  MainResult result;
  ASSERT_EQ(runMain(context.get(), sampleX(), sampleY(), &result), KILN_OK)
      << kiln_context_error(context.get());
  expectMain(result, referenceMain(sampleX(), sampleY()));
}

TEST(Interpreter, HandComputedValues) {
  // x = i - 6, y = 0.25 * (i % 5), w = -0.5/0/0.5/1 by i % 4, bias 0.25; check a few by hand.
  MainResult ref = referenceMain(sampleX(), sampleY());
  EXPECT_FLOAT_EQ(ref.out[0], 3.25f);   // (-6 + 0) * -0.5 + 0.25
  EXPECT_FLOAT_EQ(ref.out[1], 0.25f);   // (-5 + 0.25) * 0 + 0.25
  EXPECT_FLOAT_EQ(ref.out[2], 0.0f);    // relu((-4 + 0.5) * 0.5 + 0.25) = relu(-1.5)
  EXPECT_FLOAT_EQ(ref.out[15], 9.25f);  // (9 + 0) * 1 + 0.25
  EXPECT_FLOAT_EQ(ref.twice[3], -6.0f);
}

TEST(Interpreter, SecondFunctionByIndexAndName) {
  Loaded loaded(writeArtifact(standardSpec(Kernels::kStatic)));
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  Context context(loaded.module());
  uint32_t index = 99;
  ASSERT_EQ(kiln_module_find_function(loaded.module(), "relu", &index), KILN_OK);
  EXPECT_EQ(index, 1u);
  alignas(64) float x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i) - 8.0f;
  kiln_input in = {x, sizeof x};
  kiln_output out = {y, sizeof y};
  ASSERT_EQ(kiln_context_call(context.get(), index, &in, 1, &out, 1), KILN_OK);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(y[i], i < 8 ? 0.0f : static_cast<float>(i) - 8.0f);
  EXPECT_EQ(kiln_context_call_named(context.get(), "nope", &in, 1, &out, 1), KILN_ERROR_NOT_FOUND);
  EXPECT_STREQ(kiln_context_error(context.get()), "the module has no function 'nope'");
}

TEST(Interpreter, FillAndCopyCommands) {
  ArtifactSpec spec;
  spec.arch = KILN_ARCH_X86_64;
  spec.arenaSize = 64;
  spec.staticLibrary = "kiln_test_kernels";
  spec.kernels = testKernelSignatures();
  FunctionSpec fn;
  fn.name = "f";
  fn.inputs = {{"x", KILN_DTYPE_U8, {8}, 1}};
  fn.outputs = {{"y", KILN_DTYPE_U8, {24}, 1}};
  fn.commands.fill(KILN_SPACE_ARENA, 0, 8, 0xab)
      .copy(KILN_SPACE_INPUT(0), 0, KILN_SPACE_OUTPUT(0), 16, 8)
      .barrier()
      .copy(KILN_SPACE_ARENA, 0, KILN_SPACE_OUTPUT(0), 0, 8)
      .fill(KILN_SPACE_OUTPUT(0), 8, 8, 0x11)
      .ret();
  spec.functions.push_back(fn);
  Loaded loaded(writeArtifact(spec));
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  Context context(loaded.module());
  uint8_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint8_t y[24] = {};
  kiln_input in = {x, sizeof x};
  kiln_output out = {y, sizeof y};
  ASSERT_EQ(kiln_context_call(context.get(), 0, &in, 1, &out, 1), KILN_OK);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(y[i], 0xab);
    EXPECT_EQ(y[8 + i], 0x11);
    EXPECT_EQ(y[16 + i], x[i]);
  }
}

TEST(Interpreter, ElementwiseResultInPlaceOverItsInput) {
  // The memory planner writes elementwise results over their input: add(a = arena+0,
  // b = in1, out = arena+0) must load and compute a + b.
  ArtifactSpec spec;
  spec.arenaSize = 64;
  spec.staticLibrary = "kiln_test_kernels";
  spec.kernels = testKernelSignatures();
  FunctionSpec fn;
  fn.name = "f";
  fn.inputs = {{"x", KILN_DTYPE_F32, {16}}, {"y", KILN_DTYPE_F32, {16}}};
  fn.outputs = {{"z", KILN_DTYPE_F32, {16}}};
  fn.commands.copy(KILN_SPACE_INPUT(0), 0, KILN_SPACE_ARENA, 0, 64)
      .barrier()
      .dispatch(kAdd, 2, {{KILN_SPACE_ARENA, 0}, {KILN_SPACE_INPUT(1), 0}, {KILN_SPACE_ARENA, 0}})
      .barrier()
      .copy(KILN_SPACE_ARENA, 0, KILN_SPACE_OUTPUT(0), 0, 64)
      .ret();
  spec.functions.push_back(fn);
  Loaded loaded(writeArtifact(spec));
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  Context context(loaded.module());
  alignas(64) float x[16], y[16], z[16];
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i), y[i] = 100.0f;
  kiln_input in[] = {{x, sizeof x}, {y, sizeof y}};
  kiln_output out = {z, sizeof z};
  ASSERT_EQ(kiln_context_call(context.get(), 0, in, 2, &out, 1), KILN_OK);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(z[i], 100.0f + static_cast<float>(i));
}

TEST(Interpreter, ExternalConstants) {
  std::vector<uint8_t> constants = standardConstants();
  AlignedBuffer aligned(constants);
  Loaded::Options options;
  options.externalConstants = aligned.data();
  options.externalConstantsSize = aligned.size();
  Loaded loaded(writeArtifact(standardSpec(Kernels::kStatic, Constants::kExternal)), options);
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  Context context(loaded.module());
  MainResult result;
  ASSERT_EQ(runMain(context.get(), sampleX(), sampleY(), &result), KILN_OK);
  expectMain(result, referenceMain(sampleX(), sampleY()));
}

struct TraceLog {
  std::vector<uint32_t> dispatches, kernels;
  uint64_t clock = 0;
  bool ordered = true;
};

TEST(Interpreter, TraceHookSeesEveryDispatchInOrder) {
  Loaded loaded(writeArtifact(standardSpec(Kernels::kStatic)));
  ASSERT_EQ(loaded.status(), KILN_OK);
  Context context(loaded.module());
  TraceLog log;
  kiln_context_set_trace(
      context.get(),
      [](void* user, uint32_t dispatch, uint32_t kernel, uint64_t start, uint64_t end) {
        auto* l = static_cast<TraceLog*>(user);
        l->dispatches.push_back(dispatch);
        l->kernels.push_back(kernel);
        if (end < start) l->ordered = false;
      },
      [](void* user) { return ++static_cast<TraceLog*>(user)->clock; }, &log);
  MainResult result;
  ASSERT_EQ(runMain(context.get(), sampleX(), sampleY(), &result), KILN_OK);
  expectMain(result, referenceMain(sampleX(), sampleY()));
  EXPECT_EQ(log.dispatches, (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(log.kernels, (std::vector<uint32_t>{kAdd, kAdd, kScaleBias, kRelu, kSum}));
  EXPECT_TRUE(log.ordered);
  // The "relu" function's dispatch continues the global numbering.
  log.dispatches.clear();
  alignas(64) float x[16] = {}, y[16];
  kiln_input in = {x, sizeof x};
  kiln_output out = {y, sizeof y};
  ASSERT_EQ(kiln_context_call(context.get(), 1, &in, 1, &out, 1), KILN_OK);
  EXPECT_EQ(log.dispatches, (std::vector<uint32_t>{5}));
}

TEST(Interpreter, DebugNamesAndIntrospection) {
  Loaded loaded(writeArtifact(standardSpec(Kernels::kStatic)));
  ASSERT_EQ(loaded.status(), KILN_OK);
  const char* name = nullptr;
  const char* node = nullptr;
  ASSERT_EQ(kiln_module_dispatch_debug(loaded.module(), 2, &name, &node), KILN_OK);
  EXPECT_STREQ(name, "dispatch_2");
  EXPECT_STREQ(node, "node_2");
  EXPECT_EQ(kiln_module_dispatch_debug(loaded.module(), 6, &name, &node), KILN_ERROR_NOT_FOUND);

  kiln_module_info info;
  kiln_module_info_get(loaded.module(), &info);
  EXPECT_EQ(info.arena_size, 192u);
  EXPECT_EQ(info.kernel_count, 4u);
  EXPECT_EQ(info.function_count, 2u);
  EXPECT_EQ(info.dispatch_count, 6u);
  EXPECT_EQ(info.max_stage_dispatches, 2u);
  EXPECT_EQ(info.kernels_static, 1u);
  EXPECT_STREQ(info.kernel_library, "kiln_test_kernels");

  kiln_function_info fn;
  ASSERT_EQ(kiln_module_function_info(loaded.module(), 0, &fn), KILN_OK);
  EXPECT_STREQ(fn.name, "main");
  EXPECT_EQ(fn.input_count, 2u);
  EXPECT_EQ(fn.output_count, 3u);
  kiln_tensor_info t;
  ASSERT_EQ(kiln_module_input_info(loaded.module(), 0, 1, &t), KILN_OK);
  EXPECT_STREQ(t.name, "y");
  EXPECT_EQ(t.dtype, uint32_t{KILN_DTYPE_F32});
  ASSERT_EQ(t.rank, 2u);
  EXPECT_EQ(t.dims[0], 1u);
  EXPECT_EQ(t.dims[1], 16u);
  EXPECT_EQ(t.byte_size, 64u);
  ASSERT_EQ(kiln_module_output_info(loaded.module(), 0, 1, &t), KILN_OK);
  EXPECT_STREQ(t.name, "total");
  EXPECT_EQ(t.byte_size, 4u);
  EXPECT_EQ(kiln_module_output_info(loaded.module(), 0, 3, &t), KILN_ERROR_INVALID_ARGUMENT);

  uint32_t count = 0;
  ASSERT_EQ(kiln_module_kernel_binding_count(loaded.module(), kScaleBias, &count), KILN_OK);
  EXPECT_EQ(count, 4u);
  kiln_binding_info b;
  ASSERT_EQ(kiln_module_kernel_binding(loaded.module(), kScaleBias, 2, &b), KILN_OK);
  EXPECT_EQ(b.length, 4u);
  EXPECT_EQ(b.access, uint32_t{KILN_ACCESS_READ});
}

class CallErrors : public ::testing::Test {
 protected:
  CallErrors()
      : loaded_(writeArtifact(standardSpec(Kernels::kStatic))), context_(loaded_.module()) {}
  kiln_status_t call(const kiln_input* in, uint32_t nin, const kiln_output* out, uint32_t nout) {
    return kiln_context_call(context_.get(), 1, in, nin, out, nout);
  }
  std::string error() const { return kiln_context_error(context_.get()); }
  Loaded loaded_;
  Context context_;
  alignas(64) float x_[16] = {};
  alignas(64) float y_[17] = {};
};

TEST_F(CallErrors, WrongCounts) {
  kiln_input in = {x_, 64};
  EXPECT_EQ(call(&in, 1, nullptr, 0), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "function 'relu' takes 1 inputs and 1 outputs, the call passed 1 and 0");
}

TEST_F(CallErrors, SmallBuffer) {
  kiln_input in = {x_, 60};
  kiln_output out = {y_, 64};
  EXPECT_EQ(call(&in, 1, &out, 1), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "input 0 'x' needs a buffer of 64 bytes, got 60");
}

TEST_F(CallErrors, MisalignedBuffer) {
  kiln_input in = {x_, 64};
  kiln_output out = {reinterpret_cast<uint8_t*>(y_) + 4, 64};
  EXPECT_EQ(call(&in, 1, &out, 1), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "output 0 'y' buffer must be 16-byte aligned");
}

TEST_F(CallErrors, OverlappingBuffers) {
  kiln_input in = {x_, 64};
  kiln_output out = {x_, 64};
  EXPECT_EQ(call(&in, 1, &out, 1), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "output 0 buffer overlaps input 0");
}

TEST_F(CallErrors, FunctionIndexOutOfRange) {
  EXPECT_EQ(kiln_context_call(context_.get(), 7, nullptr, 0, nullptr, 0), KILN_ERROR_NOT_FOUND);
  EXPECT_EQ(error(), "function index 7 out of range (2 functions)");
}

TEST(Context, MemoryMustBeAlignedAndLargeEnough) {
  Loaded loaded(writeArtifact(standardSpec(Kernels::kStatic)));
  ASSERT_EQ(loaded.status(), KILN_OK);
  size_t size = kiln_context_memory_size(loaded.module());
  EXPECT_GE(size, 192u);
  AlignedBuffer memory(size + 64);
  kiln_context* c = nullptr;
  EXPECT_EQ(kiln_context_init(loaded.module(), nullptr, memory.data() + 8, size, &c),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_context_init(loaded.module(), nullptr, memory.data(), size - 1, &c),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_context_init(loaded.module(), nullptr, memory.data(), size, &c), KILN_OK);
}

TEST(Version, ReportsFormatAndAbi) {
  kiln_version_info v;
  kiln_version(&v);
  EXPECT_EQ(v.format_major, KILN_FORMAT_MAJOR);
  EXPECT_EQ(v.format_minor, KILN_FORMAT_MINOR);
  EXPECT_EQ(v.kernel_abi_version, KILN_KERNEL_ABI_VERSION);
  EXPECT_STREQ(kiln_status_string(KILN_ERROR_MALFORMED), "malformed artifact");
}

}  // namespace
}  // namespace kiln::testing
