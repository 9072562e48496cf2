// Consistency checks of a planned and scheduled DispatchGraph: every binding and step inside
// its space with the right length, steps in stage order, producers in earlier stages than
// their readers, and no two steps racing on bytes — within a stage nobody touches bytes
// another step writes (except a dispatch's recorded in-place pair), and between a tensor's
// write and its last read nobody else writes its bytes. Throws kiln::CompileError
// "dispatch graph verifier: ..." at the first problem (a compiler bug: the pipeline turns it
// into an internal error). Runs after planMemory in debug builds and in tests.
#pragma once

namespace kiln::ir {

struct DispatchGraph;

void verifyDispatchGraph(const DispatchGraph& graph);

}  // namespace kiln::ir
