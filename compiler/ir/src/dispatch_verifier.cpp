// The dispatch-graph verifier (see dispatch_verifier.h).
#include "kiln/ir/dispatch_verifier.h"

#include <unordered_map>
#include <vector>

#include "kiln/ir/dispatch_graph.h"
#include "kiln/ir/printer.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {

[[noreturn]] void fail(const std::string& message) {
  throw CompileError("dispatch graph verifier: " + message);
}

// One memory access of a step: bytes [offset, offset + length) of a space.
struct Access {
  size_t step;  // index into graph.steps
  uint32_t stage;
  Space space;
  uint32_t index;  // input/output number (0 for the arena)
  uint64_t offset;
  uint64_t length;
  bool write;
  const Value* value;  // storage value (nullptr for FILL/COPY destinations)
  int binding;         // binding index for dispatches, -1 otherwise
};

bool overlap(const Access& a, const Access& b) {
  return a.space == b.space && a.index == b.index && a.length && b.length &&
         a.offset < b.offset + b.length && b.offset < a.offset + a.length;
}

class DispatchVerifier {
 public:
  explicit DispatchVerifier(const DispatchGraph& g) : g_(g) {}

  void run() {
    checkSteps();
    collectAccesses();
    checkStages();
    checkLifetimes();
  }

 private:
  std::string where(const Access& a) const {
    const Step& s = g_.steps[a.step];
    if (s.kind == StepKind::Dispatch) {
      const Dispatch& d = g_.dispatches[s.dispatch];
      return "dispatch " + std::to_string(d.id) + " (" + d.name + ") binding " +
             std::to_string(a.binding);
    }
    return std::string(s.kind == StepKind::Copy ? "copy" : "fill") + " to output " +
           std::to_string(s.outputIndex);
  }

  // `alignment`: 64 for a tensor's own storage; a view (a part of a Split, Slice or in-place
  // Concat) may start at any element.
  void checkRef(const BufferRef& ref, uint64_t expectedLength, const std::string& what,
                uint64_t alignment = 64) {
    if (ref.length != expectedLength)
      fail(what + " has length " + std::to_string(ref.length) + ", its tensor has " +
           std::to_string(expectedLength));
    uint64_t limit = 0;
    switch (ref.space) {
      case Space::Arena:
        limit = g_.arenaSize;
        break;
      case Space::Constants:
        if (ref.index >= g_.constants.size())
          fail(what + " names constant " + std::to_string(ref.index) + " of " +
               std::to_string(g_.constants.size()));
        limit = g_.constants[ref.index].bytes.size();
        break;
      case Space::Input:
        if (ref.index >= g_.inputs.size()) fail(what + " names input " + std::to_string(ref.index));
        limit = g_.inputs[ref.index].type.byteSize();
        break;
      case Space::Output:
        if (ref.index >= g_.outputs.size())
          fail(what + " names output " + std::to_string(ref.index));
        limit = g_.outputs[ref.index].type.byteSize();
        break;
    }
    if (ref.offset + ref.length > limit)
      fail(what + " " + bufferRefToString(ref) + " ends past its space (" + std::to_string(limit) +
           " bytes)");
    if (ref.space == Space::Arena && ref.offset % alignment != 0)
      fail(what + " is not " + std::to_string(alignment) + "-byte aligned");
  }

