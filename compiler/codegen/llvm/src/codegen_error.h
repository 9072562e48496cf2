// Throwing user-facing code-generation errors as kiln::CompileError.
#pragma once

#include <string>

#include "kiln/support/diagnostics.h"

namespace kiln::codegen {

[[noreturn]] inline void fail(const std::string& message) { throw kiln::CompileError(message); }

}  // namespace kiln::codegen
