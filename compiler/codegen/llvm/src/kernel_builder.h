// KernelBuilder: the IRBuilder-level toolkit every kernel emitter uses. It owns one kernel
// function (the ABI entry point plus an always-inlined body whose binding pointers are
// `noalias`), and offers typed element access, counted loops, the split of an iteration space
// over workgroups, and float helpers that never become library calls.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/codegen/kernel_desc.h"

namespace kiln::codegen::detail {

// What emitters need to know about the target.
struct EmitTarget {
  bool softFloat = false;
  // f32 lanes of the widest vector registers worth using in explicitly tiled kernels
  // (0: keep the plain kernels, e.g. on microcontrollers where code size matters more).
  unsigned vectorLanes = 0;
  unsigned vectorRegisters = 16;  // architectural vector registers (register tiles' budget)
  // A masked store of any vector width is one instruction (x86 with AVX-512F and VL: a store
  // under a k mask); elsewhere a vector's first lanes are stored in power-of-two pieces.
  bool maskedStores = false;
  unsigned pointerBits = 64;
  bool optimizeForSize = false;
  // `kiln compile --optimize=size` on a microcontroller: the plain loops wherever a faster
  // kernel takes more code (the DSP extension's int8 kernels, the FPU's register tiles).
  bool smallestCode = false;
  // Armv8.1-M's vector extension (Helium, Cortex-M55): <4 x i32> and <16 x i8> are native
  // registers (8 of them); the int8 rescale of 4 lanes runs on VQRDMULH and VRSHL.
  bool helium = false;
  std::string cpu, features;
  // The int8 dot-product instructions the quantized conv/FC kernels use
  // (emit_quantized_dot.cpp); None keeps the plain loops (x86-64-v2, AArch64 without
  // dotprod, RISC-V 64, microcontrollers compiled for size). ArmDsp: the Armv7E-M / Armv8-M
  // DSP extension's SXTB16 and SMLAD (two 16-bit products summed into an i32 per
  // instruction) on Cortex-M4/M7/M33. Scalar: other microcontrollers (RV32): no such
  // instruction, but the same blocks with byte loads and i32 multiply-adds in registers.
  // Mve: Armv8.1-M's vector extension (Helium, Cortex-M55): VMLAV.S8 sums the 16 products of
  // two 16-byte vectors into a general register; the tail of a span is one predicated load.
  enum class Int8Dot : uint8_t { None, Avx2, Vnni, Sdot, ArmDsp, Scalar, Mve };
  Int8Dot int8Dot = Int8Dot::None;
};

// The f32 lanes and vector registers the register-tiled f32 kernels (emit_conv_tiled.cpp,
// matmul_tiles.cpp) use on a target: its vector unit, or on a microcontroller with Helium
// (Cortex-M55) 4 lanes in 8 registers; none elsewhere on microcontrollers, whose FPU tiles
// (if any) are the kernels' own.
struct TileUnit {
  unsigned lanes = 0, registers = 16;
};
TileUnit tileUnit(const EmitTarget& target);

using Body = std::function<void(llvm::Value*)>;

class KernelBuilder {
 public:
  // Creates `void name(ptr bindings, i32 workgroup_id, i32 workgroup_count)` in `module`
  // for `desc` and positions the builder in the body function's entry block.
  KernelBuilder(llvm::Module& module, const std::string& name, const KernelDesc& desc,
                const EmitTarget& target);

  // Closes the body (return) and returns the ABI entry point.
  llvm::Function* finish();

  llvm::IRBuilder<>& b() { return builder_; }
  llvm::LLVMContext& context() { return module_.getContext(); }
  const EmitTarget& target() const { return target_; }
  const KernelDesc& desc() const { return desc_; }

  // ---- Types and constants ---------------------------------------------------------------
  llvm::Type* indexType() const { return indexType_; }  // pointer-sized integer
  llvm::Type* elemType(ElemType type);
  llvm::Value* index(int64_t value);
  llvm::Value* constant(ElemType type, double value);
  llvm::Value* f32(float value);

  // ---- Bindings -----------------------------------------------------------------------------
  llvm::Value* bindingPointer(unsigned binding);
  unsigned outputBinding() const { return static_cast<unsigned>(desc_.inputs.size()); }
  llvm::Value* load(unsigned binding, ElemType type, llvm::Value* linearIndex);
  void store(unsigned binding, ElemType type, llvm::Value* linearIndex, llvm::Value* value);

