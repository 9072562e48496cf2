// Memory planning: where every tensor lives.
//  - Graph inputs stay in the caller's input buffers, constants in the constants space,
//    outputs that formDispatches routed there in the caller's output buffers; views share
//    their storage's bytes at their offset (contiguous Split/Slice parts, operands written in
//    place into a Concat's result). None of these take arena space.
//  - Every other dispatch result gets arena bytes for its lifetime, measured in stages:
//    from its (first) producer's stage to the last stage that reads it (a dispatch or a
//    COPY); an in-place Concat's result has one producer per operand.
//    Two tensors whose stage intervals overlap never share bytes, so dispatches of one stage
//    never touch each other's bytes and reuse always crosses a barrier.
//  - In place (MemoryPlanOptions::inPlace, on by default): an elementwise dispatch writes its result over an operand whose storage dies
//    in that dispatch (no later reader, no other reader in the same stage, same byte size).
//    The pair is recorded in Dispatch::aliases so codegen drops noalias there.
//  - Share classes (MemoryPlanOptions::shareClass): tensors of different classes never share
//    bytes, whatever their lifetimes.
//  - Offsets by a best-fit heuristic: allocations in some order, each into the smallest gap
//    between the time-overlapping allocations already placed (or on top of them); a few
//    orders are tried (largest, longest-lived, largest size x lifetime, earliest first) and
//    the smallest arena kept. Sizes and offsets are 64-byte aligned.
// Fills every binding's and step's BufferRef, the arena size and MemoryStats (naive size,
// lower bound = the largest sum of live aligned bytes at any stage, planned size).
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"
#include "kiln/support/strings.h"

namespace kiln::passes {
namespace {

constexpr uint64_t kAlignment = 64;

struct Allocation {
  uint64_t size = 0;
  uint32_t start = UINT32_MAX;
  uint32_t end = 0;
  uint64_t offset = 0;
  uint64_t shareClass = 0;
};

// Whether a and b may not share bytes: their lifetimes overlap, or their classes differ.
bool overlaps(const Allocation& a, const Allocation& b) {
  return (a.start <= b.end && b.start <= a.end) || a.shareClass != b.shareClass;
}

// Best-fit offsets for the allocations taken in `order`: each goes into the smallest gap
// between the time-overlapping allocations placed before it, or on top of them. Returns the
// arena size.
uint64_t placeInOrder(std::vector<Allocation>& allocs, const std::vector<size_t>& order) {
  std::vector<size_t> placed;
  uint64_t arena = 0;
  for (size_t index : order) {
    Allocation& a = allocs[index];
    std::vector<size_t> conflicts;
    for (size_t p : placed)
      if (overlaps(allocs[p], a)) conflicts.push_back(p);
    std::sort(conflicts.begin(), conflicts.end(),
              [&](size_t x, size_t y) { return allocs[x].offset < allocs[y].offset; });
    uint64_t cursor = 0, best = UINT64_MAX, bestGap = UINT64_MAX;
    for (size_t c : conflicts) {
      if (allocs[c].offset > cursor) {
        uint64_t gap = allocs[c].offset - cursor;
        if (gap >= a.size && gap < bestGap) {
          best = cursor;
          bestGap = gap;
        }
      }
      cursor = std::max(cursor, allocs[c].offset + allocs[c].size);
    }
    a.offset = best == UINT64_MAX ? cursor : best;
    arena = std::max(arena, a.offset + a.size);
    placed.push_back(index);
  }
  return arena;
}

// Runs best fit with a few placement orders (largest first; longest-lived first; largest
// size x lifetime first; in order of birth) and keeps the smallest arena. Each order wins on
// some graph shapes; together they stay close to the lower bound on chains and branches.
uint64_t placeAllocations(std::vector<Allocation>& allocs) {
  auto lifetime = [&](size_t i) { return uint64_t(allocs[i].end - allocs[i].start + 1); };
  using Key = std::function<bool(size_t, size_t)>;
  std::vector<Key> keys = {
      [&](size_t a, size_t b) { return allocs[a].size > allocs[b].size; },
      [&](size_t a, size_t b) { return lifetime(a) > lifetime(b); },
      [&](size_t a, size_t b) {
        return allocs[a].size * lifetime(a) > allocs[b].size * lifetime(b);
      },
      [&](size_t a, size_t b) { return allocs[a].start < allocs[b].start; },
  };
  uint64_t bestArena = UINT64_MAX;
  std::vector<uint64_t> bestOffsets;
  for (const Key& key : keys) {
    std::vector<size_t> order(allocs.size());
    std::iota(order.begin(), order.end(), 0);
    // Ties: larger first, then earlier birth, then index (deterministic).
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (key(a, b) != key(b, a)) return key(a, b);
      if (allocs[a].size != allocs[b].size) return allocs[a].size > allocs[b].size;
      if (allocs[a].start != allocs[b].start) return allocs[a].start < allocs[b].start;
      return a < b;
    });
    uint64_t arena = placeInOrder(allocs, order);
    if (arena < bestArena) {
      bestArena = arena;
      bestOffsets.clear();
      for (const Allocation& a : allocs) bestOffsets.push_back(a.offset);
    }
  }
  for (size_t i = 0; i < allocs.size(); ++i) allocs[i].offset = bestOffsets[i];
  return allocs.empty() ? 0 : bestArena;
}

}  // namespace

