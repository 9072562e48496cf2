// The hand-written test kernels (test_kernels.c) as seen by the tests: the static library, the
// embedded-ELF builds, and the kernels' true binding signatures for artifacts.
#ifndef KILN_RUNTIME_TESTING_TEST_KERNELS_H_
#define KILN_RUNTIME_TESTING_TEST_KERNELS_H_

#include <string>
#include <vector>

#include "artifact_writer.h"
#include "kiln/format/kernel_abi.h"

extern "C" const kiln_kernel_library* kiln_test_kernels_static(void);

namespace kiln::testing {

enum TestKernel : uint32_t { kAdd = 0, kScaleBias = 1, kRelu = 2, kSum = 3 };
constexpr uint32_t kVectorBytes = 64;  // 16 x f32

// Binding signatures of the four kernels, in kernel order.
std::vector<std::vector<BindingSpec>> testKernelSignatures();

// Path of the test kernels' shared object for `arch` ("x86_64", "aarch64", "riscv64").
std::string testKernelElfPath(const std::string& arch);

// Directory the build writes test artifacts into (fuzzer seeds).
std::string testArtifactDir();

}  // namespace kiln::testing

#endif  // KILN_RUNTIME_TESTING_TEST_KERNELS_H_
