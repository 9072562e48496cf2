// Test-only artifact writer: assembles format-v1 artifacts from hand-written command streams,
// constants and kernel signatures, so the runtime can be tested before (and independently of)
// the compiler. Also: a 64-byte aligned byte buffer, since artifacts must be aligned.
#ifndef KILN_RUNTIME_TESTING_ARTIFACT_WRITER_H_
#define KILN_RUNTIME_TESTING_ARTIFACT_WRITER_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kiln/format/artifact.h"
#include "kiln/format/commands.h"

namespace kiln::testing {

struct TensorSpec {
  std::string name;
  uint8_t dtype = KILN_DTYPE_F32;
  std::vector<uint32_t> dims;
  uint16_t alignment = 16;
};

struct BindingSpec {
  uint64_t length;
  uint8_t access;  // KILN_ACCESS_*
  uint16_t alignment = 4;
};

// Builds a command stream with the encoder generated from commands.def.
class CommandBuilder {
 public:
  CommandBuilder& dispatch(uint64_t kernel, uint64_t workgroups,
                           const std::vector<kiln_binding_ref>& bindings);
  CommandBuilder& fill(uint64_t space, uint64_t offset, uint64_t length, uint8_t value);
  CommandBuilder& copy(uint64_t srcSpace, uint64_t srcOffset, uint64_t dstSpace, uint64_t dstOffset,
                       uint64_t length);
  CommandBuilder& barrier();
  CommandBuilder& ret();

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  uint32_t dispatchCount() const { return dispatches_; }

 private:
  void emit(uint32_t opcode, const uint64_t* operands, const kiln_binding_ref* bindings = nullptr,
            uint32_t bindingCount = 0);
  std::vector<uint8_t> bytes_;
  uint32_t dispatches_ = 0;
};

struct FunctionSpec {
  std::string name;
  std::vector<TensorSpec> inputs, outputs;
  CommandBuilder commands;
};

// The architecture the tests run on (artifacts default to it).
#if defined(__aarch64__)
constexpr uint8_t kHostArch = KILN_ARCH_AARCH64;
constexpr uint8_t kHostAbi = KILN_ABI_LP64;
constexpr const char* kHostArchName = "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
constexpr uint8_t kHostArch = KILN_ARCH_RISCV64;
constexpr uint8_t kHostAbi = KILN_ABI_LP64D;
constexpr const char* kHostArchName = "riscv64";
#else
constexpr uint8_t kHostArch = KILN_ARCH_X86_64;
constexpr uint8_t kHostAbi = KILN_ABI_LP64;
constexpr const char* kHostArchName = "x86_64";
#endif

struct ArtifactSpec {
  uint16_t formatMajor = KILN_FORMAT_MAJOR;
  uint16_t formatMinor = 0;  // as the compiler writes it: 1 only when META uses f64
  uint8_t arch = kHostArch;
  uint8_t abi = kHostAbi;
  uint64_t cpuFeatures = 0;
  uint64_t arenaSize = 0;
  uint32_t stackBound = 0;
  std::vector<std::vector<BindingSpec>> kernels;  // one binding signature list per kernel
  std::vector<FunctionSpec> functions;
  std::vector<uint8_t> constants;  // empty: no CONSTANTS section
  bool externalConstants = false;  // then the artifact holds only size + hash
  std::vector<uint8_t> elf;        // embedded ELF kernel library, or
  std::string staticLibrary;       // the name of a static one
  bool debug = false;              // emit DEBUG with one (name, node) per dispatch
};

// The artifact's bytes.
std::vector<uint8_t> writeArtifact(const ArtifactSpec& spec);

// Where the writer put each section (for corruption tests that target one).
struct SectionSpan {
  uint32_t kind;
  uint64_t offset, size;
};
std::vector<SectionSpan> sectionSpans(const std::vector<uint8_t>& artifact);

// A 64-byte aligned copy of some bytes (allocated to the exact size).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size);
  explicit AlignedBuffer(const std::vector<uint8_t>& bytes);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

// Reads a whole file (e.g. the test kernels' shared object).
std::vector<uint8_t> readFile(const std::string& path);

}  // namespace kiln::testing

#endif  // KILN_RUNTIME_TESTING_ARTIFACT_WRITER_H_
