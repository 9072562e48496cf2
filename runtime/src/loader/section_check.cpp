// Validates the artifact header and the section table: magic, version (another major or a
// newer minor is refused, naming both), sizes, every section inside the file, 64-byte aligned,
// not overlapping the header, the table or another section, known kinds with valid flags.
#include "loader/module.h"

namespace kiln {
namespace {

const char* sectionName(uint32_t kind) {
  switch (kind) {
    case KILN_SECTION_META:
      return "META";
    case KILN_SECTION_COMMANDS:
      return "COMMANDS";
    case KILN_SECTION_CONSTANTS:
      return "CONSTANTS";
    case KILN_SECTION_KERNELS:
      return "KERNELS";
    case KILN_SECTION_DEBUG:
      return "DEBUG";
    default:
      return "unknown";
  }
}

uint32_t allowedFlags(uint32_t kind) {
  if (kind == KILN_SECTION_CONSTANTS) return KILN_SECTION_FLAG_EXTERNAL;
  if (kind == KILN_SECTION_KERNELS) return KILN_SECTION_FLAG_STATIC;
  return 0;
}

bool allZero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

}  // namespace

kiln_status_t checkHeaderAndSections(kiln_module& m, Diag& diag) {
  if (m.size < sizeof(kiln_header)) {
    return diag.fail(KILN_ERROR_MALFORMED, "artifact is {} bytes, smaller than its 64-byte header",
                     m.size);
  }
  const kiln_header& h = *reinterpret_cast<const kiln_header*>(m.base);
  m.header = &h;
  if (h.magic[0] != KILN_MAGIC_0 || h.magic[1] != KILN_MAGIC_1 || h.magic[2] != KILN_MAGIC_2 ||
      h.magic[3] != KILN_MAGIC_3) {
    return diag.fail(KILN_ERROR_MALFORMED, "not a kiln artifact (bad magic)");
  }
  if (h.format_major != KILN_FORMAT_MAJOR || h.format_minor > KILN_FORMAT_MINOR) {
    return diag.fail(KILN_ERROR_VERSION,
                     "artifact format {}.{} is not supported by this runtime (format {}.{})",
                     h.format_major, h.format_minor, KILN_FORMAT_MAJOR, KILN_FORMAT_MINOR);
  }
  if (h.file_size > m.size) {
    return diag.fail(KILN_ERROR_MALFORMED,
                     "artifact is truncated: header says {} bytes, buffer has {}", h.file_size,
                     m.size);
  }
  m.size = h.file_size;
  if (h.flags != 0 || !allZero(h.reserved, sizeof h.reserved)) {
    return diag.fail(KILN_ERROR_MALFORMED, "header: reserved fields are not zero");
  }
  if (h.section_table_offset % 8 != 0 || h.section_table_offset < sizeof(kiln_header) ||
      h.section_count > m.size / sizeof(kiln_section) ||
      !inBounds(h.section_table_offset, uint64_t{h.section_count} * sizeof(kiln_section), m.size)) {
    return diag.fail(KILN_ERROR_MALFORMED,
                     "section table (offset {}, {} entries) lies outside the artifact or is "
                     "misaligned",
                     h.section_table_offset, h.section_count);
  }
  const kiln_section* table =
      reinterpret_cast<const kiln_section*>(m.base + h.section_table_offset);
  const uint64_t tableEnd =
      h.section_table_offset + uint64_t{h.section_count} * sizeof(kiln_section);
  const kiln_section* found[KILN_SECTION_KIND_COUNT] = {};
  for (uint32_t i = 0; i < h.section_count; ++i) {
    const kiln_section& s = table[i];
    if (s.kind == 0 || s.kind >= KILN_SECTION_KIND_COUNT) {
      return diag.fail(KILN_ERROR_MALFORMED, "section {}: unknown kind {}", i, s.kind);
    }
    const char* name = sectionName(s.kind);
    if (found[s.kind]) {
      return diag.fail(KILN_ERROR_MALFORMED, "section {}: second {} section", i, name);
    }
    found[s.kind] = &s;
    if ((s.flags & ~allowedFlags(s.kind)) != 0 || s.reserved != 0) {
      return diag.fail(KILN_ERROR_MALFORMED, "{} section: invalid flags or reserved field", name);
    }
    if (s.offset % KILN_ALIGNMENT != 0 || s.offset < tableEnd ||
        !inBounds(s.offset, s.size, m.size)) {
      return diag.fail(KILN_ERROR_MALFORMED,
                       "{} section (offset {}, {} bytes) is misaligned or lies outside the "
                       "artifact",
                       name, s.offset, s.size);
    }
    for (uint32_t j = 0; j < i; ++j) {
      const kiln_section& o = table[j];
      if (s.offset < o.offset + o.size && o.offset < s.offset + s.size) {
        return diag.fail(KILN_ERROR_MALFORMED, "{} section overlaps {} section", name,
                         sectionName(o.kind));
      }
    }
  }
  static const uint32_t kRequired[] = {KILN_SECTION_META, KILN_SECTION_COMMANDS,
                                       KILN_SECTION_KERNELS};
  for (uint32_t kind : kRequired) {
    if (!found[kind]) {
      return diag.fail(KILN_ERROR_MALFORMED, "artifact has no {} section", sectionName(kind));
    }
  }
  const kiln_section* meta = found[KILN_SECTION_META];
  if (meta->size < sizeof(kiln_meta)) {
    return diag.fail(KILN_ERROR_MALFORMED, "META section is smaller than its 64-byte header");
  }
  m.meta = reinterpret_cast<const kiln_meta*>(m.base + meta->offset);
  m.metaSize = meta->size;
  m.commands = m.base + found[KILN_SECTION_COMMANDS]->offset;
  m.commandsSize = found[KILN_SECTION_COMMANDS]->size;

  const kiln_section* kernels = found[KILN_SECTION_KERNELS];
  m.kernelSection = m.base + kernels->offset;
  m.kernelSectionSize = kernels->size;
  m.kernelsStatic = (kernels->flags & KILN_SECTION_FLAG_STATIC) != 0;

  if (const kiln_section* c = found[KILN_SECTION_CONSTANTS]) {
    m.constantsExternal = (c->flags & KILN_SECTION_FLAG_EXTERNAL) != 0;
    m.constants = m.base + c->offset;
    m.constantsSize = c->size;
  }
  if (const kiln_section* d = found[KILN_SECTION_DEBUG]) {
    m.debugSection = m.base + d->offset;  // contents checked by checkDebug()
    m.debugSectionSize = d->size;
  }
  return KILN_OK;
}

}  // namespace kiln
