// The workgroup-count policy (see workgroup_policy.h).
#include "workgroup_policy.h"

#include <algorithm>

namespace kiln::codegen::detail {

uint32_t workgroupsFor(int64_t parallelExtent, int64_t workPerItem) {
  if (parallelExtent <= 1) return 1;
  workPerItem = std::max<int64_t>(1, workPerItem);
  // Total work, saturating (extents and per-item work are far below 2^31 each in practice).
  int64_t total = parallelExtent > INT64_MAX / workPerItem ? INT64_MAX
                                                           : parallelExtent * workPerItem;
  if (total < kSerialWork) return 1;
  int64_t limit = std::min<int64_t>({parallelExtent, total / kWorkPerWorkgroup,
                                     int64_t{kMaxWorkgroups}});
  // Few items, each worth a workgroup: one each. Any grouping of equal items is at best as
  // even (14 items in 8 workgroups of 2, 2, 2, 2, 2, 2, 1, 1 ran as 8 + 6 on two threads).
  if (limit == parallelExtent) return static_cast<uint32_t>(limit);
  if (limit >= 8) return static_cast<uint32_t>(limit - limit % 8);
  if (limit >= 4) return 4;
  if (limit >= 2) return 2;
  return 1;
}

}  // namespace kiln::codegen::detail
