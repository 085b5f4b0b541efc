#include "compare/kernel_change.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>

#include "report/escape.h"

namespace repro_audit {
namespace {

constexpr std::string_view kMkl = "mkl:", kOnednn = "onednn:";
// A CUDA kernel's demangled name runs to hundreds of characters: a detail line shows its start.
constexpr std::size_t kMaxShownCharacters = 160;

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string lower(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(), [](unsigned char c) { return std::tolower(c); });
  return result;
}

// "at::" as a namespace of its own, not the end of "flat::".
bool names_namespace(std::string_view name, std::string_view space) {
  for (auto at = name.find(space); at != std::string_view::npos; at = name.find(space, at + 1))
    if (at == 0 || !(std::isalnum(static_cast<unsigned char>(name[at - 1])) || name[at - 1] == '_')) return true;
  return false;
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> result;
  for (std::size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find(' ', start), text.size());
    if (end > start) result.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return result;
}

// An MKL call record, "mkl:SGEMM(N,N,512,...) CNR:OFF NThr:2", as opposed to its banner.
bool is_mkl_call(std::string_view name) {
  if (!name.starts_with(kMkl)) return false;
  const auto rest = name.substr(kMkl.size());
  const auto open = rest.find('(');
  return open != std::string_view::npos && open > 0 &&
         std::all_of(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(open),
                     [](unsigned char c) { return std::isupper(c) || std::isdigit(c) || c == '_'; });
}

// oneDNN's banner record: "onednn:oneDNN v3.12.0 isa:Intel AVX-512 ...", either part alone.
bool is_onednn_banner(std::string_view name) {
  return name.starts_with("onednn:oneDNN v") || name.starts_with("onednn:DNNL v") || name.starts_with("onednn:isa:");
}

bool is_banner(std::string_view name) {
  return (name.starts_with(kMkl) && !is_mkl_call(name)) || is_onednn_banner(name);
}

// What the sequence digest covers (trace/tracer.h): the per-op position is left out.
bool same_record(const KernelRecord& a, const KernelRecord& b) {
  return a.name == b.name && a.grid == b.grid && a.block == b.block;
}

// A report's kernel names are another host's text: one line each, in every printer.
std::string shown(const KernelRecord& record) {
  if (record.grid.empty() && record.block.empty()) return terminal_text(record.name);
  return terminal_text(fmt::format("{} grid {} block {}", record.name, record.grid, record.block));
}

// Identical changes of several records count as one.
class ChangeList {
 public:
  void add(KernelChange change) {
    for (auto& seen : changes_)
      if (seen.library == change.library && seen.aspect == change.aspect && seen.before == change.before &&
          seen.after == change.after) {
        seen.records += change.records;
        return;
      }
    changes_.push_back(std::move(change));
  }
  std::size_t size() const { return changes_.size(); }
  std::vector<KernelChange> take() { return std::move(changes_); }

