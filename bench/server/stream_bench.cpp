// Streams per second the simulated server sustains on one worker thread.
//
//   server_stream_bench [streams=1000] [tokens=100] [itl_ms=20] [seconds=5] [client_threads=1]
//                       [port=0] [server_pid=0] [ramp_s=0]
//
// Opens `streams` keep-alive connections, each repeatedly requesting a streamed completion of
// `tokens` tokens, and reports delivered tokens/s, the lateness of each response's end against
// the fixed timing model (request sent → `[DONE]` minus (tokens − 1) × itl; ttft 0) and CPU time.
// With port 0 it starts an in-process server (ttft 0, one token per chunk, one worker thread) and
// reports that worker thread's CPU (/proc/self/task/<tid>/stat); with a port it loads an external
// `llmbench serve` (started by the caller with the same --itl-ms, --ttft-ms 0) and reads that
// process's CPU from /proc/<server_pid>/stat. The client's own CPU (getrusage) is printed too, so
// a saturated client shows. `poll` makes each client thread busy-poll its sockets instead of
// sleeping in epoll_wait: on loopback the server's send wakes a sleeping client thread from the
// server's core (an IPI, costly in a VM), work that a client on another machine never puts on
// the server; a polling client is never asleep, so the server core does not pay for it.

#include "llmbench/core/clock.hpp"
#include "llmbench/server/server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
constexpr auto kTuple = net::as_tuple(net::use_awaitable);

std::atomic<std::int64_t> g_events{0};
std::atomic<std::int64_t> g_requests{0};
std::atomic<std::int64_t> g_errors{0};
std::atomic<std::int64_t> g_late_sum_ns{0};  // Σ lateness of finished requests
std::atomic<std::int64_t> g_late_max_ns{0};
std::int64_t g_expected_ns = 0;  // (tokens − 1) × itl

void note_lateness(std::int64_t late_ns) {
  g_late_sum_ns.fetch_add(late_ns, std::memory_order_relaxed);
  std::int64_t prev = g_late_max_ns.load(std::memory_order_relaxed);
  while (late_ns > prev && !g_late_max_ns.compare_exchange_weak(prev, late_ns)) {
  }
}

/// One connection: request, count `data: {` events until `[DONE]`, repeat until `end_ns`.
net::awaitable<void> run_stream(std::uint16_t port, std::string request, llmbench::TimeNs start_ns,
                                llmbench::TimeNs end_ns) {
  if (start_ns > llmbench::steady_now_ns()) {
    net::steady_timer timer(co_await net::this_coro::executor);
    timer.expires_at(net::steady_timer::time_point(std::chrono::nanoseconds(start_ns)));
    co_await timer.async_wait(kTuple);
  }
  tcp::socket socket(co_await net::this_coro::executor);
  auto [ec] = co_await socket.async_connect({net::ip::make_address("127.0.0.1"), port}, kTuple);
  if (ec) {
    g_errors.fetch_add(1);
    co_return;
  }
  std::string buffer(1 << 16, '\0');
  std::string tail;
  while (llmbench::steady_now_ns() < end_ns) {
    const llmbench::TimeNs sent_ns = llmbench::steady_now_ns();
    std::tie(ec, std::ignore) = co_await net::async_write(socket, net::buffer(request), kTuple);
    if (ec)
      break;
    bool done = false;
    while (!done) {
      auto [rec, n] = co_await socket.async_read_some(net::buffer(buffer), kTuple);
      if (rec) {
        g_errors.fetch_add(1);
        co_return;
      }
      // Scan the new bytes (plus a short carry-over, so markers split across reads count once).
      tail.append(buffer.data(), n);
      std::size_t pos = 0;
      while ((pos = tail.find("data: ", pos)) != std::string::npos && pos + 7 <= tail.size()) {
        if (tail[pos + 6] == '{')
          g_events.fetch_add(1, std::memory_order_relaxed);
        if (tail[pos + 6] == '[')
          done = true;
        pos += 7;
      }
      tail.erase(0, tail.size() > 8 ? tail.size() - 8 : 0);
      if (done && tail.find("0\r\n\r\n") == std::string::npos) {
        // Read the terminating chunk so the next response starts clean.
        auto [rec2, n2] = co_await socket.async_read_some(net::buffer(buffer), kTuple);
        if (rec2)
          co_return;
        (void)n2;
      }
    }
    tail.clear();
    note_lateness(llmbench::steady_now_ns() - sent_ns - g_expected_ns);
    g_requests.fetch_add(1, std::memory_order_relaxed);
  }
}

