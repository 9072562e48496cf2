// Validates META: its header, every table inside the section and aligned, the string table,
// kernel and binding signatures, input/output tensor descriptions and entry functions.
#include "loader/module.h"

namespace kiln {
namespace {

// Checks that `count` entries of `entrySize` bytes at `offset` lie inside META, aligned to 8.
bool tableFits(const kiln_module& m, uint32_t offset, uint32_t count, uint32_t entrySize) {
  return offset % 8 == 0 && inBounds(offset, uint64_t{count} * entrySize, m.metaSize);
}

const uint8_t* metaBytes(const kiln_module& m) { return reinterpret_cast<const uint8_t*>(m.meta); }

kiln_status_t checkTensor(const kiln_module& m, uint32_t index, Diag& diag) {
  const kiln_tensor& t = m.tensors[index];
  if (t.name >= m.stringsSize || t.rank > KILN_MAX_RANK || !isPowerOfTwo(t.alignment) ||
      t.alignment > KILN_ALIGNMENT) {
    return diag.fail(KILN_ERROR_MALFORMED, "META: tensor {} has an invalid name, rank or alignment",
                     index);
  }
  // Newer dtypes come with a newer minor version, so an unknown code is a corrupt artifact.
  if (t.dtype >= KILN_DTYPE_COUNT) {
    return diag.fail(KILN_ERROR_MALFORMED, "META: tensor '{}' has unknown dtype code {}",
                     stringAt(m.strings, t.name), uint32_t{t.dtype});
  }
  // bytes = dtype size x product(dims), overflow-checked without 64-bit divisions.
  uint64_t bytes = kiln_dtype_size(t.dtype);
  bool bad = false;
  for (uint32_t d = 0; d < KILN_MAX_RANK; ++d) {
    if (d >= t.rank) {
      bad |= t.dims[d] != 0;
    } else {
      bad |= __builtin_mul_overflow(bytes, uint64_t{t.dims[d]}, &bytes);
    }
  }
  if (bad || bytes != t.byte_size) {
    return diag.fail(KILN_ERROR_MALFORMED,
                     "META: tensor '{}' byte size {} does not match its shape and dtype",
                     stringAt(m.strings, t.name), t.byte_size);
  }
  return KILN_OK;
}

}  // namespace

kiln_status_t checkMeta(kiln_module& m, Diag& diag) {
  const kiln_meta& meta = *m.meta;
  if (meta.arena_alignment != KILN_ALIGNMENT || meta.reserved[0] != 0 || meta.reserved[1] != 0) {
    return diag.fail(KILN_ERROR_MALFORMED,
                     "META: arena alignment is not 64 or reserved fields are set");
  }
  if (meta.arena_size > SIZE_MAX / 2) {
    return diag.fail(KILN_ERROR_MALFORMED, "META: arena of {} bytes does not fit in memory",
                     meta.arena_size);
  }
  if (!tableFits(m, meta.functions_offset, meta.function_count, sizeof(kiln_function)) ||
      !tableFits(m, meta.tensors_offset, meta.tensor_count, sizeof(kiln_tensor)) ||
      !tableFits(m, meta.signatures_offset, meta.kernel_count, sizeof(kiln_kernel_signature)) ||
      !tableFits(m, meta.binding_sigs_offset, meta.binding_sig_count,
                 sizeof(kiln_binding_signature)) ||
      !inBounds(meta.strings_offset, meta.strings_size, m.metaSize)) {
    return diag.fail(KILN_ERROR_MALFORMED,
                     "META: a table lies outside the section or is misaligned");
  }
  const uint8_t* base = metaBytes(m);
  m.functions = reinterpret_cast<const kiln_function*>(base + meta.functions_offset);
  m.tensors = reinterpret_cast<const kiln_tensor*>(base + meta.tensors_offset);
  m.signatures = reinterpret_cast<const kiln_kernel_signature*>(base + meta.signatures_offset);
  m.bindingSigs = reinterpret_cast<const kiln_binding_signature*>(base + meta.binding_sigs_offset);
  m.strings = reinterpret_cast<const char*>(base + meta.strings_offset);
  m.stringsSize = meta.strings_size;
  if (m.stringsSize == 0 || m.strings[m.stringsSize - 1] != '\0') {
    return diag.fail(KILN_ERROR_MALFORMED, "META: string table does not end with a NUL byte");
  }

  for (uint32_t k = 0; k < meta.kernel_count; ++k) {
    const kiln_kernel_signature& sig = m.signatures[k];
    if (sig.binding_count > KILN_MAX_BINDINGS || sig.first_binding > meta.binding_sig_count ||
        sig.binding_count > meta.binding_sig_count - sig.first_binding) {
      return diag.fail(KILN_ERROR_MALFORMED,
                       "META: kernel {} has an invalid binding signature range", k);
    }
  }
  for (uint32_t b = 0; b < meta.binding_sig_count; ++b) {
    const kiln_binding_signature& bs = m.bindingSigs[b];
    if (bs.access == 0 || (bs.access & ~(KILN_ACCESS_READ | KILN_ACCESS_WRITE)) != 0 ||
        !isPowerOfTwo(bs.alignment) || bs.alignment > KILN_ALIGNMENT || bs.reserved0 != 0 ||
        bs.reserved1 != 0) {
      return diag.fail(KILN_ERROR_MALFORMED,
                       "META: binding signature {} has invalid access flags or alignment", b);
    }
  }
  for (uint32_t t = 0; t < meta.tensor_count; ++t) {
    if (kiln_status_t st = checkTensor(m, t, diag)) return st;
  }

  uint64_t previousEnd = 0;
  for (uint32_t f = 0; f < meta.function_count; ++f) {
    const kiln_function& fn = m.functions[f];
    if (fn.name >= m.stringsSize) {
      return diag.fail(KILN_ERROR_MALFORMED, "META: function {} has an invalid name", f);
    }
    const char* name = stringAt(m.strings, fn.name);
    if (fn.first_tensor > meta.tensor_count ||
        uint64_t{fn.input_count} + fn.output_count > meta.tensor_count - fn.first_tensor) {
      return diag.fail(KILN_ERROR_MALFORMED,
                       "META: function '{}' has inputs or outputs outside the tensor table", name);
    }
    if (fn.commands_offset < previousEnd ||
        !inBounds(fn.commands_offset, fn.commands_size, m.commandsSize)) {
      return diag.fail(KILN_ERROR_MALFORMED,
                       "META: function '{}' command range lies outside COMMANDS or overlaps the "
                       "previous function",
                       name);
    }
    previousEnd = uint64_t{fn.commands_offset} + fn.commands_size;
    for (uint32_t g = 0; g < f; ++g) {
      if (sameString(name, stringAt(m.strings, m.functions[g].name))) {
        return diag.fail(KILN_ERROR_MALFORMED, "META: two functions are named '{}'", name);
      }
    }
  }
  return KILN_OK;
}

}  // namespace kiln
