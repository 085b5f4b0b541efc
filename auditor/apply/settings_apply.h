#pragma once
// Applies flag sets to libtorch's global state in the worker.
#include "config/settings.h"

namespace repro_audit {

// Throws std::logic_error naming every setting of setting_specs() that has no way into libtorch (no
// row in settings_apply.cc's table and no environment variable), or a row no setting has. Called by
// apply_process_settings, so a worker refuses to start rather than silently ignore a setting.
void check_setting_handlers();
// Once at worker start: settings that need a fresh process (thread pool size).
void apply_process_settings(const FlagSet& settings);
// Before each cell: the in-process switches. Settings that are "n/a" are left alone; a setting that
// setting_specs() does not know throws std::invalid_argument.
void apply_cell_settings(const FlagSet& settings);
// What libtorch (and the environment) report back, keyed like FlagSet, so tests can check a setting
// took effect.
FlagSet read_back_settings();

// Why this process cannot run cells under its process settings as asked (a CPU capability the CPU
// lacks), or "" when it can. Call after the settings are applied.
std::string unhonoured_process_setting(const FlagSet& settings);

}  // namespace repro_audit