void planMemory(ir::DispatchGraph& dg, const MemoryPlanOptions& options) {
  // Planned again (share classes after code generation's choices): from scratch, keeping only
  // the placements made before planning (outputs routed to the caller's buffers).
  for (ir::Dispatch& d : dg.dispatches) d.aliases.clear();
  for (auto it = dg.placement.begin(); it != dg.placement.end();)
    it = it->second.space == ir::Space::Arena ? dg.placement.erase(it) : std::next(it);
  // ---- arena storages and their lifetimes (in stages) ----
  std::vector<const ir::Value*> storages;  // arena tensors, in schedule order
  std::unordered_map<const ir::Value*, size_t> storageIndex;
  std::vector<uint32_t> start, end;
  for (const ir::Dispatch& d : dg.dispatches)
    for (const ir::Binding& b : d.bindings) {
      if (!(b.access & ir::kWrite)) continue;
      const ir::Value* s = dg.storageOf(b.value);
      if (dg.placement.count(s)) continue;  // routed to an output buffer
      if (storageIndex.count(s)) {
        // Another part of an in-place Concat's result (dispatches are in stage order).
        KILN_ASSERT(s != b.value, "a tensor is written by two dispatches");
        end[storageIndex[s]] = std::max(end[storageIndex[s]], d.stage);
        continue;
      }
      storageIndex[s] = storages.size();
      storages.push_back(s);
      start.push_back(d.stage);
      end.push_back(d.stage);
    }
  // readersInStage[(storage, stage)] = number of distinct readers (dispatches, copies).
  std::map<std::pair<size_t, uint32_t>, int> readersInStage;
  auto noteRead = [&](const ir::Value* value, uint32_t stage) {
    auto it = storageIndex.find(dg.storageOf(value));
    if (it == storageIndex.end()) return;
    end[it->second] = std::max(end[it->second], stage);
    ++readersInStage[{it->second, stage}];
  };
  for (const ir::Dispatch& d : dg.dispatches) {
    std::vector<const ir::Value*> seen;
    for (const ir::Binding& b : d.bindings) {
      if (!(b.access & ir::kRead)) continue;
      const ir::Value* s = dg.storageOf(b.value);
      if (std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
      seen.push_back(s);
      noteRead(b.value, d.stage);
    }
  }
  for (const ir::Step& step : dg.steps)
    if (step.kind == ir::StepKind::Copy) noteRead(step.srcValue, step.stage);

  // ---- in-place elementwise writes: union storages into allocation groups ----
  std::vector<size_t> group(storages.size());
  std::iota(group.begin(), group.end(), 0);
  auto findGroup = [&](size_t i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  for (ir::Dispatch& d : dg.dispatches) {
    if (!options.inPlace) break;
    // (A fused chain over an elementwise root is still one elementwise loop.)
    if (!d.root->info().hasTrait(ir::kElementwise) || d.root->numResults() != 1)
      continue;
    uint32_t writeIndex = uint32_t(d.bindings.size() - 1);
    const ir::Value* result = d.bindings[writeIndex].value;
    auto r = storageIndex.find(result);
    if (r == storageIndex.end()) continue;
    for (uint32_t j = 0; j < writeIndex; ++j) {
      const ir::Value* operand = d.bindings[j].value;
      auto x = storageIndex.find(dg.storageOf(operand));
      if (x == storageIndex.end() || dg.viewOffsetOf(operand) != 0 ||
          operand->type().byteSize() != x->first->type().byteSize())
        continue;  // a part of a bigger tensor
      bool dies = end[x->second] == d.stage && readersInStage[{x->second, d.stage}] == 1;
      bool sameSize = operand->type().numElements() == result->type().numElements() &&
                      x->first->type().byteSize() == result->type().byteSize();
      if (!dies || !sameSize) continue;
      group[r->second] = findGroup(x->second);
      // Every read binding of that storage aliases the write (e.g. Add(%x, %x)).
      for (uint32_t k = 0; k < writeIndex; ++k)
        if (dg.storageOf(d.bindings[k].value) == x->first) d.aliases.emplace_back(k, writeIndex);
      break;
    }
  }

  // ---- allocations, lower bound, naive size ----
  std::vector<Allocation> allocs;
  std::unordered_map<size_t, size_t> allocOfGroup;
  ir::MemoryStats stats;
  for (size_t i = 0; i < storages.size(); ++i) {
    uint64_t size = alignUp(storages[i]->type().byteSize(), kAlignment);
    stats.naiveBytes += size;
    size_t g = findGroup(i);
    auto [it, inserted] = allocOfGroup.emplace(g, allocs.size());
    if (inserted) allocs.emplace_back();
    Allocation& a = allocs[it->second];
    a.size = std::max(a.size, size);
    if (options.shareClass) a.shareClass = std::max(a.shareClass, options.shareClass(storages[i]));
    a.start = std::min(a.start, start[i]);
    a.end = std::max(a.end, end[i]);
  }
  for (uint32_t stage = 0; stage < dg.numStages; ++stage) {
    uint64_t live = 0;
    for (const Allocation& a : allocs)
      if (a.start <= stage && stage <= a.end) live += a.size;
    stats.lowerBound = std::max(stats.lowerBound, live);
  }
  stats.arenaBytes = placeAllocations(allocs);
  dg.arenaSize = stats.arenaBytes;
  dg.memory = stats;

  // ---- placements ----
  for (uint32_t i = 0; i < dg.inputs.size(); ++i)
    dg.placement[dg.inputs[i].value] =
        ir::BufferRef{ir::Space::Input, i, 0, dg.inputs[i].type.byteSize()};
  for (uint32_t i = 0; i < dg.constants.size(); ++i)
    dg.placement[dg.constants[i].value] =
        ir::BufferRef{ir::Space::Constants, i, 0, dg.constants[i].bytes.size()};
  for (size_t i = 0; i < storages.size(); ++i) {
    const Allocation& a = allocs[allocOfGroup.at(findGroup(i))];
    dg.placement[storages[i]] =
        ir::BufferRef{ir::Space::Arena, 0, a.offset, storages[i]->type().byteSize()};
  }
  for (auto [view, root] : dg.viewRoot) {
    auto it = dg.placement.find(root);
    if (it == dg.placement.end()) continue;  // a view of a static-only constant
    ir::BufferRef ref = it->second;
    ref.offset += dg.viewOffsetOf(view);
    ref.length = view->type().byteSize();
    dg.placement[view] = ref;
  }
  auto refOf = [&](const ir::Value* v) {
    auto it = dg.placement.find(v);
    KILN_ASSERT(it != dg.placement.end(), "no placement for %" + v->name());
    return it->second;
  };
  for (ir::Dispatch& d : dg.dispatches)
    for (ir::Binding& b : d.bindings) b.ref = refOf(b.value);
  for (ir::Step& step : dg.steps) {
    if (step.kind == ir::StepKind::Dispatch) continue;
    step.dst =
        ir::BufferRef{ir::Space::Output, step.outputIndex, 0, step.dstValue->type().byteSize()};
    if (step.kind == ir::StepKind::Copy) step.src = refOf(step.srcValue);
  }
}

}  // namespace kiln::passes
