// `selftest`: runs the control probes and says plainly whether the auditor can be trusted here.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/local_audit.h"
#include "cli/commands.h"
#include "cli/interruption.h"
#include "cli/output_paths.h"
#include "config/atomic_file.h"
#include "report/json_io.h"
#include "worker/probe.h"

namespace repro_audit {

Command add_selftest_command(CLI::App& app) {
  auto* selftest = app.add_subcommand("selftest", "Run the control probes: can this machine's audits be trusted?");
  auto device = std::make_shared<std::string>("auto");
  auto json_path = std::make_shared<std::string>();
  selftest->add_option("--device", *device, "auto | cpu | cuda | cuda:N");
  selftest->add_option("--json", *json_path, "Write the selftest's report as JSON");
  return {selftest, [device, json_path] {
            const auto catalogue = registered_catalogue();
            Config config;
            config.device = *device;
            validate_device(config.device, "--device");
            config.profiles = {"default", "strict"};
            config.axes = {{"threads", {"2"}}};
            for (const auto& probe : catalogue)
              if (probe.control_expects) config.probes.push_back({probe.name, {}});
            check_outputs({{"--json", *json_path}}, {});
            AuditOptions options = local_audit_options();
            options.stop_requested = stop_requested;
            install_stop_handlers();
            const auto result = run_audit(config, catalogue, options);
            const auto& report = result.report;
            if (!report.complete) {
              std::error_code ignored;  // a selftest is quick to run again; its partial journal is no use
              std::filesystem::remove_all(result.journal, ignored);
              std::cerr << "interrupted: the selftest did not finish\n";
              return 130;
            }
            remove_finished_journal(result);
            if (!json_path->empty()) write_file_atomically(*json_path, report_to_json(report).dump(2) + "\n");
            int failures = 0;
            std::cout << fmt::format("{:<34} {:<22} {:<18} {:<18}{}\n", "control", "flag set", "expected", "observed",
                                     "detail");
            for (const auto& cell : report.cells) {
              const auto expected = *find_probe(catalogue, cell.cell.probe)->control_expects;
              const bool ok = cell.verdict.kind == expected;
              failures += ok ? 0 : 1;
              auto detail = cell.verdict.message.substr(0, cell.verdict.message.find(';'));
              if (detail.size() > 60) detail = detail.substr(0, 57) + "...";
              std::cout << fmt::format("{:<34} {:<22} {:<18} {:<18}{}{}\n", cell.cell.probe + "/" + cell.cell.variant,
                                       cell.cell.label, to_string(expected), to_string(cell.verdict.kind),
                                       ok ? "" : "<- WRONG ", detail);
            }
            if (failures == 0) {
              std::cout << fmt::format(
                  "\nselftest passed: every control gave its expected verdict on {}; "
                  "this machine's audits can be trusted.\n",
                  report.device);
              return 0;
            }
            std::cout << fmt::format(
                "\nselftest FAILED: {} control cell(s) gave the wrong verdict on {}; "
                "do not trust this machine's audits until that is explained.\n",
                failures, report.device);
            return 1;
          }};
}

}  // namespace repro_audit
