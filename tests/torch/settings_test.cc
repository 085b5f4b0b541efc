#include <ATen/Context.h>
#include <ATen/Version.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

#include "apply/settings_apply.h"
#include "config/settings.h"

namespace repro_audit {
namespace {

TEST(Settings, ApplyingAFlagSetChangesLibtorchState) {
  apply_cell_settings(
      make_flag_set({{"deterministic_algorithms", "warn"}, {"fill_uninitialized_memory", "false"}}, "cuda"));
  auto state = read_back_settings();
  EXPECT_EQ(state.at("deterministic_algorithms"), "warn");
  EXPECT_TRUE(at::globalContext().deterministicAlgorithmsWarnOnly());
  EXPECT_EQ(state.at("fill_uninitialized_memory"), "false");

  apply_cell_settings(make_flag_set({{"deterministic_algorithms", "on"},
                                     {"cudnn_benchmark", "true"},
                                     {"cudnn_deterministic", "true"},
                                     {"cudnn_enabled", "false"},
                                     {"allow_tf32", "true"}},
                                    "cuda"));
  state = read_back_settings();
  EXPECT_EQ(state.at("deterministic_algorithms"), "on");
  EXPECT_EQ(state.at("cudnn_benchmark"), "true");
  EXPECT_EQ(state.at("cudnn_deterministic"), "true");
  EXPECT_EQ(state.at("cudnn_enabled"), "false");
  EXPECT_EQ(state.at("allow_tf32"), "true");

  apply_cell_settings(make_flag_set({}, "cuda"));
  state = read_back_settings();
  EXPECT_EQ(state.at("deterministic_algorithms"), "off");
  EXPECT_EQ(state.at("cudnn_enabled"), "true");
  EXPECT_EQ(state.at("allow_tf32"), "false");
}

TEST(Settings, ThreadsAreAProcessSetting) {
  apply_process_settings({{"threads", "1"}});
  EXPECT_EQ(read_back_settings().at("threads"), "1");
  apply_process_settings({{"threads", "2"}});
  EXPECT_EQ(read_back_settings().at("threads"), "2");
}

TEST(Settings, NotApplicableSettingsAreLeftAlone) {
  at::globalContext().setBenchmarkCuDNN(true);
  apply_cell_settings(make_flag_set({}, "cpu"));  // cudnn_benchmark is n/a on the CPU
  EXPECT_TRUE(at::globalContext().benchmarkCuDNN());
  at::globalContext().setBenchmarkCuDNN(false);
}

TEST(Settings, EverySettingHasAWayIntoTheWorker) {
  EXPECT_NO_THROW(check_setting_handlers());
  const auto state = read_back_settings();
  // The runner seeds every run, and a collective's runner starts its ranks: nothing to read back. torch.compile's
  // and Inductor's switches reach py cells only, set by the runner in the user's interpreter.
  for (const auto& spec : setting_specs())
    if (spec.name != "seed" && spec.name != "ranks" && !spec.py_cells_only)
      EXPECT_TRUE(state.count(spec.name)) << spec.name;
}

TEST(Settings, ACpuCapabilityTheProcessDoesNotRunSkipsItsCellsInsteadOfRunningAnother) {
  auto in_force = at::get_cpu_capability();  // this process runs one level, whatever the host
  std::transform(in_force.begin(), in_force.end(), in_force.begin(), [](unsigned char c) { return std::tolower(c); });
  EXPECT_EQ(unhonoured_process_setting({{"cpu_capability", in_force}}), "");
  EXPECT_EQ(unhonoured_process_setting({{"cpu_capability", "inherit"}}), "");
  EXPECT_EQ(unhonoured_process_setting({{"cpu_capability", "native"}}), "");
  EXPECT_EQ(unhonoured_process_setting({{"threads", "2"}}), "");
  for (const char* other : {"default", "avx2", "avx512"}) {
    if (in_force == other) continue;
    const auto reason = unhonoured_process_setting({{"cpu_capability", other}});
    EXPECT_NE(reason.find(std::string("cannot run ATen capability ") + other), std::string::npos) << reason;
  }
}

TEST(Settings, AnUnknownSettingIsAnErrorNotIgnored) {
  EXPECT_THROW(apply_cell_settings({{"cudnn_speed", "fast"}}), std::invalid_argument);
  EXPECT_THROW(apply_process_settings({{"thread", "2"}}), std::invalid_argument);
}

}  // namespace
}  // namespace repro_audit
