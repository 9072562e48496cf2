// KernelBuilder implementation: function skeleton, element access, loops, workgroup split.
#include "kernel_builder.h"

#include <llvm/IR/Attributes.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>

#include "kiln/codegen/work_queue.h"
#include "math_approx.h"

namespace kiln::codegen::detail {

namespace {

void addCommonAttributes(llvm::Function* fn, const EmitTarget& target) {
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::NoFree);
  fn->addFnAttr(llvm::Attribute::NoSync);
  fn->addFnAttr(llvm::Attribute::WillReturn);
  fn->addFnAttr("no-builtins");
  fn->addFnAttr("target-cpu", target.cpu);
  if (!target.features.empty()) fn->addFnAttr("target-features", target.features);
  if (target.softFloat) fn->addFnAttr("use-soft-float", "true");
  if (target.optimizeForSize) fn->addFnAttr(llvm::Attribute::OptimizeForSize);
}

}  // namespace

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& outShape) {
  std::vector<int64_t> own = rowMajorStrides(shape);
  std::vector<int64_t> strides(outShape.size(), 0);
  size_t offset = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    strides[offset + i] = shape[i] == 1 ? 0 : own[i];
  }
  return strides;
}

KernelBuilder::KernelBuilder(llvm::Module& module, const std::string& name, const KernelDesc& desc,
                             const EmitTarget& target)
    : module_(module), desc_(desc), target_(target), builder_(module.getContext()) {
  llvm::LLVMContext& ctx = module.getContext();
  indexType_ = llvm::IntegerType::get(ctx, target.pointerBits);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* voidTy = llvm::Type::getVoidTy(ctx);
  unsigned bindingCount = static_cast<unsigned>(desc.bindingCount());

  // The ABI entry point: void(void* const* bindings, uint32_t id, uint32_t count).
  auto* entryType = llvm::FunctionType::get(voidTy, {ptr, i32, i32}, false);
  entry_ = llvm::Function::Create(entryType, llvm::GlobalValue::InternalLinkage, name, module);
  addCommonAttributes(entry_, target);
  entry_->addParamAttr(0, llvm::Attribute::NoAlias);
  entry_->addParamAttr(0, llvm::Attribute::NoCapture);
  entry_->addParamAttr(0, llvm::Attribute::ReadOnly);

  // The body takes the binding pointers as parameters so that they can carry `noalias`;
  // inlining turns that into alias scopes the vectoriser uses.
  std::vector<llvm::Type*> bodyParams(bindingCount, ptr);
  bodyParams.push_back(i32);
  bodyParams.push_back(i32);
  auto* bodyType = llvm::FunctionType::get(voidTy, bodyParams, false);
  body_ =
      llvm::Function::Create(bodyType, llvm::GlobalValue::InternalLinkage, name + ".body", module);
  addCommonAttributes(body_, target);
  body_->addFnAttr(llvm::Attribute::AlwaysInline);
  for (unsigned i = 0; i < bindingCount; ++i) {
    if (!desc.bindingsMayAlias) body_->addParamAttr(i, llvm::Attribute::NoAlias);
    body_->addParamAttr(i, llvm::Attribute::NoCapture);
    body_->addParamAttr(i, llvm::Attribute::NonNull);
  }

  // Entry: load each binding pointer, call the body.
  llvm::BasicBlock* entryBlock = llvm::BasicBlock::Create(ctx, "entry", entry_);
  builder_.SetInsertPoint(entryBlock);
  std::vector<llvm::Value*> args;
  for (unsigned i = 0; i < bindingCount; ++i) {
    llvm::Value* slot = builder_.CreateConstInBoundsGEP1_32(ptr, entry_->getArg(0), i);
    args.push_back(builder_.CreateAlignedLoad(ptr, slot, llvm::Align(target.pointerBits / 8)));
  }
  args.push_back(entry_->getArg(1));
  args.push_back(entry_->getArg(2));
  builder_.CreateCall(body_, args);
  builder_.CreateRetVoid();

  allocaBlock_ = llvm::BasicBlock::Create(ctx, "entry", body_);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx, "start", body_);
  builder_.SetInsertPoint(allocaBlock_);
  builder_.CreateBr(start);
  builder_.SetInsertPoint(start);
  for (unsigned i = 0; i < bindingCount; ++i) bindings_.push_back(body_->getArg(i));
  workgroupId_ = body_->getArg(bindingCount);
  workgroupCount_ = body_->getArg(bindingCount + 1);

  // Float arithmetic may be contracted into fused multiply-adds.
  llvm::FastMathFlags flags;
  flags.setAllowContract(true);
  builder_.setFastMathFlags(flags);
}

