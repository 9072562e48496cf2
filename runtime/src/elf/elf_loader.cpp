// Embedded-ELF kernel loader: validation, mapping, RELATIVE relocation, protection, symbol
// lookup. See elf_loader.h.
#include "elf/elf_loader.h"

#include "elf/elf_format.h"

namespace kiln {
namespace {

using namespace elf;  // NOLINT: the ELF constants read best unqualified here

constexpr uint32_t kMaxSegments = 16;

bool inBounds(uint64_t offset, uint64_t length, uint64_t total) {
  return offset <= total && length <= total - offset;
}

uint16_t machineFor(uint32_t arch) {
  switch (arch) {
    case KILN_ARCH_X86_64:
      return kMachineX86_64;
    case KILN_ARCH_AARCH64:
      return kMachineAArch64;
    case KILN_ARCH_RISCV64:
      return kMachineRiscv;
    default:
      return 0;
  }
}

uint32_t relativeType(uint16_t machine) {
  switch (machine) {
    case kMachineX86_64:
      return kRelX86_64Relative;
    case kMachineAArch64:
      return kRelAArch64Relative;
    default:
      return kRelRiscvRelative;
  }
}

template <class T>
T read(const uint8_t* p) {
  T value;
  __builtin_memcpy(&value, p, sizeof(T));
  return value;
}

struct Segment {
  uint64_t vaddr, memsz;
  uint32_t flags;
};

class Mapper {
 public:
  Mapper(const uint8_t* file, size_t size, const ElfMemory& memory, Diag& diag)
      : file_(file), size_(size), mem_(memory), diag_(diag) {}

  kiln_status_t run(uint32_t arch, ElfImage* out) {
    if (kiln_status_t st = checkHeader(arch)) return st;
    if (kiln_status_t st = readSegments()) return st;
    image_.size = static_cast<size_t>(end_);
    image_.base = static_cast<uint8_t*>(mem_.reserve(mem_.user, image_.size));
    if (!image_.base)
      return fail(KILN_ERROR_KERNELS, "embedded ELF: cannot reserve {} bytes for the kernels",
                  end_);
    for (uint32_t i = 0; i < phnum_; ++i) {
      Phdr ph = read<Phdr>(file_ + ehdr_.phoff + i * sizeof(Phdr));
      if (ph.type == kPtLoad)
        __builtin_memcpy(image_.base + ph.vaddr, file_ + ph.offset, ph.filesz);
    }
    kiln_status_t st = readDynamic();
    if (!st) st = relocate();
    if (!st) st = findQuery();
    if (!st) st = protect();
    if (st) {
      elfUnmap(mem_, &image_);
      return st;
    }
    *out = image_;
    return KILN_OK;
  }

 private:
  template <class... Args>
  kiln_status_t fail(kiln_status_t code, const char* format, Args... args) {
    return diag_.fail(code, format, args...);
  }
  // Every refusal names the embedded ELF first.
  template <class... Args>
  kiln_status_t bad(const char* format, Args... args) {
    return diag_.fail(KILN_ERROR_KERNELS, format, args...);
  }

  kiln_status_t checkHeader(uint32_t arch) {
    if (size_ < sizeof(Ehdr)) return bad("embedded ELF: image of {} bytes is too small", size_);
    ehdr_ = read<Ehdr>(file_);
    const uint8_t* id = ehdr_.ident;
    if (id[0] != 0x7f || id[1] != 'E' || id[2] != 'L' || id[3] != 'F')
      return bad("embedded ELF: bad magic");
    if (id[4] != kClass64 || id[5] != kDataLsb)
      return bad("embedded ELF: not a little-endian ELF64 image");
    if (ehdr_.type != kTypeDyn)
      return bad("embedded ELF: not a shared object (e_type {})", ehdr_.type);
    if (ehdr_.machine != machineFor(arch) || machineFor(arch) == 0) {
      return bad(
          "embedded ELF: machine {} does not match the artifact's architecture (expected {})",
          ehdr_.machine, machineFor(arch));
    }
    if (ehdr_.phentsize != sizeof(Phdr) || ehdr_.phnum == 0 || ehdr_.phnum > 64 ||
        !inBounds(ehdr_.phoff, uint64_t{ehdr_.phnum} * sizeof(Phdr), size_)) {
      return bad("embedded ELF: program header table is malformed");
    }
    phnum_ = ehdr_.phnum;
    return KILN_OK;
  }