 private:
  std::vector<KernelChange> changes_;
};

// "oneMKL 2024.0 Update 2 for <ISA> processors, Lnx lp64 gnu_thread": version, ISA, build.
struct MklBanner {
  std::string version, isa, build;
};

MklBanner mkl_banner(std::string_view name) {
  const auto text = name.substr(kMkl.size());
  const auto for_at = text.find(" for ");
  if (for_at == std::string_view::npos) return {std::string(text), "", ""};
  const auto rest = text.substr(for_at + 5);
  const auto processors = rest.rfind(" processors");
  const auto build = processors == std::string_view::npos ? std::string_view() : rest.substr(processors + 11);
  return {std::string(text.substr(0, for_at)), short_isa(rest.substr(0, processors)),
          std::string(build.substr(std::min(build.find_first_not_of(", "), build.size())))};
}

std::string without_prefix(std::string_view text, std::initializer_list<std::string_view> prefixes) {
  for (const auto prefix : prefixes)
    if (text.starts_with(prefix)) return std::string(text.substr(prefix.size()));
  return std::string(text);
}

// The banner's ISA is the code path MKL dispatched to; its version and build (threading layer,
// integer size) are the rest of what it says.
void mkl_banner_changes(std::string_view before, std::string_view after, ChangeList& changes) {
  const auto old_banner = mkl_banner(before), new_banner = mkl_banner(after);
  const auto old_version = without_prefix(old_banner.version, {"oneMKL ", "Intel(R) MKL "});
  const auto new_version = without_prefix(new_banner.version, {"oneMKL ", "Intel(R) MKL "});
  const auto count = changes.size();
  if (old_banner.isa != new_banner.isa) changes.add({"MKL", "code path", old_banner.isa, new_banner.isa});
  if (old_version != new_version) changes.add({"MKL", "version", old_version, new_version});
  if (old_banner.build != new_banner.build) changes.add({"MKL", "build", old_banner.build, new_banner.build});
  if (changes.size() == count)
    changes.add({"MKL", "banner", std::string(before.substr(kMkl.size())), std::string(after.substr(kMkl.size()))});
}

// "onednn:oneDNN v3.12.0 isa:Intel AVX-512 with Intel DL Boost and bfloat16 support".
void onednn_banner_changes(std::string_view before, std::string_view after, ChangeList& changes) {
  auto parts = [](std::string_view name) {
    const auto text = name.substr(kOnednn.size());
    const auto isa = text.find("isa:");
    const auto version = text.substr(0, std::min(isa, text.size()));
    return std::pair{without_prefix(version.substr(0, version.find_last_not_of(' ') + 1), {"oneDNN ", "DNNL "}),
                     isa == std::string_view::npos ? std::string() : short_isa(text.substr(isa + 4))};
  };
  const auto [old_version, old_isa] = parts(before);
  const auto [new_version, new_isa] = parts(after);
  const auto count = changes.size();
  if (old_isa != new_isa) changes.add({"oneDNN", "isa", old_isa, new_isa});
  if (old_version != new_version) changes.add({"oneDNN", "version", old_version, new_version});
  if (changes.size() == count)
    changes.add(
        {"oneDNN", "banner", std::string(before.substr(kOnednn.size())), std::string(after.substr(kOnednn.size()))});
}

// "mkl:SGEMM(N,N,...) CNR:OFF NThr:2" against the same call in another mode or thread count.
bool explain_mkl_call(std::string_view before, std::string_view after, ChangeList& changes) {
  const auto old_close = before.rfind(')'), new_close = after.rfind(')');
  if (old_close == std::string_view::npos || before.substr(0, old_close) != after.substr(0, new_close)) return false;
  const auto function = std::string(before.substr(kMkl.size(), before.find('(') - kMkl.size()));
  auto modes = [](std::string_view tail) {
    std::map<std::string, std::string, std::less<>> found;
    for (const auto word : words(tail)) {
      const auto colon = word.find(':');
      found[std::string(word.substr(0, colon))] = colon == std::string_view::npos ? "" : word.substr(colon + 1);
    }
    return found;
  };
  auto old_modes = modes(before.substr(old_close + 1)), new_modes = modes(after.substr(new_close + 1));
  const bool other_mode = old_modes["CNR"] != new_modes["CNR"], other_threads = old_modes["NThr"] != new_modes["NThr"];
  if (other_mode) changes.add({"MKL", function, "CNR:" + old_modes["CNR"], "CNR:" + new_modes["CNR"]});
  if (other_threads) changes.add({"MKL", function + " threads", old_modes["NThr"], new_modes["NThr"]});
  // Explained when nothing else of the record differs.
  for (auto* found : {&old_modes, &new_modes}) {
    found->erase("CNR");
    found->erase("NThr");
  }
  return (other_mode || other_threads) && old_modes == new_modes;
}

// "onednn:convolution jit:avx512_core_bf16 forward_training ..." against the same primitive and
// problem run by another implementation.
bool explain_onednn_primitive(std::string_view before, std::string_view after, ChangeList& changes) {
  const auto old_words = words(before.substr(kOnednn.size())), new_words = words(after.substr(kOnednn.size()));
  if (old_words.size() < 2 || old_words.size() != new_words.size()) return false;
  for (std::size_t i = 0; i < old_words.size(); ++i)
    if (i != 1 && old_words[i] != new_words[i]) return false;
  changes.add({"oneDNN", std::string(old_words[0]), std::string(old_words[1]), std::string(new_words[1])});
  return true;
}

bool explain_pair(const KernelRecord& before, const KernelRecord& after, ChangeList& changes) {
  if (before.grid != after.grid || before.block != after.block) return false;
  if (is_mkl_call(before.name) && is_mkl_call(after.name)) return explain_mkl_call(before.name, after.name, changes);
  if (before.name.starts_with(kOnednn) && after.name.starts_with(kOnednn))
    return explain_onednn_primitive(before.name, after.name, changes);
  return false;
}

using Records = std::vector<const KernelRecord*>;

// The first record no summariser explained, and how many records each side has that the other lacks.
KernelChange generic_change(const std::string& library, const Records& before, const Records& after,
                            std::size_t first) {
  KernelChange change{library, "kernel", first < before.size() ? shown(*before[first]) : "",
                      first < after.size() ? shown(*after[first]) : ""};
  std::map<std::string, int> balance;
  for (const auto* record : after) ++balance[shown(*record)];
  for (const auto* record : before) --balance[shown(*record)];
  for (const auto& [name, count] : balance) (count > 0 ? change.added : change.removed) += std::abs(count);
  return change;
}

void library_changes(const std::string& library, Records before, Records after, ChangeList& changes) {
  // A library's banner, when the run has one, is its first record (trace/library_verbose.h): compared
  // as a banner when both sides have one, else as a record like the others.
  if (!before.empty() && !after.empty() && is_banner(before[0]->name) && is_banner(after[0]->name)) {
    if (before[0]->name != after[0]->name)
      (library == "MKL" ? mkl_banner_changes : onednn_banner_changes)(before[0]->name, after[0]->name, changes);
    before.erase(before.begin());
    after.erase(after.begin());
  }
  std::optional<std::size_t> unexplained;
  const auto common = std::min(before.size(), after.size());
  for (std::size_t i = 0; i < common && !unexplained; ++i)
    if (!same_record(*before[i], *after[i]) && !explain_pair(*before[i], *after[i], changes)) unexplained = i;
  if (!unexplained && before.size() != after.size()) unexplained = common;
  if (unexplained) changes.add(generic_change(library, before, after, *unexplained));
}

std::string cut(const std::string& text) {
  if (text.size() <= kMaxShownCharacters) return text;
  auto end = kMaxShownCharacters - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a UTF-8 character
  return text.substr(0, end) + "...";
}

}  // namespace