llvm::Function* KernelBuilder::finish() {
  builder_.CreateRetVoid();
  return entry_;
}

llvm::Type* KernelBuilder::elemType(ElemType type) {
  llvm::LLVMContext& ctx = context();
  switch (type) {
    case ElemType::F32:
      return llvm::Type::getFloatTy(ctx);
    case ElemType::F64:
      return llvm::Type::getDoubleTy(ctx);
    case ElemType::I8:
    case ElemType::U8:
      return llvm::Type::getInt8Ty(ctx);
    case ElemType::I16:
      return llvm::Type::getInt16Ty(ctx);
    case ElemType::I32:
      return llvm::Type::getInt32Ty(ctx);
    case ElemType::I64:
      return llvm::Type::getInt64Ty(ctx);
    case ElemType::Bool:
      return llvm::Type::getInt1Ty(ctx);
  }
  return nullptr;
}

llvm::Value* KernelBuilder::index(int64_t value) {
  return llvm::ConstantInt::get(indexType_, static_cast<uint64_t>(value), true);
}

llvm::Value* KernelBuilder::constant(ElemType type, double value) {
  if (type == ElemType::F32) return f32(static_cast<float>(value));
  if (type == ElemType::F64)
    return llvm::ConstantFP::get(llvm::Type::getDoubleTy(context()), value);
  if (type == ElemType::Bool) return builder_.getInt1(value != 0);
  return llvm::ConstantInt::get(elemType(type), static_cast<uint64_t>(static_cast<int64_t>(value)),
                                true);
}

llvm::Value* KernelBuilder::f32(float value) {
  return llvm::ConstantFP::get(llvm::Type::getFloatTy(context()), value);
}

llvm::Value* KernelBuilder::bindingPointer(unsigned binding) { return bindings_.at(binding); }

llvm::Value* KernelBuilder::load(unsigned binding, ElemType type, llvm::Value* linearIndex) {
  // Bool is one byte in memory and i1 in registers.
  llvm::Type* memType = type == ElemType::Bool ? builder_.getInt8Ty() : elemType(type);
  llvm::Value* address = builder_.CreateInBoundsGEP(memType, bindings_.at(binding), linearIndex);
  llvm::Value* value = builder_.CreateAlignedLoad(memType, address, llvm::Align(elemSize(type)));
  if (type == ElemType::Bool) value = builder_.CreateICmpNE(value, builder_.getInt8(0));
  return value;
}

void KernelBuilder::store(unsigned binding, ElemType type, llvm::Value* linearIndex,
                          llvm::Value* value) {
  llvm::Type* memType = type == ElemType::Bool ? builder_.getInt8Ty() : elemType(type);
  if (type == ElemType::Bool) value = builder_.CreateZExt(value, memType);
  llvm::Value* address = builder_.CreateInBoundsGEP(memType, bindings_.at(binding), linearIndex);
  builder_.CreateAlignedStore(value, address, llvm::Align(elemSize(type)));
}

llvm::Value* KernelBuilder::elementAddress(unsigned binding, llvm::Value* linearIndex) {
  return builder_.CreateGEP(builder_.getFloatTy(), bindings_.at(binding), linearIndex);
}

