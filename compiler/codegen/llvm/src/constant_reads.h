// How often each constant of a dispatch graph is read, for the compile-time weight packers
// (pack_weights.cpp, pack_matmul_weights.cpp): a constant may be rewritten into a kernel's
// order only when the one dispatch reading it is that kernel. LLVM-free.
#pragma once

#include <cstdint>
#include <map>

namespace kiln::ir {
struct DispatchGraph;
}

namespace kiln::codegen::detail {

// Constant index -> reads by any dispatch binding or copy step.
std::map<uint32_t, int> constantReads(const ir::DispatchGraph& graph);

}  // namespace kiln::codegen::detail
