#include "protocol/fork_rounds.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/worker_protocol.h"

extern char** environ;

namespace repro_audit {
namespace {

constexpr std::size_t kMessageLimit = 1 << 20;  // an environment is kilobytes

void say(const nlohmann::json& line) {
  const auto text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  (void)!::write(STDOUT_FILENO, text.data(), text.size());
}

bool socket_address(const std::string& path, sockaddr_un& address) {
  address = {};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return false;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return true;
}

// The rest of a connection's message, up to the peer's end of writing.
bool read_to_end(int connection, std::string& message) {
  char buffer[1 << 16];
  while (message.size() < kMessageLimit) {
    const auto got = ::recv(connection, buffer, sizeof buffer, 0);
    if (got == 0) return true;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    message.append(buffer, static_cast<std::size_t>(got));
  }
  return false;
}

// One request: the peer's descriptors (three, or none) and its message.
struct Asked {
  std::vector<int> descriptors;
  std::map<std::string, std::string> environment;
  pid_t group = 0;
};

bool receive(int connection, Asked& asked) {
  char buffer[1 << 16];
  alignas(cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))];
  iovec part{buffer, sizeof buffer};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  ssize_t got;
  do got = ::recvmsg(connection, &header, MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  if (got < 0) return false;
  for (auto* entry = CMSG_FIRSTHDR(&header); entry; entry = CMSG_NXTHDR(&header, entry))
    if (entry->cmsg_level == SOL_SOCKET && entry->cmsg_type == SCM_RIGHTS) {
      const auto count = (entry->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int descriptor;
        std::memcpy(&descriptor, CMSG_DATA(entry) + i * sizeof(int), sizeof(int));
        asked.descriptors.push_back(descriptor);
      }
    }
  std::string message(buffer, static_cast<std::size_t>(got));
  if (asked.descriptors.size() != 3 || (header.msg_flags & MSG_CTRUNC) || !read_to_end(connection, message))
    return false;
  try {
    const auto json = nlohmann::json::parse(message);
    asked.environment = json.at("environment").get<std::map<std::string, std::string>>();
    asked.group = json.at("group").get<pid_t>();
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  return asked.group > 0;
}

// In the forked process: the worker's group, streams and environment.
void become_worker(const Asked& asked, pid_t server) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the server, which dies with the supervisor
  if (::getppid() != server) ::_exit(3);
  ::setpgid(0, asked.group);  // ending the round's worker's group ends this process
  for (int target = 0; target < 3; ++target) ::dup2(asked.descriptors[target], target);
  for (const int descriptor : asked.descriptors)
    if (descriptor > 2) ::close(descriptor);
  ::clearenv();
  for (const auto& [name, value] : asked.environment) ::setenv(name.c_str(), value.c_str(), 1);
}

}  // namespace

bool serve_forks() {
  const char* serve = std::getenv(kForkServe);
  if (serve == nullptr || std::string(serve) != "1") return false;
  ::unsetenv(kForkServe);
  const char* folder = std::getenv("TMPDIR");
  const auto path = std::string(folder && *folder ? folder : "/tmp") + "/" + kForkSocketName;
  sockaddr_un address;
  const int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0 || !socket_address(path, address) ||
      ::bind(server, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(server, 8) != 0) {
    say({{"event", "loaded"}, {"fork_error", "no socket at " + path + ": " + std::strerror(errno)}});
    ::_exit(0);
  }
  say({{"event", "loaded"}, {"fork_socket", path}});
  const pid_t me = ::getpid();
  while (true) {
    const int connection = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;  // EINTR, or a peer gone before it was accepted
    ucred peer{};
    socklen_t size = sizeof peer;
    Asked asked;
    const bool served = ::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
                        peer.uid == ::getuid() && receive(connection, asked);
    const pid_t child = served ? ::fork() : -1;
    if (child == 0) {
      ::close(server);
      ::close(connection);
      become_worker(asked, me);
      return true;
    }
    for (const int descriptor : asked.descriptors) ::close(descriptor);
    if (child > 0) {  // not forked: the client hears no status and says the server could not serve it
      int status = 0;
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      const auto reply = nlohmann::json{{"status", status}}.dump();
      (void)!::send(connection, reply.data(), reply.size(), MSG_NOSIGNAL);  // gone: its group was ended
    }
    ::close(connection);
  }
}

int fork_client_main() {
  const char* named = std::getenv(kForkClient);
  const std::string path = named ? named : "";
  ::unsetenv(kForkClient);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // as every worker: ends with its supervisor
  std::map<std::string, std::string> environment;
  for (char** entry = environ; *entry; ++entry) {
    const std::string variable = *entry;
    const auto equals = variable.find('=');
    if (equals != std::string::npos) environment[variable.substr(0, equals)] = variable.substr(equals + 1);
  }
  const auto message = nlohmann::json{{"environment", environment}, {"group", ::getpgrp()}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  sockaddr_un address;
  const int connection = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connection < 0 || !socket_address(path, address) ||
      ::connect(connection, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    std::fprintf(stderr, "repro-audit: cannot reach the fork server at %s: %s\n", path.c_str(), std::strerror(errno));
    return 70;
  }
  const int descriptors[3] = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof descriptors)] = {};
  iovec part{const_cast<char*>(message.data()), message.size()};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  auto* entry = CMSG_FIRSTHDR(&header);
  entry->cmsg_level = SOL_SOCKET;
  entry->cmsg_type = SCM_RIGHTS;
  entry->cmsg_len = CMSG_LEN(sizeof descriptors);
  std::memcpy(CMSG_DATA(entry), descriptors, sizeof descriptors);
  ssize_t sent;
  do sent = ::sendmsg(connection, &header, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  std::size_t done = sent > 0 ? static_cast<std::size_t>(sent) : 0;
  while (sent > 0 && done < message.size()) {
    sent = ::send(connection, message.data() + done, message.size() - done, MSG_NOSIGNAL);
    if (sent > 0) done += static_cast<std::size_t>(sent);
    if (sent < 0 && errno == EINTR) sent = 1;
  }
  ::shutdown(connection, SHUT_WR);
  std::string reply;
  int status = -1;
  if (done == message.size() && read_to_end(connection, reply)) {
    try {
      status = nlohmann::json::parse(reply).at("status").get<int>();
    } catch (const nlohmann::json::exception&) {
    }
  }
  if (status < 0) {
    std::fprintf(stderr, "repro-audit: the fork server ended before the process it forked for this worker\n");
    return 70;
  }
  if (WIFSIGNALED(status)) {  // ends as the forked process did: the supervisor reads the same signal
    const rlimit none{0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
    ::signal(WTERMSIG(status), SIG_DFL);
    ::kill(::getpid(), WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 70;
}

}  // namespace repro_audit