  kiln_status_t readSegments() {
    uint64_t page = mem_.pageSize;
    for (uint32_t i = 0; i < phnum_; ++i) {
      Phdr ph = read<Phdr>(file_ + ehdr_.phoff + i * sizeof(Phdr));
      switch (ph.type) {
        case kPtLoad:
          break;
        case kPtDynamic:
          dynamicVaddr_ = ph.vaddr;
          dynamicSize_ = ph.memsz;
          hasDynamic_ = true;
          continue;
        case kPtInterp:
          return bad("embedded ELF: has an interpreter (PT_INTERP): not a kernel library");
        case kPtTls:
          return bad("embedded ELF: uses thread-local storage (PT_TLS)");
        case kPtNull:
        case kPtNote:
        case kPtPhdr:
        case kPtGnuEhFrame:
        case kPtGnuStack:
        case kPtGnuRelro:
        case kPtGnuProperty:
          continue;
        default:
          continue;  // other informational headers carry no loading semantics
      }
      if ((ph.flags & kPfW) && (ph.flags & kPfX)) {
        return bad("embedded ELF: segment {} is writable and executable", i);
      }
      if (segmentCount_ == kMaxSegments)
        return bad("embedded ELF: more than {} PT_LOAD segments", kMaxSegments);
      if (ph.filesz > ph.memsz || !inBounds(ph.offset, ph.filesz, size_) ||
          ph.vaddr > (uint64_t{1} << 32) || ph.memsz > (uint64_t{1} << 32) ||
          (ph.vaddr % page) != (ph.offset % page)) {
        return bad("embedded ELF: PT_LOAD segment {} is malformed", i);
      }
      uint64_t start = ph.vaddr / page * page;
      uint64_t end = (ph.vaddr + ph.memsz + page - 1) / page * page;
      for (uint32_t j = 0; j < segmentCount_; ++j) {
        const Segment& o = segments_[j];
        uint64_t oStart = o.vaddr / page * page,
                 oEnd = (o.vaddr + o.memsz + page - 1) / page * page;
        if (start < oEnd && oStart < end)
          return bad("embedded ELF: PT_LOAD segments {} and {} share a page", j, i);
      }
      segments_[segmentCount_++] = Segment{ph.vaddr, ph.memsz, ph.flags};
      if (end > end_) end_ = end;
    }
    if (segmentCount_ == 0) return bad("embedded ELF: has no PT_LOAD segment");
    if (!hasDynamic_) return bad("embedded ELF: has no PT_DYNAMIC segment");
    return KILN_OK;
  }

  // True if [vaddr, vaddr + length) lies inside one loaded segment (with `flags` if nonzero).
  bool mapped(uint64_t vaddr, uint64_t length, uint32_t flags = 0) const {
    for (uint32_t i = 0; i < segmentCount_; ++i) {
      const Segment& s = segments_[i];
      if (vaddr >= s.vaddr && inBounds(vaddr - s.vaddr, length, s.memsz) &&
          (s.flags & flags) == flags) {
        return true;
      }
    }
    return false;
  }

