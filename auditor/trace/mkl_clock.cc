#include "trace/mkl_clock.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace repro_audit {
namespace {

constexpr std::string_view kVariable = "mkl_clocks_freq";
constexpr const char* kServiceFunction = "mkl_serv_get_clocks_frequency";  // exported beside it

// A file mapped read-only while it lives.
class MappedFile {
 public:
  explicit MappedFile(const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat status {};
    if (::fstat(fd, &status) == 0 && status.st_size > 0) {
      void* data = ::mmap(nullptr, static_cast<std::size_t>(status.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (data != MAP_FAILED) {
        data_ = static_cast<const unsigned char*>(data);
        size_ = static_cast<std::size_t>(status.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // `count` objects of T at `offset`, or nullptr when they do not lie within the file.
  template <typename T>
  const T* at(std::uint64_t offset, std::uint64_t count = 1) const {
    if (!data_ || offset > size_ || count > (size_ - offset) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(data_ + offset);
  }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

struct Variable {
  std::uint64_t address = 0;  // link-time; 0: not found
  double initial = 0;         // what the library file holds for it (0 in a section without contents)
};

// The variable as the library's symbol table names it: an 8-byte object in a writable, allocated
// section. Not found (address 0) otherwise.
Variable variable_in(const MappedFile& file) {
  const auto* header = file.at<Elf64_Ehdr>(0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64 ||
      header->e_machine != EM_X86_64 || header->e_shentsize != sizeof(Elf64_Shdr))
    return {};
  const auto* sections = file.at<Elf64_Shdr>(header->e_shoff, header->e_shnum);
  if (!sections) return {};
  for (std::size_t index = 0; index < header->e_shnum; ++index) {
    const auto& table = sections[index];
    if (table.sh_type != SHT_SYMTAB || table.sh_entsize != sizeof(Elf64_Sym) || table.sh_link >= header->e_shnum)
      continue;
    const auto count = table.sh_size / sizeof(Elf64_Sym);
    const auto* symbols = file.at<Elf64_Sym>(table.sh_offset, count);
    const auto& strings = sections[table.sh_link];
    const auto* names = file.at<char>(strings.sh_offset, strings.sh_size);
    if (!symbols || !names) return {};
    for (std::size_t i = 0; i < count; ++i) {
      const auto& symbol = symbols[i];
      if (ELF64_ST_TYPE(symbol.st_info) != STT_OBJECT || symbol.st_size != sizeof(double) ||
          symbol.st_name >= strings.sh_size || symbol.st_shndx >= header->e_shnum)
        continue;
      const char* name = names + symbol.st_name;
      if (::strnlen(name, strings.sh_size - symbol.st_name) != kVariable.size() || name != kVariable) continue;
      const auto& section = sections[symbol.st_shndx];
      if (!(section.sh_flags & SHF_ALLOC) || !(section.sh_flags & SHF_WRITE) || symbol.st_value < section.sh_addr ||
          symbol.st_value - section.sh_addr > section.sh_size - sizeof(double))
        return {};
      Variable variable{symbol.st_value, 0.0};
      if (section.sh_type != SHT_NOBITS) {
        const auto* initial = file.at<unsigned char>(section.sh_offset + (symbol.st_value - section.sh_addr), 8);
        if (!initial) return {};
        std::memcpy(&variable.initial, initial, sizeof(double));
      }
      return variable;
    }
  }
  return {};
}

#if defined(__x86_64__)
// The time-stamp counter's ticks per nanosecond, counted over 2 ms of the monotonic clock (to 0.01%).
double counter_ghz() {
  const auto now_ns = [] {
    timespec time{};
    ::clock_gettime(CLOCK_MONOTONIC_RAW, &time);
    return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
  };
  const auto start_ns = now_ns();
  const auto start_ticks = __rdtsc();
  std::int64_t elapsed = 0;
  while ((elapsed = now_ns() - start_ns) < 2'000'000) {
  }
  return static_cast<double>(__rdtsc() - start_ticks) / static_cast<double>(elapsed);
}
#endif

}  // namespace

MklClockFrequency mkl_clock_frequency_variable() {
#if defined(__x86_64__)
  void* function = ::dlsym(RTLD_DEFAULT, kServiceFunction);
  Dl_info info{};
  link_map* library = nullptr;
  if (!function || ::dladdr1(function, &info, reinterpret_cast<void**>(&library), RTLD_DL_LINKMAP) == 0 ||
      !info.dli_fname || !library)
    return {};
  const MappedFile file(info.dli_fname);
  const auto variable = variable_in(file);
  if (variable.address == 0) return {};
  return {reinterpret_cast<double*>(library->l_addr + variable.address), variable.initial};
#else
  return {};
#endif
}

bool preset_mkl_clock_frequency() {
#if defined(__x86_64__)
  const auto frequency = mkl_clock_frequency_variable();
  // Not measured yet: it still holds what the library started with, which is no frequency (MKL's is -1).
  if (!frequency.value || *frequency.value != frequency.unmeasured || frequency.unmeasured > 0) return false;
  const double ghz = counter_ghz();
  if (!(ghz > 0.1 && ghz < 100.0)) return false;  // no sane counter: MKL measures it as before
  *frequency.value = ghz;
  return true;
#else
  return false;
#endif
}

}  // namespace repro_audit
