// Bounds-checked reading of an artifact's structure (see artifact_reader.h).
#include "artifact_reader.h"

#include <cstring>

#include "cli_error.h"

namespace kiln::cli {
namespace {

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw CliError("'" + name_ + "': malformed artifact: " + what);
  }

  template <typename T>
  T read(uint64_t offset, const char* what) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T))
      fail(std::string(what) + " lies outside the file");
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }

  // A NUL-terminated string inside [tableStart, tableStart + tableSize).
  std::string string(uint64_t tableStart, uint64_t tableSize, uint32_t offset) const {
    if (offset >= tableSize) fail("string offset " + std::to_string(offset) + " out of range");
    const char* start = reinterpret_cast<const char*>(bytes_.data() + tableStart + offset);
    size_t maxLength = tableSize - offset;
    size_t length = strnlen(start, maxLength);
    if (length == maxLength) fail("unterminated string in a string table");
    return std::string(start, length);
  }

  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  std::span<const uint8_t> bytes_;
  std::string name_;
};

struct SignatureLookup {
  const std::vector<std::vector<kiln_binding_signature>>* kernels;
};

uint32_t bindingCount(const void* user, uint64_t kernel) {
  auto* lookup = static_cast<const SignatureLookup*>(user);
  if (kernel >= lookup->kernels->size()) return UINT32_MAX;
  return static_cast<uint32_t>((*lookup->kernels)[kernel].size());
}

ArtifactTensor readTensor(const Reader& r, uint64_t metaStart, const kiln_meta& meta,
                          uint32_t index) {
  if (index >= meta.tensor_count) r.fail("tensor index " + std::to_string(index) + " out of range");
  auto t = r.read<kiln_tensor>(metaStart + meta.tensors_offset + uint64_t{index} * sizeof(kiln_tensor),
                               "a tensor entry");
  if (t.rank > KILN_MAX_RANK) r.fail("tensor rank " + std::to_string(t.rank) + " > 8");
  ArtifactTensor tensor;
  tensor.name = r.string(metaStart + meta.strings_offset, meta.strings_size, t.name);
  tensor.dtype = t.dtype;
  tensor.dims.assign(t.dims, t.dims + t.rank);
  tensor.byteSize = t.byte_size;
  tensor.alignment = t.alignment;
  return tensor;
}

}  // namespace

