#pragma once
// Checks on parsed command lines that hold for every subcommand.
#include <CLI/CLI.hpp>

#include <set>
#include <string>

#include "config/config.h"

namespace repro_audit {

// What is wrong with the first option of the chosen subcommands given an empty string (`--json ''`
// would otherwise write nowhere and say nothing) or a NaN or infinity; "" when nothing is.
std::string empty_option_problem(const CLI::App& app);

// For a bound in bytes ("512M", "16G", "1073741824"): CLI11's size units, then a count from 1 to
// 2^64 - 1. A sign, zero or a count past 2^64 - 1 is refused, never wrapped into "no bound".
CLI::Validator byte_count();

// For a file the command reads: a regular file (common/input_file.h says what else it is), checked
// without opening it. CLI11's ExistingFile says "does not exist" of a FIFO and lets /dev/zero through.
CLI::Validator input_file();

// A py-only setting (config/settings.h) among the axes of an audit of `command` with no Python callable
// is a UserError naming it: no cell would take it, and its columns would be left out in silence.
// `given`: the axes the command line named (the others came from a config).
void check_py_only_axes(const Config& config, const std::string& command, const std::set<std::string>& given);

}  // namespace repro_audit
