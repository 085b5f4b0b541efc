#include "fingerprint/build_info.h"

#include <cctype>
#include <vector>

namespace repro_audit {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return lines;
}

// The text after `marker` up to `stop` (or the end of the line); empty when `marker` is absent.
std::string after(std::string_view line, std::string_view marker, std::string_view stop = {}) {
  const auto start = line.find(marker);
  if (start == std::string_view::npos) return "";
  auto value = line.substr(start + marker.size());
  if (!stop.empty()) value = value.substr(0, value.find(stop));
  while (!value.empty() && (value.back() == ' ' || value.back() == ',')) value.remove_suffix(1);
  return std::string(value);
}

bool is_setting_key(std::string_view piece) {
  const auto equals = piece.find('=');
  if (equals == std::string_view::npos || equals == 0) return false;
  for (const char c : piece.substr(0, equals))
    if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

// "KEY=VALUE, KEY=VALUE, ": a value may itself hold ", " (compiler flags), so a piece that does
// not start with KEY= belongs to the value before it.
std::map<std::string, std::string> build_settings(std::string_view text) {
  std::vector<std::string> pieces;
  while (!text.empty()) {
    const auto end = text.find(", ");
    const auto piece = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 2);
    if (is_setting_key(piece) || pieces.empty())
      pieces.emplace_back(piece);
    else
      pieces.back() += ", " + std::string(piece);
  }
  std::map<std::string, std::string> settings;
  for (auto& piece : pieces) {
    while (!piece.empty() && (piece.back() == ',' || piece.back() == ' ')) piece.pop_back();
    const auto equals = piece.find('=');
    if (equals != std::string::npos) settings[piece.substr(0, equals)] = piece.substr(equals + 1);
  }
  return settings;
}

// "v3.12.0 (Git Hash 80afa71049cd69a3df32adcccb623b12cd7baa22)" -> "3.12.0 (80afa71049cd)".
std::string onednn_version(std::string_view line) {
  auto version = after(line, "DNN v", " ");
  const auto hash = after(line, "Git Hash ", ")");
  if (!hash.empty() && hash != "N/A") version += " (" + hash.substr(0, 12) + ")";
  return version;
}

}  // namespace

BuildInfo parse_build_info(std::string_view show_config_text) {
  BuildInfo info;
  for (const auto line : lines_of(show_config_text)) {
    if (line.find("Math Kernel Library Version ") != std::string_view::npos)
      info.mkl = after(line, "Math Kernel Library Version ", " for ");
    else if (line.find("DNN v") != std::string_view::npos)
      info.onednn = onednn_version(line);
    else if (line.find("- OpenMP ") != std::string_view::npos)
      info.openmp = after(line, "- OpenMP ", " ");
    else if (line.find("CPU capability usage: ") != std::string_view::npos)
      info.cpu_capability = after(line, "CPU capability usage: ");
    else if (line.find("Build settings: ") != std::string_view::npos)
      info.build_settings = build_settings(after(line, "Build settings: "));
  }
  const auto setting = [&](const std::string& key) {
    const auto found = info.build_settings.find(key);
    return found == info.build_settings.end() ? std::string() : found->second;
  };
  info.blas = setting("BLAS_INFO");
  info.torch_git = setting("COMMIT_SHA");
  return info;
}

}  // namespace repro_audit