ArtifactSummary readArtifact(std::span<const uint8_t> bytes, const std::string& name) {
  Reader r(bytes, name);
  ArtifactSummary a;
  if (bytes.size() < sizeof(kiln_header) || std::memcmp(bytes.data(), "KILN", 4) != 0)
    throw CliError("'" + name + "' is not a kiln artifact (no KILN magic)");
  a.header = r.read<kiln_header>(0, "the header");
  if (a.header.format_major != KILN_FORMAT_MAJOR)
    throw CliError("'" + name + "' has format version " + std::to_string(a.header.format_major) +
                   "." + std::to_string(a.header.format_minor) + "; this kiln reads " +
                   std::to_string(KILN_FORMAT_MAJOR) + "." + std::to_string(KILN_FORMAT_MINOR));
  if (a.header.file_size != bytes.size())
    r.fail("header says " + std::to_string(a.header.file_size) + " bytes, the file has " +
           std::to_string(bytes.size()));
  if (a.header.section_count > 64) r.fail("too many sections");
  const kiln_section* meta = nullptr;
  const kiln_section* commands = nullptr;
  for (uint32_t i = 0; i < a.header.section_count; ++i) {
    auto s = r.read<kiln_section>(a.header.section_table_offset + uint64_t{i} * sizeof(kiln_section),
                                  "the section table");
    if (s.offset > bytes.size() || bytes.size() - s.offset < s.size)
      r.fail("section " + sectionName(s.kind) + " lies outside the file");
    a.sections.push_back(s);
  }
  for (const kiln_section& s : a.sections) {
    if (s.kind == KILN_SECTION_META) meta = &s;
    if (s.kind == KILN_SECTION_COMMANDS) commands = &s;
  }
  if (!meta) r.fail("no META section");
  if (!commands) r.fail("no COMMANDS section");

  uint64_t m = meta->offset;
  a.meta = r.read<kiln_meta>(m, "META");
  auto inMeta = [&](uint64_t offset, uint64_t count, uint64_t size, const char* what) {
    if (offset > meta->size || count > (meta->size - offset) / (size ? size : 1))
      r.fail(std::string(what) + " lies outside META");
  };
  inMeta(a.meta.functions_offset, a.meta.function_count, sizeof(kiln_function), "the function table");
  inMeta(a.meta.tensors_offset, a.meta.tensor_count, sizeof(kiln_tensor), "the tensor table");
  inMeta(a.meta.signatures_offset, a.meta.kernel_count, sizeof(kiln_kernel_signature),
         "the kernel signature table");
  inMeta(a.meta.binding_sigs_offset, a.meta.binding_sig_count, sizeof(kiln_binding_signature),
         "the binding signature table");
  inMeta(a.meta.strings_offset, a.meta.strings_size, 1, "the string table");

  for (uint32_t k = 0; k < a.meta.kernel_count; ++k) {
    auto sig = r.read<kiln_kernel_signature>(m + a.meta.signatures_offset + uint64_t{k} * 8,
                                             "a kernel signature");
    if (sig.binding_count > KILN_MAX_BINDINGS ||
        uint64_t{sig.first_binding} + sig.binding_count > a.meta.binding_sig_count)
      r.fail("kernel " + std::to_string(k) + " has bad bindings");
    std::vector<kiln_binding_signature> bindings;
    for (uint32_t b = 0; b < sig.binding_count; ++b)
      bindings.push_back(r.read<kiln_binding_signature>(
          m + a.meta.binding_sigs_offset + uint64_t{sig.first_binding + b} * 16,
          "a binding signature"));
    a.kernels.push_back(std::move(bindings));
  }

  SignatureLookup lookup{&a.kernels};
  uint32_t stage = 0;
  for (uint32_t i = 0; i < a.meta.function_count; ++i) {
    auto f = r.read<kiln_function>(m + a.meta.functions_offset + uint64_t{i} * sizeof(kiln_function),
                                   "a function entry");
    ArtifactFunction function;
    function.name = r.string(m + a.meta.strings_offset, a.meta.strings_size, f.name);
    for (uint32_t t = 0; t < f.input_count; ++t)
      function.inputs.push_back(readTensor(r, m, a.meta, f.first_tensor + t));
    for (uint32_t t = 0; t < f.output_count; ++t)
      function.outputs.push_back(readTensor(r, m, a.meta, f.first_tensor + f.input_count + t));
    function.firstDispatch = f.first_dispatch;
    function.dispatchCount = f.dispatch_count;
    function.commandsSize = f.commands_size;
    if (uint64_t{f.commands_offset} + f.commands_size > commands->size)
      r.fail("the commands of '" + function.name + "' lie outside COMMANDS");
    const uint8_t* start = bytes.data() + commands->offset + f.commands_offset;
    const uint8_t* pos = start;
    const uint8_t* end = start + f.commands_size;
    uint32_t dispatch = f.first_dispatch;
    stage = 0;
    while (pos < end) {
      ArtifactCommand command;
      command.offset = f.commands_offset + static_cast<uint64_t>(pos - start);
      kiln_command decoded;
      kiln_decode_result result = kiln_command_decode(&pos, end, &decoded, bindingCount, &lookup);
      if (result != KILN_DECODE_OK)
        r.fail("bad command at COMMANDS+" + std::to_string(command.offset) + " in '" +
               function.name + "' (decode error " + std::to_string(result) + ")");
      command.opcode = decoded.opcode;
      std::memcpy(command.operands, decoded.operands, sizeof command.operands);
      command.stage = stage;
      if (decoded.opcode == KILN_OP_DISPATCH) {
        command.dispatchIndex = dispatch++;
        const uint8_t* b = decoded.bindings;
        const auto& signature = a.kernels[decoded.operands[KILN_DISPATCH_KERNEL]];
        for (uint32_t k = 0; k < decoded.binding_count; ++k) {
          ArtifactBinding binding;
          kiln_varint_read(&b, end, &binding.space);
          kiln_varint_read(&b, end, &binding.offset);
          binding.length = signature[k].length;
          binding.access = signature[k].access;
          binding.alignment = signature[k].alignment;
          command.bindings.push_back(binding);
        }
      }
      if (decoded.opcode == KILN_OP_BARRIER) ++stage;
      function.commands.push_back(std::move(command));
      if (decoded.opcode == KILN_OP_RETURN) break;
    }
    a.functions.push_back(std::move(function));
  }

  for (const kiln_section& s : a.sections) {
    if (s.kind == KILN_SECTION_CONSTANTS && (s.flags & KILN_SECTION_FLAG_EXTERNAL)) {
      a.constantsExternal = true;
      a.external = r.read<kiln_external_constants>(s.offset, "the external constants record");
    }
    if (s.kind == KILN_SECTION_KERNELS && (s.flags & KILN_SECTION_FLAG_STATIC)) {
      a.kernelsStatic = true;
      a.staticLibraryName = r.string(s.offset, s.size, 0);
    }
    if (s.kind == KILN_SECTION_DEBUG) {
      auto d = r.read<kiln_debug>(s.offset, "the DEBUG header");
      if (d.strings_offset > s.size || d.strings_size > s.size - d.strings_offset)
        r.fail("the DEBUG string table lies outside DEBUG");
      if (d.entries_offset > s.size || d.entry_count > (s.size - d.entries_offset) / 8)
        r.fail("the DEBUG entries lie outside DEBUG");
      for (uint32_t e = 0; e < d.entry_count; ++e) {
        auto entry = r.read<kiln_debug_entry>(s.offset + d.entries_offset + uint64_t{e} * 8,
                                              "a DEBUG entry");
        a.debug.push_back({r.string(s.offset + d.strings_offset, d.strings_size, entry.dispatch_name),
                           r.string(s.offset + d.strings_offset, d.strings_size, entry.node_name)});
      }
      // The optional cost table: its record sits between the header and entries at >= 32.
      if (d.entries_offset >= sizeof(kiln_debug) + sizeof(kiln_debug_costs)) {
        auto costs =
            r.read<kiln_debug_costs>(s.offset + sizeof(kiln_debug), "the DEBUG costs record");
        if (costs.costs_offset != 0) {
          if (costs.costs_offset % 8 != 0 || costs.costs_offset > s.size ||
              d.entry_count > (s.size - costs.costs_offset) / sizeof(kiln_debug_cost))
            r.fail("the DEBUG cost table lies outside DEBUG");
          for (uint32_t e = 0; e < d.entry_count; ++e) {
            auto cost = r.read<kiln_debug_cost>(
                s.offset + costs.costs_offset + uint64_t{e} * sizeof(kiln_debug_cost),
                "a DEBUG cost");
            if (cost.kind >= KILN_COST_KIND_COUNT)
              r.fail("DEBUG cost " + std::to_string(e) + " has unknown kind " +
                     std::to_string(cost.kind));
            a.debug[e].costKind = static_cast<kiln_cost_kind>(cost.kind);
            a.debug[e].cost = cost.count;
            a.debug[e].workQueues = cost.work_queues;
          }
          a.debugHasCosts = true;
        }
        if (costs.note_size != 0) {
          a.debugNote = r.string(s.offset + d.strings_offset, d.strings_size, costs.note);
          if (a.debugNote.size() != costs.note_size) r.fail("the DEBUG note has the wrong size");
        }
      }
    }
  }
  return a;
}

