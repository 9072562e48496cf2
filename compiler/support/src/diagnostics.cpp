// Implementation of the internal-error path behind KILN_ASSERT.
#include "kiln/support/diagnostics.h"

#include <cstdio>
#include <cstdlib>

namespace kiln {

void internalError(const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "kiln: internal error at %s:%d: %s\n", file, line, message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace kiln
