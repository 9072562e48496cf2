// Reads the emitted ELF object with llvm::object: the .stack_sizes section (one entry per
// function: its address, then the ULEB128 frame size) and the undefined symbols.
#include "object_inspect.h"

#include <algorithm>

#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/LEB128.h>
#include <llvm/Support/MemoryBuffer.h>

#include "codegen_error.h"

namespace kiln::codegen::detail {

ObjectFacts inspectObject(const std::vector<uint8_t>& object) {
  ObjectFacts facts;
  llvm::StringRef data(reinterpret_cast<const char*>(object.data()), object.size());
  auto parsed = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(data, "kernels.o"));
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    fail("internal error: LLVM produced an unreadable object file");
  }
  llvm::object::ObjectFile& file = **parsed;
  const unsigned addressBytes = file.getBytesInAddress();

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
    const uint8_t* p = reinterpret_cast<const uint8_t*>(contents->data());
    const uint8_t* end = p + contents->size();
    while (p + addressBytes < end) {
      p += addressBytes;
      unsigned length = 0;
      uint64_t size = llvm::decodeULEB128(p, &length, end);
      if (length == 0) break;
      p += length;
      facts.largestFrame = std::max<uint32_t>(facts.largestFrame, static_cast<uint32_t>(size));
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