std::string kernel_library(std::string_view record_name) {
  if (record_name.starts_with(kMkl)) return "MKL";
  if (record_name.starts_with(kOnednn)) return "oneDNN";
  const auto name = lower(record_name);
  if (contains(name, "cudnn")) return "cuDNN";
  if (contains(name, "cublaslt")) return "cuBLASLt";
  if (contains(name, "cublas")) return "cuBLAS";
  if (contains(name, "cutlass")) return "CUTLASS";
  if (names_namespace(record_name, "at::") || names_namespace(record_name, "aten::") ||
      contains(record_name, "at_cuda_detail"))
    return "ATen";
  // cuDNN's and cuBLAS's own kernels do not name their library: their names say what they compute.
  for (const auto part : {"fprop", "dgrad", "wgrad", "implicit_convolve", "implicit_gemm", "winograd", "nchwtonhwc",
                          "nhwctonchw", "conv2d_grouped_direct"})
    if (contains(name, part)) return "cuDNN";
  for (const auto part : {"xmma_gemm", "sgemm", "dgemm", "hgemm", "gemv", "gemmk1", "gemmsn", "splitkreduce", "nvjet"})
    if (contains(name, part)) return "cuBLAS";
  return "other";
}

std::vector<KernelChange> describe_kernel_changes(const std::vector<KernelRecord>& before,
                                                  const std::vector<KernelRecord>& after) {
  std::vector<std::string> libraries;
  std::map<std::string, std::pair<Records, Records>> records;
  auto sort = [&](const std::vector<KernelRecord>& sequence, bool is_after) {
    for (const auto& record : sequence) {
      const auto library = kernel_library(record.name);
      if (!records.count(library)) libraries.push_back(library);
      (is_after ? records[library].second : records[library].first).push_back(&record);
    }
  };
  sort(after, true);
  sort(before, false);
  ChangeList changes;
  for (const auto& library : libraries)
    library_changes(library, records[library].first, records[library].second, changes);
  return changes.take();
}

std::string kernel_change_text(const KernelChange& change) {
  auto text =
      fmt::format("{} {} {} -> {}", change.library, change.aspect, change.before.empty() ? "none" : cut(change.before),
                  change.after.empty() ? "none" : cut(change.after));
  std::vector<std::string> counts;
  if (change.records > 1) counts.push_back(fmt::format("{} records", change.records));
  if (change.added > 0) counts.push_back(fmt::format("{} added", change.added));
  if (change.removed > 0) counts.push_back(fmt::format("{} removed", change.removed));
  for (std::size_t i = 0; i < counts.size(); ++i) text += (i == 0 ? " (" : ", ") + counts[i];
  return counts.empty() ? text : text + ")";
}

std::string short_isa(std::string_view text) {
  // Widest first: "AVX" is part of "AVX2" and "AVX-512". MKL names the ISA in parentheses too,
  // "Intel(R) Advanced Vector Extensions 2 (Intel(R) AVX2)".
  static constexpr std::pair<std::string_view, std::string_view> kIsas[] = {
      {"AVX10", "AVX10"},   {"AVX-512", "AVX-512"}, {"AVX512", "AVX-512"}, {"AVX2", "AVX2"},
      {"AVX", "AVX"},       {"SSE4.2", "SSE4.2"},   {"SSE4_2", "SSE4.2"},  {"SSE4.1", "SSE4.1"},
      {"SSE4_1", "SSE4.1"}, {"SSSE3", "SSSE3"},     {"SSE3", "SSE3"},      {"SSE2", "SSE2"}};
  static constexpr std::pair<std::string_view, std::string_view> kExtensions[] = {
      {"DL Boost", "DL Boost"}, {"AMX", "AMX"},       {"VNNI", "VNNI"}, {"INT8", "INT8"},   {"8-bit integer", "INT8"},
      {"BF16", "BF16"},         {"bfloat16", "BF16"}, {"FP16", "FP16"}, {"float16", "FP16"}};
  std::string isa = "generic x86-64";
  for (const auto& [part, label] : kIsas)
    if (contains(text, part)) {
      isa = label;
      break;
    }
  std::vector<std::string_view> extensions;
  for (const auto& [part, label] : kExtensions)
    for (auto at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1))
      if (!(part == "float16" && at > 0 && text[at - 1] == 'b') &&
          std::find(extensions.begin(), extensions.end(), label) == extensions.end())
        extensions.push_back(label);
  for (std::size_t i = 0; i < extensions.size(); ++i) isa += fmt::format("{}{}", i == 0 ? " (" : ", ", extensions[i]);
  return extensions.empty() ? isa : isa + ")";
}

}  // namespace repro_audit
