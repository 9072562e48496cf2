// Work queues: how the workgroups of one dispatch share its work at run time. LLVM-free.
//
// Most kernels split their work into equal workgroups at compile time. Some work does not
// split evenly that way: a Winograd convolution's output-channel panels all read one input
// transform, so a workgroup per group of panels repeats the transform, and four workgroups of
// equal size leave a thread idle when the other one runs slower (two vCPUs of one VM often run
// 8-10 % apart). Such a kernel (KernelDesc::workQueues > 0) has "tasks" (a Winograd
// convolution: a block of tile rows, its input transform done once per thread that joins it)
// made of units (one output-channel panel each), and several workgroups per task. Each
// workgroup that joins a task claims the task's units one at a time from the task's queue until
// none is left, so the threads that get there share every unit between them, whatever their
// speed, and a thread that is done with its own task can help with another.
//
// A queue is one counter in its own 64-byte line (kWorkQueueBytes): the low 32 bits count the
// units claimed from the bottom (the next one is that count), the high 32 bits those claimed
// from the top (the next one is units - 1 - that count). A claim is one atomic add to one
// half; it is valid while bottom + top < units before the add, so every unit is claimed
// exactly once, and consecutive claims of one end are consecutive units (the kernel prefetches
// the next unit's weights). The queues live in one more binding after the kernel's outputs: a
// region at the end of the arena that the artifact zeroes (a FILL before the first stage) at
// the start of every call, so a call never sees the claims of the one before.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen {

inline constexpr int64_t kWorkQueueBytes = 64;

// Workgroups per task of a kernel with `tasks` work queues: together at least
// kWorkQueueThreads, so that a pool of up to that many threads can put every thread on some
// task (a workgroup that finds its task's queue empty returns at once).
inline constexpr int64_t kWorkQueueThreads = 8;
inline int64_t workgroupsPerTask(int64_t tasks) {
  return tasks >= kWorkQueueThreads ? 1 : (kWorkQueueThreads + tasks - 1) / tasks;
}

// Places the work queues of `kernels` (the descriptions of graph's dispatches, after
// packConvWeights chose the kernels) in `graph`: a region of kWorkQueueBytes per queue at the
// end of the arena, one more binding per dispatch that has queues (its value is null: no
// tensor), and a FILL of the region to zero in a stage of its own before every other step.
// Returns the region's size in bytes (0: no kernel has queues, the graph is unchanged).
uint64_t placeWorkQueues(ir::DispatchGraph& graph, const std::vector<KernelDesc>& kernels);

}  // namespace kiln::codegen
