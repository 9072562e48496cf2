// Helpers for the pass tests: parse IR text, run a pass, print the result.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>

#include "kiln/ir/dispatch_graph.h"
#include "kiln/ir/dispatch_verifier.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"

namespace kiln::passes::testing {

inline std::unique_ptr<ir::Graph> parseVerified(const std::string& text) {
  auto graph = ir::parseGraph(text, "test.kir");
  ir::verifyGraph(*graph);
  return graph;
}

// Parses `text`, runs `pass`, verifies and returns the printed graph.
template <typename Pass>
std::string runPass(const std::string& text, Pass pass, bool expectChange = true) {
  auto graph = parseVerified(text);
  bool changed = pass(*graph);
  EXPECT_EQ(changed, expectChange);
  ir::verifyGraph(*graph);
  return ir::printGraph(*graph);
}

// Prints naive / lower bound / planned arena sizes and checks planned <= 1.15 x bound.
inline void expectWithinBound(const ir::DispatchGraph& dg, const char* label) {
  std::printf(
      "[ memory ] %s: %zu dispatches, %u stages, naive %llu B, lower bound %llu B, planned %llu B "
      "(%.3fx)\n",
      label, dg.dispatches.size(), dg.numStages, (unsigned long long)dg.memory.naiveBytes,
      (unsigned long long)dg.memory.lowerBound, (unsigned long long)dg.memory.arenaBytes,
      dg.memory.lowerBound ? double(dg.memory.arenaBytes) / double(dg.memory.lowerBound) : 1.0);
  EXPECT_LE(double(dg.memory.arenaBytes), 1.15 * double(dg.memory.lowerBound)) << label;
  EXPECT_GE(dg.memory.arenaBytes, dg.memory.lowerBound) << label;
  EXPECT_LE(dg.memory.arenaBytes, dg.memory.naiveBytes) << label;
}

// No two arena tensors that are live in a common stage overlap, unless they are an
// in-place pair of one dispatch.
inline void expectNoConflicts(const ir::DispatchGraph& dg) {
  EXPECT_NO_THROW(ir::verifyDispatchGraph(dg));
  struct Live {
    const ir::Value* v;
    uint64_t off, len;
    uint32_t first, last;
  };
  std::vector<Live> lives;
  std::unordered_map<const ir::Value*, size_t> index;
  for (const ir::Dispatch& d : dg.dispatches)
    for (const ir::Binding& b : d.bindings) {
      if (b.ref.space != ir::Space::Arena) continue;
      const ir::Value* s = dg.storageOf(b.value);
      auto [it, inserted] = index.emplace(s, lives.size());
      // The storage's own placement: the binding may be a view at an offset inside it.
      if (inserted)
        lives.push_back({s, dg.placement.at(s).offset, s->type().byteSize(), d.stage, d.stage});
      lives[it->second].first = std::min(lives[it->second].first, d.stage);
      lives[it->second].last = std::max(lives[it->second].last, d.stage);
    }
  // In-place groups: storages chained by Dispatch::aliases may share bytes.
  std::vector<size_t> group(lives.size());
  for (size_t i = 0; i < group.size(); ++i) group[i] = i;
  auto find = [&](size_t i) {
    while (group[i] != i) i = group[i];
    return i;
  };
  for (const ir::Dispatch& d : dg.dispatches)
    for (auto [r, w] : d.aliases)
      group[find(index.at(dg.storageOf(d.bindings[r].value)))] =
          find(index.at(d.bindings[w].value));
  for (size_t i = 0; i < lives.size(); ++i) {
    EXPECT_EQ(lives[i].off % 64, 0u);
    EXPECT_LE(lives[i].off + lives[i].len, dg.arenaSize);
    for (size_t j = i + 1; j < lives.size(); ++j) {
      const Live &a = lives[i], &b = lives[j];
      bool timeOverlap = a.first <= b.last && b.first <= a.last;
      bool spaceOverlap = a.off < b.off + b.len && b.off < a.off + a.len;
      if (timeOverlap && spaceOverlap && a.len && b.len)
        EXPECT_EQ(find(i), find(j)) << "%" << a.v->name() << " and %" << b.v->name() << " overlap";
    }
  }
}

}  // namespace kiln::passes::testing
