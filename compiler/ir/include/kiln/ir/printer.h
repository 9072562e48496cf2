// Prints a Graph in the IR text form (parser.h reads it back). Grammar, by example:
//
//   graph @resnet_block {
//     input %x : f32[1,3,8,8]
//     const %w : f32[2] = [0.5, -1.0]                  # literal elements, row-major
//     const %big : f32[64,3,3,3] = hex"0000803f..."     # raw little-endian bytes
//     const %z : f32[64] = splat(0.0)                   # every element equal
//     const %e : f32[4096] = elided("fnv1a64:9f0c...")  # contents not printed (see below)
//     %y = Conv(%x, %w2, none) {group = 1, pads = [1, 1, 1, 1]} : f32[1,8,8,8] loc("conv1", "Conv")
//     %a, %b = Split(%y, %s) {axis = 1} : f32[1,4,8,8], f32[1,4,8,8]
//     output "logits" = %y
//   }
//
// Names: %[A-Za-z0-9_.$/-]+ or %"any text" (quoted with \" and \\ escapes). Comments: # to
// the end of the line.
// Attributes: int 3, float 1.5 / 1e-05 / inf / nan, ints [1, 2] or [], floats [1.0, 2.0] or
// floats[], string "text". Types: dtype[dims] ("f32[]" is a scalar), optionally followed by
// quant(scale=0.5, zero_point=0) or quant(axis=0, scale=[...], zero_point=[...]).
// Constants print as literal lists when small (PrintOptions::maxLiteralElements) and exact,
// as splat(v) when every element is equal, else as hex. With elideConstantsOver set, larger
// constants print as elided("fnv1a64:HASH") — the parser accepts it and fills the constant
// with zeros (for reading dumps, not for exact round trips).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace kiln::ir {

class Graph;

struct PrintOptions {
  size_t maxLiteralElements = 16;            // larger non-splat constants print as hex
  uint64_t elideConstantsOver = UINT64_MAX;  // bytes; larger constants print elided
  bool printLocations = true;                // loc("node", "OpType")
};

void printGraph(std::ostream& out, const Graph& graph, const PrintOptions& options = {});
std::string printGraph(const Graph& graph, const PrintOptions& options = {});

// "%name" with quoting if needed.
std::string valueRef(const std::string& name);

}  // namespace kiln::ir
