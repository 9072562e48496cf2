// Matching the dispatches of two artifacts of one model (see dispatch_pairs.h).
#include "dispatch_pairs.h"

#include <algorithm>
#include <map>

namespace kiln::cli {

std::string firstNodeName(const std::string& nodes) {
  const size_t end = nodes.find(" (");
  return end == std::string::npos ? nodes : nodes.substr(0, end);
}

std::string matchKey(const DispatchInfo& info) {
  const std::string firstOp = info.name.substr(0, info.name.find('+'));
  return firstNodeName(info.node) + " " + firstOp;
}

DispatchPairing pairDispatches(const std::vector<DispatchInfo>& a,
                               const std::vector<DispatchInfo>& b) {
  DispatchPairing result;
  bool named = true;
  for (const std::vector<DispatchInfo>* side : {&a, &b})
    for (const DispatchInfo& info : *side) named = named && !firstNodeName(info.node).empty();
  if (!named) {
    if (a.size() != b.size()) {
      result.error = "a dispatch has no node name (an artifact compiled with --strip?) and A "
                     "has " + std::to_string(a.size()) + " dispatches, B " +
                     std::to_string(b.size()) + ": they cannot be matched";
      return result;
    }
    result.byPosition = true;
    for (uint32_t i = 0; i < a.size(); ++i) result.pairs.push_back({i, i});
    return result;
  }
  // Each of A's dispatches takes the first of B's not yet taken with its key.
  std::multimap<std::string, uint32_t> bByNode;
  for (uint32_t k = 0; k < b.size(); ++k) bByNode.emplace(matchKey(b[k]), k);
  std::vector<std::optional<uint32_t>> match(a.size());
  std::vector<bool> taken(b.size(), false);
  for (uint32_t i = 0; i < a.size(); ++i) {
    auto [first, last] = bByNode.equal_range(matchKey(a[i]));
    for (auto it = first; it != last; ++it)
      if (!taken[it->second]) {
        match[i] = it->second;
        taken[it->second] = true;
        break;
      }
  }
  // A's order; B's dispatches that match none go just before the next matched one after them.
  uint32_t nextB = 0;
  auto listUnmatchedB = [&](uint32_t end) {
    for (; nextB < end; ++nextB)
      if (!taken[nextB]) result.pairs.push_back({std::nullopt, nextB});
  };
  for (uint32_t i = 0; i < a.size(); ++i) {
    if (match[i]) listUnmatchedB(std::max(nextB, *match[i]));
    result.pairs.push_back({i, match[i]});
  }
  listUnmatchedB(uint32_t(b.size()));
  return result;
}

}  // namespace kiln::cli
