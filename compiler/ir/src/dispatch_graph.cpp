// DispatchGraph queries, constants layout and the human-readable listing.
#include "kiln/ir/dispatch_graph.h"

#include <sstream>

#include "kiln/format/artifact.h"
#include "kiln/ir/printer.h"
#include "kiln/support/diagnostics.h"
#include "kiln/support/strings.h"

namespace kiln::ir {

static_assert(int(kRead) == int(KILN_ACCESS_READ) && int(kWrite) == int(KILN_ACCESS_WRITE),
              "Access must match the artifact's access flags");

const Value* DispatchGraph::storageOf(const Value* value) const {
  auto it = viewRoot.find(value);
  return it == viewRoot.end() ? value : it->second;
}

uint64_t DispatchGraph::viewOffsetOf(const Value* value) const {
  auto it = viewOffset.find(value);
  return it == viewOffset.end() ? 0 : it->second;
}

int DispatchGraph::constantId(const Value* value) const {
  for (size_t i = 0; i < constants.size(); ++i)
    if (constants[i].value == value) return int(i);
  return -1;
}

uint64_t DispatchGraph::spaceOffset(const BufferRef& ref) const {
  if (ref.space != Space::Constants) return ref.offset;
  KILN_ASSERT(ref.index < constants.size(), "constant id out of range");
  return constants[ref.index].offset + ref.offset;
}

void layoutConstants(DispatchGraph& graph) {
  uint64_t offset = 0;
  for (ConstantEntry& c : graph.constants) {
    c.offset = offset;
    offset = alignUp(offset + c.bytes.size(), 64);
  }
  graph.constantsSize = offset;
}

std::string bufferRefToString(const BufferRef& ref) {
  std::string space;
  switch (ref.space) {
    case Space::Arena:
      space = "arena";
      break;
    case Space::Constants:
      space = "const#" + std::to_string(ref.index);
      break;
    case Space::Input:
      space = "input#" + std::to_string(ref.index);
      break;
    case Space::Output:
      space = "output#" + std::to_string(ref.index);
      break;
  }
  return space + "[" + std::to_string(ref.offset) + "+" + std::to_string(ref.length) + "]";
}

std::string printDispatchGraph(const DispatchGraph& graph) {
  std::ostringstream out;
  out << "dispatch graph: " << graph.dispatches.size() << " dispatches, " << graph.numStages
      << " stages, arena " << graph.arenaSize << " bytes, constants " << graph.constantsSize
      << " bytes\n";
  uint32_t stage = UINT32_MAX;
  for (const Step& step : graph.steps) {
    if (step.stage != stage) {
      stage = step.stage;
      out << "stage " << stage << ":\n";
    }
    switch (step.kind) {
      case StepKind::Dispatch: {
        const Dispatch& d = graph.dispatches[step.dispatch];
        out << "  dispatch " << d.id << " " << d.root->kindName();
        for (const Op* op : d.fused) out << "+" << op->kindName();
        out << " \"" << d.name << "\"";
        for (const Binding& b : d.bindings) {
          out << ((b.access & kWrite) ? " out " : " in ") << valueRef(b.value->name()) << "="
              << bufferRefToString(b.ref);
        }
        for (auto [r, w] : d.aliases) out << " inplace(" << r << "->" << w << ")";
        out << "\n";
        break;
      }
      case StepKind::Copy:
        out << "  copy " << bufferRefToString(step.src) << " -> " << bufferRefToString(step.dst)
            << "\n";
        break;
      case StepKind::Fill:
        out << "  fill " << bufferRefToString(step.dst) << " = " << int(step.fillByte) << "\n";
        break;
    }
  }
  return out.str();
}

}  // namespace kiln::ir
