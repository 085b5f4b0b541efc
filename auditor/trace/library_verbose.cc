#include "trace/library_verbose.h"

#include <cctype>

namespace repro_audit {
namespace {

// oneDNN 3 prefixes its lines "onednn_verbose", releases before 2.7 "dnnl_verbose"; the fields after
// "exec" have the same layout in both.
bool is_onednn_line(std::string_view line) {
  return line.starts_with("onednn_verbose,") || line.starts_with("dnnl_verbose,");
}

constexpr std::string_view kMklPrefix = "MKL_VERBOSE ";

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find(separator, start)) != std::string_view::npos; start = end + 1)
    parts.push_back(text.substr(start, end - start));
  parts.push_back(text.substr(start));
  return parts;
}

void append_word(std::string& text, std::string_view word) {
  if (word.empty()) return;
  if (!text.empty()) text += ' ';
  text += word;
}

// "src:f32:a:blocked:aBcd16b::f0 wei:..." (oneDNN 3) or "src_f32::blocked:abcd:f0 ..." (oneDNN 2) ->
// "src:f32 wei:f32 ..."; the layouts follow from the implementation, the data types do not.
std::string data_types(std::string_view descriptors) {
  std::string types;
  for (const auto descriptor : split(descriptors, ' ')) {
    const auto parts = split(descriptor, ':');
    const bool named_then_typed = parts.size() > 1 && parts[0].find('_') == std::string_view::npos;
    const auto type = named_then_typed ? parts[1] : parts[0];
    if (type.empty() || type == "undef" || type.ends_with("_undef")) continue;
    append_word(types, named_then_typed ? std::string(parts[0]) + ":" + std::string(type) : std::string(type));
  }
  return types;
}

// The scratchpad mode says who allocates temporary memory, nothing about the computation.
std::string attributes(std::string_view text) {
  std::string kept;
  for (const auto attribute : split(text, ' '))
    if (!attribute.starts_with("attr-scratchpad:")) append_word(kept, attribute);
  return kept;
}

// Pointer arguments differ from run to run: "0x7ffcc47d50d0" and "(nil)" become "*".
std::string without_addresses(std::string_view text) {
  std::string result;
  for (std::size_t i = 0; i < text.size();) {
    if (text.substr(i, 2) == "0x" && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      for (i += 2; i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i])); ++i) {
      }
      result += '*';
    } else if (text.substr(i, 5) == "(nil)") {
      result += '*';
      i += 5;
    } else {
      result += text[i++];
    }
  }
  return result;
}

bool is_mkl_banner(std::string_view line) {
  return line.starts_with(kMklPrefix) && line.find(" Product build ") != std::string_view::npos;
}

// "MKL_VERBOSE oneMKL 2024.0 Update 2 Product build 20240605 for Intel(R) 64 architecture Intel(R)
// Architecture processors, Lnx 2.60GHz lp64 gnu_thread" -> "mkl:oneMKL 2024.0 Update 2 for ...
// processors, Lnx lp64 gnu_thread": the code branch MKL chose, without the build date and the clock
// rate (a measurement).
KernelRecord mkl_banner_record(std::string_view line) {
  std::string text;
  bool build_number = false;
  for (const auto word : split(line.substr(kMklPrefix.size()), ' ')) {
    if (build_number) {
      build_number = false;
    } else if (word == "Product" || word == "build") {
      build_number = word == "build";
    } else if (!word.ends_with("Hz") && !word.ends_with("Hz,")) {
      append_word(text, word);
    }
  }
  return {"mkl:" + text, "", ""};
}

}  // namespace

