// Relocatable objects for the static-library output: constant data emitted through the
// kernels' own TargetMachine (so ELF class, machine, e_flags and the ARM/RISC-V attribute
// sections match the kernel object and a firmware's linker accepts the mix), merged with the
// kernel object by lld's relocatable link (-r), and section sizes read back for the footprint.
#include "kiln/codegen/static_object.h"

#include <lld/Common/Driver.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "codegen_error.h"
#include "pipeline.h"
#include "target_machine.h"

LLD_HAS_DRIVER(elf)

namespace kiln::codegen {
namespace {

namespace fs = std::filesystem;

// A private directory for lld's input and output files, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-objects-XXXXXX").string();
    if (!mkdtemp(pattern.data())) fail("cannot create a temporary directory for linking");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void writeBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write temporary file " + path.string());
}

}  // namespace

std::vector<uint8_t> emitDataObject(const TargetConfig& target,
                                    const std::vector<DataSymbol>& symbols) {
  std::unique_ptr<llvm::TargetMachine> machine = detail::createTargetMachine(target);
  llvm::LLVMContext context;
  llvm::Module module("kiln_data", context);
  module.setTargetTriple(target.triple);
  module.setDataLayout(machine->createDataLayout());
  if (!target.abiName.empty()) {
    module.addModuleFlag(llvm::Module::Error, "target-abi",
                         llvm::MDString::get(context, target.abiName));
  }
  for (const DataSymbol& symbol : symbols) {
    llvm::Constant* init = llvm::ConstantDataArray::get(
        context, llvm::ArrayRef<uint8_t>(symbol.bytes.data(), symbol.bytes.size()));
    auto* global = new llvm::GlobalVariable(module, init->getType(), true,
                                            llvm::GlobalValue::ExternalLinkage, init, symbol.name);
    global->setAlignment(llvm::Align(symbol.alignment));
    if (!symbol.section.empty()) global->setSection(symbol.section);
  }
  return detail::emitObject(module, *machine);
}

std::vector<uint8_t> mergeObjects(const std::vector<std::vector<uint8_t>>& objects) {
  // lld keeps global state per link: one link at a time (the driver links from one thread).
  static std::mutex linkMutex;
  std::lock_guard<std::mutex> lock(linkMutex);

  ScratchDir dir;
  std::vector<std::string> inputs;
  for (size_t i = 0; i < objects.size(); ++i) {
    inputs.push_back((dir.path() / ("part" + std::to_string(i) + ".o")).string());
    writeBytes(inputs.back(), objects[i]);
  }
  std::string output = (dir.path() / "merged.o").string();
  std::vector<const char*> args = {"ld.lld", "-r", "--build-id=none", "-o", output.c_str()};
  for (const std::string& input : inputs) args.push_back(input.c_str());

  std::string messages;
  llvm::raw_string_ostream messageStream(messages);
  lld::Result result =
      lld::lldMain(args, messageStream, messageStream, {{lld::Gnu, &lld::elf::link}});
  messageStream.flush();
  if (result.retCode != 0) fail("merging the firmware object failed: " + messages);

  std::ifstream in(output, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (bytes.empty()) fail("merging the firmware object produced no output");
  return bytes;
}

ObjectSizes measureObject(const std::vector<uint8_t>& object) {
  llvm::StringRef data(reinterpret_cast<const char*>(object.data()), object.size());
  auto parsed = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(data, "model.o"));
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    fail("internal error: unreadable firmware object");
  }
  auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(parsed->get());
  if (!elf) fail("internal error: the firmware object is not ELF");
  ObjectSizes sizes;
  for (const llvm::object::ELFSectionRef section : elf->sections()) {
    uint64_t flags = section.getFlags();
    if (!(flags & llvm::ELF::SHF_ALLOC)) continue;
    uint64_t size = section.getSize();
    if (section.getType() == llvm::ELF::SHT_NOBITS) {
      sizes.zero += size;
    } else if (flags & llvm::ELF::SHF_EXECINSTR) {
      sizes.code += size;
    } else if (flags & llvm::ELF::SHF_WRITE) {
      sizes.data += size;
    } else {
      sizes.readOnly += size;
    }
  }
  return sizes;
}

}  // namespace kiln::codegen
