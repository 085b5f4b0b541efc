#pragma once
// Applies flag sets to libtorch's global state in the worker.
#include "config/settings.h"

namespace repro_audit {

// Once at worker start: settings that need a fresh process (thread pool size).
void apply_process_settings(const FlagSet& settings);
// Before each cell: the in-process switches. Settings that are "n/a" are left alone.
void apply_cell_settings(const FlagSet& settings);
// What libtorch reports back, keyed like FlagSet, so tests can check a setting took effect.
FlagSet read_back_settings();

}  // namespace repro_audit
