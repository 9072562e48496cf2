// Which dispatch of one artifact is which of another, for `kiln compare --per-dispatch`. Two
// artifacts of one model compiled differently (other flags, another thread count) may fuse
// differently, so dispatches are matched by the first model node each runs (from DEBUG's
// node list, "/conv1/Conv (Conv), /relu/Relu (Relu)" -> "/conv1/Conv"): it names the same
// layer in both, whatever was fused behind it. A dispatch whose first node starts no dispatch
// of the other artifact is listed alone. Without names (a stripped artifact) dispatches are
// matched by position, which needs as many in each.
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

DispatchPairing pairDispatches(const std::vector<DispatchInfo>& a,
                               const std::vector<DispatchInfo>& b);

}  // namespace kiln::cli
