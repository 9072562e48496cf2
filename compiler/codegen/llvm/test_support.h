// Helpers for the code generator's unit tests: load a generated embedded ELF with dlopen and
// call its kernels, build and run small dispatch graphs from IR text, run LLVM's command-line
// tools on generated files, make random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kiln/codegen/codegen.h"
#include "kiln/codegen/work_queue.h"
#include "kiln/format/kernel_abi.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen::testing {

// A generated kernel library loaded into the test process.
class LoadedLibrary {
 public:
  explicit LoadedLibrary(const std::vector<uint8_t>& elf);
  ~LoadedLibrary();
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;

  const kiln_kernel_library& library() const { return *library_; }
  // Runs every workgroup of `kernel` in turn, like the inline executor.
  void run(uint32_t kernel, const std::vector<void*>& bindings, uint32_t workgroups = 1) const;

 private:
  void* handle_ = nullptr;
  const kiln_kernel_library* library_ = nullptr;
};

// The target the tests run kernels on (the friendly name matching the test machine).
TargetConfig hostTarget();

// Whether this machine runs x86-64-v4 (AVX-512 F/BW/DQ/VL) code.
bool hostRunsAvx512();
// The x86-64 vector targets this machine runs, for kernel tests that must not depend on which
// machine runs them: "x86_64-v3" (AVX2: 8 lanes, 16 registers; the policies were first tuned
// there), then "x86_64-v4" (AVX-512: 16 lanes, 32 registers) where the CPU has it. A test
// that asserts an AVX2 policy names "x86_64-v3"; "host" is whichever of the two (or wider)
// the test machine is, so a policy asserted on "host" would hold on one machine only.
const std::vector<std::string>& runnableVectorTargets();

// Generates a library with one kernel and runs it once per workgroup count in `splits`,
// checking that every split gives the same output (returned).
// `target` names a friendly target the test machine can run ("host" by default).
std::vector<float> runKernel(const KernelDesc& desc, const std::vector<std::vector<float>>& inputs,
                             std::vector<uint32_t> splits = {1, 3},
                             const std::string& target = "host");

// `dense` (row-major values of `buffer`'s 4-D shape) where buffer.rowGroups puts them
// (kiln/codegen/row_groups.h), and back.
std::vector<float> toRowGroups(const BufferDesc& buffer, const std::vector<float>& dense);
std::vector<float> fromRowGroups(const BufferDesc& buffer, const std::vector<float>& grouped);

// The work-queue binding of a kernel with work queues (KernelDesc::workQueues), empty (zero),
// as the artifact's FILL leaves it before every call; no binding otherwise.
class WorkQueues {
 public:
  explicit WorkQueues(const KernelDesc& desc)
      : lines_(size_t(desc.workQueues) * kWorkQueueBytes / sizeof(Line)) {}
  void* binding() { return lines_.empty() ? nullptr : lines_.data(); }

 private:
  struct alignas(kWorkQueueBytes) Line {
    uint8_t bytes[kWorkQueueBytes] = {};
  };
  std::vector<Line> lines_;
};

// Generates a library with one kernel and runs every workgroup of it on `threads` threads at
// once, each claiming the next workgroup like the thread pool does; returns the output.
std::vector<float> runKernelOnThreads(const KernelDesc& desc,
                                      const std::vector<std::vector<float>>& inputs,
                                      uint32_t threads, const std::string& target = "host");

// The graph parsed from IR text with one dispatch per op (no fusion), each dispatch's bindings in
// formDispatches' order: its runtime operands (static operands are baked in), then its results.
ir::DispatchGraph oneDispatchPerOp(const std::string& text);

// The bytes of each value of a dispatch graph while it runs.
using ValueMemory = std::map<const ir::Value*, std::vector<uint8_t>>;

// Generates the graph's kernels for the host and runs its dispatches in order, `workgroups`
// workgroups each, on `memory`: the caller fills in the graph inputs; constants are copied in
// here and every other value is zero-filled when a dispatch first binds it.
void runDispatches(const ir::DispatchGraph& g, ValueMemory& memory, uint32_t workgroups);

// A fresh temporary file holding `bytes`, removed when the object goes out of scope (also when
// an ASSERT returns early or the test throws), so test runs leave nothing in /tmp.
class TempFile {
 public:
  TempFile(const std::vector<uint8_t>& bytes, const std::string& suffix);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};
// Runs an LLVM tool (llvm-readelf-19, llvm-objdump-19 ...) and returns its standard output.
std::string runTool(const std::string& tool, const std::string& arguments);

// A vector target of the compile-only checks (the test machine may not run its code) and how
// llvm-objdump prints its instructions.
struct WideTarget {
  const char* name;         // friendly target name
  const char* multiplyAdd;  // the vector multiply-add's mnemonic (prefix)
  const char* registers;    // operand text of a full vector register
  const char* prefetch;     // the data prefetch's mnemonic
};
// AVX-512 (x86_64-v4: vfmadd on zmm) and NEON (aarch64: fmla on .4s).
const std::vector<WideTarget>& wideTargets();
// llvm-objdump's disassembly of a generated kernel library.
std::string disassemble(const CodegenResult& result);
// How many instructions of `disassembly` are `t`'s multiply-adds on full vector registers.
int vectorMultiplyAdds(const std::string& disassembly, const WideTarget& t);

std::vector<float> randomFloats(size_t count, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
int64_t product(const std::vector<int64_t>& shape);

// n integers drawn uniformly from [lo, hi], as T.
template <typename T>
std::vector<T> randomInts(size_t n, uint32_t seed, int64_t lo, int64_t hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<T> v(n);
  for (T& e : v) e = static_cast<T>(dist(rng));
  return v;
}

// Runs the one kernel of `library` (an embedded ELF generated from `d` alone) with 1, 3 and 64
// workgroups: every split must give the same output (returned, elements of type Out) and none
// may write past the output.
template <typename Out>
std::vector<Out> runEverySplit(const std::vector<uint8_t>& library, const KernelDesc& d,
                               const std::vector<const void*>& inputs) {
  LoadedLibrary lib(library);
  std::vector<Out> first;
  for (uint32_t split : {1u, 3u, 64u}) {
    std::vector<Out> out(size_t(d.output.elementCount()) + 1, Out(99));
    std::vector<void*> bindings;
    for (const void* p : inputs) bindings.push_back(const_cast<void*>(p));
    bindings.push_back(out.data());
    lib.run(0, bindings, split);
    EXPECT_EQ(out.back(), Out(99)) << "wrote past the output";
    out.pop_back();
    if (first.empty()) {
      first = out;
    } else {
      EXPECT_EQ(first, out) << "workgroup split " << split;
    }
  }
  return first;
}

// An f32 buffer of this shape, for kernel descriptions.
BufferDesc f32(std::vector<int64_t> shape);
// Fails the test (gtest fatal assertion) unless got has want's size and every element is
// within atol + rtol * |want|; names the first element that is not.
void expectClose(const std::vector<float>& got, const std::vector<float>& want, float atol = 1e-5f,
                 float rtol = 1e-4f);

}  // namespace kiln::codegen::testing