std::string archName(uint32_t arch) {
  switch (arch) {
    case KILN_ARCH_X86_64: return "x86_64";
    case KILN_ARCH_AARCH64: return "aarch64";
    case KILN_ARCH_RISCV64: return "riscv64";
    case KILN_ARCH_ARM: return "arm (thumb)";
    case KILN_ARCH_RISCV32: return "riscv32";
    default: return "none";
  }
}

std::string abiName(uint32_t abi) {
  switch (abi) {
    case KILN_ABI_LP64: return "lp64";
    case KILN_ABI_LP64D: return "lp64d";
    case KILN_ABI_EABI_SOFT: return "eabi (soft float)";
    case KILN_ABI_EABI_HARD: return "eabihf (hard float)";
    case KILN_ABI_ILP32: return "ilp32";
    case KILN_ABI_ILP32F: return "ilp32f";
    default: return "none";
  }
}

std::string sectionName(uint32_t kind) {
  switch (kind) {
    case KILN_SECTION_META: return "META";
    case KILN_SECTION_COMMANDS: return "COMMANDS";
    case KILN_SECTION_CONSTANTS: return "CONSTANTS";
    case KILN_SECTION_KERNELS: return "KERNELS";
    case KILN_SECTION_DEBUG: return "DEBUG";
    default: return "UNKNOWN(" + std::to_string(kind) + ")";
  }
}

std::string spaceName(uint64_t space) {
  if (space == KILN_SPACE_ARENA) return "arena";
  if (space == KILN_SPACE_CONSTANTS) return "constants";
  if (space % 2 == 0) return "input " + std::to_string((space - 2) / 2);
  return "output " + std::to_string((space - 3) / 2);
}

std::vector<std::string> cpuFeatureNames(uint32_t arch, uint64_t features) {
  std::vector<std::string> names;
  for (uint32_t bit = 0; bit < 64; ++bit) {
    if (!(features & (uint64_t{1} << bit))) continue;
    const char* name = kiln_cpu_feature_name(arch, bit);
    names.push_back(name ? name : "bit" + std::to_string(bit));
  }
  return names;
}

}  // namespace kiln::cli
