#pragma once
// Checks on parsed command lines that hold for every subcommand.
#include <CLI/CLI.hpp>

#include <string>

namespace repro_audit {

// What is wrong with the first option of the chosen subcommands given an empty string (`--json ''`
// would otherwise write nowhere and say nothing) or a NaN or infinity; "" when nothing is.
std::string empty_option_problem(const CLI::App& app);

}  // namespace repro_audit
