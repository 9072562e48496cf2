// Reads the emitted ELF object with llvm::object: the .stack_sizes section (one entry per
// function: its address, then the ULEB128 frame size) and the undefined symbols.
#include "object_inspect.h"

#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/LEB128.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>

#include "codegen_error.h"

namespace kiln::codegen::detail {

ObjectFacts inspectObject(const std::vector<uint8_t>& object) {
  ObjectFacts facts;
  llvm::StringRef data(reinterpret_cast<const char*>(object.data()), object.size());
  auto parsed =
      llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(data, "kernels.o"));
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    fail("internal error: LLVM produced an unreadable object file");
  }
  llvm::object::ObjectFile& file = **parsed;
  const unsigned addressBytes = file.getBytesInAddress();

  // Which function each .stack_sizes entry belongs to: the relocation of its address field
  // names the function's symbol, or (for local functions) its section ".text.<name>".
  std::map<uint64_t, std::string> functionAt;
  for (const llvm::object::SectionRef& section : file.sections()) {
    llvm::Expected<llvm::object::section_iterator> target = section.getRelocatedSection();
    if (!target) {
      llvm::consumeError(target.takeError());
      continue;
    }
    if (*target == file.section_end()) continue;
    llvm::Expected<llvm::StringRef> targetName = (*target)->getName();
    if (!targetName || *targetName != ".stack_sizes") {
      if (!targetName) llvm::consumeError(targetName.takeError());
      continue;
    }
    for (const llvm::object::RelocationRef& reloc : section.relocations()) {
      llvm::object::symbol_iterator symbol = reloc.getSymbol();
      if (symbol == file.symbol_end()) continue;
      std::string name;
      if (llvm::Expected<llvm::StringRef> n = symbol->getName()) {
        name = n->str();
      } else {
        llvm::consumeError(n.takeError());
      }
      if (name.empty()) {
        llvm::Expected<llvm::object::section_iterator> in = symbol->getSection();
        if (in && *in != file.section_end()) {
          if (llvm::Expected<llvm::StringRef> sn = (*in)->getName()) {
            name = sn->str();
            if (name.rfind(".text.", 0) == 0) name = name.substr(6);
          } else {
            llvm::consumeError(sn.takeError());
          }
        } else if (!in) {
          llvm::consumeError(in.takeError());
        }
      }
      functionAt[reloc.getOffset()] = name;
    }
  }

  for (const llvm::object::SectionRef& section : file.sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != ".stack_sizes") continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    const uint8_t* begin = reinterpret_cast<const uint8_t*>(contents->data());
    const uint8_t* p = begin;
    const uint8_t* end = p + contents->size();
    while (p + addressBytes < end) {
      uint64_t entry = static_cast<uint64_t>(p - begin);
      p += addressBytes;
      unsigned length = 0;
      uint64_t size = llvm::decodeULEB128(p, &length, end);
      if (length == 0) break;
      p += length;
      auto found = functionAt.find(entry);
      std::string function =
          found != functionAt.end() ? found->second : "<entry " + std::to_string(entry) + ">";
      uint32_t& frame = facts.frames[function];
      frame = std::max<uint32_t>(frame, static_cast<uint32_t>(size));
    }
  }

  for (const llvm::object::SymbolRef& symbol : file.symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    if (!flags) {
      llvm::consumeError(flags.takeError());
      continue;
    }
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined)) continue;
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (name && !name->empty()) facts.undefinedSymbols.push_back(name->str());
    if (!name) llvm::consumeError(name.takeError());
  }
  std::sort(facts.undefinedSymbols.begin(), facts.undefinedSymbols.end());
  return facts;
}

}  // namespace kiln::codegen::detail
