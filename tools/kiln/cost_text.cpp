// Cost text (see cost_text.h).
#include "cost_text.h"

#include <cstdio>

namespace kiln::cli {

const char* costKindName(kiln_cost_kind kind) {
  switch (kind) {
    case KILN_COST_FLOPS: return "flops";
    case KILN_COST_INT_OPS: return "int_ops";
    case KILN_COST_ELEMENTS: return "elements";
    default: return "none";
  }
}

std::string costText(kiln_cost_kind kind, uint64_t count) {
  // Symbol units take the prefix directly ("4.72 MFLOP"); the word unit after a space
  // ("50.2 k elements").
  const char* unit = nullptr;
  const char* gap = "";
  switch (kind) {
    case KILN_COST_FLOPS: unit = "FLOP"; break;
    case KILN_COST_INT_OPS: unit = "op"; break;
    case KILN_COST_ELEMENTS:
      unit = "elements";
      gap = " ";
      break;
    default: return "-";
  }
  char buffer[48];
  if (count < 1000) {
    std::snprintf(buffer, sizeof buffer, "%llu %s", static_cast<unsigned long long>(count), unit);
    return buffer;
  }
  static const struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  double value = double(count);
  for (const auto& p : kPrefixes) {
    if (value < p.scale) continue;
    double scaled = value / p.scale;  // 1 <= scaled < 1000: three significant digits
    int decimals = scaled < 10 ? 2 : scaled < 100 ? 1 : 0;
    std::snprintf(buffer, sizeof buffer, "%.*f %s%s%s", decimals, scaled, p.prefix, gap, unit);
    return buffer;
  }
  return "-";
}

const char* throughputUnit(kiln_cost_kind kind) {
  switch (kind) {
    case KILN_COST_FLOPS: return "GFLOP/s";
    case KILN_COST_INT_OPS: return "Gop/s";
    case KILN_COST_ELEMENTS: return "Gelem/s";
    default: return "";
  }
}

}  // namespace kiln::cli
