// `kiln dump ARTIFACT [--json] [--kernels-elf=FILE]`: what an artifact contains, read without
// loading it (so it works for any target): header and target, sections with their bytes and
// share of the file, functions with their signatures, kernel signatures, the schedule
// disassembled in order and grouped into stages with each dispatch's bindings (and, from DEBUG,
// its name and the compiler's cost: FLOPs, integer ops or elements), arena size and stack bound.
#include <cstdio>
#include <optional>
#include <span>
#include <string>

#include "artifact_reader.h"
#include "cli_error.h"
#include "command.h"
#include "cost_text.h"
#include "host_tensor.h"
#include "json_writer.h"
#include "npy.h"

namespace kiln::cli {
namespace {

std::string tensorText(const ArtifactTensor& t) {
  std::string text;
  for (uint32_t d : t.dims) text += std::to_string(d) + "x";
  text += kiln_dtype_name(t.dtype);
  return text;
}

std::string accessText(uint32_t access) {
  std::string text;
  if (access & KILN_ACCESS_READ) text += "r";
  if (access & KILN_ACCESS_WRITE) text += "w";
  return text;
}

std::string percent(uint64_t part, uint64_t whole) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%5.1f%%", whole ? 100.0 * double(part) / double(whole) : 0);
  return buffer;
}

const ArtifactDebugEntry* debugFor(const ArtifactSummary& a, uint32_t dispatch) {
  return dispatch < a.debug.size() ? &a.debug[dispatch] : nullptr;
}

uint64_t overheadBytes(const ArtifactSummary& a) {
  uint64_t used = 0;
  for (const kiln_section& s : a.sections) used += s.size;
  return a.header.file_size - used;
}

std::string commandText(const ArtifactSummary& a, const ArtifactCommand& c) {
  char buffer[256];
  switch (c.opcode) {
    case KILN_OP_DISPATCH: {
      std::string text = "dispatch #" + std::to_string(c.dispatchIndex) + "  kernel " +
                         std::to_string(c.operands[KILN_DISPATCH_KERNEL]) + "  workgroups " +
                         std::to_string(c.operands[KILN_DISPATCH_WORKGROUPS]);
      if (const ArtifactDebugEntry* d = debugFor(a, c.dispatchIndex)) {
        if (a.debugHasCosts) text += "  (" + costText(d->costKind, d->cost) + ")";
        if (d->workQueues > 0)
          text += "  [" + std::to_string(d->workQueues) + " shared task" +
                  (d->workQueues == 1 ? "" : "s") + "]";
        text += "  " + d->dispatchName + "  <- " + d->nodeName;
      }
      for (size_t b = 0; b < c.bindings.size(); ++b) {
        const ArtifactBinding& binding = c.bindings[b];
        std::snprintf(buffer, sizeof buffer, "\n          binding %zu: %-10s +%-10llu %10llu B  %s",
                      b, spaceName(binding.space).c_str(),
                      static_cast<unsigned long long>(binding.offset),
                      static_cast<unsigned long long>(binding.length),
                      accessText(binding.access).c_str());
        text += buffer;
      }
      return text;
    }
    case KILN_OP_FILL:
      std::snprintf(buffer, sizeof buffer, "fill      %s +%llu, %llu bytes of 0x%02llx",
                    spaceName(c.operands[KILN_FILL_SPACE]).c_str(),
                    static_cast<unsigned long long>(c.operands[KILN_FILL_OFFSET]),
                    static_cast<unsigned long long>(c.operands[KILN_FILL_LENGTH]),
                    static_cast<unsigned long long>(c.operands[KILN_FILL_VALUE]));
      return buffer;
    case KILN_OP_COPY:
      std::snprintf(buffer, sizeof buffer, "copy      %s +%llu -> %s +%llu, %llu bytes",
                    spaceName(c.operands[KILN_COPY_SRC_SPACE]).c_str(),
                    static_cast<unsigned long long>(c.operands[KILN_COPY_SRC_OFFSET]),
                    spaceName(c.operands[KILN_COPY_DST_SPACE]).c_str(),
                    static_cast<unsigned long long>(c.operands[KILN_COPY_DST_OFFSET]),
                    static_cast<unsigned long long>(c.operands[KILN_COPY_LENGTH]));
      return buffer;
    case KILN_OP_BARRIER: return "barrier";
    case KILN_OP_RETURN: return "return";
    default: return "?";
  }
}

void printText(const std::string& path, const ArtifactSummary& a) {
  const kiln_header& h = a.header;
  std::printf("%s: kiln artifact, format %u.%u, %llu bytes\n", path.c_str(), h.format_major,
              h.format_minor, static_cast<unsigned long long>(h.file_size));
  std::string features;
  for (const std::string& f : cpuFeatureNames(h.arch, h.cpu_features)) features += " " + f;
  std::printf("target: %s, abi %s, required cpu features:%s\n", archName(h.arch).c_str(),
              abiName(h.abi).c_str(), features.empty() ? " none" : features.c_str());
  std::printf("kernels: %u (%s), arena: %llu bytes, stack bound: %u bytes\n",
              a.meta.kernel_count,
              a.kernelsStatic ? ("static library '" + a.staticLibraryName + "'").c_str()
                              : "embedded ELF",
              static_cast<unsigned long long>(a.meta.arena_size), a.meta.stack_bound);
  if (!a.debugNote.empty()) std::printf("note: %s\n", a.debugNote.c_str());

  std::printf("\nsections:\n");
  for (const kiln_section& s : a.sections) {
    std::string note;
    if (s.kind == KILN_SECTION_CONSTANTS && a.constantsExternal)
      note = "  (external: " + std::to_string(a.external.size) + " bytes in a separate file)";
    std::printf("  %-10s %10llu B  %s%s\n", sectionName(s.kind).c_str(),
                static_cast<unsigned long long>(s.size), percent(s.size, h.file_size).c_str(),
                note.c_str());
  }
  std::printf("  %-10s %10llu B  %s  (header, section table, alignment)\n", "overhead",
              static_cast<unsigned long long>(overheadBytes(a)),
              percent(overheadBytes(a), h.file_size).c_str());

  std::printf("\nkernel signatures:\n");
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    std::printf("  kernel %zu:", k);
    for (const kiln_binding_signature& b : a.kernels[k])
      std::printf(" (%llu B %s align %u)", static_cast<unsigned long long>(b.length),
                  accessText(b.access).c_str(), b.alignment);
    std::printf("\n");
  }

