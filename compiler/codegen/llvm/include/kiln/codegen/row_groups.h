// Row groups: a layout for 4-D f32 activations [N, C, H, W] in which each image's rows are cut
// at fixed boundaries and every group of rows is stored for all channels together
// ([N][group][C][rows][W]; BufferDesc::rowGroups). When the pool's threads split convolutions
// by output rows, a thread's share of such a tensor, and the halo rows it reads from its
// neighbour's, are each one contiguous run instead of alternating with the other thread's
// bytes twice per channel plane; across core complexes every such alternation costs a round
// trip of cache lines (docs/benchmarks.md, "Halo rows"). Arena bytes are bytes: the artifact
// and the runtime do not see the layout.
//
// For artifacts compiled for several threads (`kiln compile --threads=N`, N >= 2) the driver
// calls splitForThreads, which gives each thread one run of a Winograd convolution's blocks of
// tile rows (KernelDesc::threadSplit; a fused expand + depthwise convolution at most one run
// of steps of rows per thread too), then placeRowGroups, which chooses the tensors and their
// boundaries: arena tensors written by a Winograd convolution or the fused convolution + pool
// kernel and read only by Winograd convolutions, as their input or as a fused chain input of
// the output's shape (read at the output element's coordinates, whatever the output's
// layout). The boundaries: where the threads' runs begin, with the halo rows apart
// (haloRowGroups). Every other tensor stays dense. The driver then plans memory again so that
// bytes pass only between tensors of one layout. LLVM-free.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen {

// Element index of (n, c, h, w) in `buffer`: row-major where buffer.rowGroups is empty, else
// in its row groups.
int64_t rowGroupsIndex(const BufferDesc& buffer, int64_t n, int64_t c, int64_t h, int64_t w);

// The row groups for threads that split a 3x3 convolution's rows at `blocks` (0 = b[0] < ...
// < b[n] = H): every interior boundary b also cuts at b - 1 and b + 1, so that the row on
// each side that the neighbouring block reads (the window's halo) lies apart from the rest,
// all channels together. A thread then reads the other's bytes in one run per boundary, not
// in one per channel (docs/benchmarks.md, "Halo rows"). {0, 12, 28} -> {0, 11, 12, 13, 28}.
std::vector<int64_t> haloRowGroups(const std::vector<int64_t>& blocks);

// For `threads` >= 2 on a vector target (else nothing): the Winograd convolutions of one
// image whose blocks of tile rows divide among the threads in runs of as many tile rows get
// one run of blocks per thread (KernelDesc::threadSplit = threads, no work queues); fused
// expand + depthwise convolutions get threadSplit = threads (at most one workgroup per
// thread). The kernels' weights already packed (packConvWeights decides which convolutions
// run on the Winograd kernel).
void splitForThreads(std::vector<KernelDesc>& kernels, const TargetConfig& target,
                     int64_t threads);

// For `threads` >= 2 (else nothing): sets rowGroups on the KernelDesc buffers of the tensors
// that take them (see above, at the threads' shares that splitForThreads gave the Winograd
// convolutions, or at every block of those it did not split); returns those tensors and
// their groups. kernels[i] describes graph.dispatches[i]. Run after splitForThreads, before
// placeWorkQueues.
std::map<const ir::Value*, std::vector<int64_t>> placeRowGroups(
    const ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels, const TargetConfig& target,
    int64_t threads);

}  // namespace kiln::codegen
