#pragma once
// Ctrl-C, TERM and HUP (a closed terminal) ask the audit to stop: no new cell starts, the workers
// end, what finished is kept, and the user is told how to resume.
#include <string>
#include <vector>

namespace repro_audit {

void install_stop_handlers();
bool stop_requested();

// "repro-audit run --resume DIR --json r.json ...": every word shell-quoted where needed.
std::string resume_command(const std::vector<std::string>& words);

}  // namespace repro_audit
