// One-line error messages of the runtime core, written into a caller-provided buffer without
// any formatting library. With KILN_NO_STATUS_MESSAGES every method is an empty inline
// function, so the message texts are dead code and never reach the binary.
#ifndef KILN_RUNTIME_BASE_DIAG_H_
#define KILN_RUNTIME_BASE_DIAG_H_

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

namespace kiln {

class Diag {
 public:
  Diag(char* buffer, size_t capacity) : buffer_(buffer), capacity_(buffer ? capacity : 0) {
    if (capacity_ > 0) buffer_[0] = '\0';
  }

  // Starts a new message with status `code`; chain s()/u() to write it, then return the Diag
  // from a function returning kiln_status_t.
  Diag& fail(kiln_status_t code) {
    code_ = code;
    length_ = 0;
    terminate();
    return *this;
  }

  // Takes status `code` for a message someone else already wrote into the buffer.
  Diag& adopt(kiln_status_t code) {
    code_ = code;
    return *this;
  }

#ifdef KILN_NO_STATUS_MESSAGES
  Diag& s(const char*) { return *this; }
  Diag& u(uint64_t) { return *this; }
  Diag& x(uint64_t) { return *this; }
#else
  Diag& s(const char* text);
  Diag& u(uint64_t value);  // decimal
  Diag& x(uint64_t value);  // 0x-prefixed hexadecimal
#endif

  operator kiln_status_t() const { return code_; }  // NOLINT: returned as the status
  kiln_status_t code() const { return code_; }
  char* buffer() const { return buffer_; }
  size_t capacity() const { return capacity_; }

 private:
  void terminate() {
    if (capacity_ > 0) buffer_[length_ < capacity_ ? length_ : capacity_ - 1] = '\0';
  }

  char* buffer_;
  size_t capacity_;
  size_t length_ = 0;
  kiln_status_t code_ = KILN_OK;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_BASE_DIAG_H_
