#include "llmbench/app/server_process.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/http/client.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace llmbench::app {

namespace {

[[noreturn]] void fail(std::string message, std::string_view source, std::size_t offset) {
  throw Exception(
      Error{std::move(message), std::string(source), static_cast<std::int64_t>(offset)});
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

/// Splits templates (see `CommandTemplate`); one instance per call.
class Splitter {
 public:
  Splitter(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  std::vector<std::vector<CommandTemplate::Piece>> split() {
    std::size_t i = 0;
    while (i < text_.size()) {
      if (blank(text_[i])) {
        end_word();
        ++i;
        continue;
      }
      in_word_ = true;
      const char c = text_[i];
      if (c == '\'') {
        const std::size_t close = text_.find('\'', i + 1);
        if (close == std::string_view::npos)
          fail("unclosed ' quote", source_, i);
        for (std::size_t k = i + 1; k < close; k = brace_or_char(k, close)) {
        }
        i = close + 1;
      } else if (c == '"') {
        std::size_t k = i + 1;
        while (k < text_.size() && text_[k] != '"') {
          if (text_[k] == '\\' && k + 1 < text_.size() &&
              std::string_view("\"\\$`").find(text_[k + 1]) != std::string_view::npos) {
            literal(text_[k + 1], k + 1);
            k += 2;
          } else {
            k = brace_or_char(k, text_.size());
          }
        }
        if (k >= text_.size())
          fail("unclosed \" quote", source_, i);
        i = k + 1;
      } else if (c == '\\') {
        if (i + 1 >= text_.size())
          fail("a backslash at the end", source_, i);
        literal(text_[i + 1], i + 1);
        i += 2;
      } else {
        i = brace_or_char(i, text_.size());
      }
    }
    end_word();
    if (words_.empty())
      fail("the command is empty", source_, 0);
    return std::move(words_);
  }

 private:
  /// Reads one character or `{name}` / `{{` / `}}` at `k` (before `end`); returns the next index.
  std::size_t brace_or_char(std::size_t k, std::size_t end) {
    const char c = text_[k];
    if (c == '{' && k + 1 < end && text_[k + 1] == '{') {
      literal('{', k);
      return k + 2;
    }
    if (c == '}' && k + 1 < end && text_[k + 1] == '}') {
      literal('}', k);
      return k + 2;
    }
    if (c == '}')
      fail("a lone '}' (write }} for a literal brace)", source_, k);
    if (c != '{') {
      literal(c, k);
      return k + 1;
    }
    const std::size_t close = text_.find('}', k + 1);
    if (close == std::string_view::npos || close >= end)
      fail("an unclosed '{' (write {{ for a literal brace)", source_, k);
    const std::string_view name = text_.substr(k + 1, close - k - 1);
    if (name.empty() || !std::all_of(name.begin(), name.end(), name_char))
      fail(fmt::format("'{{{}}}' is not a placeholder name (letters, digits, _ and -)", name),
           source_, k);
    piece_.push_back({.placeholder = true, .text = std::string(name), .offset = k});
    return close + 1;
  }

  void literal(char c, std::size_t offset) {
    if (piece_.empty() || piece_.back().placeholder)
      piece_.push_back({.placeholder = false, .text = {}, .offset = offset});
    piece_.back().text += c;
  }

  void end_word() {
    if (in_word_) {
      if (piece_.empty())
        piece_.push_back({.placeholder = false, .text = {}, .offset = 0});  // '' is a word
      words_.push_back(std::move(piece_));
      piece_.clear();
    }
    in_word_ = false;
  }

  std::string_view text_;
  std::string_view source_;
  std::vector<std::vector<CommandTemplate::Piece>> words_;
  std::vector<CommandTemplate::Piece> piece_;
  bool in_word_ = false;
};

bool shell_plain(const std::string& word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return name_char(c) || std::string_view("./:=,+@%").find(c) != std::string_view::npos;
  });
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGINT:
      return "SIGINT";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGHUP:
      return "SIGHUP";
    case SIGBUS:
      return "SIGBUS";
    default:
      return "";
  }
}

}  // namespace

CommandTemplate parse_command_template(std::string_view text, std::string_view source) {
  return CommandTemplate{.text = std::string(text), .words = Splitter(text, source).split()};
}

std::vector<std::string> placeholder_names(const CommandTemplate& command) {
  std::vector<std::string> out;
  for (const auto& word : command.words) {
    for (const auto& piece : word) {
      if (piece.placeholder && std::find(out.begin(), out.end(), piece.text) == out.end())
        out.push_back(piece.text);
    }
  }
  return out;
}

void check_placeholders(const CommandTemplate& command, const std::vector<std::string>& known,
                        std::string_view source) {
  for (const auto& word : command.words) {
    for (const auto& piece : word) {
      if (piece.placeholder && std::find(known.begin(), known.end(), piece.text) == known.end()) {
        fail(fmt::format("unknown placeholder {{{}}} in '{}' (known: {})", piece.text, command.text,
                         fmt::join(known, ", ")),
             source, piece.offset);
      }
    }
  }
}

std::vector<std::string> fill_command(const CommandTemplate& command,
                                      const std::map<std::string, std::string>& values) {
  std::vector<std::string> argv;
  argv.reserve(command.words.size());
  for (const auto& word : command.words) {
    std::string arg;
    for (const auto& piece : word) {
      if (!piece.placeholder) {
        arg += piece.text;
        continue;
      }
      const auto it = values.find(piece.text);
      if (it == values.end())
        fail(fmt::format("placeholder {{{}}} has no value", piece.text), "--serve-cmd",
             piece.offset);
      arg += it->second;
    }
    argv.push_back(std::move(arg));
  }
  return argv;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) {
    if (!out.empty())
      out += ' ';
    if (shell_plain(word)) {
      out += word;
      continue;
    }
    out += '\'';
    for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status))
    return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = signal_name(sig);
    return *name != '\0' ? fmt::format("killed by signal {} ({})", sig, name)
                         : fmt::format("killed by signal {}", sig);
  }
  return fmt::format("wait status {}", status);
}

