// One-line error messages of the runtime core, formatted into a caller-provided buffer without
// any C library: diag.fail(code, "range {}+{} exceeds space {}", offset, length, space). Each
// "{}" takes the next argument, printed as a string (const char*) or an unsigned decimal
// integer; "{x}" prints an integer as 0x-prefixed hexadecimal. With KILN_NO_STATUS_MESSAGES
// fail() only records the code, so the message texts never reach the binary.
#ifndef KILN_RUNTIME_BASE_DIAG_H_
#define KILN_RUNTIME_BASE_DIAG_H_

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

namespace kiln {

// One formatting argument: a string or an unsigned integer.
struct DiagArg {
  DiagArg(const char* s) : text(s ? s : "(null)"), value(0) {}  // NOLINT: implicit on purpose
  DiagArg(char* s) : DiagArg(static_cast<const char*>(s)) {}    // NOLINT
  DiagArg(unsigned long long v) : text(nullptr), value(v) {}    // NOLINT
  DiagArg(unsigned long v) : text(nullptr), value(v) {}         // NOLINT
  DiagArg(unsigned v) : text(nullptr), value(v) {}              // NOLINT
  DiagArg(unsigned short v) : text(nullptr), value(v) {}        // NOLINT
  DiagArg(unsigned char v) : text(nullptr), value(v) {}         // NOLINT
  const char* text;
  uint64_t value;
};

class Diag {
 public:
  Diag(char* buffer, size_t capacity) : buffer_(buffer), capacity_(buffer ? capacity : 0) {
    if (capacity_ > 0) buffer_[0] = '\0';
  }

  // Records status `code` with a formatted message; returns the code so that a function
  // returning kiln_status_t can `return diag.fail(...)`.
  template <class... Args>
  kiln_status_t fail(kiln_status_t code, const char* format, Args... args) {
#ifdef KILN_NO_STATUS_MESSAGES
    (void)format;
    ((void)args, ...);
    return code_ = code;
#else
    const DiagArg list[] = {DiagArg(args)..., DiagArg("")};
    return failWith(code, format, list, sizeof...(Args));
#endif
  }

  // Takes status `code` for a message someone else already wrote into the buffer.
  kiln_status_t adopt(kiln_status_t code) { return code_ = code; }

  kiln_status_t code() const { return code_; }
  char* buffer() const { return buffer_; }
  size_t capacity() const { return capacity_; }

 private:
  kiln_status_t failWith(kiln_status_t code, const char* format, const DiagArg* args, size_t count);

  char* buffer_;
  size_t capacity_;
  kiln_status_t code_ = KILN_OK;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_BASE_DIAG_H_