  void checkSteps() {
    std::vector<int> seen(g_.dispatches.size(), 0);
    uint32_t stage = 0;
    for (const Step& s : g_.steps) {
      if (s.stage < stage) fail("steps are not in stage order");
      stage = s.stage;
      if (s.stage >= g_.numStages)
        fail("a step is in stage " + std::to_string(s.stage) + " of " +
             std::to_string(g_.numStages));
      if (s.kind != StepKind::Dispatch) continue;
      if (s.dispatch >= g_.dispatches.size())
        fail("a step names dispatch " + std::to_string(s.dispatch));
      if (g_.dispatches[s.dispatch].stage != s.stage)
        fail("dispatch " + std::to_string(s.dispatch) + " is stepped in the wrong stage");
      ++seen[s.dispatch];
    }
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i] != 1)
        fail("dispatch " + std::to_string(i) + " appears " + std::to_string(seen[i]) +
             " times in the steps");
      if (g_.dispatches[i].id != i)
        fail("dispatch " + std::to_string(i) + " has id " + std::to_string(g_.dispatches[i].id));
    }
  }

  void add(size_t step, const BufferRef& ref, bool write, const Value* value, int binding) {
    if (ref.space == Space::Constants || ref.space == Space::Input) {
      if (write)
        fail("step " + std::to_string(step) + " writes read-only " + bufferRefToString(ref));
      return;  // read-only spaces never race
    }
    accesses_.push_back(Access{step, g_.steps[step].stage, ref.space, ref.index, ref.offset,
                               ref.length, write, value, binding});
  }

  void collectAccesses() {
    for (size_t i = 0; i < g_.steps.size(); ++i) {
      const Step& s = g_.steps[i];
      if (s.kind == StepKind::Dispatch) {
        const Dispatch& d = g_.dispatches[s.dispatch];
        for (size_t b = 0; b < d.bindings.size(); ++b) {
          const Binding& binding = d.bindings[b];
          std::string what = "dispatch " + std::to_string(d.id) + " (" + d.name + ") binding " +
                             std::to_string(b) + " " + valueRef(binding.value->name());
          bool view = g_.storageOf(binding.value) != binding.value;
          checkRef(binding.ref, binding.value->type().byteSize(), what,
                   view ? dtypeSize(binding.value->type().dtype) : 64);
          if (!(binding.access & (kRead | kWrite))) fail(what + " has no access bits");
          add(i, binding.ref, binding.access & kWrite, g_.storageOf(binding.value), int(b));
        }
      } else {
        std::string what = "step " + std::to_string(i);
        checkRef(s.dst, g_.outputs.at(s.outputIndex).type.byteSize(), what + " destination");
        if (s.dst.space != Space::Output) fail(what + " does not write an output");
        add(i, s.dst, true, nullptr, -1);
        if (s.kind == StepKind::Copy) {
          checkRef(s.src, s.dst.length, what + " source", 1);
          add(i, s.src, false, g_.storageOf(s.srcValue), -1);
        }
      }
    }
  }

  bool inPlacePair(const Access& read, const Access& write) const {
    if (read.step != write.step || read.binding < 0) return false;
    const Dispatch& d = g_.dispatches[g_.steps[read.step].dispatch];
    for (auto [r, w] : d.aliases)
      if (int(r) == read.binding && int(w) == write.binding) return true;
    return false;
  }

  // Within a stage, bytes written by one access are touched by no other access, except a
  // read/write pair of one dispatch recorded as in place.
  void checkStages() {
    for (size_t i = 0; i < accesses_.size(); ++i)
      for (size_t j = i + 1; j < accesses_.size(); ++j) {
        const Access &a = accesses_[i], &b = accesses_[j];
        if (a.stage != b.stage || (!a.write && !b.write) || !overlap(a, b)) continue;
        bool allowed = (a.write && !b.write && inPlacePair(b, a)) ||
                       (b.write && !a.write && inPlacePair(a, b));
        if (!allowed)
          fail(where(a) + " and " + where(b) + " touch the same bytes in stage " +
               std::to_string(a.stage));
      }
  }

  // Readers see what the producers wrote: every producer of bytes a read touches (a storage
  // has several when operands were written in place into a Concat's result) is in an earlier
  // stage, and no other write to those bytes happens in between (an in-place write at the
  // last read is fine).
  void checkLifetimes() {
    std::unordered_map<const Value*, std::vector<const Access*>> producers;
    for (const Access& a : accesses_)
      if (a.write && a.value) producers[a.value].push_back(&a);
    for (const Access& read : accesses_) {
      if (read.write || !read.value) continue;
      auto it = producers.find(read.value);
      if (it == producers.end()) continue;  // an input
      for (const Access* w : it->second) {
        bool empty = !w->length || !read.length;  // empty tensors: order only
        if (!empty && !overlap(*w, read)) continue;
        if (w->stage >= read.stage)
          fail(where(read) + " reads " + valueRef(read.value->name()) + " in stage " +
               std::to_string(read.stage) + ", produced in stage " + std::to_string(w->stage));
        for (const Access& other : accesses_) {
          if (!other.write || &other == w || !overlap(other, read) || !overlap(other, *w))
            continue;
          // (A write in the read's own stage is checked by checkStages.)
          if (other.stage <= w->stage || other.stage >= read.stage) continue;
          fail(where(other) + " overwrites " + valueRef(read.value->name()) + " before " +
               where(read) + " reads it");
        }
      }
    }
  }

  const DispatchGraph& g_;
  std::vector<Access> accesses_;
};

}  // namespace

void verifyDispatchGraph(const DispatchGraph& graph) { DispatchVerifier(graph).run(); }

}  // namespace kiln::ir
