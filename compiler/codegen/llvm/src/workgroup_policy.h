// How many workgroups a dispatch is split into: the one place that decides it. LLVM-free.
//
// A kernel's iteration space has a parallel extent (rows, output channels x rows, outer
// elements...) and each item of it costs some work (multiply-accumulates for Conv/Gemm,
// elements for data movement and elementwise math). Each emitter reports both; the policy
// turns them into a count:
//  - a dispatch with less than kSerialWork in total runs as one workgroup: splitting it only
//    adds the executor's per-workgroup overhead and moves its data between cores (a whole
//    60 K-MAC model stays unsplit; the digits example's 74 K-MAC conv took 3.4-3.9 us over 2
//    threads in two workgroups against 3.2 us for the whole model on one thread);
//  - otherwise every workgroup gets at least kWorkPerWorkgroup, with at most kMaxWorkgroups
//    and never more workgroups than items;
//  - when every item gets a workgroup of its own (few items of kWorkPerWorkgroup or more),
//    that is the count: workgroups of equal size balance best whatever the thread count;
//  - otherwise the count is rounded down to a multiple of 8 when there are at least 8, else
//    to 4, 2 or 1, so that it divides evenly over pools of 1, 2, 4 or 8 threads.
// The artifact writer may lower the count further (EmitOptions::maxWorkgroups).
#pragma once

#include <cstdint>

namespace kiln::codegen::detail {

inline constexpr int64_t kSerialWork = int64_t{1} << 17;        // 131072
inline constexpr int64_t kWorkPerWorkgroup = int64_t{1} << 15;  // 32768
inline constexpr uint32_t kMaxWorkgroups = 64;

// The workgroup count for `parallelExtent` items of `workPerItem` work each.
uint32_t workgroupsFor(int64_t parallelExtent, int64_t workPerItem);

// Elementwise kernels walk long rows in chunks of at most this many elements, so that a
// single long row still has several items to split.
inline constexpr int64_t kMinElementsPerWorkgroup = 4096;

}  // namespace kiln::codegen::detail