  for (const ArtifactFunction& f : a.functions) {
    std::printf("\nfunction '%s': %zu inputs, %zu outputs, %u dispatches, %u command bytes\n",
                f.name.c_str(), f.inputs.size(), f.outputs.size(), f.dispatchCount,
                f.commandsSize);
    for (size_t i = 0; i < f.inputs.size(); ++i)
      std::printf("  input  %zu '%s': %s (%llu B, align %u)\n", i, f.inputs[i].name.c_str(),
                  tensorText(f.inputs[i]).c_str(),
                  static_cast<unsigned long long>(f.inputs[i].byteSize), f.inputs[i].alignment);
    for (size_t i = 0; i < f.outputs.size(); ++i)
      std::printf("  output %zu '%s': %s (%llu B, align %u)\n", i, f.outputs[i].name.c_str(),
                  tensorText(f.outputs[i]).c_str(),
                  static_cast<unsigned long long>(f.outputs[i].byteSize), f.outputs[i].alignment);
    std::printf("  schedule:\n");
    uint32_t stage = UINT32_MAX;
    for (const ArtifactCommand& c : f.commands) {
      bool structural = c.opcode == KILN_OP_BARRIER || c.opcode == KILN_OP_RETURN;
      if (!structural && c.stage != stage) {
        stage = c.stage;
        std::printf("    stage %u:\n", stage);
      }
      std::printf("%s%s\n", structural ? "    " : "      ", commandText(a, c).c_str());
    }
  }
}

