// Text for the compiler's per-dispatch cost (DEBUG's cost table, kiln_debug_cost): the count
// with an SI prefix and the kind's unit ("4.72 MFLOP", "1.20 Mop", "50.2 k elements"), the
// kind's JSON name, and the unit of a throughput ("GFLOP/s").
#pragma once

#include <cstdint>
#include <string>

#include "kiln/format/artifact.h"

namespace kiln::cli {

// "flops", "int_ops", "elements" or "none".
const char* costKindName(kiln_cost_kind kind);

// "4.72 MFLOP", "1.20 Gop", "50.2 k elements"; "-" for KILN_COST_NONE.
std::string costText(kiln_cost_kind kind, uint64_t count);

// Unit of `count / seconds / 1e9`: "GFLOP/s", "Gop/s", "Gelem/s" ("" for none).
const char* throughputUnit(kiln_cost_kind kind);

}  // namespace kiln::cli
