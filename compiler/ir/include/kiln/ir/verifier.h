// The IR verifier: types, shapes, SSA order and every op's rule. Throws kiln::CompileError
// "IR verifier: <what> in <op>: <detail>" at the first problem. Passes run it between each
// other in debug builds (passes/pipeline.h); tests and the importer call it directly.
//
// Checks: unique value names; every operand defined before its use (inputs, constants, or
// results of earlier ops of this graph); operand and result counts; only optional operands
// absent; constants' byte size matches their type; the op's rule accepts it and its result
// types equal the inferred ones (dtype and shape); use lists match the operands; outputs
// defined and uniquely named.
#pragma once

namespace kiln::ir {

class Graph;

void verifyGraph(const Graph& graph);

}  // namespace kiln::ir