  kiln_status_t readDynamic() {
    if (!mapped(dynamicVaddr_, dynamicSize_) || dynamicSize_ % sizeof(Dyn) != 0) {
      return bad("embedded ELF: dynamic section lies outside the loaded segments");
    }
    uint64_t relaEnt = sizeof(Rela), symEnt = sizeof(Sym);
    bool terminated = false;
    for (uint64_t off = 0; off < dynamicSize_ && !terminated; off += sizeof(Dyn)) {
      Dyn d = read<Dyn>(image_.base + dynamicVaddr_ + off);
      switch (d.tag) {
        case kDtNull:
          terminated = true;
          break;
        case kDtNeeded:
          return bad("embedded ELF: needs another shared library (DT_NEEDED)");
        case kDtTextRel:
          return bad("embedded ELF: has text relocations (DT_TEXTREL)");
        case kDtFlags:
          if (d.val & kDfTextRel) return bad("embedded ELF: has text relocations (DF_TEXTREL)");
          break;
        case kDtInit:
        case kDtFini:
        case kDtInitArray:
        case kDtFiniArray:
        case kDtPreinitArray:
          return bad(
              "embedded ELF: has initialisers or finalisers (DT_INIT/DT_INIT_ARRAY/DT_FINI)");
        case kDtJmpRel:
        case kDtPltRelSz:
          if (d.val != 0 || d.tag == kDtJmpRel)
            return bad("embedded ELF: has PLT relocations (DT_JMPREL): link without imports");
          break;
        case kDtRelr:
        case kDtRelrSz:
        case kDtRelrEnt:
        case kDtAndroidRelr:
          return bad(
              "embedded ELF: has packed relative relocations (DT_RELR): link without -z "
              "pack-relative-relocs");
        case kDtRel:
          return bad("embedded ELF: has REL relocations (DT_REL); only RELA is supported");
        case kDtRela:
          rela_ = d.val;
          break;
        case kDtRelaSz:
          relaSize_ = d.val;
          break;
        case kDtRelaEnt:
          relaEnt = d.val;
          break;
        case kDtSymTab:
          symtab_ = d.val;
          break;
        case kDtSymEnt:
          symEnt = d.val;
          break;
        case kDtStrTab:
          strtab_ = d.val;
          break;
        case kDtStrSz:
          strSize_ = d.val;
          break;
        case kDtHash:
          hash_ = d.val;
          break;
        default:
          break;
      }
    }
    if (relaEnt != sizeof(Rela) || symEnt != sizeof(Sym))
      return bad("embedded ELF: unexpected RELA or symbol entry size");
    if (relaSize_ % sizeof(Rela) != 0 || (relaSize_ && !mapped(rela_, relaSize_))) {
      return bad("embedded ELF: relocation table lies outside the loaded segments");
    }
    if (!hash_ || !mapped(hash_, 8))
      return bad("embedded ELF: has no DT_HASH table (link with --hash-style=sysv)");
    symCount_ = read<uint32_t>(image_.base + hash_ + 4);  // nchain = number of symbols
    if (!symtab_ || !mapped(symtab_, uint64_t{symCount_} * sizeof(Sym)) || !strtab_ ||
        !mapped(strtab_, strSize_) || strSize_ == 0) {
      return bad("embedded ELF: symbol or string table lies outside the loaded segments");
    }
    return KILN_OK;
  }

  kiln_status_t relocate() {
    uint32_t relative = relativeType(ehdr_.machine);
    for (uint64_t off = 0; off < relaSize_; off += sizeof(Rela)) {
      Rela r = read<Rela>(image_.base + rela_ + off);
      uint32_t type = static_cast<uint32_t>(r.info);
      if (type == kRelNone) continue;
      if (type != relative || (r.info >> 32) != 0) {
        return bad("embedded ELF: relocation type {} is not supported (only RELATIVE)", type);
      }
      if (!mapped(r.offset, 8)) {
        return bad("embedded ELF: relocation at {} lies outside the loaded segments", r.offset);
      }
      if (mapped(r.offset, 1, kPfX)) {
        return bad("embedded ELF: relocation at {} patches executable code", r.offset);
      }
      uint64_t value = reinterpret_cast<uintptr_t>(image_.base) + static_cast<uint64_t>(r.addend);
      __builtin_memcpy(image_.base + r.offset, &value, 8);
    }
    return KILN_OK;
  }

