// Test helpers: dlopen-based kernel runner and LLVM tool invocation.
#include "test_support.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>

namespace kiln::codegen::testing {

std::string writeTempFile(const std::vector<uint8_t>& bytes, const std::string& suffix) {
  std::string pattern = "/tmp/kiln-codegen-test-XXXXXX" + suffix;
  int fd = mkstemps(pattern.data(), static_cast<int>(suffix.size()));
  if (fd < 0) throw std::runtime_error("mkstemps failed");
  if (write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    close(fd);
    throw std::runtime_error("write failed");
  }
  close(fd);
  return pattern;
}

LoadedLibrary::LoadedLibrary(const std::vector<uint8_t>& elf) {
  path_ = writeTempFile(elf, ".so");
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto query = reinterpret_cast<kiln_kernel_query_fn>(dlsym(handle_, KILN_KERNEL_QUERY_SYMBOL));
  if (!query) throw std::runtime_error("query symbol missing");
  library_ = query();
}

LoadedLibrary::~LoadedLibrary() {
  if (handle_) dlclose(handle_);
  std::remove(path_.c_str());
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

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
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

std::vector<float> randomFloats(size_t count, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace kiln::codegen::testing