llvm::Value* KernelBuilder::loadVector(unsigned binding, llvm::Value* linearIndex, unsigned lanes) {
  auto* type = llvm::FixedVectorType::get(builder_.getFloatTy(), lanes);
  llvm::Value* address =
      builder_.CreateInBoundsGEP(builder_.getFloatTy(), bindings_.at(binding), linearIndex);
  return builder_.CreateAlignedLoad(type, address, llvm::Align(4));
}

void KernelBuilder::storeVector(unsigned binding, llvm::Value* linearIndex, llvm::Value* vector) {
  llvm::Value* address =
      builder_.CreateInBoundsGEP(builder_.getFloatTy(), bindings_.at(binding), linearIndex);
  builder_.CreateAlignedStore(vector, address, llvm::Align(4));
}

llvm::Value* KernelBuilder::local(llvm::Type* type, const char* name) {
  llvm::IRBuilder<> entryBuilder(allocaBlock_, allocaBlock_->begin());
  return entryBuilder.CreateAlloca(type, nullptr, name);
}

void KernelBuilder::forRange(llvm::Value* begin, llvm::Value* end, const Body& body, bool unroll) {
  llvm::LLVMContext& ctx = context();
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, "loop", fn);
  llvm::BasicBlock* bodyBlock = llvm::BasicBlock::Create(ctx, "body", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "done", fn);
  builder_.CreateBr(header);

  builder_.SetInsertPoint(header);
  llvm::PHINode* i = builder_.CreatePHI(indexType_, 2, "i");
  i->addIncoming(begin, preheader);
  builder_.CreateCondBr(builder_.CreateICmpSLT(i, end), bodyBlock, exit);

  builder_.SetInsertPoint(bodyBlock);
  body(i);
  llvm::Value* next = builder_.CreateAdd(i, index(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, builder_.GetInsertBlock());
  llvm::BranchInst* latch = builder_.CreateBr(header);
  if (!unroll) {
    llvm::LLVMContext& c = context();
    llvm::MDNode* disable = llvm::MDNode::get(c, llvm::MDString::get(c, "llvm.loop.unroll.disable"));
    llvm::MDNode* loop = llvm::MDNode::getDistinct(c, {nullptr, disable});
    loop->replaceOperandWith(0, loop);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop);
  }

  builder_.SetInsertPoint(exit);
}

llvm::Value* KernelBuilder::workQueue(llvm::Value* queue) {
  return builder_.CreateGEP(builder_.getInt8Ty(), bindings_.at(desc_.workQueueBinding()),
                            builder_.CreateMul(queue, index(kWorkQueueBytes)));
}

namespace {

// The two halves of a queue's counter: units claimed from the bottom (low 32 bits) and from
// the top (high 32 bits), as index values.
std::pair<llvm::Value*, llvm::Value*> claimHalves(llvm::IRBuilder<>& b, llvm::Value* counter,
                                                  llvm::Type* indexType) {
  llvm::Value* bottom = b.CreateAnd(counter, b.getInt64(0xffffffffu));
  llvm::Value* top = b.CreateLShr(counter, b.getInt64(32));
  return {b.CreateZExtOrTrunc(bottom, indexType), b.CreateZExtOrTrunc(top, indexType)};
}

}  // namespace

llvm::Value* KernelBuilder::workQueueClaimed(llvm::Value* counter) {
  llvm::LoadInst* value = builder_.CreateAlignedLoad(builder_.getInt64Ty(), counter, llvm::Align(8));
  value->setAtomic(llvm::AtomicOrdering::Monotonic);
  auto [bottom, top] = claimHalves(builder_, value, indexType_);
  return builder_.CreateAdd(bottom, top);
}

