// Diag's text writers, the fixed status strings and the version query.
#include "base/diag.h"

namespace kiln {

#ifndef KILN_NO_STATUS_MESSAGES
Diag& Diag::s(const char* text) {
  if (!text) text = "(null)";
  while (*text && length_ + 1 < capacity_) buffer_[length_++] = *text++;
  terminate();
  return *this;
}

Diag& Diag::u(uint64_t value) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (n > 0 && length_ + 1 < capacity_) buffer_[length_++] = digits[--n];
  terminate();
  return *this;
}

Diag& Diag::x(uint64_t value) {
  s("0x");
  for (int shift = 60; shift >= 0; shift -= 4) {
    char c[2] = {"0123456789abcdef"[(value >> shift) & 0xf], '\0'};
    s(c);
  }
  return *this;
}
#endif

}  // namespace kiln

extern "C" const char* kiln_status_string(kiln_status_t status) {
#ifdef KILN_NO_STATUS_MESSAGES
  (void)status;
  return "";
#else
  switch (status) {
    case KILN_OK: return "ok";
    case KILN_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case KILN_ERROR_MALFORMED: return "malformed artifact";
    case KILN_ERROR_VERSION: return "unsupported format version";
    case KILN_ERROR_UNSUPPORTED: return "unsupported target";
    case KILN_ERROR_KERNELS: return "kernel library error";
    case KILN_ERROR_CONSTANTS: return "constants error";
    case KILN_ERROR_NOT_FOUND: return "not found";
    case KILN_ERROR_IO: return "i/o error";
    case KILN_ERROR_OUT_OF_MEMORY: return "out of memory";
  }
  return "unknown status";
#endif
}

extern "C" void kiln_version(kiln_version_info* out) {
  if (!out) return;
  out->major = KILN_VERSION_MAJOR;
  out->minor = KILN_VERSION_MINOR;
  out->patch = KILN_VERSION_PATCH;
  out->format_major = KILN_FORMAT_MAJOR;
  out->format_minor = KILN_FORMAT_MINOR;
  out->kernel_abi_version = KILN_KERNEL_ABI_VERSION;
}
