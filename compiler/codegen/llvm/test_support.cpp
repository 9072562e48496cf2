// Test helpers: dlopen-based kernel runner, one-dispatch-per-op graphs and LLVM tool invocation.
#include "test_support.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/codegen/row_groups.h"
#include "kiln/ir/parser.h"

namespace kiln::codegen::testing {

TempFile::TempFile(const std::vector<uint8_t>& bytes, const std::string& suffix) {
  std::string pattern = "/tmp/kiln-codegen-test-XXXXXX" + suffix;
  int fd = mkstemps(pattern.data(), static_cast<int>(suffix.size()));
  if (fd < 0) throw std::runtime_error("mkstemps failed");
  bool written = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  if (!written) {
    std::remove(pattern.c_str());
    throw std::runtime_error("write failed");
  }
  path_ = pattern;
}

TempFile::~TempFile() { std::remove(path_.c_str()); }

LoadedLibrary::LoadedLibrary(const std::vector<uint8_t>& elf) {
  {
    // The mapping outlives the file: it is removed as soon as dlopen has read it.
    TempFile file(elf, ".so");
    handle_ = dlopen(file.path().c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto query = reinterpret_cast<kiln_kernel_query_fn>(dlsym(handle_, KILN_KERNEL_QUERY_SYMBOL));
  if (!query) throw std::runtime_error("query symbol missing");
  library_ = query();
}

LoadedLibrary::~LoadedLibrary() {
  if (handle_) dlclose(handle_);
}

void LoadedLibrary::run(uint32_t kernel, const std::vector<void*>& bindings,
                        uint32_t workgroups) const {
  if (kernel >= library_->kernel_count) throw std::runtime_error("kernel index out of range");
  for (uint32_t id = 0; id < workgroups; ++id) {
    library_->kernels[kernel](bindings.data(), id, workgroups);
  }
}

TargetConfig hostTarget() {
  TargetRequest request;
  request.name = "host";
  return resolveTarget(request);
}

bool hostRunsAvx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

const std::vector<std::string>& runnableVectorTargets() {
  static const std::vector<std::string> targets = [] {
    std::vector<std::string> v{"x86_64-v3"};
    if (hostRunsAvx512()) v.push_back("x86_64-v4");
    return v;
  }();
  return targets;
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

// Calls f(dense index, index in buffer's layout) for every element of a 4-D buffer.
template <typename F>
void forEachRowGroupsElement(const BufferDesc& buffer, F f) {
  const std::vector<int64_t>& s = buffer.shape;
  int64_t dense = 0;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w) f(dense++, rowGroupsIndex(buffer, n, c, h, w));
}

}  // namespace

std::vector<float> toRowGroups(const BufferDesc& buffer, const std::vector<float>& dense) {
  std::vector<float> grouped(dense.size());
  forEachRowGroupsElement(buffer, [&](int64_t i, int64_t at) { grouped.at(size_t(at)) = dense.at(size_t(i)); });
  return grouped;
}

std::vector<float> fromRowGroups(const BufferDesc& buffer, const std::vector<float>& grouped) {
  std::vector<float> dense(grouped.size());
  forEachRowGroupsElement(buffer, [&](int64_t i, int64_t at) { dense.at(size_t(i)) = grouped.at(size_t(at)); });
  return dense;
}

std::vector<float> runKernel(const KernelDesc& desc, const std::vector<std::vector<float>>& inputs,
                             std::vector<uint32_t> splits, const std::string& target) {
  TargetRequest request;
  request.name = target;
  CodegenResult result = generateKernels({desc}, resolveTarget(request));
  LoadedLibrary lib(result.bytes);
  std::vector<float> reference;
  for (uint32_t split : splits) {
    std::vector<void*> bindings;
    std::vector<std::vector<float>> copies = inputs;  // kernels may not write inputs, but check
    for (auto& in : copies) bindings.push_back(in.data());
    std::vector<float> out(static_cast<size_t>(product(desc.output.shape)) + 1, 12345.0f);
    bindings.push_back(out.data());
    WorkQueues queues(desc);  // empty at the start of every run, as the artifact's FILL makes them
    if (queues.binding()) bindings.push_back(queues.binding());
    lib.run(result.kernelIndex[0], bindings, split);
    if (out.back() != 12345.0f) throw std::runtime_error("kernel wrote past its output");
    out.pop_back();
    if (reference.empty()) {
      reference = out;
    } else if (std::memcmp(reference.data(), out.data(), out.size() * sizeof(float)) != 0) {
      throw std::runtime_error("workgroup split " + std::to_string(split) + " changed the output");
    }
  }
  return reference;
}

std::vector<float> runKernelOnThreads(const KernelDesc& desc,
                                      const std::vector<std::vector<float>>& inputs,
                                      uint32_t threads, const std::string& target) {
  TargetRequest request;
  request.name = target;
  CodegenResult result = generateKernels({desc}, resolveTarget(request));
  LoadedLibrary lib(result.bytes);
  std::vector<std::vector<float>> copies = inputs;
  std::vector<void*> bindings;
  for (auto& in : copies) bindings.push_back(in.data());
  std::vector<float> out(static_cast<size_t>(product(desc.output.shape)), 12345.0f);
  bindings.push_back(out.data());
  WorkQueues queues(desc);
  if (queues.binding()) bindings.push_back(queues.binding());
  const uint32_t workgroups = result.maxWorkgroups[0];
  const kiln_kernel_fn kernel = lib.library().kernels[result.kernelIndex[0]];
  std::atomic<uint32_t> next{0};
  std::atomic<uint32_t> ready{0};
  auto work = [&] {
    // Start together, so that the threads really do share the workgroups.
    ready.fetch_add(1);
    while (ready.load() < threads) {
    }
    for (uint32_t id; (id = next.fetch_add(1)) < workgroups;)
      kernel(bindings.data(), id, workgroups);
  };
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  return out;
}

ir::DispatchGraph oneDispatchPerOp(const std::string& text) {
  ir::DispatchGraph g;
  g.graph = ir::parseGraph(text);
  for (ir::Op* op : g.graph->opList()) {
    ir::Dispatch d;
    d.id = static_cast<uint32_t>(g.dispatches.size());
    d.name = op->source().nodeName.empty() ? std::string(op->kindName()) : op->source().nodeName;
    d.root = op;
    for (size_t i = 0; i < op->numOperands(); ++i) {
      if (!op->operand(i) || op->info().isStaticOperand(i)) continue;
      ir::Binding b;
      b.value = op->operand(i);
      b.operandIndex = static_cast<int>(i);
      d.bindings.push_back(b);
    }
    for (size_t r = 0; r < op->numResults(); ++r) {
      ir::Binding b;
      b.value = op->result(r);
      b.access = ir::kWrite;
      b.resultIndex = static_cast<int>(r);
      d.bindings.push_back(b);
    }
    g.dispatches.push_back(std::move(d));
  }
  return g;
}

void runDispatches(const ir::DispatchGraph& g, ValueMemory& memory, uint32_t workgroups) {
  CodegenResult r = generateKernels(g, hostTarget());
  LoadedLibrary lib(r.bytes);
  for (const ir::Value* c : g.graph->constants()) memory[c] = c->constantBytes();
  for (const ir::Dispatch& d : g.dispatches) {
    std::vector<void*> bindings;
    for (const ir::Binding& b : d.bindings) {
      std::vector<uint8_t>& bytes = memory[b.value];
      if (bytes.empty()) bytes.resize(std::max<uint64_t>(b.value->type().byteSize(), 1));
      bindings.push_back(bytes.data());
    }
    lib.run(r.kernelIndex[d.id], bindings, workgroups);
  }
}

std::string runTool(const std::string& tool, const std::string& arguments) {
  std::string command = std::string(KILN_LLVM_BIN_DIR) + "/" + tool + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string output;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  pclose(pipe);
  return output;
}

const std::vector<WideTarget>& wideTargets() {
  static const std::vector<WideTarget> targets = {{"x86_64-v4", "vfmadd", "zmm", "prefetcht0"},
                                                  {"aarch64", "fmla", ".4s", "prfm"}};
  return targets;
}

std::string disassemble(const CodegenResult& result) {
  TempFile file(result.bytes, ".so");
  return runTool("llvm-objdump", "-d --no-show-raw-insn " + file.path());
}

int vectorMultiplyAdds(const std::string& disassembly, const WideTarget& t) {
  int count = 0;
  for (size_t at = disassembly.find(t.multiplyAdd); at != std::string::npos;
       at = disassembly.find(t.multiplyAdd, at + 1)) {
    std::string line = disassembly.substr(at, disassembly.find('\n', at) - at);
    count += line.find(t.registers) != std::string::npos;
  }
  return count;
}

BufferDesc f32(std::vector<int64_t> shape) { return {ElemType::F32, std::move(shape)}; }

void expectClose(const std::vector<float>& got, const std::vector<float>& want, float atol,
                 float rtol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << "element " << i;
}

std::vector<float> randomFloats(size_t count, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace kiln::codegen::testing
