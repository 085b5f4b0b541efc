#include "fingerprint/kept_cuda_facts.h"

#include <fmt/format.h>
#include <link.h>
#include <unistd.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iterator>

#include "common/atomic_file.h"
#include "common/cuda_fact_keys.h"
#include "common/input_file.h"
#include "common/user_error.h"
#include "fingerprint/numerics_environment.h"

namespace repro_audit {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

constexpr const char* kKind = "repro-audit kept CUDA facts";
constexpr int kVersion = 1;
constexpr std::size_t kMaxBytes = std::size_t{1} << 20;  // a few KiB in practice
constexpr const char* kFilePrefix = "cuda-facts-";

std::string canonical(const std::string& path) {
  std::error_code ignored;
  const auto resolved = fs::canonical(path, ignored);
  return resolved.empty() ? path : resolved.string();
}

// What a file is: a file changed in place, replaced, or gone no longer matches.
json identity(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return {{"path", path}, {"missing", true}};
  return {{"path", path},
          {"size", static_cast<std::int64_t>(status.st_size)},
          {"mtime_ns", static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 + status.st_mtim.tv_nsec},
          {"inode", static_cast<std::uint64_t>(status.st_ino)},
          {"device", static_cast<std::uint64_t>(status.st_dev)}};
}

// The variables that steer the dynamic loader or CUDA, as set; but CUDA_MODULE_LOADING, which libtorch sets
// itself where it is unset (a worker has it, the front end that started it not), and which loads no library.
json loader_variables(const EnvironmentVariables& environment) {
  json variables = json::object();
  for (const auto& [name, value] : environment)
    if ((name.rfind("LD_", 0) == 0 || name.rfind("CUDA_", 0) == 0 || name.rfind("NVIDIA_", 0) == 0) &&
        name != "CUDA_MODULE_LOADING")
      variables[name] = value;
  return variables;
}

// What the kept facts depend on, as it is now.
json current_key(const std::string& program, const std::vector<std::string>& libraries,
                 const EnvironmentVariables& environment) {
  json identities = json::array();
  for (const auto& library : libraries) identities.push_back(identity(library));
  return {{"program", identity(program)},
          {"libraries", std::move(identities)},
          {"loader_cache", identity("/etc/ld.so.cache")},
          {"variables", loader_variables(environment)}};
}

std::string cache_folder(const EnvironmentVariables& environment) {
  const auto xdg = environment.find("XDG_CACHE_HOME"), home = environment.find("HOME");
  // The XDG spec: a relative path there is invalid and ignored.
  if (xdg != environment.end() && xdg->second.starts_with('/')) return (fs::path(xdg->second) / "repro-audit").string();
  if (home != environment.end() && home->second.starts_with('/'))
    return (fs::path(home->second) / ".cache" / "repro-audit").string();
  return "";
}

// The facts of a machine where no CUDA driver loads (torch_cuda_build, driver 0, no device): the libraries'
// alone, the only ones kept.
bool driverless_cuda_facts(const json& fingerprint) {
  if (!fingerprint.is_object() || fingerprint.value("torch_cuda_build", false) != true) return false;
  const auto& cuda = fingerprint.value("cuda", json());
  return cuda.is_object() && cuda.value("available", true) == false && cuda.value("driver", -1) == 0;
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  ::gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

// A time utc_now() wrote ("2026-11-30T23:14:32Z"), or "an earlier audit": the file's text goes into the
// report only in the form the tool writes it.
std::string kept_at(const json& kept) {
  const auto* text = kept.contains("kept_at") ? kept.at("kept_at").get_ptr<const std::string*>() : nullptr;
  if (!text || text->size() != 20) return "an earlier audit";
  for (std::size_t i = 0; i < text->size(); ++i) {
    const char c = (*text)[i], expected = "0000-00-00T00:00:00Z"[i];
    if (expected == '0' ? !std::isdigit(static_cast<unsigned char>(c)) : c != expected) return "an earlier audit";
  }
  return *text;
}

// The kept file's JSON, or null: read as every input file is (common/input_file.h: a regular file only, so
// a FIFO or device put there never blocks an audit; its size capped; its nesting limited).
json read_kept(const std::string& file) {
  try {
    return parse_json_input(read_input_file(file, "kept CUDA facts", kMaxBytes), file);
  } catch (const UserError&) {
    return nullptr;
  }
}

// Files of programs that are gone (an earlier build folder or clone): removed as another is kept.
void remove_files_of_gone_programs(const fs::path& folder) {
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const auto name = it->path().filename().string();
    if (name.rfind(kFilePrefix, 0) != 0 || it->path().extension() != ".json") continue;
    const auto kept = read_kept(it->path().string());
    const auto pointer = "/key/program/path"_json_pointer;
    if (!kept.is_object() || !kept.contains(pointer) || !kept.at(pointer).is_string()) continue;
    std::error_code ignored;
    if (!fs::exists(kept.at(pointer).get<std::string>(), ignored)) fs::remove(it->path(), ignored);
  }
}

// The file of the program at `path` (canonical), or "".
std::string facts_file(const std::string& path, const EnvironmentVariables& environment) {
  const auto folder = cache_folder(environment);
  if (folder.empty()) return "";
  return (fs::path(folder) / fmt::format("{}{:016x}.json", kFilePrefix, XXH3_64bits(path.data(), path.size())))
      .string();
}

}  // namespace

