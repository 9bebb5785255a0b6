// A `cadclip serve` process on a free port of 127.0.0.1 for the serve tests,
// and raw socket requests to it.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace cadclip::serve::testing {

// One `cadclip serve` process; its stderr (the log) goes to `log_file` when given.
class Server {
 public:
  void start(const std::vector<std::string>& args, const std::string& log_file = "") {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    if (!log_file.empty())
      posix_spawn_file_actions_addopen(&actions, 2, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
    std::vector<char*> argv;
    std::vector<std::string> all = {CADCLIP_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, CADCLIP_BINARY, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    std::FILE* out = ::fdopen(pipe_fds[0], "r");
    char line[512] = {0};
    ASSERT_NE(std::fgets(line, sizeof line, out), nullptr) << "the server did not start";
    std::fclose(out);
    const std::string text = line;
    const size_t colon = text.rfind(':');
    port_ = std::stoi(text.substr(colon + 1));
    ASSERT_GT(port_, 0) << text;
  }
  // SIGTERM, then up to `seconds` for the server to exit; one that does not
  // is a failure (and is killed), never a test that hangs until ctest's limit.
  void stop(double seconds = 20) {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int waited_ms = 0; ::waitpid(pid_, &status, WNOHANG) == 0; waited_ms += 10) {
      if (waited_ms >= seconds * 1000) {
        ADD_FAILURE() << "the server (pid " << pid_ << ") did not exit within " << seconds
                      << " s of SIGTERM";
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      ::usleep(10000);
    }
    pid_ = -1;
  }
  bool alive() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// A connected socket to 127.0.0.1:`port`, or -1.
inline int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends raw bytes and returns the whole answer (the server closes after it).
inline std::string raw(int port, const std::string& request) {
  const int fd = connect_to(port);
  if (fd < 0) return "";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) answer.append(buffer, n);
  ::close(fd);
  return answer;
}

// Sends `request` and reads the answer until the server closes or `seconds`
// pass; the write side stays open (as a client waiting for its answer keeps it).
inline std::string raw_waiting(int port, const std::string& request, double seconds) {
  const int fd = connect_to(port);
  if (fd < 0) return "";
  timeval timeout{static_cast<time_t>(seconds),
                  static_cast<suseconds_t>((seconds - static_cast<time_t>(seconds)) * 1e6)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) answer.append(buffer, n);
  ::close(fd);
  return answer;
}

// The status code of a raw HTTP answer ("HTTP/1.1 413 ..."), 0 when there is none.
inline int status_of(const std::string& answer) {
  if (!answer.starts_with("HTTP/1.")) return 0;
  return std::atoi(answer.c_str() + answer.find(' ') + 1);
}

// The body of a raw HTTP answer.
inline std::string body_of(const std::string& answer) {
  const size_t end = answer.find("\r\n\r\n");
  return end == std::string::npos ? "" : answer.substr(end + 4);
}

}  // namespace cadclip::serve::testing
