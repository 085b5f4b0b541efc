#pragma once
// The CUDA facts of repro-audit-torch on a machine where no CUDA driver loads, kept between audits.
//
// A CPU audit run by the front end has workers without libtorch's CUDA half (repro-audit-cpu); the report's
// CUDA facts (the runtime's, cuDNN's, cuBLAS's, NCCL's versions, and why no device is usable) come from the
// one worker that loads the whole of libtorch, which starts in about twice the time. Where no driver
// loads, those facts are what the libraries on disk say: a worker of repro-audit-torch keeps them in a
// file with what they depend on, and the next audit takes them from there while that is unchanged: the
// program itself, every shared library its process had loaded, the dynamic loader's cache, and the
// variables that steer the loader or CUDA (LD_*, CUDA_*, NVIDIA_*, but CUDA_MODULE_LOADING, which libtorch
// sets itself). Anything changed, or a driver present, and the facts are asked of repro-audit-torch again.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace repro_audit {

// Where the facts of `program` are kept: $XDG_CACHE_HOME/repro-audit (an absolute path), else
// $HOME/.cache/repro-audit, one file per program; "" where neither can be named.
std::string kept_cuda_facts_file(const std::string& program, char** environment);

// Keeps the CUDA facts of `fingerprint`, this process's (it runs `program`, with `libraries` loaded, under
// `environment`), where they are those of a machine without a CUDA driver (torch_cuda_build, a driver
// version of 0, no device available); else nothing. Never throws: facts not kept are only asked again.
void keep_cuda_facts(const nlohmann::json& fingerprint, const std::string& program,
                     const std::vector<std::string>& libraries, char** environment);

// keep_cuda_facts for this process's own fingerprint: its program, its loaded libraries and its environment,
// gathered only where the facts are a driverless machine's (a worker's, once it has said its fingerprint).
void keep_own_cuda_facts(const nlohmann::json& fingerprint);

// The facts kept for `program`, as a fingerprint holds them (torch_cuda_build, cuda, and their sources,
// the runtime's saying where they were kept from), where the program, each library, the loader's cache and
// the variables are as they were when kept; nullopt otherwise, or where the file cannot be read.
std::optional<nlohmann::json> kept_cuda_facts(const std::string& program, char** environment);

// The shared libraries this process has loaded, by the paths they were loaded from.
std::vector<std::string> loaded_libraries();

}  // namespace repro_audit
