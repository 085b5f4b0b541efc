#include "fingerprint/cpu_info.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

namespace repro_audit {
namespace {

std::string_view trimmed(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// "25" or, as ARM prints its part numbers, "0xd0c".
std::optional<int> integer(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const bool hex = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0;
  const char* first = text.data() + (hex ? 2 : 0);
  const char* last = text.data() + text.size();
  int value = 0;
  const auto [end, error] = std::from_chars(first, last, value, hex ? 16 : 10);
  if (error != std::errc() || end != last) return std::nullopt;
  return value;
}

// "key : value" lines of the first processor block.
std::map<std::string, std::string> first_block(std::string_view text) {
  std::map<std::string, std::string> fields;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (trimmed(line).empty()) {
      if (!fields.empty()) break;  // the blank line that ends the first processor
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    fields.emplace(trimmed(line.substr(0, colon)), trimmed(line.substr(colon + 1)));
  }
  return fields;
}

std::string field(const std::map<std::string, std::string>& fields, const std::string& name) {
  const auto found = fields.find(name);
  return found == fields.end() ? "" : found->second;
}

bool has(const std::vector<std::string>& flags, const std::string& flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

}  // namespace

const std::vector<std::string>& numerics_cpu_flags() {
  static const std::vector<std::string> flags = {"sse4_1",
                                                 "sse4_2",
                                                 "avx",
                                                 "avx2",
                                                 "fma",
                                                 "f16c",
                                                 "avx512f",
                                                 "avx512dq",
                                                 "avx512cd",
                                                 "avx512bw",
                                                 "avx512vl",
                                                 "avx512ifma",
                                                 "avx512vbmi",
                                                 "avx512_vbmi2",
                                                 "avx512_vnni",
                                                 "avx512_bitalg",
                                                 "avx512_vpopcntdq",
                                                 "avx512_bf16",
                                                 "avx512_fp16",
                                                 "avx_vnni",
                                                 "amx_bf16",
                                                 "amx_tile",
                                                 "amx_int8",
                                                 "amx_fp16",
                                                 "asimd",
                                                 "sve",
                                                 "sve2",
                                                 "bf16",
                                                 "i8mm"};
  return flags;
}

CpuInfo parse_cpu_info(std::string_view cpuinfo_text) {
  const auto fields = first_block(cpuinfo_text);
  CpuInfo info;
  info.arm = fields.count("vendor_id") == 0 && fields.count("CPU implementer") != 0;
  info.vendor = field(fields, info.arm ? "CPU implementer" : "vendor_id");
  info.model_name = field(fields, "model name");
  info.family = integer(field(fields, info.arm ? "CPU architecture" : "cpu family"));
  info.model = integer(field(fields, info.arm ? "CPU part" : "model"));
  info.stepping = integer(field(fields, info.arm ? "CPU revision" : "stepping"));
  std::istringstream present(field(fields, info.arm ? "Features" : "flags"));
  for (std::string flag; present >> flag;)
    if (has(numerics_cpu_flags(), flag) && !has(info.flags, flag)) info.flags.push_back(flag);
  std::sort(info.flags.begin(), info.flags.end());
  return info;
}

std::string read_proc_cpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> runnable_cpu_capabilities(const std::vector<std::string>& flags) {
  const auto all = [&](std::initializer_list<const char*> needed) {
    return std::all_of(needed.begin(), needed.end(), [&](const char* flag) { return has(flags, flag); });
  };
  std::vector<std::string> capabilities = {"default"};
  if (all({"avx2", "fma"})) capabilities.push_back("avx2");
  if (all({"avx512f", "avx512vl", "avx512bw", "avx512dq", "fma"})) capabilities.push_back("avx512");
  return capabilities;
}

std::string aten_capability_name(std::string_view printed) {
  // x86 builds print DEFAULT as "NO AVX"; s390x prints "Z VECTOR" for ZVECTOR.
  if (printed == "NO AVX") return "DEFAULT";
  std::string name;
  for (const char c : printed)
    if (c != ' ') name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace repro_audit
