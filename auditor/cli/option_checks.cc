#include "cli/option_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/byte_size.h"
#include "common/user_error.h"
#include "common/input_file.h"
#include "config/settings.h"

namespace repro_audit {
namespace {

std::string name_of(const CLI::Option& option) {
  const auto name = option.get_name(false, true);
  return name.empty() ? option.get_name() : name;
}

}  // namespace

CLI::Validator byte_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto refused = fmt::format("{}: give a size in bytes from 1 to 2^64 - 1, e.g. 512M or 16G", text);
        if (text.find('-') != std::string::npos) return refused;
        std::string digits = text;
        if (const auto problem = CLI::AsSizeValue(false)(digits); !problem.empty()) return refused;
        if (!parse_byte_count(digits)) return refused;
        text = digits;
        return "";
      },
      "SIZE");
}

CLI::Validator input_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        const auto problem = input_file_problem(path);
        return problem.empty() ? "" : fmt::format("{} {}", path, problem);
      },
      "FILE");
}

std::string empty_option_problem(const CLI::App& app) {
  for (const auto* option : app.get_options()) {
    if (option->count() == 0 || option->get_expected_min() == 0) continue;  // not given, or a flag
    for (const auto& value : option->results()) {
      if (!option->nonpositional()) continue;
      // No option of this tool takes NaN or infinity; a range check lets NaN through (every
      // comparison with it is false), so a time limit "nan" would mean none.
      char* end = nullptr;
      const double number = std::strtod(value.c_str(), &end);
      if (!value.empty() && end == value.c_str() + value.size() && !std::isfinite(number))
        return fmt::format("{} {}: give a finite number", name_of(*option), value);
    }
    for (const auto& value : option->results())
      if (value.empty())
        return fmt::format("{}: an empty value names nothing; give a value or leave the option out", name_of(*option));
  }
  for (const auto* subcommand : app.get_subcommands())
    if (const auto problem = empty_option_problem(*subcommand); !problem.empty()) return problem;
  return "";
}

void check_py_only_axes(const Config& config, const std::string& command, const std::set<std::string>& given) {
  const bool python = command == "py" || std::any_of(config.models.begin(), config.models.end(),
                                                     [](const ModelSpec& model) { return is_python_model(model); });
  if (python) return;
  for (const auto& [name, values] : config.axes)
    if (const auto* spec = find_setting(name); spec && spec->py_cells_only)
      throw UserError(fmt::format(
          "{} {}: {} is a setting of py cells only (`repro-audit py`), and this {} audit has "
          "none: no cell would take it",
          given.count(name) ? "--axis" : "the config's axis", name, name, command.empty() ? "run" : command));
}

}  // namespace repro_audit
