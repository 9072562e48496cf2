// Row groups: a layout for 4-D f32 activations [N, C, H, W] in which each image's rows are cut
// at fixed boundaries and every group of rows is stored for all channels together
// ([N][group][C][rows][W]; BufferDesc::rowGroups). When the pool's threads split convolutions
// by output rows, each thread's share of such a tensor is one contiguous run per group instead
// of two alternations with the other thread's bytes per channel plane, and the cores stop
// pulling each other's lines back and forth (docs/benchmarks.md, "Whose bytes a share of a
// tensor lies beside"). Arena bytes are bytes: the artifact and the runtime do not see it.
//
// placeRowGroups chooses the tensors and their boundaries: arena tensors written by a Winograd
// convolution or the fused convolution + pool kernel and read only by Winograd convolutions,
// as their input or as a fused chain input of the output's shape (read at the output
// element's coordinates, whatever the output's layout). The boundaries: the Winograd kernel's
// blocks of tile rows, which the pool's threads take in contiguous runs. Every other tensor
// stays dense. LLVM-free.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen {

// Element index of (n, c, h, w) in `buffer`: row-major where buffer.rowGroups is empty, else
// in its row groups.
int64_t rowGroupsIndex(const BufferDesc& buffer, int64_t n, int64_t c, int64_t h, int64_t w);

// Sets rowGroups on the KernelDesc buffers of the tensors that take them (see above); returns
// how many tensors. kernels[i] describes graph.dispatches[i], its weights already packed
// (packConvWeights decides which convolutions run on the Winograd kernel).
int placeRowGroups(const ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels,
                   const TargetConfig& target);

}  // namespace kiln::codegen