void KernelBuilder::forEachClaimed(llvm::Value* counter, int64_t units, llvm::Value* fromTop,
                                   const Body& body) {
  llvm::LLVMContext& ctx = context();
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, "claim", fn);
  llvm::BasicBlock* bodyBlock = llvm::BasicBlock::Create(ctx, "claimed", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "queue_empty", fn);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  // Only the add itself needs to be atomic: the units' results reach other threads through the
  // pool's end of stage, and the FILL that empties the queues comes a stage before.
  llvm::Value* step =
      builder_.CreateSelect(fromTop, builder_.getInt64(uint64_t{1} << 32), builder_.getInt64(1));
  llvm::Value* before = builder_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter, step,
                                                 llvm::Align(8), llvm::AtomicOrdering::Monotonic);
  auto [bottom, top] = claimHalves(builder_, before, indexType_);
  llvm::Value* valid = builder_.CreateICmpULT(builder_.CreateAdd(bottom, top), index(units));
  builder_.CreateCondBr(valid, bodyBlock, exit);
  builder_.SetInsertPoint(bodyBlock);
  body(builder_.CreateSelect(fromTop, builder_.CreateSub(index(units - 1), top), bottom));
  builder_.CreateBr(header);
  builder_.SetInsertPoint(exit);
}

void KernelBuilder::forWorkgroupShare(int64_t total, const Body& body) {
  if (total <= 0) return;
  // share = total / count, the first (total % count) workgroups take one more.
  llvm::Value* id = builder_.CreateZExt(workgroupId_, indexType_);
  llvm::Value* count = builder_.CreateZExt(workgroupCount_, indexType_);
  llvm::Value* totalValue = index(total);
  llvm::Value* share = builder_.CreateUDiv(totalValue, count);
  llvm::Value* rest = builder_.CreateURem(totalValue, count);
  llvm::Value* takesMore = builder_.CreateICmpULT(id, rest);
  llvm::Value* extraBefore = builder_.CreateSelect(takesMore, id, rest);
  llvm::Value* begin = builder_.CreateAdd(builder_.CreateMul(id, share), extraBefore);
  llvm::Value* size = builder_.CreateAdd(share, builder_.CreateZExt(takesMore, indexType_));
  llvm::Value* end = builder_.CreateAdd(begin, size);
  forRange(begin, end, body);
}

void KernelBuilder::ifThen(llvm::Value* cond, const std::function<void()>& then) {
  llvm::LLVMContext& ctx = context();
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock* thenBlock = llvm::BasicBlock::Create(ctx, "then", fn);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx, "endif", fn);
  builder_.CreateCondBr(cond, thenBlock, merge);
  builder_.SetInsertPoint(thenBlock);
  then();
  builder_.CreateBr(merge);
  builder_.SetInsertPoint(merge);
}

std::vector<llvm::Value*> KernelBuilder::decompose(llvm::Value* linear,
                                                   const std::vector<int64_t>& extents) {
  std::vector<llvm::Value*> coords(extents.size());
  for (size_t i = extents.size(); i-- > 0;) {
    if (i == 0) {
      coords[i] = linear;
    } else if (extents[i] == 1) {
      coords[i] = index(0);
    } else {
      coords[i] = builder_.CreateURem(linear, index(extents[i]));
      linear = builder_.CreateUDiv(linear, index(extents[i]));
    }
  }
  return coords;
}

llvm::Value* KernelBuilder::rowAddress(const BufferDesc& buffer, llvm::Value* n, llvm::Value* c,
                                       llvm::Value* h) {
  const std::vector<int64_t>& s = buffer.shape;
  const int64_t C = s[1], H = s[2], W = s[3];
  llvm::IRBuilder<>& b = builder_;
  llvm::Value* image = b.CreateMul(n, index(C * H * W));
  const std::vector<int64_t>& groups = buffer.rowGroups;
  if (groups.empty())
    return b.CreateAdd(image, b.CreateMul(b.CreateAdd(b.CreateMul(c, index(H)), h), index(W)));
  // h's group: the last whose first row is at most h (a few compares: groups are few).
  llvm::Value* start = index(0);
  llvm::Value* rows = index(groups[1]);
  for (size_t g = 1; g + 1 < groups.size(); ++g) {
    llvm::Value* inGroup = b.CreateICmpSGE(h, index(groups[g]));
    start = b.CreateSelect(inGroup, index(groups[g]), start);
    rows = b.CreateSelect(inGroup, index(groups[g + 1] - groups[g]), rows);
  }
  // C * W * start + (c * rows + h - start) * W
  llvm::Value* inGroup = b.CreateSub(b.CreateAdd(b.CreateMul(c, rows), h), start);
  return b.CreateAdd(image, b.CreateAdd(b.CreateMul(start, index(C * W)),
                                        b.CreateMul(inGroup, index(W))));
}

