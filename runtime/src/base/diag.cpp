// Diag's text writers, the fixed status strings and the version query.
#include "base/diag.h"

namespace kiln {

#ifndef KILN_NO_STATUS_MESSAGES
kiln_status_t Diag::failWith(kiln_status_t code, const char* format, const DiagArg* args,
                             size_t count) {
  code_ = code;
  size_t n = 0;
  auto put = [&](char c) {
    if (n + 1 < capacity_) buffer_[n++] = c;
  };
  size_t next = 0;
  for (const char* f = format; *f; ++f) {
    bool hex = f[0] == '{' && f[1] == 'x' && f[2] == '}';
    if (!(f[0] == '{' && f[1] == '}') && !hex) {
      put(*f);
      continue;
    }
    f += hex ? 2 : 1;
    const DiagArg& a = args[next < count ? next++ : count];  // args[count] is ""
    if (a.text) {
      for (const char* t = a.text; *t; ++t) put(*t);
      continue;
    }
    char digits[20];
    int d = 0;
    uint64_t v = a.value;
    unsigned base = hex ? 16 : 10;
    do {
      digits[d++] = "0123456789abcdef"[v % base];
      v /= base;
    } while (v != 0);
    if (hex) put('0'), put('x');
    while (d > 0) put(digits[--d]);
  }
  if (capacity_ > 0) buffer_[n] = '\0';
  return code;
}
#endif

}  // namespace kiln

extern "C" const char* kiln_status_string(kiln_status_t status) {
#ifdef KILN_NO_STATUS_MESSAGES
  (void)status;
  return "";
#else
  switch (status) {
    case KILN_OK:
      return "ok";
    case KILN_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case KILN_ERROR_MALFORMED:
      return "malformed artifact";
    case KILN_ERROR_VERSION:
      return "unsupported format version";
    case KILN_ERROR_UNSUPPORTED:
      return "unsupported target";
    case KILN_ERROR_KERNELS:
      return "kernel library error";
    case KILN_ERROR_CONSTANTS:
      return "constants error";
    case KILN_ERROR_NOT_FOUND:
      return "not found";
    case KILN_ERROR_IO:
      return "i/o error";
    case KILN_ERROR_OUT_OF_MEMORY:
      return "out of memory";
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
