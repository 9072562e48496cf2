// The embedded-ELF loader: a real kernel library built by the test build (clang-19 + lld) is
// loaded and run through an artifact; AArch64 and RISC-V 64 builds are mapped and relocated
// (not run) on any host; and every refusal has its own message, checked on patched copies of
// the real shared object.
#include "elf/elf_loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>

#include "elf/elf_format.h"
#include "runtime_fixture.h"

namespace kiln::testing {
namespace {

using namespace kiln::elf;  // NOLINT

std::vector<uint8_t> kernelsSo(const std::string& arch = "x86_64") {
  return readFile(testKernelElfPath(arch));
}

template <class T>
T get(const std::vector<uint8_t>& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

template <class T>
void set(std::vector<uint8_t>& b, size_t at, const T& v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

// File offset of the dynamic table.
size_t dynamicOffset(const std::vector<uint8_t>& so) {
  Ehdr e = get<Ehdr>(so, 0);
  for (uint32_t i = 0; i < e.phnum; ++i) {
    Phdr ph = get<Phdr>(so, e.phoff + i * sizeof(Phdr));
    if (ph.type == kPtDynamic) return ph.offset;
  }
  ADD_FAILURE() << "no PT_DYNAMIC";
  return 0;
}

// Changes the first dynamic entry with tag `from` into (to, value).
void patchDynamic(std::vector<uint8_t>& so, int64_t from, int64_t to, uint64_t value = 0) {
  for (size_t at = dynamicOffset(so);; at += sizeof(Dyn)) {
    Dyn d = get<Dyn>(so, at);
    if (d.tag == kDtNull) FAIL() << "tag " << from << " not found";
    if (d.tag == from) {
      set(so, at, Dyn{to, value});
      return;
    }
  }
}

// Translates a virtual address of the (identity-offset) read-only segment to a file offset.
uint64_t dynValue(const std::vector<uint8_t>& so, int64_t tag) {
  for (size_t at = dynamicOffset(so);; at += sizeof(Dyn)) {
    Dyn d = get<Dyn>(so, at);
    if (d.tag == kDtNull) return 0;
    if (d.tag == tag) return d.val;
  }
}

std::string loadElfError(const std::vector<uint8_t>& so, kiln_status_t want = KILN_ERROR_KERNELS) {
  ArtifactSpec spec = standardSpec(Kernels::kElf);
  spec.elf = so;
  Loaded loaded(writeArtifact(spec));
  EXPECT_EQ(loaded.status(), want) << loaded.error();
  return loaded.error();
}

TEST(ElfLoader, EmbeddedKernelsRun) {
  Loaded loaded(writeArtifact(standardSpec(Kernels::kElf)));
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  Context context(loaded.module());
  MainResult result;
  ASSERT_EQ(runMain(context.get(), sampleX(), sampleY(), &result), KILN_OK);
  MainResult want = referenceMain(sampleX(), sampleY());
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(result.out[i], want.out[i]);
  EXPECT_FLOAT_EQ(result.total, want.total);
}

// Memory hooks over malloc for mapping foreign-architecture images without running them.
struct HeapMemory {
  static void* reserve(void*, size_t size) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, size) != 0) return nullptr;
    std::memset(p, 0, size);
    return p;
  }
  static bool protect(void* user, void*, size_t, uint32_t prot) {
    // Record that no segment was made writable and executable.
    if ((prot & kProtWrite) && (prot & kProtExec)) *static_cast<bool*>(user) = true;
    return true;
  }
  static void release(void*, void* p, size_t) { free(p); }
};

void expectMappedAndRelocated(const std::string& arch, uint32_t karch) {
  std::vector<uint8_t> so = kernelsSo(arch);
  bool sawWX = false;
  ElfMemory memory{HeapMemory::reserve, HeapMemory::protect, HeapMemory::release, 4096, &sawWX};
  ElfImage image;
  char error[160];
  Diag diag(error, sizeof error);
  ASSERT_EQ(elfMap(so.data(), so.size(), karch, memory, &image, diag), KILN_OK) << error;
  EXPECT_FALSE(sawWX);
  ASSERT_NE(image.query, nullptr);
  // Every RELATIVE relocation now holds base + addend.
  uint64_t rela = dynValue(so, kDtRela), size = dynValue(so, kDtRelaSz);
  ASSERT_GT(size, 0u);
  for (uint64_t off = 0; off < size; off += sizeof(Rela)) {
    Rela r = get<Rela>(so, rela + off);  // .rela.dyn sits in the first segment (vaddr == offset)
    uint64_t value;
    std::memcpy(&value, image.base + r.offset, 8);
    EXPECT_EQ(value, reinterpret_cast<uintptr_t>(image.base) + static_cast<uint64_t>(r.addend));
  }
  elfUnmap(memory, &image);
}

TEST(ElfLoader, MapsAndRelocatesAArch64) { expectMappedAndRelocated("aarch64", KILN_ARCH_AARCH64); }
TEST(ElfLoader, MapsAndRelocatesRiscv64) { expectMappedAndRelocated("riscv64", KILN_ARCH_RISCV64); }

TEST(ElfLoader, RefusesWrongMachine) {
  EXPECT_EQ(loadElfError(kernelsSo("aarch64")),
            "embedded ELF: machine 183 does not match the artifact's architecture (expected 62)");
}

TEST(ElfLoader, RefusesNonElf) {
  EXPECT_EQ(loadElfError(std::vector<uint8_t>(256, 0)), "embedded ELF: bad magic");
}

TEST(ElfLoader, RefusesNeeded) {
  std::vector<uint8_t> so = kernelsSo();
  patchDynamic(so, kDtSymEnt, kDtNeeded, 1);
  EXPECT_EQ(loadElfError(so), "embedded ELF: needs another shared library (DT_NEEDED)");
}

TEST(ElfLoader, RefusesTextRel) {
  std::vector<uint8_t> so = kernelsSo();
  patchDynamic(so, kDtSymEnt, kDtTextRel);
  EXPECT_EQ(loadElfError(so), "embedded ELF: has text relocations (DT_TEXTREL)");
}

TEST(ElfLoader, RefusesInitialisers) {
  for (int64_t tag : {kDtInit, kDtInitArray, kDtFini}) {
    std::vector<uint8_t> so = kernelsSo();
    patchDynamic(so, kDtSymEnt, tag, 0x12a0);
    EXPECT_EQ(loadElfError(so),
              "embedded ELF: has initialisers or finalisers (DT_INIT/DT_INIT_ARRAY/DT_FINI)");
  }
}

TEST(ElfLoader, RefusesJmpRel) {
  std::vector<uint8_t> so = kernelsSo();
  patchDynamic(so, kDtSymEnt, kDtJmpRel, 0x1f8);
  EXPECT_EQ(loadElfError(so),
            "embedded ELF: has PLT relocations (DT_JMPREL): link without imports");
}

TEST(ElfLoader, RefusesRelr) {
  std::vector<uint8_t> so = kernelsSo();
  patchDynamic(so, kDtSymEnt, kDtRelr, 0x1f8);
  EXPECT_EQ(loadElfError(so),
            "embedded ELF: has packed relative relocations (DT_RELR): link without -z "
            "pack-relative-relocs");
}

TEST(ElfLoader, RefusesOtherRelocationTypes) {
  std::vector<uint8_t> so = kernelsSo();
  uint64_t rela = dynValue(so, kDtRela);
  Rela r = get<Rela>(so, rela);
  r.info = 1;  // R_X86_64_64
  set(so, rela, r);
  EXPECT_EQ(loadElfError(so), "embedded ELF: relocation type 1 is not supported (only RELATIVE)");
}

TEST(ElfLoader, RefusesMissingQuerySymbol) {
  std::vector<uint8_t> so = kernelsSo();
  uint64_t strtab = dynValue(so, kDtStrTab), strsz = dynValue(so, kDtStrSz);
  std::string table(reinterpret_cast<const char*>(so.data() + strtab), strsz);
  size_t at = table.find(KILN_KERNEL_QUERY_SYMBOL);
  ASSERT_NE(at, std::string::npos);
  so[strtab + at + 5] = 'X';
  EXPECT_EQ(loadElfError(so), "embedded ELF: has no 'kiln_kernel_library_query' symbol");
}

TEST(ElfLoader, RefusesAbiVersionMismatch) {
  EXPECT_EQ(loadElfError(kernelsSo("x86_64_abi2")),
            "embedded kernel library has kernel ABI version 2, this runtime implements version 1");
}

TEST(ElfLoader, RefusesWritableExecutableSegment) {
  std::vector<uint8_t> so = kernelsSo();
  Ehdr e = get<Ehdr>(so, 0);
  for (uint32_t i = 0; i < e.phnum; ++i) {
    size_t at = e.phoff + i * sizeof(Phdr);
    Phdr ph = get<Phdr>(so, at);
    if (ph.type == kPtLoad && (ph.flags & kPfX)) {
      ph.flags |= kPfW;
      set(so, at, ph);
      EXPECT_EQ(loadElfError(so),
                "embedded ELF: segment " + std::to_string(i) + " is writable and executable");
      return;
    }
  }
  FAIL() << "no executable segment";
}

TEST(ElfLoader, RefusesMissingHashTable) {
  std::vector<uint8_t> so = kernelsSo();
  patchDynamic(so, kDtHash, kDtSymEnt, sizeof(Sym));
  EXPECT_EQ(loadElfError(so), "embedded ELF: has no DT_HASH table (link with --hash-style=sysv)");
}

}  // namespace
}  // namespace kiln::testing
