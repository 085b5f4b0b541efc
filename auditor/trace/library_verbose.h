#pragma once
// Kernel records from what oneDNN and MKL print in verbose mode: which oneDNN primitive
// implementation (e.g. "jit:avx512_core") and which MKL call in which reproducibility mode (MKL_CBWR)
// a run used. Timings and addresses are left out: a record must be the same in every run that
// executed the same thing, or identical runs would look like a change of kernel selection.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/records.h"

namespace repro_audit {

// "onednn_verbose,v1,primitive,exec,cpu,<kind>,<implementation>,<prop_kind>,<memory descriptors>,
// <attributes>,<auxiliary>,<problem>,<time>" -> "onednn:<kind> <implementation> [<prop_kind>]
// <data types> [<auxiliary>] [<attributes>] <problem>"; nullopt for any other line.
std::optional<KernelRecord> parse_onednn_exec_line(std::string_view line);

// "MKL_VERBOSE SGEMM(N,N,512,...,0x7ffc...,512) 21.76ms CNR:OFF Dyn:1 FastMM:1 TID:0  NThr:2" ->
// "mkl:SGEMM(N,N,512,...,*,512) CNR:OFF NThr:2"; nullopt for any other line (the banner included).
std::optional<KernelRecord> parse_mkl_call_line(std::string_view line);

struct LibraryVerboseRun {
  std::vector<KernelRecord> records;  // in the order the libraries printed them
  std::vector<std::size_t> offsets;   // where each record's line began in the output; npos for a banner
  std::string other_output;           // lines that are not verbose output, to pass on

  void add(KernelRecord record, std::size_t offset) {
    records.push_back(std::move(record));
    offsets.push_back(offset);
  }
};

// Turns one run's captured stdout into records. Each library prints its banner (version and ISA)
// once per process, in whichever run calls it first; the parser keeps it and puts a record of it
// before the library's first record in every run, so the first run and later ones agree.
class LibraryVerboseParser {
 public:
  LibraryVerboseRun parse_run(std::string_view output);

 private:
  void read_banner(std::string_view line);
  std::optional<KernelRecord> onednn_banner() const;

  std::string onednn_version_;  // "oneDNN v3.12.0"
  std::string onednn_isa_;      // "isa:Intel AVX-512 with Intel DL Boost and bfloat16 support"
  std::optional<KernelRecord> mkl_banner_;
};

}  // namespace repro_audit
