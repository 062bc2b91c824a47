#include "process.hpp"

#include "llmbench/core/file.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace llmbench::e2e {

Process::Process(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw std::runtime_error("posix_spawn failed for " + argv[0]);
  }
}

Process::~Process() {
  if (running()) {
    signal(SIGTERM);
    if (wait(std::chrono::milliseconds(3000)) == -1) {
      signal(SIGKILL);
      wait(std::chrono::milliseconds(3000));
    }
  }
}

bool Process::running() {
  if (pid_ <= 0 || status_ != -1) {
    return false;
  }
  int st = 0;
  const pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

int Process::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status_;
}

void Process::signal(int sig) {
  if (pid_ > 0 && status_ == -1) {
    ::kill(pid_, sig);
  }
}

std::string binary() {
  return std::string(LLMBENCH_TEST_BINARY_DIR) + "/llmbench";
}

std::string read_file(const std::string& path) {
  auto text = llmbench::read_file(path);
  return text ? std::move(*text) : std::string();
}

int wait_for_port_file(const std::string& path, Process& server,
                       std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = read_file(path);
    if (!text.empty() && text.back() == '\n') {
      return std::stoi(text);
    }
    if (!server.running()) {
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

std::string fetch_text(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[65536];
      ssize_t n = 0;
      while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
        response.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  const auto body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

namespace {

std::vector<std::string> serve_argv(const std::filesystem::path& dir,
                                    const std::vector<std::string>& args) {
  std::vector<std::string> argv{binary(), "serve",       "--port",
                                "0",      "--port-file", (dir / "port").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

ServeProcess::ServeProcess(const std::filesystem::path& dir, const std::vector<std::string>& args)
    : dir_(dir), process_(serve_argv(dir, args), (dir / "server.log").string()) {
  port_ = wait_for_port_file((dir_ / "port").string(), process_, std::chrono::seconds(20));
}

std::string ServeProcess::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

std::string ServeProcess::log() const {
  return read_file((dir_ / "server.log").string());
}

void ScratchDirTest::SetUp() {
  dir_ = std::filesystem::temp_directory_path() /
         ("llmbench-" + prefix_ + "-" + std::to_string(::getpid()) + "-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

int ScratchDirTest::llmbench(const std::vector<std::string>& args, std::string& out) {
  std::vector<std::string> argv{binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string path = (dir_ / ("cmd" + std::to_string(++commands_) + ".log")).string();
  int code = -1;
  {
    Process p(argv, path);
    code = p.wait(std::chrono::seconds(120));
  }
  out = read_file(path);
  return code;
}

void ScratchDirTest::TearDown() {
  if (!HasFailure())
    std::filesystem::remove_all(dir_);
}

}  // namespace llmbench::e2e
