// The kernel emitters, one per op family (one source file each). Each writes the body of the
// kernel that `kb` was created for and returns how many workgroups its iteration space splits
// into at most. Plain loops for now; tiled fast paths replace a family's emitter later.
#pragma once

#include <cstdint>

#include "workgroup_policy.h"  // workgroupsFor: the count each emitter returns

namespace kiln::codegen::detail {

class KernelBuilder;

uint32_t emitElementwise(KernelBuilder& kb);  // emit_elementwise.cpp
uint32_t emitConv(KernelBuilder& kb);         // emit_conv.cpp
// Winograd F(m x m, 3x3) for weights packed as ConvWeights::Winograd (winograd_plan.h).
uint32_t emitConvWinograd(KernelBuilder& kb);  // emit_conv_winograd.cpp
// The register-tiled convolution, if it applies to the kernel and target (else false).
bool emitConvTiled(KernelBuilder& kb, uint32_t& workgroups);  // emit_conv_tiled.cpp
// Depthwise convolution (groups == C > 1) on vector targets, if it applies (else false).
bool emitConvDepthwise(KernelBuilder& kb, uint32_t& workgroups);  // emit_conv_depthwise.cpp
// Convolution as a register-blocked implicit GEMM, if conv_gemm_plan.h's policy takes it.
bool emitConvGemm(KernelBuilder& kb, uint32_t& workgroups);  // emit_conv_gemm.cpp
// The same vectorised over output channels, for weights packed as ConvWeights::OcVectorPanels.
bool emitConvGemmOc(KernelBuilder& kb, uint32_t& workgroups);  // emit_conv_gemm_oc.cpp
// Convolution with a fused MaxPool (KernelDesc::pooled; conv_pool_plan.h).
uint32_t emitConvPool(KernelBuilder& kb);  // emit_conv_pool.cpp
uint32_t emitMatMul(KernelBuilder& kb);                       // emit_matmul.cpp
uint32_t emitPool(KernelBuilder& kb);                         // emit_pool.cpp
uint32_t emitReduce(KernelBuilder& kb);                       // emit_reduce.cpp
uint32_t emitMatMulChain(KernelBuilder& kb);  // emit_matmul_chain.cpp (KernelDesc::tailB)
// A 1x1 convolution with a fused depthwise one (KernelDesc::tailB on a Conv).
uint32_t emitConvExpandDepthwise(KernelBuilder& kb);  // emit_conv_expand_dw.cpp
uint32_t emitSoftmax(KernelBuilder& kb);                      // emit_reduce.cpp
uint32_t emitTranspose(KernelBuilder& kb);                    // emit_data_movement.cpp
uint32_t emitConcat(KernelBuilder& kb);                       // emit_data_movement.cpp
uint32_t emitSlice(KernelBuilder& kb);                        // emit_data_movement.cpp
uint32_t emitGather(KernelBuilder& kb);                       // emit_data_movement.cpp
uint32_t emitPad(KernelBuilder& kb);                          // emit_data_movement.cpp
uint32_t emitSplit(KernelBuilder& kb);                        // emit_data_movement.cpp
uint32_t emitTile(KernelBuilder& kb);                         // emit_data_movement.cpp
uint32_t emitQuantized(KernelBuilder& kb);  // emit_quantized_elementwise.cpp (all QuantOps)
uint32_t emitConvTranspose(KernelBuilder& kb);                // emit_conv_transpose.cpp
uint32_t emitLayerNorm(KernelBuilder& kb);                    // emit_normalization.cpp
uint32_t emitInstanceNorm(KernelBuilder& kb);                 // emit_normalization.cpp
uint32_t emitLrn(KernelBuilder& kb);                          // emit_normalization.cpp
uint32_t emitArgReduce(KernelBuilder& kb);                    // emit_selection.cpp
uint32_t emitTopK(KernelBuilder& kb);                         // emit_selection.cpp
uint32_t emitGatherElements(KernelBuilder& kb);               // emit_selection.cpp
uint32_t emitCumSum(KernelBuilder& kb);                       // emit_reduce.cpp
uint32_t emitScatterND(KernelBuilder& kb);                    // emit_selection.cpp

}  // namespace kiln::codegen::detail