void printJson(const std::string& path, const ArtifactSummary& a) {
  const kiln_header& h = a.header;
  JsonWriter j;
  j.beginObject();
  j.field("file", path);
  j.field("file_bytes", h.file_size);
  j.key("format");
  j.beginObject();
  j.field("major", uint32_t{h.format_major});
  j.field("minor", uint32_t{h.format_minor});
  j.endObject();
  j.key("target");
  j.beginObject();
  j.field("arch", archName(h.arch));
  j.field("abi", abiName(h.abi));
  j.key("cpu_features");
  j.beginArray();
  for (const std::string& f : cpuFeatureNames(h.arch, h.cpu_features)) j.value(f);
  j.endArray();
  j.endObject();
  j.key("sections");
  j.beginArray();
  for (const kiln_section& s : a.sections) {
    j.beginObject();
    j.field("name", sectionName(s.kind));
    j.field("offset", s.offset);
    j.field("bytes", s.size);
    j.field("share", h.file_size ? double(s.size) / double(h.file_size) : 0.0);
    if (s.kind == KILN_SECTION_CONSTANTS && a.constantsExternal) {
      j.field("external", true);
      j.field("external_bytes", a.external.size);
    }
    j.endObject();
  }
  j.endArray();
  j.field("overhead_bytes", overheadBytes(a));
  j.field("arena_bytes", a.meta.arena_size);
  j.field("stack_bound", a.meta.stack_bound);
  if (!a.debugNote.empty()) j.field("note", a.debugNote);
  j.field("kernel_count", a.meta.kernel_count);
  j.field("kernels_static", a.kernelsStatic);
  j.key("kernels");
  j.beginArray();
  for (const auto& kernel : a.kernels) {
    j.beginArray();
    for (const kiln_binding_signature& b : kernel) {
      j.beginObject();
      j.field("length", b.length);
      j.field("access", accessText(b.access));
      j.field("alignment", uint32_t{b.alignment});
      j.endObject();
    }
    j.endArray();
  }
  j.endArray();
  auto tensors = [&](const std::vector<ArtifactTensor>& list) {
    j.beginArray();
    for (const ArtifactTensor& t : list) {
      j.beginObject();
      j.field("name", t.name);
      j.field("dtype", kiln_dtype_name(t.dtype));
      j.key("shape");
      j.beginArray();
      for (uint32_t d : t.dims) j.value(d);
      j.endArray();
      j.field("bytes", t.byteSize);
      j.endObject();
    }
    j.endArray();
  };
  j.key("functions");
  j.beginArray();
  for (const ArtifactFunction& f : a.functions) {
    j.beginObject();
    j.field("name", f.name);
    j.key("inputs");
    tensors(f.inputs);
    j.key("outputs");
    tensors(f.outputs);
    j.field("dispatch_count", f.dispatchCount);
    j.field("command_bytes", f.commandsSize);
    j.endObject();
  }
  j.endArray();
  j.key("dispatches");
  j.beginArray();
  for (const ArtifactFunction& f : a.functions) {
    for (const ArtifactCommand& c : f.commands) {
      if (c.opcode != KILN_OP_DISPATCH) continue;
      j.beginObject();
      j.field("index", c.dispatchIndex);
      j.field("function", f.name);
      j.field("kernel", c.operands[KILN_DISPATCH_KERNEL]);
      j.field("stage", c.stage);
      j.field("workgroups", c.operands[KILN_DISPATCH_WORKGROUPS]);
      if (const ArtifactDebugEntry* d = debugFor(a, c.dispatchIndex)) {
        j.field("name", d->dispatchName);
        j.field("node", d->nodeName);
        if (a.debugHasCosts) {
          j.field("cost_kind", costKindName(d->costKind));
          j.field("cost", d->cost);
          if (d->workQueues > 0) j.field("work_queues", d->workQueues);
        }
      }
      j.key("bindings");
      j.beginArray();
      for (const ArtifactBinding& b : c.bindings) {
        j.beginObject();
        j.field("space", spaceName(b.space));
        j.field("offset", b.offset);
        j.field("length", b.length);
        j.field("access", accessText(b.access));
        j.endObject();
      }
      j.endArray();
      j.endObject();
    }
  }
  j.endArray();
  j.key("commands");
  j.beginArray();
  for (const ArtifactFunction& f : a.functions) {
    for (const ArtifactCommand& c : f.commands) {
      j.beginObject();
      j.field("function", f.name);
      j.field("op", kiln_command_mnemonic(c.opcode));
      j.field("stage", c.stage);
      if (c.opcode == KILN_OP_DISPATCH) j.field("dispatch", c.dispatchIndex);
      j.endObject();
    }
  }
  j.endArray();
  j.endObject();
  std::printf("%s\n", j.text().c_str());
}

