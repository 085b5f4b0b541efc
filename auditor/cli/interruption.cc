#include "cli/interruption.h"

#include <signal.h>

#include <atomic>

namespace repro_audit {
namespace {

std::atomic<bool> interrupted{false};

void request_stop(int) { interrupted.store(true); }

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-./:=@%+,") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

// No SA_RESTART, so a waiting poll() returns at once.
void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  // SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM end a process as SIGTERM does: by default without the cleanup
  // of its workers' folders and journal, so here they stop it the same way.
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM}) sigaction(signal, &action, nullptr);
}

bool stop_requested() { return interrupted.load(); }

std::string resume_command(const std::vector<std::string>& words) {
  std::string command;
  for (const auto& word : words) command += (command.empty() ? "" : " ") + shell_quote(word);
  return command;
}

}  // namespace repro_audit
