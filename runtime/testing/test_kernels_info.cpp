// The test kernels' true binding signatures and where the build put their shared objects.
#include "test_kernels.h"

namespace kiln::testing {

std::vector<std::vector<BindingSpec>> testKernelSignatures() {
  const uint8_t R = KILN_ACCESS_READ, W = KILN_ACCESS_WRITE;
  return {
      {{kVectorBytes, R}, {kVectorBytes, R}, {kVectorBytes, W}},
      {{kVectorBytes, R}, {kVectorBytes, R}, {4, R}, {kVectorBytes, W}},
      {{kVectorBytes, uint8_t(R | W)}},
      {{kVectorBytes, R}, {4, W}},
  };
}

std::string testKernelElfPath(const std::string& arch) {
  return std::string(KILN_TEST_KERNEL_DIR) + "/test_kernels_" + arch + ".so";
}

std::string testArtifactDir() { return KILN_TEST_ARTIFACT_DIR; }

}  // namespace kiln::testing