std::optional<KernelRecord> parse_onednn_exec_line(std::string_view line) {
  if (!is_onednn_line(line)) return std::nullopt;
  const auto fields = split(line, ',');
  // Optional fields (a format marker, a timestamp) may precede "primitive,exec"; graph lines are skipped.
  std::size_t exec = 1;
  while (exec < fields.size() && fields[exec] != "exec") ++exec;
  // After "exec": engine, kind, implementation, propagation, descriptors, attributes, auxiliary, problem, time.
  if (exec + 10 > fields.size() || fields[exec - 1] == "graph") return std::nullopt;
  const auto kind = fields[exec + 2], implementation = fields[exec + 3], propagation = fields[exec + 4];
  std::string name = "onednn:" + std::string(kind);
  append_word(name, implementation);
  if (propagation != "undef") append_word(name, propagation);
  append_word(name, data_types(fields[exec + 5]));
  append_word(name, fields[exec + 7]);  // auxiliary, e.g. "alg:convolution_direct"
  append_word(name, attributes(fields[exec + 6]));
  append_word(name, fields[fields.size() - 2]);  // the problem; the last field is the time
  return KernelRecord{name, "", ""};
}

std::optional<KernelRecord> parse_mkl_call_line(std::string_view line) {
  if (!line.starts_with(kMklPrefix) || is_mkl_banner(line)) return std::nullopt;
  const auto rest = line.substr(kMklPrefix.size());
  const auto open = rest.find('(');
  if (open == std::string_view::npos || open > rest.find(' ')) return std::nullopt;
  std::size_t close = open;
  for (int depth = 0; close < rest.size(); ++close) {
    depth += rest[close] == '(' ? 1 : rest[close] == ')' ? -1 : 0;
    if (depth == 0) break;
  }
  if (close == rest.size()) return std::nullopt;
  std::string name = "mkl:" + without_addresses(rest.substr(0, close + 1));
  // Kept: the reproducibility branch and the thread count. Left out: the time, the calling thread,
  // and Dyn/FastMM, which follow from calls made earlier in the process, not from this cell.
  for (const auto word : split(rest.substr(close + 1), ' '))
    if (word.starts_with("CNR:") || word.starts_with("NThr:")) append_word(name, word);
  return KernelRecord{name, "", ""};
}

void LibraryVerboseParser::read_banner(std::string_view line) {
  if (is_mkl_banner(line)) {
    mkl_banner_ = mkl_banner_record(line);
    return;
  }
  if (!is_onednn_line(line)) return;
  const auto fields = split(line, ',');
  std::size_t info = 1;
  while (info < fields.size() && fields[info] != "info") ++info;
  if (info + 1 >= fields.size()) return;
  const auto first = fields[info + 1];
  if (first.starts_with("oneDNN v") || first.starts_with("DNNL v"))
    onednn_version_ = first.substr(0, first.find(" ("));  // without the commit
  else if (first == "cpu" && info + 2 < fields.size() && fields[info + 2].starts_with("isa:"))
    onednn_isa_ = fields[info + 2];
}

std::optional<KernelRecord> LibraryVerboseParser::onednn_banner() const {
  if (onednn_version_.empty() && onednn_isa_.empty()) return std::nullopt;
  std::string name = "onednn:" + onednn_version_;
  if (!onednn_version_.empty() && !onednn_isa_.empty()) name += ' ';
  return KernelRecord{name + onednn_isa_, "", ""};
}

LibraryVerboseRun LibraryVerboseParser::parse_run(std::string_view output) {
  LibraryVerboseRun run;
  bool onednn_seen = false, mkl_seen = false;
  auto lines = split(output, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (const auto line : lines) {
    read_banner(line);
    const auto offset = static_cast<std::size_t>(line.data() - output.data());
    if (auto record = parse_onednn_exec_line(line)) {
      if (!onednn_seen)
        if (auto banner = onednn_banner()) run.add(std::move(*banner), std::string_view::npos);
      onednn_seen = true;
      run.add(std::move(*record), offset);
    } else if (auto call = parse_mkl_call_line(line)) {
      if (!mkl_seen && mkl_banner_) run.add(KernelRecord(*mkl_banner_), std::string_view::npos);
      mkl_seen = true;
      run.add(std::move(*call), offset);
    } else if (!is_mkl_banner(line) && !(is_onednn_line(line) && line.find(",info,") != std::string_view::npos)) {
      run.other_output.append(line).append("\n");
    }
  }
  return run;
}

}  // namespace repro_audit