llvm::Value* KernelBuilder::linearize(const std::vector<llvm::Value*>& coords,
                                      const std::vector<int64_t>& strides) {
  llvm::Value* result = index(0);
  for (size_t i = 0; i < coords.size(); ++i) {
    if (strides[i] == 0) continue;
    llvm::Value* term = strides[i] == 1
                            ? coords[i]
                            : builder_.CreateMul(coords[i], index(strides[i]), "", false, true);
    result = builder_.CreateAdd(result, term, "", false, true);
  }
  return result;
}

llvm::Value* KernelBuilder::concatVectors(std::vector<llvm::Value*> parts) {
  while (parts.size() > 1) {
    if (parts.size() % 2) parts.push_back(llvm::PoisonValue::get(parts[0]->getType()));
    unsigned lanes = llvm::cast<llvm::FixedVectorType>(parts[0]->getType())->getNumElements();
    std::vector<int> both;
    for (unsigned i = 0; i < 2 * lanes; ++i) both.push_back(int(i));
    std::vector<llvm::Value*> joined;
    for (size_t i = 0; i < parts.size(); i += 2)
      joined.push_back(builder_.CreateShuffleVector(parts[i], parts[i + 1], both));
    parts = std::move(joined);
  }
  return parts[0];
}

llvm::Value* KernelBuilder::strideLanes(llvm::Value* vector, int64_t first, int64_t step,
                                        int64_t count) {
  std::vector<int> pick;
  for (int64_t i = 0; i < count; ++i) pick.push_back(int(first + i * step));
  return builder_.CreateShuffleVector(vector, pick);
}

llvm::Value* KernelBuilder::maxValue(llvm::Value* a, llvm::Value* b) {
  if (a->getType()->isFPOrFPVectorTy()) {  // scalars or vectors (fused epilogues)
    return builder_.CreateSelect(builder_.CreateFCmpOGT(a, b), a, b);
  }
  return builder_.CreateSelect(builder_.CreateICmpSGT(a, b), a, b);
}

llvm::Value* KernelBuilder::minValue(llvm::Value* a, llvm::Value* b) {
  if (a->getType()->isFPOrFPVectorTy()) {
    return builder_.CreateSelect(builder_.CreateFCmpOLT(a, b), a, b);
  }
  return builder_.CreateSelect(builder_.CreateICmpSLT(a, b), a, b);
}

llvm::Value* KernelBuilder::applyEpilogue(const Epilogue& epilogue, llvm::Value* value) {
  // A constant of value's type: a scalar, or a splat for a vector.
  auto constant = [&](float x) { return llvm::ConstantFP::get(value->getType(), x); };
  switch (epilogue.act) {
    case Activation::None:
      return value;
    case Activation::Relu:
      return maxValue(value, constant(0.0f));
    case Activation::Clip:
      return minValue(maxValue(value, constant(epilogue.alpha)), constant(epilogue.beta));
    case Activation::LeakyRelu:
      return builder_.CreateSelect(builder_.CreateFCmpOLT(value, constant(0.0f)),
                                   builder_.CreateFMul(value, constant(epilogue.alpha)), value);
    case Activation::Sigmoid:
      return emitSigmoid(*this, value);
    case Activation::Tanh:
      return emitTanh(*this, value);
  }
  return value;
}

TileUnit tileUnit(const EmitTarget& target) {
  if (target.helium && !target.smallestCode && !target.softFloat) return {4, 8};
  return {target.vectorLanes, target.vectorRegisters};
}

}  // namespace kiln::codegen::detail