  // Address of f32 element `linearIndex` of a binding, without the in-bounds promise (for masked
  // accesses whose disabled lanes may lie outside the binding).
  llvm::Value* elementAddress(unsigned binding, llvm::Value* linearIndex);
  // `lanes` consecutive f32 elements starting at linearIndex, as one vector.
  llvm::Value* loadVector(unsigned binding, llvm::Value* linearIndex, unsigned lanes);
  void storeVector(unsigned binding, llvm::Value* linearIndex, llvm::Value* vector);

  // A stack slot in the entry block (promoted to a register by the optimiser).
  llvm::Value* local(llvm::Type* type, const char* name = "");

  // ---- Control flow -----------------------------------------------------------------------------
  // for (i = begin; i < end; ++i) body(i). Values are of indexType(). `unroll` false tells the
  // optimiser to keep the loop rolled (bodies that are already unrolled, e.g. packing loops).
  void forRange(llvm::Value* begin, llvm::Value* end, const Body& body, bool unroll = true);
  void forRange(int64_t begin, int64_t end, const Body& body) {
    forRange(index(begin), index(end), body);
  }
  // Calls body(i) for this workgroup's contiguous share of [0, total).
  void forWorkgroupShare(int64_t total, const Body& body);
  // ---- Work queues (kiln/codegen/work_queue.h) -----------------------------------------------
  // The counter of work queue `queue` (an index value) in the work-queue binding.
  llvm::Value* workQueue(llvm::Value* queue);
  // How many of the queue's units have been claimed so far (from either end).
  llvm::Value* workQueueClaimed(llvm::Value* counter);
  // Claims units of [0, units) from the queue's bottom (`fromTop` false) or top (true), one at
  // a time, and calls body(unit) for each, until the queue has none left.
  void forEachClaimed(llvm::Value* counter, int64_t units, llvm::Value* fromTop, const Body& body);
  // if (cond) then(); — `cond` is i1.
  void ifThen(llvm::Value* cond, const std::function<void()>& then);

  // Splits a linear index into coordinates of `extents` (row-major).
  std::vector<llvm::Value*> decompose(llvm::Value* linear, const std::vector<int64_t>& extents);
  // Row-major linear index of `coords` in a buffer of `shape`, with per-axis strides given
  // explicitly (stride 0 = broadcast axis).
  llvm::Value* linearize(const std::vector<llvm::Value*>& coords,
                         const std::vector<int64_t>& strides);

  // Element index of (n, c, h, 0) in `buffer`, a 4-D [N, C, H, W] binding, dense or in row
  // groups (kiln/codegen/row_groups.h); n, c and h are index values.
  llvm::Value* rowAddress(const BufferDesc& buffer, llvm::Value* n, llvm::Value* c,
                          llvm::Value* h);

  // ---- Vector lanes ---------------------------------------------------------------------
  // The vectors `parts` (all of one type) joined into one vector, parts[0]'s lanes first; when
  // the number of parts is not a power of two, poison lanes follow the last part's.
  llvm::Value* concatVectors(std::vector<llvm::Value*> parts);
  // `count` lanes of `vector`: first, first + step, first + 2 x step, ...
  llvm::Value* strideLanes(llvm::Value* vector, int64_t first, int64_t step, int64_t count);

  // ---- Float helpers (compare + select: no fmaxf calls on soft-float targets) -------------
  llvm::Value* maxValue(llvm::Value* a, llvm::Value* b);
  llvm::Value* minValue(llvm::Value* a, llvm::Value* b);
  // Applies a conv/matmul epilogue activation to an f32 value, or to an f32 vector (the
  // tiled kernels' accumulators; Relu, Clip and LeakyRelu only).
  llvm::Value* applyEpilogue(const Epilogue& epilogue, llvm::Value* value);

 private:
  llvm::Module& module_;
  const KernelDesc& desc_;
  EmitTarget target_;
  llvm::IRBuilder<> builder_;
  llvm::Type* indexType_;
  llvm::Function* entry_ = nullptr;
  llvm::Function* body_ = nullptr;
  llvm::BasicBlock* allocaBlock_ = nullptr;
  std::vector<llvm::Value*> bindings_;
  llvm::Value* workgroupId_ = nullptr;
  llvm::Value* workgroupCount_ = nullptr;
};

// Row-major strides of `shape` (in elements).
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape);
// Strides that broadcast `shape` to `outShape` (numpy rules; size-1 and missing axes get 0).
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& outShape);

}  // namespace kiln::codegen::detail
