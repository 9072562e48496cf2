// Diagnostics for the compiler side: kiln::CompileError for user-facing errors (bad model,
// bad flag, unsupported op, malformed IR text) and KILN_ASSERT for compiler bugs.
//
// A CompileError's message is one line that names the thing at fault (file, node name, op
// type, flag). The driver prints it as "kiln: error: <message>" and exits with status 1.
// KILN_ASSERT stays on in release builds: a broken invariant is a bug and aborts with the
// file, line and message instead of producing a wrong artifact.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln {

// A user-facing compile error. Throw it with a complete, self-contained message.
class CompileError : public std::runtime_error {
 public:
  explicit CompileError(const std::string& message) : std::runtime_error(message) {}
};

// Prints "kiln: internal error at FILE:LINE: MESSAGE" to stderr and aborts.
[[noreturn]] void internalError(const char* file, int line, const std::string& message);

}  // namespace kiln

// Checks an internal invariant (a compiler bug if it fails), in every build type.
#define KILN_ASSERT(cond, message)                                                      \
  do {                                                                                  \
    if (!(cond))                                                                        \
      ::kiln::internalError(__FILE__, __LINE__,                                         \
                            std::string("assertion `" #cond "` failed: ") + (message)); \
  } while (false)

// Marks code that must never be reached.
#define KILN_UNREACHABLE(message) ::kiln::internalError(__FILE__, __LINE__, (message))