/// utime + stime in seconds from a proc(5) `stat` file (fields 14 and 15, counted after the
/// parenthesized command name, which may hold spaces); −1 when the file cannot be read.
double stat_cpu_seconds(const std::string& path) {
  std::ifstream stat(path);
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  if (line.empty() || paren == std::string::npos || paren + 2 > line.size())
    return -1;
  std::istringstream fields(line.substr(paren + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14)
      utime = std::atoll(field.c_str());
    if (i == 15)
      stime = std::atoll(field.c_str());
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

/// utime + stime of the thread named `name`, in seconds (proc(5), fields 14 and 15).
double thread_cpu_seconds(const std::string& name) {
  DIR* dir = opendir("/proc/self/task");
  double total = 0;
  if (dir == nullptr)
    return -1;
  while (dirent* entry = readdir(dir)) {
    const std::string tid = entry->d_name;
    if (tid == "." || tid == "..")
      continue;
    std::ifstream comm("/proc/self/task/" + tid + "/comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name != name)
      continue;
    total += std::max(0.0, stat_cpu_seconds("/proc/self/task/" + tid + "/stat"));
  }
  closedir(dir);
  return total;
}

/// utime + stime of process `pid` in seconds (proc(5) /proc/<pid>/stat fields 14 and 15).
double process_cpu_seconds(long pid) {
  return stat_cpu_seconds("/proc/" + std::to_string(pid) + "/stat");
}

/// CPU seconds (user + system) of this process (getrusage(2)).
double self_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  const int streams = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int tokens = argc > 2 ? std::atoi(argv[2]) : 100;
  const double itl_ms = argc > 3 ? std::atof(argv[3]) : 20.0;
  const double seconds = argc > 4 ? std::atof(argv[4]) : 5.0;
  const int client_threads = argc > 5 ? std::atoi(argv[5]) : 1;
  const int external_port = argc > 6 ? std::atoi(argv[6]) : 0;
  const long server_pid = argc > 7 ? std::atol(argv[7]) : 0;
  const double ramp_s = argc > 8 ? std::atof(argv[8]) : 0.0;
  llmbench::server::raise_open_file_limit();
  g_expected_ns = static_cast<std::int64_t>(static_cast<double>(tokens - 1) * itl_ms * 1e6);

  llmbench::server::ServerOptions options;
  options.ttft_ms = 0;
  options.itl_ms = itl_ms;
  options.max_num_seqs = streams;
  llmbench::server::Server server(options);
  const std::uint16_t port =
      external_port > 0 ? static_cast<std::uint16_t>(external_port) : server.start();
  const auto server_cpu = [&] {
    return external_port > 0 ? process_cpu_seconds(server_pid) : thread_cpu_seconds("llmb-http-0");
  };

  const std::string body =
      "{\"prompt\":\"hello\",\"max_tokens\":" + std::to_string(tokens) + ",\"stream\":true}";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  const double cpu0 = server_cpu();
  const double client_cpu0 = self_cpu_seconds();
  const llmbench::TimeNs start = llmbench::steady_now_ns();
  const llmbench::TimeNs end = start + static_cast<llmbench::TimeNs>(seconds * 1e9);
  std::vector<std::thread> threads;
  for (int t = 0; t < client_threads; ++t) {
    threads.emplace_back([&, t] {
      net::io_context ioc(1);
      for (int i = t; i < streams; i += client_threads) {
        const auto offset = static_cast<llmbench::TimeNs>(ramp_s * 1e9 * i / streams);
        net::co_spawn(ioc, run_stream(port, request, start + offset, end + offset), net::detached);
      }
      ioc.run();
    });
  }
  for (auto& thread : threads) thread.join();
  const double elapsed = llmbench::ns_to_s(llmbench::steady_now_ns() - start);
  const double cpu = server_cpu() - cpu0;
  const double client_cpu = self_cpu_seconds() - client_cpu0;
  const auto stats = server.stats();
  server.stop();
  // External server: its token count is the client's event count (one token per event).
  const std::int64_t server_tokens =
      external_port > 0 ? g_events.load() : stats.generation_tokens_total;
  std::printf("streams=%d tokens/request=%d itl_ms=%.1f elapsed=%.2fs\n", streams, tokens, itl_ms,
              elapsed);
  std::printf("client: %lld events, %lld requests, %lld errors → %.0f tokens/s\n",
              static_cast<long long>(g_events.load()), static_cast<long long>(g_requests.load()),
              static_cast<long long>(g_errors.load()),
              static_cast<double>(g_events.load()) / elapsed);
  const std::int64_t done = g_requests.load();
  std::printf(
      "client: CPU %.2fs (%.0f%% of one core); response end late by mean %.2f ms, max %.2f ms\n",
      client_cpu, 100 * client_cpu / elapsed,
      done > 0 ? static_cast<double>(g_late_sum_ns.load()) / static_cast<double>(done) / 1e6 : 0.0,
      static_cast<double>(g_late_max_ns.load()) / 1e6);
  std::printf(
      "server: %lld tokens written, %s CPU %.2fs (%.0f%% of one core) → %.0f "
      "tokens per CPU-second\n",
      static_cast<long long>(server_tokens), external_port > 0 ? "process" : "worker", cpu,
      100 * cpu / elapsed, cpu > 0 ? static_cast<double>(server_tokens) / cpu : 0.0);
  return 0;
}
