// Building one function's command stream (format v1 COMMANDS) with the shared encoder of
// kiln/format/commands.h: DISPATCH, FILL, COPY, BARRIER, RETURN.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kiln/format/artifact.h"
#include "kiln/format/commands.h"
#include "kiln/format/kernel_abi.h"

namespace kiln::emit {

struct BindingRef {
  uint64_t space;   // KILN_SPACE_*
  uint64_t offset;  // bytes into the space
};

class CommandStream {
 public:
  void dispatch(uint32_t kernel, uint32_t workgroups, std::span<const BindingRef> bindings);
  void fill(uint64_t space, uint64_t offset, uint64_t length, uint8_t value);
  void copy(uint64_t srcSpace, uint64_t srcOffset, uint64_t dstSpace, uint64_t dstOffset,
            uint64_t length);
  void barrier();
  void ret();  // RETURN: the last command of a function

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  uint32_t dispatchCount() const { return dispatchCount_; }

 private:
  void append(uint32_t opcode, const uint64_t* operands, const kiln_binding_ref* bindings,
              uint32_t bindingCount);

  std::vector<uint8_t> bytes_;
  uint32_t dispatchCount_ = 0;
};

}  // namespace kiln::emit
