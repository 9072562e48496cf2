// libFuzzer target: load + validate + run. Every input is an artifact candidate; it is loaded
// with the test kernels as a STATIC kernel library (compiled into the fuzzer: the kernel code
// and its true signatures are the trusted input, since executing code from a mutated ELF means
// nothing) and the standard external constants. A module that validates is introspected and,
// when its signatures cover what the kernels really touch, every entry function runs.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "artifact_writer.h"
#include "kiln/kiln.h"
#include "module_runner.h"
#include "test_artifacts.h"
#include "test_kernels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln::testing;
  static const AlignedBuffer constants(standardConstants());
  AlignedBuffer artifact(std::vector<uint8_t>(data, data + size));
  AlignedBuffer memory(kiln_module_memory_size());
  const kiln_kernel_library* libraries[] = {kiln_test_kernels_static()};
  char error[256];
  kiln_load_options options;
  kiln_load_options_init(&options);
  options.kernel_libraries = libraries;
  options.kernel_library_count = 1;
  options.external_constants = constants.data();
  options.external_constants_size = constants.size();
  options.error = error;
  options.error_capacity = sizeof error;
  kiln_module* module = nullptr;
  if (kiln_module_load(artifact.data(), artifact.size(), &options, memory.data(), memory.size(),
                       &module) != KILN_OK) {
    return 0;
  }
  kiln_module_info info;
  kiln_module_info_get(module, &info);
  for (uint32_t d = 0; d < info.dispatch_count; ++d) {
    const char* name = nullptr;
    const char* node = nullptr;
    kiln_module_dispatch_debug(module, d, &name, &node);
  }
  if (signaturesCoverTestKernels(module)) runAllFunctions(module);
  kiln_module_unload(module);
  // The runtime reads the artifact in place and never writes it.
  if (__builtin_memcmp(artifact.data(), data, size) != 0) __builtin_trap();
  return 0;
}