  kiln_status_t findQuery() {
    static const char kName[] = KILN_KERNEL_QUERY_SYMBOL;
    for (uint32_t i = 1; i < symCount_; ++i) {
      Sym s = read<Sym>(image_.base + symtab_ + uint64_t{i} * sizeof(Sym));
      if (s.name >= strSize_ || s.shndx == 0) continue;
      const char* name = reinterpret_cast<const char*>(image_.base + strtab_ + s.name);
      uint64_t room = strSize_ - s.name;
      uint64_t k = 0;
      while (k < sizeof kName && k < room && name[k] == kName[k]) ++k;
      if (k != sizeof kName) continue;  // matched including the NUL only if equal
      if ((s.info & 0xf) != kSttFunc || !mapped(s.value, 1, kPfX)) {
        return bad("embedded ELF: symbol '" KILN_KERNEL_QUERY_SYMBOL
                   "' is not a function in an executable segment");
      }
      image_.query = reinterpret_cast<kiln_kernel_query_fn>(image_.base + s.value);
      return KILN_OK;
    }
    return bad("embedded ELF: has no '" KILN_KERNEL_QUERY_SYMBOL "' symbol");
  }

  kiln_status_t protect() {
    uint64_t page = mem_.pageSize;
    for (uint32_t i = 0; i < segmentCount_; ++i) {
      const Segment& s = segments_[i];
      uint64_t start = s.vaddr / page * page;
      uint64_t end = (s.vaddr + s.memsz + page - 1) / page * page;
      uint32_t prot = kProtRead;
      if (s.flags & kPfW) prot |= kProtWrite;
      if (s.flags & kPfX) prot |= kProtExec;
      if (!mem_.protect(mem_.user, image_.base + start, static_cast<size_t>(end - start), prot)) {
        return bad("embedded ELF: cannot protect segment {}", i);
      }
    }
    return KILN_OK;
  }

  const uint8_t* file_;
  size_t size_;
  const ElfMemory& mem_;
  Diag& diag_;
  Ehdr ehdr_{};
  uint32_t phnum_ = 0;
  Segment segments_[kMaxSegments]{};
  uint32_t segmentCount_ = 0;
  uint64_t end_ = 0;
  bool hasDynamic_ = false;
  uint64_t dynamicVaddr_ = 0, dynamicSize_ = 0;
  uint64_t rela_ = 0, relaSize_ = 0, symtab_ = 0, strtab_ = 0, strSize_ = 0, hash_ = 0;
  uint32_t symCount_ = 0;
  ElfImage image_;
};

}  // namespace

kiln_status_t elfMap(const uint8_t* image, size_t size, uint32_t arch, const ElfMemory& memory,
                     ElfImage* out, Diag& diag) {
  return Mapper(image, size, memory, diag).run(arch, out);
}

kiln_status_t elfQuery(const ElfImage& image, const uint8_t* /*elfFile*/,
                       const kiln_kernel_library** out, Diag& diag) {
  const kiln_kernel_library* lib = image.query();
  uintptr_t base = reinterpret_cast<uintptr_t>(image.base);
  auto inside = [&](const void* p, uint64_t n) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    return a >= base && inBounds(a - base, n, image.size);
  };
  if (!lib || !inside(lib, sizeof *lib) ||
      (lib->kernel_count && !inside(lib->kernels, uint64_t{lib->kernel_count} * sizeof(void*)))) {
    return diag.fail(KILN_ERROR_KERNELS,
                     "embedded ELF: the query symbol returned a library outside the image");
  }
  for (uint32_t k = 0; k < lib->kernel_count; ++k) {
    if (!inside(reinterpret_cast<const void*>(lib->kernels[k]), 1)) {
      return diag.fail(KILN_ERROR_KERNELS, "embedded ELF: kernel {} points outside the image", k);
    }
  }
  *out = lib;
  return KILN_OK;
}

void elfUnmap(const ElfMemory& memory, ElfImage* image) {
  if (image->base) memory.release(memory.user, image->base, image->size);
  *image = ElfImage{};
}

}  // namespace kiln
