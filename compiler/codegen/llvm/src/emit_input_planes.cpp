// The few-channel convolutions' input planes (see emit_input_planes.h).
#include "emit_input_planes.h"

#include <llvm/IR/Constants.h>

#include <vector>

#include "kernel_builder.h"

namespace kiln::codegen::detail {

void emitInputPlanes(KernelBuilder& kb, const PlaneShape& s, llvm::Value* planes,
                     llvm::Value* xImage, llvm::Value* top) {
  llvm::IRBuilder<>& b = kb.b();
  const int64_t L = kb.target().vectorLanes;
  llvm::Type* floatTy = b.getFloatTy();
  auto* vecTy = llvm::FixedVectorType::get(floatTy, unsigned(L));
  llvm::Value* zero = llvm::ConstantFP::get(vecTy, 0.0);
  kb.forRange(
      kb.index(0), kb.index(s.c * s.kh),
      [&](llvm::Value* ck) {
        llvm::Value* c = b.CreateUDiv(ck, kb.index(s.kh));
        llvm::Value* kh = b.CreateURem(ck, kb.index(s.kh));
        llvm::Value* ih = b.CreateAdd(top, kh);
        llvm::Value* base = b.CreateMul(ck, kb.index(s.sw * s.length));
        llvm::Value* inside = b.CreateICmpULT(ih, kb.index(s.h));
        llvm::Value* row = b.CreateAdd(xImage, b.CreateAdd(b.CreateMul(c, kb.index(s.h * s.w)),
                                                           b.CreateMul(ih, kb.index(s.w))));
        auto store = [&](llvm::Value* value, int64_t phase, int64_t j) {
          llvm::Value* slot = b.CreateAdd(base, kb.index(phase * s.length + j * L));
          b.CreateAlignedStore(value, b.CreateGEP(floatTy, planes, slot), llvm::Align(32));
        };
        kb.ifThen(inside, [&] {
          for (int64_t j = 0; j < s.length / L; ++j) {
            std::vector<llvm::Value*> parts;
            for (int64_t q = 0; q < s.sw; ++q) {
              const int64_t first = (j * s.sw + q) * L - s.padLeft;
              std::vector<llvm::Constant*> on;
              int64_t count = 0;
              for (int64_t l = 0; l < L; ++l) {
                const bool in = first + l >= 0 && first + l < s.w;
                on.push_back(b.getInt1(in));
                count += in;
              }
              if (count == 0) {
                parts.push_back(zero);
                continue;
              }
              llvm::Value* address = kb.elementAddress(0, b.CreateAdd(row, kb.index(first)));
              if (count == L) {
                parts.push_back(b.CreateAlignedLoad(vecTy, address, llvm::Align(4)));
              } else {
                parts.push_back(b.CreateMaskedLoad(vecTy, address, llvm::Align(4),
                                                   llvm::ConstantVector::get(on), zero));
              }
            }
            // The parts concatenated; phase p is every sw-th lane from lane p.
            llvm::Value* all = kb.concatVectors(std::move(parts));
            for (int64_t p = 0; p < s.sw; ++p) {
              if (s.sw == 1) {
                store(all, 0, j);
                continue;
              }
              store(kb.strideLanes(all, p, s.sw, L), p, j);
            }
          }
        });
        kb.ifThen(b.CreateNot(inside), [&] {
          for (int64_t p = 0; p < s.sw; ++p)
            for (int64_t j = 0; j < s.length / L; ++j) store(zero, p, j);
        });
      },
      /*unroll=*/false);
}

void emitPrefetchInputRows(KernelBuilder& kb, const PlaneShape& s, llvm::Value* xImage,
                           llvm::Value* top, int64_t firstRow) {
  if (firstRow >= s.kh) return;
  llvm::IRBuilder<>& b = kb.b();
  const int64_t rowsPerChannel = s.kh - firstRow;
  kb.forRange(
      kb.index(0), kb.index(s.c * rowsPerChannel),
      [&](llvm::Value* ck) {
        llvm::Value* c = b.CreateUDiv(ck, kb.index(rowsPerChannel));
        llvm::Value* kh =
            b.CreateAdd(b.CreateURem(ck, kb.index(rowsPerChannel)), kb.index(firstRow));
        llvm::Value* row =
            b.CreateAdd(xImage, b.CreateAdd(b.CreateMul(c, kb.index(s.h * s.w)),
                                            b.CreateMul(b.CreateAdd(top, kh), kb.index(s.w))));
        // Every 64-byte line of the row's w floats: one per 16 floats, and its last float's.
        std::vector<int64_t> offsets;
        for (int64_t i = 0; i < s.w; i += 16) offsets.push_back(i);
        if ((s.w - 1) % 16 != 0) offsets.push_back(s.w - 1);
        for (int64_t offset : offsets) {
          llvm::Value* address = kb.elementAddress(0, b.CreateAdd(row, kb.index(offset)));
          b.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                            {address, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
        }
      },
      /*unroll=*/false);
}

}  // namespace kiln::codegen::detail
