// The few ELF64 structures and constants the kernel loader reads (little-endian ELF64 only),
// defined here so that the loader stays freestanding.
#ifndef KILN_RUNTIME_ELF_ELF_FORMAT_H_
#define KILN_RUNTIME_ELF_ELF_FORMAT_H_

#include <stdint.h>

namespace kiln::elf {

struct Ehdr {
  uint8_t ident[16];
  uint16_t type;
  uint16_t machine;
  uint32_t version;
  uint64_t entry;
  uint64_t phoff;
  uint64_t shoff;
  uint32_t flags;
  uint16_t ehsize;
  uint16_t phentsize;
  uint16_t phnum;
  uint16_t shentsize;
  uint16_t shnum;
  uint16_t shstrndx;
};

struct Phdr {
  uint32_t type;
  uint32_t flags;
  uint64_t offset;
  uint64_t vaddr;
  uint64_t paddr;
  uint64_t filesz;
  uint64_t memsz;
  uint64_t align;
};

struct Dyn {
  int64_t tag;
  uint64_t val;
};

struct Rela {
  uint64_t offset;
  uint64_t info;
  int64_t addend;
};

struct Sym {
  uint32_t name;
  uint8_t info;
  uint8_t other;
  uint16_t shndx;
  uint64_t value;
  uint64_t size;
};

static_assert(sizeof(Ehdr) == 64 && sizeof(Phdr) == 56 && sizeof(Dyn) == 16 && sizeof(Rela) == 24 &&
                  sizeof(Sym) == 24,
              "ELF64 layouts");

constexpr uint8_t kClass64 = 2;
constexpr uint8_t kDataLsb = 1;
constexpr uint16_t kTypeDyn = 3;

constexpr uint16_t kMachineX86_64 = 62;
constexpr uint16_t kMachineAArch64 = 183;
constexpr uint16_t kMachineRiscv = 243;

constexpr uint32_t kPtNull = 0, kPtLoad = 1, kPtDynamic = 2, kPtInterp = 3, kPtNote = 4,
                   kPtPhdr = 6, kPtTls = 7;
constexpr uint32_t kPtGnuEhFrame = 0x6474e550, kPtGnuStack = 0x6474e551, kPtGnuRelro = 0x6474e552,
                   kPtGnuProperty = 0x6474e553;
constexpr uint32_t kPfX = 1, kPfW = 2, kPfR = 4;

constexpr int64_t kDtNull = 0, kDtNeeded = 1, kDtPltRelSz = 2, kDtHash = 4, kDtStrTab = 5,
                  kDtSymTab = 6, kDtRela = 7, kDtRelaSz = 8, kDtRelaEnt = 9, kDtStrSz = 10,
                  kDtSymEnt = 11, kDtInit = 12, kDtFini = 13, kDtRel = 17, kDtTextRel = 22,
                  kDtJmpRel = 23, kDtInitArray = 25, kDtFiniArray = 26, kDtFlags = 30,
                  kDtPreinitArray = 32, kDtRelrSz = 35, kDtRelr = 36, kDtRelrEnt = 37,
                  kDtAndroidRelr = 0x6fffe000;
constexpr uint64_t kDfTextRel = 4;

constexpr uint32_t kRelNone = 0;  // R_*_NONE on every architecture
constexpr uint32_t kRelX86_64Relative = 8;
constexpr uint32_t kRelAArch64Relative = 1027;
constexpr uint32_t kRelRiscvRelative = 3;

constexpr uint8_t kSttFunc = 2;

}  // namespace kiln::elf

#endif  // KILN_RUNTIME_ELF_ELF_FORMAT_H_
