// Parses the IR text form (see printer.h for the grammar) into a Graph. Errors are
// kiln::CompileError with "FILE:LINE:COLUMN: message" (e.g. "test.kir:3:12: use of
// undefined value %x"). The parser builds the graph as written; it does not verify it
// (call verifyGraph).
#pragma once

#include <memory>
#include <string_view>

#include "kiln/ir/graph.h"

namespace kiln::ir {

std::unique_ptr<Graph> parseGraph(std::string_view text, std::string_view fileName = "<ir>");

}  // namespace kiln::ir
