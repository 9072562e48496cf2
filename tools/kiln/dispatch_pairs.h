// Which dispatch of one artifact is which of another, for `kiln compare --per-dispatch`. Two
// artifacts of one model compiled differently (other flags, another thread count) may fuse
// differently, so dispatches are matched by the first model node each runs (from DEBUG's
// node list, "/conv1/Conv (Conv), /relu/Relu (Relu)" -> "/conv1/Conv") and the first op of
// its name ("Conv+Relu" -> "Conv"): together they name the same layer in both, whatever was
// fused behind it. The op is needed where one model node became several IR ops (a TFLite
// operator imported as Transpose, Conv and Relu: all three name "operator #0"). Among
// dispatches with the same key, the first of A's takes the first of B's. A dispatch whose key
// starts no dispatch of the other artifact is listed alone. Without names (a stripped
// artifact) dispatches are matched by position, which needs as many in each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dispatch_profile.h"

namespace kiln::cli {

struct DispatchPair {
  std::optional<uint32_t> a, b;  // slots in A's and B's dispatch lists (one may be missing)
};

struct DispatchPairing {
  std::vector<DispatchPair> pairs;  // A's order, B's unmatched dispatches where B has them
  bool byPosition = false;          // names missing: matched by position
  std::string error;                // non-empty: no pairing (stripped, different counts)
};

// The first node of a DEBUG node list: the text before its first " (" ("" for "").
std::string firstNodeName(const std::string& nodes);
// What a dispatch is matched by: its first node's name and the first op of its name.
std::string matchKey(const DispatchInfo& info);

DispatchPairing pairDispatches(const std::vector<DispatchInfo>& a,
                               const std::vector<DispatchInfo>& b);

}  // namespace kiln::cli
