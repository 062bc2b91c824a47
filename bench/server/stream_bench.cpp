// Streams per second the simulated server sustains on one worker thread.
//
//   server_stream_bench [streams=1000] [tokens=100] [itl_ms=20] [seconds=5] [client_threads=1]
//
// Opens `streams` keep-alive connections, each repeatedly requesting a streamed completion of
// `tokens` tokens (ttft 0, one token per chunk), and reports delivered tokens/s plus the CPU time
// of the server's worker thread (from /proc/self/task/<tid>/stat), so the per-core cost is
// visible even when the client shares the machine.

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

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
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

/// One connection: request, count `data: {` events until `[DONE]`, repeat until `end_ns`.
net::awaitable<void> run_stream(std::uint16_t port, std::string request, llmbench::TimeNs end_ns) {
  tcp::socket socket(co_await net::this_coro::executor);
  auto [ec] = co_await socket.async_connect({net::ip::make_address("127.0.0.1"), port}, kTuple);
  if (ec) {
    g_errors.fetch_add(1);
    co_return;
  }
  std::string buffer(1 << 16, '\0');
  std::string tail;
  while (llmbench::steady_now_ns() < end_ns) {
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
    g_requests.fetch_add(1, std::memory_order_relaxed);
  }
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
    std::ifstream stat("/proc/self/task/" + tid + "/stat");
    std::string line;
    std::getline(stat, line);
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string field;
    long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14)
        utime = std::atoll(field.c_str());
      if (i == 15)
        stime = std::atoll(field.c_str());
    }
    total += static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  closedir(dir);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  const int streams = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int tokens = argc > 2 ? std::atoi(argv[2]) : 100;
  const double itl_ms = argc > 3 ? std::atof(argv[3]) : 20.0;
  const double seconds = argc > 4 ? std::atof(argv[4]) : 5.0;
  const int client_threads = argc > 5 ? std::atoi(argv[5]) : 1;
  llmbench::server::raise_open_file_limit();

  llmbench::server::ServerOptions options;
  options.ttft_ms = 0;
  options.itl_ms = itl_ms;
  options.max_num_seqs = streams;
  llmbench::server::Server server(options);
  const std::uint16_t port = server.start();

  const std::string body =
      "{\"prompt\":\"hello\",\"max_tokens\":" + std::to_string(tokens) + ",\"stream\":true}";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  const double cpu0 = thread_cpu_seconds("llmb-http-0");
  const llmbench::TimeNs start = llmbench::steady_now_ns();
  const llmbench::TimeNs end = start + static_cast<llmbench::TimeNs>(seconds * 1e9);
  std::vector<std::thread> threads;
  for (int t = 0; t < client_threads; ++t) {
    threads.emplace_back([&, t] {
      net::io_context ioc(1);
      for (int i = t; i < streams; i += client_threads) {
        net::co_spawn(ioc, run_stream(port, request, end), net::detached);
      }
      ioc.run();
    });
  }
  for (auto& thread : threads) thread.join();
  const double elapsed = llmbench::ns_to_s(llmbench::steady_now_ns() - start);
  const double cpu = thread_cpu_seconds("llmb-http-0") - cpu0;
  const auto stats = server.stats();
  server.stop();
  std::printf("streams=%d tokens/request=%d itl_ms=%.1f elapsed=%.2fs\n", streams, tokens, itl_ms,
              elapsed);
  std::printf("client: %lld events, %lld requests, %lld errors → %.0f tokens/s\n",
              static_cast<long long>(g_events.load()), static_cast<long long>(g_requests.load()),
              static_cast<long long>(g_errors.load()),
              static_cast<double>(g_events.load()) / elapsed);
  std::printf(
      "server: %lld tokens written, worker CPU %.2fs (%.0f%% of one core) → %.0f "
      "tokens per CPU-second\n",
      static_cast<long long>(stats.generation_tokens_total), cpu, 100 * cpu / elapsed,
      cpu > 0 ? static_cast<double>(stats.generation_tokens_total) / cpu : 0.0);
  return 0;
}
