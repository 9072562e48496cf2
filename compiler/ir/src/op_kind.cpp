// The OpInfo table generated from ops.def.
#include "kiln/ir/op_kind.h"

#include "kiln/ir/op_rules.h"

namespace kiln::ir {
namespace {

const OpInfo kInfos[] = {
#define KILN_OP(Name, MinOps, MaxOps, NumResults, Traits, Static, Rule) \
  OpInfo{#Name, MinOps, MaxOps, NumResults, uint32_t(Traits), uint32_t(Static), &Rule},
#include "kiln/ir/ops.def"
#undef KILN_OP
};

}  // namespace

const OpInfo& opInfo(OpKind kind) { return kInfos[size_t(kind)]; }

std::optional<OpKind> parseOpKind(std::string_view name) {
  for (size_t i = 0; i < sizeof(kInfos) / sizeof(kInfos[0]); ++i)
    if (kInfos[i].name == name) return OpKind(i);
  return std::nullopt;
}

}  // namespace kiln::ir