std::vector<pid_t> live_group_members(pid_t pgid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat))
      continue;  // it ended meanwhile
    // "pid (comm) state ppid pgrp ...": comm may hold blanks and ')', so read after the last ')'.
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos)
      continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    long ppid = 0;
    long pgrp = 0;
    if (!(rest >> state >> ppid >> pgrp) || pgrp != pgid || state == 'Z' || state == 'X')
      continue;
    out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

std::string_view to_string(ReadyOutcome outcome) noexcept {
  switch (outcome) {
    case ReadyOutcome::Ready:
      return "ready";
    case ReadyOutcome::Exited:
      return "exited";
    case ReadyOutcome::TimedOut:
      return "timed_out";
    case ReadyOutcome::Stopped:
      return "stopped";
  }
  return "ready";
}

ServerProcess::ServerProcess(ServerLaunch launch) : launch_(std::move(launch)) {
  if (launch_.argv.empty() || launch_.argv[0].empty())
    throw Exception(Error{"the server command is empty", "--serve-cmd", -1});
  if (!launch_.log_path.parent_path().empty())
    std::filesystem::create_directories(launch_.log_path.parent_path());
  const std::string log = launch_.log_path.string();
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // Its own session and process group: a terminal's Ctrl-C reaches llmbench only, and llmbench
  // stops the whole group (a wrapper script's children included) with one kill(-pgid).
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  std::vector<char*> args;
  args.reserve(launch_.argv.size() + 1);
  for (auto& a : launch_.argv) args.push_back(a.data());
  args.push_back(nullptr);
  started_ = std::chrono::steady_clock::now();
  const int rc = posix_spawnp(&pid_, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pid_ = -1;
    throw Exception(Error{
        fmt::format("cannot start '{}': {} (log {})", launch_.argv[0], std::strerror(rc), log),
        "--serve-cmd", -1});
  }
  StopSignals::watch_process_group(pid_);
}

ServerProcess::~ServerProcess() {
  try {
    stop();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

bool ServerProcess::reap(bool block) {
  if (status_)
    return true;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid_, &status, block ? 0 : WNOHANG);
    if (r == pid_) {
      status_ = status;
      return true;
    }
    if (r == -1 && errno == EINTR)
      continue;
    return false;
  }
}

bool ServerProcess::group_alive() const {
  return pid_ > 0 && kill(-pid_, 0) == 0 && !live_group_members(pid_).empty();
}

std::optional<std::string> ServerProcess::exited() {
  if (pid_ <= 0 || !reap(false))
    return std::nullopt;
  return describe_wait_status(*status_);
}

ReadyResult ServerProcess::wait_ready(const std::atomic<bool>* stop) {
  const auto deadline = started_ + launch_.ready_timeout;
  const auto since = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  };
  const std::string prefix = launch_.url.path_prefix;
  bool health = false;
  std::string last = "no answer yet";
  for (;;) {
    if (const auto how = exited()) {
      return {.outcome = ReadyOutcome::Exited,
              .seconds = since(),
              .message =
                  fmt::format("the server {} after {:.1f} s, before it was ready", *how, since())};
    }
    if (stop != nullptr && stop->load())
      return {.outcome = ReadyOutcome::Stopped,
              .seconds = since(),
              .message = "stopped by a signal before the server was ready"};
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return {.outcome = ReadyOutcome::TimedOut,
              .seconds = since(),
              .message = fmt::format("the server was not ready after {:.1f} s (last answer: {})",
                                     since(), last)};
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    const auto timeout =
        std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(2000));
    const std::string path = prefix + (health ? "/v1/models" : "/health");
    try {
      const auto [status, body] =
          http::fetch_blocking(launch_.url, path, http::ClientOptions{}, timeout);
      last = fmt::format("GET {} -> {}", path, status);
      if (status == 200) {
        if (health)
          return {.outcome = ReadyOutcome::Ready, .seconds = since(), .message = {}};
        health = true;
        continue;
      }
    } catch (const Exception& e) {
      last = fmt::format("GET {}: {}", path, e.what());
    }
    std::this_thread::sleep_for(launch_.poll);
  }
}

std::string ServerProcess::stop() {
  if (stopped_)
    return *stopped_;
  if (pid_ <= 0)
    return "not started";
  if (!reap(false) || group_alive()) {
    kill(-pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + launch_.grace;
    while (std::chrono::steady_clock::now() < deadline) {
      reap(false);
      if (status_ && !group_alive())
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (group_alive())
      kill(-pid_, SIGKILL);
    reap(true);
  }
  StopSignals::unwatch_process_group(pid_);
  stopped_ = status_ ? describe_wait_status(*status_) : std::string("not reaped");
  return *stopped_;
}

std::string ServerProcess::log_tail(std::size_t lines) const {
  constexpr std::streamoff kMaxTail = 16 * 1024;
  std::ifstream in(launch_.log_path, std::ios::binary);
  if (!in)
    return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - kMaxTail);
  in.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::size_t start = text.size();
  for (std::size_t n = 0; n < lines; ++n) {
    const std::size_t nl = start == 0 ? std::string::npos : text.rfind('\n', start - 1);
    if (nl == std::string::npos)
      return text;
    start = nl;
  }
  return text.substr(start + 1);
}

}  // namespace llmbench::app
