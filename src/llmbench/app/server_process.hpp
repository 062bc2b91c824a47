#pragma once
/// @file
/// The serving engine as a child process of a sweep (docs/sweep.md "Restarting the server per
/// setting"): a command line from a template with `{knob}` placeholders, started in its own
/// process group (POSIX `posix_spawn` with `POSIX_SPAWN_SETSID`) with its output in a log file,
/// waited for until ready (`GET /health`, then `GET /v1/models`), and stopped as a whole group
/// (SIGTERM, then SIGKILL after a grace period). While one runs, SIGINT / SIGTERM / SIGHUP send
/// SIGTERM to its group as well (`app::StopSignals`), so Ctrl-C leaves no server behind.

#include "llmbench/app/stop_signals.hpp"
#include "llmbench/http/url.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace llmbench::app {

/// A command-line template, split into words the way a POSIX shell splits a simple command
/// (blanks separate words; '...' is literal; "..." keeps blanks and takes \" \\ \$ \` escapes; a
/// backslash outside quotes escapes the next character), each word a sequence of literal text and
/// `{name}` placeholders (`{{` and `}}` are a literal brace). Values are put in after the split,
/// so a value with blanks or quotes stays one argument; no shell ever runs.
struct CommandTemplate {
  /// One piece of a word: literal text, or the name of a placeholder.
  struct Piece {
    bool placeholder = false;
    std::string text;        ///< the literal text, or the placeholder's name
    std::size_t offset = 0;  ///< byte offset of the piece (of its '{') in `text`
  };
  std::string text;                       ///< the template as given
  std::vector<std::vector<Piece>> words;  ///< the words, in order
};

/// Splits `text` into a template. Throws `Exception` with `source` (the flag) and the byte offset
/// of the problem: an empty command, an unclosed quote, an unclosed `{`, a lone `}`, or a name
/// that is empty or not `[A-Za-z0-9_-]+`.
CommandTemplate parse_command_template(std::string_view text, std::string_view source);

/// The placeholder names of `command` in order of first use, each once.
std::vector<std::string> placeholder_names(const CommandTemplate& command);

/// Throws `Exception` naming `source`, the first placeholder that is not in `known`, its byte
/// offset, and the known names.
void check_placeholders(const CommandTemplate& command, const std::vector<std::string>& known,
                        std::string_view source);

/// The argument vector of `command` with every placeholder replaced by its value in `values`.
/// Throws `Exception` naming a placeholder with no value.
std::vector<std::string> fill_command(const CommandTemplate& command,
                                      const std::map<std::string, std::string>& values);

/// `argv` as one line a POSIX shell would split back into `argv` (words with blanks, quotes or
/// shell characters in single quotes), for logs and results.
std::string command_line(const std::vector<std::string>& argv);

/// What `waitpid` reported, in words: "exited with status 0", "killed by signal 9 (SIGKILL)".
std::string describe_wait_status(int status);

/// The processes of process group `pgid` that are running (zombies, which an init process may
/// take a while to reap, are left out), read from the process table (`/proc/<pid>/stat`, proc(5)).
std::vector<pid_t> live_group_members(pid_t pgid);

/// How to start one server and how long to wait for it.
struct ServerLaunch {
  std::vector<std::string> argv;   ///< argv[0] is found on PATH as a shell would
  std::filesystem::path log_path;  ///< its stdout and stderr (appended; created)
  http::Url url;                   ///< where it answers once ready (its path prefix included)
  /// Longest wait from start to ready (vLLM's `--server-ready-timeout` default: 300 s).
  std::chrono::milliseconds ready_timeout{std::chrono::seconds(300)};
  /// Time between SIGTERM and SIGKILL when stopping.
  std::chrono::milliseconds grace{std::chrono::seconds(10)};
  std::chrono::milliseconds poll{std::chrono::milliseconds(100)};  ///< readiness poll interval
};

/// How waiting for readiness ended.
enum class ReadyOutcome : std::uint8_t {
  Ready,     ///< `/health` and `/v1/models` both answered 200
  Exited,    ///< the process ended first
  TimedOut,  ///< `ready_timeout` passed
  Stopped,   ///< a stop signal arrived (Ctrl-C)
};

/// Stable name of an outcome ("ready", "exited", "timed_out", "stopped").
std::string_view to_string(ReadyOutcome outcome) noexcept;

/// The answer of `ServerProcess::wait_ready`.
struct ReadyResult {
  ReadyOutcome outcome = ReadyOutcome::Ready;
  double seconds = 0;   ///< from the start to ready (or to giving up)
  std::string message;  ///< why it is not ready ("" when ready)
};

/// One started server process (the leader of its own process group and session). Not copyable
/// or movable. The destructor stops it (`stop`). Construct and destroy on the main thread: it
/// holds an `app::StopSignals` guard, so while it lives a stop signal also sends SIGTERM to its
/// group.
class ServerProcess {
 public:
  /// Starts `launch.argv` with stdin from /dev/null and stdout / stderr appended to
  /// `launch.log_path`. Throws `Exception` naming the program when it cannot be started (not
  /// found, not executable) or the log file cannot be opened.
  explicit ServerProcess(ServerLaunch launch);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ServerProcess(ServerProcess&&) = delete;
  ServerProcess& operator=(ServerProcess&&) = delete;

  /// Polls `GET /health` until it answers 200, then `GET /v1/models` until it answers 200, every
  /// `launch.poll`, until `launch.ready_timeout` passes, the process exits, or `stop` (when not
  /// null) becomes true.
  ReadyResult wait_ready(const std::atomic<bool>* stop = StopSignals::stop_flag());

  /// The exit status in words once the leader has exited (reaping it), nullopt while it runs.
  std::optional<std::string> exited();

  /// Stops the whole group: SIGTERM, then SIGKILL to whatever is left after `launch.grace`;
  /// waits for the leader. Returns the leader's exit status in words (`describe_wait_status`).
  /// Idempotent: later calls return the same words.
  std::string stop();

  /// The last `lines` lines of the log (at most the last 16 KiB of it).
  [[nodiscard]] std::string log_tail(std::size_t lines = 20) const;

  /// The leader's process id (= its process group id).
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] const ServerLaunch& launch() const noexcept { return launch_; }
  /// Whether the leader has been reaped, and its raw `waitpid` status then.
  [[nodiscard]] std::optional<int> wait_status() const noexcept { return status_; }

 private:
  bool reap(bool block);
  /// True while any process of the group is left (the leader's zombie counts until reaped).
  [[nodiscard]] bool group_alive() const;

  StopSignals guard_;
  ServerLaunch launch_;
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::optional<std::string> stopped_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace llmbench::app