// --kernels-elf=FILE: the KERNELS section as it is, the ELF shared object that the runtime
// maps, so that the kernels' machine code can be read with objdump or perf.
void writeKernelsElf(const std::string& path, const std::vector<uint8_t>& bytes,
                     const ArtifactSummary& summary, const std::string& file) {
  if (summary.kernelsStatic)
    throw CliError("--kernels-elf: '" + path + "' embeds no kernel ELF: its kernels are the " +
                   "static library '" + summary.staticLibraryName +
                   "', which the firmware links: disassemble the kernel object written "
                   "beside the artifact");
  for (const kiln_section& s : summary.sections) {
    if (s.kind != KILN_SECTION_KERNELS) continue;
    // readArtifact checked that every section lies inside the file.
    writeFileBytes(file, std::span<const uint8_t>(bytes.data() + s.offset, size_t(s.size)));
    std::fprintf(stderr, "kiln: wrote the kernels (%llu-byte ELF shared object) to '%s'\n",
                 static_cast<unsigned long long>(s.size), file.c_str());
    return;
  }
  throw CliError("--kernels-elf: '" + path + "' has no KERNELS section");
}

int runDump(const ParsedArgs& args) {
  const std::string& path = args.positionals[0];
  std::vector<uint8_t> bytes = readFileBytes(path);
  ArtifactSummary summary = readArtifact(bytes, path);
  if (std::optional<std::string> elf = args.value("kernels-elf"))
    writeKernelsElf(path, bytes, summary, *elf);
  if (args.flag("json")) printJson(path, summary);
  else printText(path, summary);
  return 0;
}

}  // namespace

const Command& dumpCommand() {
  static const Command command{
      "dump",
      "describe an artifact: target, sections and sizes, functions, schedule",
      "kiln dump ARTIFACT [--json] [--kernels-elf=FILE]",
      "Prints the artifact's header and target, its sections with their bytes and share of\n"
      "the file, the entry functions with their inputs and outputs, the kernel signatures, the\n"
      "schedule of each function disassembled in order and grouped into stages (dispatches of\n"
      "one stage are independent), each dispatch's bindings, the arena size and the stack\n"
      "bound. The artifact is not loaded, so artifacts for any target can be dumped.\n"
      "\n"
      "--kernels-elf=FILE also writes the KERNELS section, the ELF shared object that holds the\n"
      "kernels' machine code, to FILE for objdump or perf (stripped: only the query symbol\n"
      "kiln_kernel_library_query is named); a microcontroller or static-library artifact has\n"
      "none (its kernels are an object that the firmware links).",
      {{"json", FlagKind::Bool, "", "print one JSON object (sections, functions, dispatches, "
                                    "arena_bytes, ...) instead of text"},
       {"kernels-elf", FlagKind::Value, "FILE",
        "write the embedded kernel ELF (the KERNELS section) to FILE"}},
      1,
      runDump};
  return command;
}

}  // namespace kiln::cli
