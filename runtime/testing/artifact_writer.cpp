// Test-only artifact writer: lays out header, section table, META (function, tensor, kernel
// signature and binding signature tables, strings), COMMANDS, CONSTANTS, KERNELS and DEBUG,
// each section 64-byte aligned, exactly as docs/artifact-format.md describes.
#include "artifact_writer.h"

#include <stdlib.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <stdexcept>

namespace kiln::testing {

void CommandBuilder::emit(uint32_t opcode, const uint64_t* operands,
                          const kiln_binding_ref* bindings, uint32_t bindingCount) {
  size_t n = kiln_command_encode(nullptr, opcode, operands, bindings, bindingCount);
  if (n == 0) throw std::invalid_argument("command does not encode");
  size_t at = bytes_.size();
  bytes_.resize(at + n);
  kiln_command_encode(bytes_.data() + at, opcode, operands, bindings, bindingCount);
}

CommandBuilder& CommandBuilder::dispatch(uint64_t kernel, uint64_t workgroups,
                                         const std::vector<kiln_binding_ref>& bindings) {
  uint64_t ops[KILN_DISPATCH_OPERAND_COUNT] = {};
  ops[KILN_DISPATCH_KERNEL] = kernel;
  ops[KILN_DISPATCH_WORKGROUPS] = workgroups;
  emit(KILN_OP_DISPATCH, ops, bindings.data(), static_cast<uint32_t>(bindings.size()));
  ++dispatches_;
  return *this;
}

CommandBuilder& CommandBuilder::fill(uint64_t space, uint64_t offset, uint64_t length,
                                     uint8_t value) {
  uint64_t ops[KILN_FILL_OPERAND_COUNT] = {};
  ops[KILN_FILL_SPACE] = space;
  ops[KILN_FILL_OFFSET] = offset;
  ops[KILN_FILL_LENGTH] = length;
  ops[KILN_FILL_VALUE] = value;
  emit(KILN_OP_FILL, ops);
  return *this;
}

CommandBuilder& CommandBuilder::copy(uint64_t srcSpace, uint64_t srcOffset, uint64_t dstSpace,
                                     uint64_t dstOffset, uint64_t length) {
  uint64_t ops[KILN_COPY_OPERAND_COUNT] = {};
  ops[KILN_COPY_SRC_SPACE] = srcSpace;
  ops[KILN_COPY_SRC_OFFSET] = srcOffset;
  ops[KILN_COPY_DST_SPACE] = dstSpace;
  ops[KILN_COPY_DST_OFFSET] = dstOffset;
  ops[KILN_COPY_LENGTH] = length;
  emit(KILN_OP_COPY, ops);
  return *this;
}

CommandBuilder& CommandBuilder::barrier() {
  emit(KILN_OP_BARRIER, nullptr);
  return *this;
}

CommandBuilder& CommandBuilder::ret() {
  emit(KILN_OP_RETURN, nullptr);
  return *this;
}

namespace {

size_t alignUp(size_t x, size_t a) { return (x + a - 1) / a * a; }

template <class T>
void put(std::vector<uint8_t>& out, size_t at, const T& value) {
  std::memcpy(out.data() + at, &value, sizeof(T));
}

template <class T>
void append(std::vector<uint8_t>& out, const T& value) {
  size_t at = out.size();
  out.resize(at + sizeof(T));
  put(out, at, value);
}

void padTo(std::vector<uint8_t>& out, size_t alignment) {
  out.resize(alignUp(out.size(), alignment));
}

class Strings {
 public:
  uint32_t add(const std::string& s) {
    uint32_t at = static_cast<uint32_t>(bytes_.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    bytes_.push_back(0);
    return at;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

kiln_tensor tensorEntry(const TensorSpec& t, Strings& strings) {
  kiln_tensor e{};
  e.name = strings.add(t.name);
  e.dtype = t.dtype;
  e.rank = static_cast<uint8_t>(t.dims.size());
  e.alignment = t.alignment;
  uint64_t elements = 1;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    e.dims[d] = t.dims[d];
    elements *= t.dims[d];
  }
  e.byte_size = elements * kiln_dtype_size(t.dtype);
  return e;
}

std::vector<uint8_t> buildMeta(const ArtifactSpec& spec, const std::vector<uint32_t>& offsets) {
  Strings strings;
  std::vector<kiln_function> functions;
  std::vector<kiln_tensor> tensors;
  uint32_t dispatches = 0;
  for (size_t f = 0; f < spec.functions.size(); ++f) {
    const FunctionSpec& fs = spec.functions[f];
    kiln_function fn{};
    fn.name = strings.add(fs.name);
    fn.input_count = static_cast<uint32_t>(fs.inputs.size());
    fn.output_count = static_cast<uint32_t>(fs.outputs.size());
    fn.first_tensor = static_cast<uint32_t>(tensors.size());
    fn.commands_offset = offsets[f];
    fn.commands_size = static_cast<uint32_t>(fs.commands.bytes().size());
    fn.first_dispatch = dispatches;
    fn.dispatch_count = fs.commands.dispatchCount();
    dispatches += fn.dispatch_count;
    for (const TensorSpec& t : fs.inputs) tensors.push_back(tensorEntry(t, strings));
    for (const TensorSpec& t : fs.outputs) tensors.push_back(tensorEntry(t, strings));
    functions.push_back(fn);
  }
  std::vector<kiln_kernel_signature> signatures;
  std::vector<kiln_binding_signature> bindings;
  for (const std::vector<BindingSpec>& kernel : spec.kernels) {
    signatures.push_back(
        {static_cast<uint32_t>(bindings.size()), static_cast<uint32_t>(kernel.size())});
    for (const BindingSpec& b : kernel) {
      kiln_binding_signature s{};
      s.length = b.length;
      s.access = b.access;
      s.alignment = b.alignment;
      bindings.push_back(s);
    }
  }

  std::vector<uint8_t> meta(sizeof(kiln_meta));
  kiln_meta header{};
  header.arena_size = spec.arenaSize;
  header.arena_alignment = KILN_ALIGNMENT;
  header.stack_bound = spec.stackBound;
  header.kernel_count = static_cast<uint32_t>(spec.kernels.size());
  header.function_count = static_cast<uint32_t>(functions.size());
  header.functions_offset = static_cast<uint32_t>(meta.size());
  for (const kiln_function& f : functions) append(meta, f);
  header.tensor_count = static_cast<uint32_t>(tensors.size());
  header.tensors_offset = static_cast<uint32_t>(meta.size());
  for (const kiln_tensor& t : tensors) append(meta, t);
  header.signatures_offset = static_cast<uint32_t>(meta.size());
  for (const kiln_kernel_signature& s : signatures) append(meta, s);
  header.binding_sig_count = static_cast<uint32_t>(bindings.size());
  header.binding_sigs_offset = static_cast<uint32_t>(meta.size());
  for (const kiln_binding_signature& b : bindings) append(meta, b);
  header.strings_offset = static_cast<uint32_t>(meta.size());
  header.strings_size = static_cast<uint32_t>(strings.bytes().size());
  meta.insert(meta.end(), strings.bytes().begin(), strings.bytes().end());
  put(meta, 0, header);
  return meta;
}

std::vector<uint8_t> buildDebug(uint32_t dispatches) {
  Strings strings;
  std::vector<kiln_debug_entry> entries;
  for (uint32_t d = 0; d < dispatches; ++d) {
    kiln_debug_entry e{};
    e.dispatch_name = strings.add("dispatch_" + std::to_string(d));
    e.node_name = strings.add("node_" + std::to_string(d));
    entries.push_back(e);
  }
  std::vector<uint8_t> out(sizeof(kiln_debug));
  kiln_debug header{};
  header.entry_count = dispatches;
  header.entries_offset = static_cast<uint32_t>(out.size());
  for (const kiln_debug_entry& e : entries) append(out, e);
  header.strings_offset = static_cast<uint32_t>(out.size());
  header.strings_size = static_cast<uint32_t>(strings.bytes().size());
  out.insert(out.end(), strings.bytes().begin(), strings.bytes().end());
  put(out, 0, header);
  return out;
}

}  // namespace

std::vector<uint8_t> writeArtifact(const ArtifactSpec& spec) {
  std::vector<uint8_t> commands;
  std::vector<uint32_t> offsets;
  uint32_t dispatches = 0;
  for (const FunctionSpec& f : spec.functions) {
    offsets.push_back(static_cast<uint32_t>(commands.size()));
    commands.insert(commands.end(), f.commands.bytes().begin(), f.commands.bytes().end());
    dispatches += f.commands.dispatchCount();
  }

  struct Section {
    uint32_t kind, flags;
    std::vector<uint8_t> bytes;
  };
  std::vector<Section> sections;
  sections.push_back({KILN_SECTION_META, 0, buildMeta(spec, offsets)});
  sections.push_back({KILN_SECTION_COMMANDS, 0, commands});
  if (!spec.constants.empty()) {
    if (spec.externalConstants) {
      kiln_external_constants ext{};
      ext.size = spec.constants.size();
      ext.hash = kiln_hash64(spec.constants.data(), spec.constants.size());
      std::vector<uint8_t> record(sizeof ext);
      put(record, 0, ext);
      sections.push_back({KILN_SECTION_CONSTANTS, KILN_SECTION_FLAG_EXTERNAL, record});
    } else {
      sections.push_back({KILN_SECTION_CONSTANTS, 0, spec.constants});
    }
  }
  if (!spec.staticLibrary.empty()) {
    std::vector<uint8_t> name(spec.staticLibrary.begin(), spec.staticLibrary.end());
    name.push_back(0);
    sections.push_back({KILN_SECTION_KERNELS, KILN_SECTION_FLAG_STATIC, name});
  } else {
    sections.push_back({KILN_SECTION_KERNELS, 0, spec.elf});
  }
  if (spec.debug) sections.push_back({KILN_SECTION_DEBUG, 0, buildDebug(dispatches)});

  std::vector<uint8_t> out(sizeof(kiln_header) + sections.size() * sizeof(kiln_section));
  std::vector<kiln_section> table;
  for (const Section& s : sections) {
    padTo(out, KILN_ALIGNMENT);
    kiln_section entry{};
    entry.kind = s.kind;
    entry.flags = s.flags;
    entry.offset = out.size();
    entry.size = s.bytes.size();
    table.push_back(entry);
    out.insert(out.end(), s.bytes.begin(), s.bytes.end());
  }
  kiln_header h{};
  h.magic[0] = KILN_MAGIC_0;
  h.magic[1] = KILN_MAGIC_1;
  h.magic[2] = KILN_MAGIC_2;
  h.magic[3] = KILN_MAGIC_3;
  h.format_major = spec.formatMajor;
  h.format_minor = spec.formatMinor;
  h.file_size = out.size();
  h.arch = spec.arch;
  h.abi = spec.abi;
  h.section_count = static_cast<uint32_t>(table.size());
  h.cpu_features = spec.cpuFeatures;
  h.section_table_offset = sizeof(kiln_header);
  put(out, 0, h);
  for (size_t i = 0; i < table.size(); ++i) put(out, sizeof h + i * sizeof(kiln_section), table[i]);
  return out;
}

std::vector<SectionSpan> sectionSpans(const std::vector<uint8_t>& artifact) {
  kiln_header h;
  std::memcpy(&h, artifact.data(), sizeof h);
  std::vector<SectionSpan> spans;
  for (uint32_t i = 0; i < h.section_count; ++i) {
    kiln_section s;
    std::memcpy(&s, artifact.data() + h.section_table_offset + i * sizeof s, sizeof s);
    spans.push_back({s.kind, s.offset, s.size});
  }
  return spans;
}

AlignedBuffer::AlignedBuffer(size_t size) : size_(size) {
  // Exactly `size` bytes, so AddressSanitizer catches a read one byte past the end.
  void* p = nullptr;
  if (posix_memalign(&p, 64, size ? size : 1) != 0) throw std::bad_alloc();
  data_.reset(static_cast<uint8_t*>(p));
  std::memset(p, 0, size ? size : 1);
}

AlignedBuffer::AlignedBuffer(const std::vector<uint8_t>& bytes) : AlignedBuffer(bytes.size()) {
  if (!bytes.empty()) std::memcpy(data_.get(), bytes.data(), bytes.size());
}

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace kiln::testing
