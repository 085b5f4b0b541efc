// `list`, `env` and the internal `worker`, `rank`, `export-inputs` and `catalogue-source` subcommands.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/sensitivity_table.h"
#include "cli/torch_side.h"
#include "common/atomic_file.h"
#include "config/catalogue_json.h"
#include "supervisor/cpu_capacity.h"
#include "common/user_error.h"
#include "config/settings.h"
#include "fingerprint/fingerprint_text.h"
#include "probe/probe_catalogue.h"
#include "protocol/fork_rounds.h"
#include "worker/entry_points.h"
#include "worker/worker.h"

namespace repro_audit {

Command add_list_command(CLI::App& app) {
  auto* list =
      app.add_subcommand("list", "List probes with their variants and documented behaviour, profiles and settings");
  auto all = std::make_shared<bool>(false);
  list->add_flag("--all", *all, "Include the controls that are not in the default suite");
  auto sensitivity = std::make_shared<bool>(false);
  auto probes = std::make_shared<std::vector<std::string>>();
  list->add_flag("--sensitivity", *sensitivity,
                 "Measure each accumulating variant's sensitivity to the order of accumulation, on the CPU, and list "
                 "that instead (a few seconds per variant)");
  list->add_option("--probe", *probes, "With --sensitivity: only these probes (repeatable)")->needs("--sensitivity");
  return {list,
          [all, sensitivity, probes] {
            if (*sensitivity) {
              const auto catalogue = registered_catalogue();
              for (const auto& name : *probes)
                if (!find_probe(catalogue, name))
                  throw UserError(
                      fmt::format("--probe: no probe '{}'; valid: {}", name, fmt::join(probe_names(catalogue), ", ")));
              const std::uint64_t seed = 0;
              const auto measured = check_sensitivities(*probes, seed, usable_cores());
              return print_sensitivities(measured, seed, std::cout) == 0 ? 0 : 1;
            }
            std::cout << fmt::format(
                "Probes (documented behaviour per device, as {}; see torch.use_deterministic_algorithms):\n",
                registered_documentation().text());
            for (const auto& probe : registered_catalogue()) {
              if (!probe.in_default_suite && !*all) continue;
              std::vector<std::string> documented;
              for (const auto& [device, value] : probe.documented)
                documented.push_back(device + ": " + to_string(value));
              const auto kind =
                  probe.invariance == Invariance::none
                      ? std::string()
                      : fmt::format(" [invariance probe: {}; run with --kind invariance]", to_string(probe.invariance));
              std::cout << fmt::format("  {}{}{} - {}\n", probe.name, kind,
                                       probe.in_default_suite ? "" : " (not in the default suite)", probe.description);
              if (!documented.empty()) std::cout << fmt::format("    documented: {}\n", fmt::join(documented, ", "));
              for (const auto& older : probe.documented_before)
                std::cout << fmt::format("    documented before torch {}: {}: {} ({})\n", older.until,
                                         older.device_kind, to_string(older.documented), older.source);
              if (!probe.python.code.empty())
                std::cout << fmt::format(
                    "    python: yes, `repro` exports it{}\n",
                    probe.python.differs_reason.empty() ? "" : " (verdicts only: " + probe.python.differs_reason + ")");
              else
                std::cout << fmt::format("    python: none ({})\n", probe.python.none_reason);
              for (const auto& path : probe.python.paths) std::cout << fmt::format("    python path: {}\n", path.note);
              if (probe.control_expects)
                std::cout << fmt::format("    control: selftest expects '{}'\n", to_string(*probe.control_expects));
              if (probe.accumulation.checked())
                std::cout << fmt::format(
                    "    accumulates: '{}' is a sum linear in '{}'; its sensitivity to the order is checked "
                    "(list --sensitivity), floor {:.0f}% of its elements\n",
                    probe.accumulation.output, probe.accumulation.operand, 100.0 * probe.accumulation.floor);
              else if (!probe.accumulation.unchecked.empty())
                std::cout << fmt::format("    accumulates: order sensitivity not checked: {}\n",
                                         probe.accumulation.unchecked);
              for (const auto& variant : probe.variants) {
                std::vector<std::string> own;
                for (const auto& [device, value] : variant.documented) own.push_back(device + ": " + to_string(value));
                std::cout << fmt::format("    {:<22} {} [{}]{}{}\n", variant.name, variant.description,
                                         fmt::join(variant.devices, ", "), own.empty() ? "" : " documented ",
                                         fmt::join(own, ", "));
                for (const auto& older : variant.documented_before)
                  std::cout << fmt::format("    {:<22} documented before torch {}: {}: {} ({})\n", "", older.until,
                                           older.device_kind, to_string(older.documented), older.source);
                if (variant.default_suite_nowhere)
                  std::cout << fmt::format("    {:<22} in no default suite: {}\n", "", variant.default_suite_reason);
                else if (!variant.default_suite_devices.empty())
                  std::cout << fmt::format("    {:<22} default suite on {} only: {}\n", "",
                                           fmt::join(variant.default_suite_devices, ", "),
                                           variant.default_suite_reason);
              }
            }
            std::cout << "\nProfiles:\n";
            for (const auto& [name, flags] : profiles()) {
              std::vector<std::string> parts;
              for (const auto& [setting, value] : flags) parts.push_back(setting + "=" + value);
              std::cout << fmt::format("  {:<12} {}\n", name,
                                       parts.empty() ? "the defaults" : fmt::format("{}", fmt::join(parts, " ")));
            }
            std::cout << "\nSettings:\n";
            for (const auto& spec : setting_specs())
              std::cout << fmt::format("  {:<26} {} (default {}; {}; {}) {}\n", spec.name, describe_values(spec),
                                       spec.default_value,
                                       spec.scope == SettingScope::process ? "per process" : "in process",
                                       spec.on_cpu && spec.on_cuda ? "cpu, cuda"
                                       : spec.on_cuda              ? "cuda"
                                                                   : "cpu",
                                       spec.help);
            return 0;
          },
          [sensitivity] { return *sensitivity; }};  // the measurements need libtorch; the catalogue is built in
}

Command add_env_command(CLI::App& app) {
  auto* env = app.add_subcommand("env", "Print the environment fingerprint as JSON");
  auto text = std::make_shared<bool>(false);
  env->add_flag("--text", *text, "One line per field instead: label, value, and where it came from");
  return {env, [text] {
            const auto fingerprint = command_fingerprint();
            std::cout << (*text ? fingerprint_text(fingerprint)
                                : fingerprint.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
            return 0;
          }};
}

Command add_worker_command(CLI::App& app) {
  auto* worker = app.add_subcommand("worker", "Internal: run a batch of cells read from stdin");
  worker->group("");  // hidden from --help
  return {worker, [] { return worker_main(); }};
}

Command add_fork_client_command(CLI::App& app) {
  auto* command = app.add_subcommand("fork-client",
                                     "Internal: a later timing round's worker, run by a process its fork server forks");
  command->group("");                                                         // hidden from --help
  return {command, [] { return fork_client_main(); }, [] { return false; }};  // runs in the front end
}

Command add_rank_command(CLI::App& app) {
  auto* rank =
      app.add_subcommand("rank", "Internal: one of the other ranks of a collective cell, its request on stdin");
  rank->group("");  // hidden from --help
  return {rank, [] { return rank_main(); }};
}

Command add_export_inputs_command(CLI::App& app) {
  auto* command = app.add_subcommand("export-inputs", "Internal: save the inputs of cells read from stdin");
  command->group("");  // hidden from --help
  return {command, [] { return export_inputs_main(); }};
}

Command add_catalogue_source_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "catalogue-source", "Internal: write the probe catalogue as the C++ source the front end is built with");
  command->group("");  // hidden from --help
  auto path = std::make_shared<std::string>();
  command->add_option("FILE", *path, "The C++ file to write (left as it is when it already holds this catalogue)")
      ->required();
  return {
      command, [path] {
        const auto json = catalogue_to_json({registered_catalogue(), registered_documentation()}).dump();
        // A JSON string ending in ")catalogue" would end the raw string early: refused (none does).
        if (json.find(")catalogue\"") != std::string::npos)
          throw std::logic_error("the catalogue's JSON holds the source's raw-string delimiter");
        const auto source = fmt::format(
            "// Written at build time by `repro-audit-torch catalogue-source`: the probe catalogue for the front\n"
            "// end (cli/embedded_catalogue.h).\n"
            "#include \"cli/embedded_catalogue.h\"\n\n"
            "namespace repro_audit {{\n\nconst char* const kEmbeddedCatalogue = R\"catalogue({})catalogue\";\n\n}}\n",
            json);
        std::error_code error;
        if (std::filesystem::file_size(*path, error) == source.size() && !error) {
          std::ifstream file(*path, std::ios::binary);
          const std::string held((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
          if (held == source) return 0;
        }
        write_file_atomically(*path, source);
        return 0;
      }};
}

}  // namespace repro_audit
