// serializeArtifact: lays out header, section table, META, COMMANDS, CONSTANTS, KERNELS and
// DEBUG exactly as kiln/format/artifact.h describes, every section 64-byte aligned and every
// padding byte zero.
#include "kiln/emit/artifact_builder.h"

#include <cassert>
#include <cstring>
#include <map>

namespace kiln::emit {
namespace {

// A string table with names in first-use order (deterministic), each NUL-terminated.
class StringTable {
 public:
  uint32_t add(const std::string& text) {
    auto it = offsets_.find(text);
    if (it != offsets_.end()) return it->second;
    uint32_t offset = static_cast<uint32_t>(bytes_.size());
    bytes_.insert(bytes_.end(), text.begin(), text.end());
    bytes_.push_back(0);
    offsets_.emplace(text, offset);
    return offset;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
  std::map<std::string, uint32_t> offsets_;
};

size_t alignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

template <typename T>
void appendStruct(std::vector<uint8_t>& out, const T& value) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

void padTo(std::vector<uint8_t>& out, size_t alignment) {
  out.resize(alignUp(out.size(), alignment), 0);
}

kiln_tensor makeTensor(const TensorInfo& info, StringTable& strings) {
  assert(info.dims.size() <= KILN_MAX_RANK);
  kiln_tensor tensor;
  std::memset(&tensor, 0, sizeof tensor);
  tensor.name = strings.add(info.name);
  tensor.dtype = static_cast<uint8_t>(info.dtype);
  tensor.rank = static_cast<uint8_t>(info.dims.size());
  tensor.alignment = info.alignment;
  uint64_t size = kiln_dtype_size(info.dtype);
  for (size_t i = 0; i < info.dims.size(); ++i) {
    tensor.dims[i] = info.dims[i];
    size *= info.dims[i];
  }
  tensor.byte_size = size;
  return tensor;
}

std::vector<uint8_t> buildMeta(const ArtifactContents& c) {
  StringTable strings;
  std::vector<kiln_function> functions;
  std::vector<kiln_tensor> tensors;
  uint32_t commandsOffset = 0;
  uint32_t dispatches = 0;
  for (const FunctionInfo& f : c.functions) {
    kiln_function entry;
    std::memset(&entry, 0, sizeof entry);
    entry.name = strings.add(f.name);
    entry.input_count = static_cast<uint32_t>(f.inputs.size());
    entry.output_count = static_cast<uint32_t>(f.outputs.size());
    entry.first_tensor = static_cast<uint32_t>(tensors.size());
    entry.commands_offset = commandsOffset;
    entry.commands_size = static_cast<uint32_t>(f.commands.bytes().size());
    entry.first_dispatch = dispatches;
    entry.dispatch_count = f.commands.dispatchCount();
    for (const TensorInfo& t : f.inputs) tensors.push_back(makeTensor(t, strings));
    for (const TensorInfo& t : f.outputs) tensors.push_back(makeTensor(t, strings));
    functions.push_back(entry);
    commandsOffset += entry.commands_size;
    dispatches += entry.dispatch_count;
  }
  std::vector<kiln_kernel_signature> signatures;
  std::vector<kiln_binding_signature> bindings;
  for (const KernelSignature& k : c.kernels) {
    assert(k.bindings.size() <= KILN_MAX_BINDINGS);
    signatures.push_back({static_cast<uint32_t>(bindings.size()),
                          static_cast<uint32_t>(k.bindings.size())});
    for (const BindingSignature& b : k.bindings) {
      kiln_binding_signature sig;
      std::memset(&sig, 0, sizeof sig);
      sig.length = b.length;
      sig.access = b.access;
      sig.alignment = b.alignment;
      bindings.push_back(sig);
    }
  }

  std::vector<uint8_t> out(sizeof(kiln_meta), 0);
  kiln_meta meta;
  std::memset(&meta, 0, sizeof meta);
  meta.arena_size = c.arenaSize;
  meta.arena_alignment = KILN_ALIGNMENT;
  meta.stack_bound = c.stackBound;
  meta.kernel_count = static_cast<uint32_t>(c.kernels.size());
  meta.function_count = static_cast<uint32_t>(functions.size());
  meta.functions_offset = static_cast<uint32_t>(out.size());
  for (const kiln_function& f : functions) appendStruct(out, f);
  padTo(out, 8);
  meta.tensor_count = static_cast<uint32_t>(tensors.size());
  meta.tensors_offset = static_cast<uint32_t>(out.size());
  for (const kiln_tensor& t : tensors) appendStruct(out, t);
  padTo(out, 8);
  meta.signatures_offset = static_cast<uint32_t>(out.size());
  for (const kiln_kernel_signature& s : signatures) appendStruct(out, s);
  padTo(out, 8);
  meta.binding_sig_count = static_cast<uint32_t>(bindings.size());
  meta.binding_sigs_offset = static_cast<uint32_t>(out.size());
  for (const kiln_binding_signature& b : bindings) appendStruct(out, b);
  padTo(out, 8);
  meta.strings_offset = static_cast<uint32_t>(out.size());
  meta.strings_size = static_cast<uint32_t>(strings.bytes().size());
  out.insert(out.end(), strings.bytes().begin(), strings.bytes().end());
  std::memcpy(out.data(), &meta, sizeof meta);
  return out;
}

std::vector<uint8_t> buildCommands(const ArtifactContents& c) {
  std::vector<uint8_t> out;
  for (const FunctionInfo& f : c.functions) {
    const std::vector<uint8_t>& bytes = f.commands.bytes();
    assert(!bytes.empty() && "a function's stream ends with RETURN");
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

std::vector<uint8_t> buildDebug(const ArtifactContents& c) {
  StringTable strings;
  std::vector<kiln_debug_entry> entries;
  for (const DebugEntry& d : c.debug)
    entries.push_back({strings.add(d.dispatchName), strings.add(d.nodeName)});
  // [header][costs record][entries][costs][strings]: the entries start at 32, which tells
  // a reader that the costs record at 16 is present (1.0 readers skip it).
  uint32_t entriesOffset = sizeof(kiln_debug) + sizeof(kiln_debug_costs);
  uint32_t costsOffset =
      entriesOffset + static_cast<uint32_t>(entries.size() * sizeof(kiln_debug_entry));
  kiln_debug header;
  header.entry_count = static_cast<uint32_t>(entries.size());
  header.entries_offset = entriesOffset;
  header.strings_offset =
      costsOffset + static_cast<uint32_t>(entries.size() * sizeof(kiln_debug_cost));
  header.strings_size = static_cast<uint32_t>(strings.bytes().size());
  kiln_debug_costs costs{};
  costs.costs_offset = costsOffset;
  if (!c.debugNote.empty()) {
    costs.note = strings.add(c.debugNote);
    costs.note_size = static_cast<uint32_t>(c.debugNote.size());
    header.strings_size = static_cast<uint32_t>(strings.bytes().size());
  }
  std::vector<uint8_t> out;
  appendStruct(out, header);
  appendStruct(out, costs);
  for (const kiln_debug_entry& e : entries) appendStruct(out, e);
  for (const DebugEntry& d : c.debug) {
    kiln_debug_cost cost{};
    cost.count = d.cost;
    cost.kind = d.costKind;
    cost.work_queues = d.workQueues;
    appendStruct(out, cost);
  }
  out.insert(out.end(), strings.bytes().begin(), strings.bytes().end());
  return out;
}

struct Section {
  uint32_t kind;
  uint32_t flags;
  std::vector<uint8_t> bytes;
};

}  // namespace

std::vector<uint8_t> serializeArtifact(const ArtifactContents& c) {
  assert((c.kernelElf.empty()) != (c.staticLibraryName.empty()) &&
         "exactly one of an embedded ELF or a static library name");
  uint32_t dispatches = 0;
  for (const FunctionInfo& f : c.functions) dispatches += f.commands.dispatchCount();
  assert((c.debug.empty() || c.debug.size() == dispatches) && "one DEBUG entry per dispatch");
  (void)dispatches;

  std::vector<Section> sections;
  sections.push_back({KILN_SECTION_META, 0, buildMeta(c)});
  sections.push_back({KILN_SECTION_COMMANDS, 0, buildCommands(c)});
  if (!c.constants.empty()) {
    if (c.externalConstants) {
      kiln_external_constants record;
      std::memset(&record, 0, sizeof record);
      record.size = c.constants.size();
      record.hash = kiln_hash64(c.constants.data(), c.constants.size());
      std::vector<uint8_t> bytes;
      appendStruct(bytes, record);
      sections.push_back({KILN_SECTION_CONSTANTS, KILN_SECTION_FLAG_EXTERNAL, bytes});
    } else {
      sections.push_back({KILN_SECTION_CONSTANTS, 0, c.constants});
    }
  }
  if (!c.kernelElf.empty()) {
    sections.push_back({KILN_SECTION_KERNELS, 0, c.kernelElf});
  } else {
    std::vector<uint8_t> name(c.staticLibraryName.begin(), c.staticLibraryName.end());
    name.push_back(0);
    sections.push_back({KILN_SECTION_KERNELS, KILN_SECTION_FLAG_STATIC, name});
  }
  if (!c.debug.empty()) sections.push_back({KILN_SECTION_DEBUG, 0, buildDebug(c)});

  size_t tableOffset = sizeof(kiln_header);
  size_t offset = alignUp(tableOffset + sections.size() * sizeof(kiln_section), KILN_ALIGNMENT);
  std::vector<kiln_section> table;
  for (const Section& s : sections) {
    kiln_section entry;
    std::memset(&entry, 0, sizeof entry);
    entry.kind = s.kind;
    entry.flags = s.flags;
    entry.offset = offset;
    entry.size = s.bytes.size();
    table.push_back(entry);
    offset = alignUp(offset + s.bytes.size(), KILN_ALIGNMENT);
  }

  kiln_header header;
  std::memset(&header, 0, sizeof header);
  header.magic[0] = KILN_MAGIC_0;
  header.magic[1] = KILN_MAGIC_1;
  header.magic[2] = KILN_MAGIC_2;
  header.magic[3] = KILN_MAGIC_3;
  header.format_major = KILN_FORMAT_MAJOR;
  // Format 1.1 added the f64 dtype: an artifact that does not use it stays 1.0, so runtimes
  // that predate f64 keep loading it.
  bool usesF64 = false;
  for (const FunctionInfo& f : c.functions) {
    for (const auto* list : {&f.inputs, &f.outputs})
      for (const TensorInfo& t : *list) usesF64 |= t.dtype == KILN_DTYPE_F64;
  }
  header.format_minor = usesF64 ? 1 : 0;
  header.arch = static_cast<uint8_t>(c.arch);
  header.abi = static_cast<uint8_t>(c.abi);
  header.section_count = static_cast<uint32_t>(sections.size());
  header.cpu_features = c.cpuFeatures;
  header.section_table_offset = tableOffset;

  std::vector<uint8_t> out;
  appendStruct(out, header);
  for (const kiln_section& entry : table) appendStruct(out, entry);
  for (size_t i = 0; i < sections.size(); ++i) {
    out.resize(table[i].offset, 0);
    out.insert(out.end(), sections[i].bytes.begin(), sections[i].bytes.end());
  }
  padTo(out, KILN_ALIGNMENT);
  uint64_t fileSize = out.size();
  std::memcpy(out.data() + offsetof(kiln_header, file_size), &fileSize, sizeof fileSize);
  return out;
}

}  // namespace kiln::emit
