// CommandStream: appends encoded commands through the shared kiln_command_encode.
#include "kiln/emit/command_stream.h"

#include <cassert>

namespace kiln::emit {

void CommandStream::append(uint32_t opcode, const uint64_t* operands,
                           const kiln_binding_ref* bindings, uint32_t bindingCount) {
  size_t size = kiln_command_encode(nullptr, opcode, operands, bindings, bindingCount);
  assert(size > 0 && "command the format cannot encode");
  size_t start = bytes_.size();
  bytes_.resize(start + size);
  size_t written = kiln_command_encode(bytes_.data() + start, opcode, operands, bindings,
                                       bindingCount);
  assert(written == size);
  (void)written;
}

void CommandStream::dispatch(uint32_t kernel, uint32_t workgroups,
                             std::span<const BindingRef> bindings) {
  assert(workgroups >= 1 && bindings.size() <= KILN_MAX_BINDINGS);
  uint64_t operands[KILN_MAX_OPERANDS] = {};
  operands[KILN_DISPATCH_KERNEL] = kernel;
  operands[KILN_DISPATCH_WORKGROUPS] = workgroups;
  std::vector<kiln_binding_ref> refs;
  for (const BindingRef& b : bindings) refs.push_back({b.space, b.offset});
  append(KILN_OP_DISPATCH, operands, refs.data(), static_cast<uint32_t>(refs.size()));
  ++dispatchCount_;
}

void CommandStream::fill(uint64_t space, uint64_t offset, uint64_t length, uint8_t value) {
  uint64_t operands[KILN_MAX_OPERANDS] = {};
  operands[KILN_FILL_SPACE] = space;
  operands[KILN_FILL_OFFSET] = offset;
  operands[KILN_FILL_LENGTH] = length;
  operands[KILN_FILL_VALUE] = value;
  append(KILN_OP_FILL, operands, nullptr, 0);
}

void CommandStream::copy(uint64_t srcSpace, uint64_t srcOffset, uint64_t dstSpace,
                         uint64_t dstOffset, uint64_t length) {
  uint64_t operands[KILN_MAX_OPERANDS] = {};
  operands[KILN_COPY_SRC_SPACE] = srcSpace;
  operands[KILN_COPY_SRC_OFFSET] = srcOffset;
  operands[KILN_COPY_DST_SPACE] = dstSpace;
  operands[KILN_COPY_DST_OFFSET] = dstOffset;
  operands[KILN_COPY_LENGTH] = length;
  append(KILN_OP_COPY, operands, nullptr, 0);
}

void CommandStream::barrier() { append(KILN_OP_BARRIER, nullptr, nullptr, 0); }

void CommandStream::ret() { append(KILN_OP_RETURN, nullptr, nullptr, 0); }

}  // namespace kiln::emit