std::string kept_cuda_facts_file(const std::string& program, char** environment) {
  return facts_file(canonical(program), environment_variables(environment));
}

void keep_cuda_facts(const nlohmann::json& fingerprint, const std::string& program,
                     const std::vector<std::string>& libraries, char** environment) {
  try {
    if (!driverless_cuda_facts(fingerprint)) return;
    const auto path = canonical(program);
    const auto variables = environment_variables(environment);
    const auto file = facts_file(path, variables);
    if (file.empty()) return;
    json facts = {{"torch_cuda_build", true}, {"cuda", fingerprint.at("cuda")}, {"sources", json::object()}};
    if (fingerprint.contains("sources") && fingerprint.at("sources").is_object())
      for (const auto& [key, value] : fingerprint.at("sources").items())
        if (is_cuda_fact_key(key)) facts["sources"][key] = value;
    auto key = current_key(path, libraries, variables);
    // Kept already, and still true: not written again (every worker of a model audit says the same).
    const auto before = read_kept(file);
    if (before.is_object() && before.value("key", json()) == key && before.value("facts", json()) == facts) return;
    const json kept = {{"kind", kKind},
                       {"version", kVersion},
                       {"kept_at", utc_now()},
                       {"key", std::move(key)},
                       {"facts", std::move(facts)}};
    std::error_code ignored;
    fs::create_directories(fs::path(file).parent_path(), ignored);
    remove_files_of_gone_programs(fs::path(file).parent_path());
    write_own_file_atomically(file, kept.dump(1) + "\n");
  } catch (...) {  // kept only to save a later audit time: anything wrong, and it asks again
  }
}

std::optional<nlohmann::json> kept_cuda_facts(const std::string& program, char** environment) {
  try {
    const auto path = canonical(program);
    const auto variables = environment_variables(environment);
    const auto file = facts_file(path, variables);
    if (file.empty()) return std::nullopt;
    const auto kept = read_kept(file);
    if (!kept.is_object() || kept.value("kind", "") != kKind || kept.value("version", 0) != kVersion)
      return std::nullopt;
    const auto& key = kept.value("key", json());
    const auto& facts = kept.value("facts", json());
    if (!key.is_object() || !facts.is_object() || !key.contains("libraries") || !key.at("libraries").is_array())
      return std::nullopt;
    std::vector<std::string> libraries;
    for (const auto& library : key.at("libraries")) {
      const auto* path =
          library.is_object() && library.contains("path") ? library.at("path").get_ptr<const std::string*>() : nullptr;
      if (!path) return std::nullopt;
      libraries.push_back(*path);
    }
    if (libraries.empty() || key != current_key(path, libraries, variables)) return std::nullopt;
    if (facts.value("torch_cuda_build", false) != true || !facts.contains("cuda") || !facts.at("cuda").is_object() ||
        !facts.contains("sources") || !facts.at("sources").is_object())
      return std::nullopt;
    json answer = facts;
    for (auto it = answer["sources"].begin(); it != answer["sources"].end();)
      it = is_cuda_fact_key(it.key()) && it->is_string() ? std::next(it) : answer["sources"].erase(it);
    answer["sources"]["cuda"] = fmt::format(
        "{} (read by {} at {} and kept: it, the {} libraries its process had loaded, the loader's cache and the "
        "LD_*, CUDA_* and NVIDIA_* variables are unchanged since, and no CUDA driver loads)",
        answer["sources"].value("cuda", std::string("the CUDA libraries")), fs::path(program).filename().string(),
        kept_at(kept), libraries.size());
    return answer;
  } catch (...) {
    return std::nullopt;
  }
}

void keep_own_cuda_facts(const nlohmann::json& fingerprint) {
  if (!driverless_cuda_facts(fingerprint)) return;  // what it would keep is checked before any is gathered
  std::error_code ignored;
  keep_cuda_facts(fingerprint, fs::read_symlink("/proc/self/exe", ignored).string(), loaded_libraries(), environ);
}

std::vector<std::string> loaded_libraries() {
  std::vector<std::string> libraries;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && info->dlpi_name[0] == '/')
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        return 0;
      },
      &libraries);
  return libraries;
}

}  // namespace repro_audit
