// Client-side benchmark helpers for `llmbench run` (docs/performance.md, "Client: SSE parsing and
// timestamping"). bench/client/run.sh drives the end-to-end measurements; this binary supplies the
// pieces that need the library:
//
//   client_bench gen FILE [events=20000] [usage=0]
//       Writes a static OpenAI completions stream (vLLM's chunk shape): `events` text chunks of
//       one token each, the last with finish_reason "length", a usage-only chunk (choices []) and
//       `data: [DONE]`. usage=1 puts a running `usage` object on every chunk (vLLM
//       continuous_usage_stats) as well.
//   client_bench count DIR
//       Reads the *.records.jsonl in DIR (written by `llmbench run --result-dir DIR`) and prints
//       one line of key=value: measured requests, ok requests, chunks received, the measured
//       window (first `sent_ns` to last `done_ns`), and chunks per second over that window.
//   client_bench handler [events=20000] [reps=50] [usage=0] [piece=16384]
//       In-process cost of the client's per-event path without any socket: the same stream fed
//       into loadgen::RecordingHandler (sse::Parser + protocol::Decoder + Chunk push) in `piece`
//       byte reads, one steady_now_ns() per read as the HTTP client takes it. Also times
//       metrics::record_to_json_line (the per-request JSONL sink) per chunk.
//   client_bench chunkmem [requests=100] [chunks=20000]
//       RSS growth of `requests` records that each receive `chunks` chunks by push_back (as the
//       handler does), divided by the number of chunks: memory per recorded chunk.
//   client_bench lateness FILE.records.jsonl
//       The send lateness of an open-loop run, `sent_ns - scheduled_ns` per measured request:
//       one line of key=value with n, p50, p90, p99, max (ms) and how many are within 1 ms.
//   client_bench sleepfloor FILE.records.jsonl
//       The host's own floor for the same schedule: one thread (1 ns timer slack, as the loadgen
//       workers) sleeps with clock_nanosleep(TIMER_ABSTIME) to each record's `scheduled_ns`
//       (relative to the first) and takes the clock on waking; the same line as `lateness`.
//       Nothing is sent, so what it shows is the kernel's and the hypervisor's wake-up alone.

#include "llmbench/core/clock.hpp"
#include "llmbench/core/thread_name.hpp"
#include "llmbench/http/client.hpp"
#include "llmbench/loadgen/request_handler.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/record_file.hpp"
#include "llmbench/metrics/record_io.hpp"
#include "llmbench/protocol/openai.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <time.h>
#include <vector>

namespace {

using llmbench::steady_now_ns;
using llmbench::TimeNs;

/// Builds the static stream. Each text chunk is about 200 bytes on the wire.
std::string make_stream(std::int64_t events, bool usage) {
  static constexpr std::array<std::string_view, 16> kWords = {
      " the", " model", " of",    " a",    " token", " is",  " and",  " to",
      " in",  " that",  " serve", " time", " first", " per", " with", " latency"};
  const std::string id = "cmpl-3f9c2a7d8e1b4c6fa05d9e2b7c41a8f3";
  const std::string head =
      fmt::format(R"(data: {{"id":"{}","object":"text_completion","created":1718000000,)"
                  R"("model":"deepseek-ai/DeepSeek-V3","choices":[{{"index":0,"text":)",
                  id);
  std::string out;
  out.reserve(static_cast<std::size_t>(events) * 240 + 512);
  constexpr std::int64_t kPrompt = 128;
  for (std::int64_t i = 0; i < events; ++i) {
    const bool last = i + 1 == events;
    out += head;
    out += '"';
    out += kWords[static_cast<std::size_t>(i) % kWords.size()];
    out += R"(","logprobs":null,"finish_reason":)";
    out += last ? R"("length")" : "null";
    out += R"(,"stop_reason":null}])";
    if (usage) {
      out +=
          fmt::format(R"(,"usage":{{"prompt_tokens":{},"total_tokens":{},"completion_tokens":{}}})",
                      kPrompt, kPrompt + i + 1, i + 1);
    }
    out += "}\n\n";
  }
  out += fmt::format(R"(data: {{"id":"{}","object":"text_completion","created":1718000000,)"
                     R"("model":"deepseek-ai/DeepSeek-V3","choices":[],)"
                     R"("usage":{{"prompt_tokens":{},"total_tokens":{},"completion_tokens":{}}}}})"
                     "\n\n",
                     id, kPrompt, kPrompt + events, events);
  out += "data: [DONE]\n\n";
  return out;
}

std::int64_t arg_int(int argc, char** argv, int i, std::int64_t fallback) {
  return argc > i ? std::strtoll(argv[i], nullptr, 10) : fallback;
}

int cmd_gen(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: client_bench gen FILE [events] [usage]\n");
    return 2;
  }
  const auto events = arg_int(argc, argv, 3, 20000);
  const bool usage = arg_int(argc, argv, 4, 0) != 0;
  const std::string s = make_stream(events, usage);
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", argv[2]);
    return 1;
  }
  std::printf("file=%s events=%lld bytes=%zu bytes_per_event=%.1f\n", argv[2],
              static_cast<long long>(events), s.size(),
              static_cast<double>(s.size()) / static_cast<double>(events));
  return 0;
}

/// The measured (non-warm-up) records of the JSONL file at `path` (metrics::read_record_file),
/// or nullopt after printing why it could not be read.
std::optional<std::vector<llmbench::metrics::RequestRecord>> measured_records(
    const std::string& path) {
  try {
    auto file = llmbench::metrics::read_record_file(path);
    std::erase_if(file.records, [](const auto& r) { return r.warmup; });
    return std::move(file.records);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return std::nullopt;
  }
}

int cmd_count(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: client_bench count DIR\n");
    return 2;
  }
  std::int64_t requests = 0;
  std::int64_t ok = 0;
  std::int64_t chunks = 0;
  std::int64_t max_chunks = 0;
  TimeNs first_sent = std::numeric_limits<TimeNs>::max();
  TimeNs last_done = 0;
  for (const auto& entry : std::filesystem::directory_iterator(argv[2])) {
    const auto name = entry.path().filename().string();
    if (!name.ends_with(".records.jsonl")) {
      continue;
    }
    const auto records = measured_records(entry.path().string());
    if (!records) {
      return 1;
    }
    for (const auto& rec : *records) {
      ++requests;
      if (rec.ok()) {
        ++ok;
      }
      const auto n = static_cast<std::int64_t>(rec.chunks.size());
      chunks += n;
      max_chunks = std::max(max_chunks, n);
      first_sent = std::min(first_sent, rec.sent_ns);
      last_done = std::max(last_done, rec.done_ns);
    }
  }
  const double window_s = requests > 0 ? static_cast<double>(last_done - first_sent) / 1e9 : 0.0;
  std::printf(
      "requests=%lld ok=%lld chunks=%lld max_chunks_per_request=%lld window_s=%.6f "
      "chunks_per_s=%.0f\n",
      static_cast<long long>(requests), static_cast<long long>(ok), static_cast<long long>(chunks),
      static_cast<long long>(max_chunks), window_s,
      window_s > 0 ? static_cast<double>(chunks) / window_s : 0.0);
  return 0;
}

int cmd_handler(int argc, char** argv) {
  const auto events = arg_int(argc, argv, 2, 20000);
  const auto reps = std::max<std::int64_t>(1, arg_int(argc, argv, 3, 50));
  const bool usage = arg_int(argc, argv, 4, 0) != 0;
  const auto piece =
      static_cast<std::size_t>(std::max<std::int64_t>(1, arg_int(argc, argv, 5, 16384)));
  const std::string stream = make_stream(events, usage);
  llmbench::protocol::Decoder decoder;
  std::int64_t total_chunks = 0;
  std::int64_t failed = 0;
  std::vector<llmbench::metrics::RequestRecord> kept;
  kept.reserve(static_cast<std::size_t>(reps));
  const TimeNs t0 = steady_now_ns();
  for (std::int64_t r = 0; r < reps; ++r) {
    llmbench::metrics::RequestRecord rec;
    llmbench::loadgen::RecordingHandler handler(rec, decoder, true, t0);
    handler.on_sent(steady_now_ns());
    handler.on_headers(200, steady_now_ns());
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      handler.on_body(std::string_view(stream).substr(at, piece), steady_now_ns());
      if (handler.want_stop()) {
        break;
      }
    }
    llmbench::http::Outcome outcome;
    outcome.status = 200;
    outcome.body_complete = true;
    handler.finish(outcome, steady_now_ns());
    failed += rec.ok() ? 0 : 1;
    total_chunks += static_cast<std::int64_t>(rec.chunks.size());
    kept.push_back(std::move(rec));
  }
  const TimeNs t1 = steady_now_ns();
  // The JSONL sink `llmbench run` calls for each finished request, on the worker thread.
  std::size_t json_bytes = 0;
  const TimeNs j0 = steady_now_ns();
  for (const auto& rec : kept) {
    json_bytes += llmbench::metrics::record_to_json_line(rec).size();
  }
  const TimeNs j1 = steady_now_ns();
  const double s = static_cast<double>(t1 - t0) / 1e9;
  const double js = static_cast<double>(j1 - j0) / 1e9;
  const auto chunks_d = static_cast<double>(total_chunks);
  std::printf(
      "handler: events=%lld failed_requests=%lld piece=%zu stream_bytes=%zu seconds=%.4f "
      "events_per_s=%.0f ns_per_event=%.1f MB_per_s=%.1f\n",
      static_cast<long long>(total_chunks), static_cast<long long>(failed), piece, stream.size(), s,
      chunks_d / s, s * 1e9 / chunks_d,
      static_cast<double>(stream.size()) * static_cast<double>(reps) / s / 1e6);
  std::printf("jsonl_sink: chunks=%lld seconds=%.4f ns_per_chunk=%.1f bytes_per_chunk=%.1f\n",
              static_cast<long long>(total_chunks), js, js * 1e9 / chunks_d,
              static_cast<double>(json_bytes) / chunks_d);
  return failed == 0 ? 0 : 1;
}

std::int64_t rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmRSS:")) {
      return std::strtoll(line.c_str() + 6, nullptr, 10);
    }
  }
  return -1;
}

int cmd_chunkmem(int argc, char** argv) {
  const auto requests = std::max<std::int64_t>(1, arg_int(argc, argv, 2, 100));
  const auto chunks = std::max<std::int64_t>(1, arg_int(argc, argv, 3, 20000));
  std::vector<llmbench::metrics::RequestRecord> records(static_cast<std::size_t>(requests));
  const std::int64_t before = rss_kb();
  for (auto& rec : records) {
    for (std::int64_t i = 0; i < chunks; ++i) {
      llmbench::metrics::Chunk c;
      c.time_ns = i;
      c.bytes = 4;
      rec.chunks.push_back(c);
    }
  }
  const std::int64_t after = rss_kb();
  std::size_t capacity = 0;
  for (const auto& rec : records) {
    capacity += rec.chunks.capacity();
  }
  const auto total = static_cast<double>(requests * chunks);
  std::printf(
      "chunkmem: requests=%lld chunks_per_request=%lld sizeof_chunk=%zu rss_growth_kb=%lld "
      "bytes_per_chunk_rss=%.1f bytes_per_chunk_capacity=%.1f\n",
      static_cast<long long>(requests), static_cast<long long>(chunks),
      sizeof(llmbench::metrics::Chunk), static_cast<long long>(after - before),
      static_cast<double>(after - before) * 1024.0 / total,
      static_cast<double>(capacity * sizeof(llmbench::metrics::Chunk)) / total);
  return 0;
}

/// Prints n, p50, p90, p99, max (ms, nearest rank) and the count within 1 ms of `late_ns`.
void print_lateness(std::vector<TimeNs> late_ns) {
  if (late_ns.empty()) {
    std::printf("n=0\n");
    return;
  }
  std::sort(late_ns.begin(), late_ns.end());
  const auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(late_ns.size() - 1) + 0.5);
    return static_cast<double>(late_ns[i]) / 1e6;
  };
  const auto within = std::count_if(late_ns.begin(), late_ns.end(),
                                    [](TimeNs t) { return t >= -1'000'000 && t <= 1'000'000; });
  std::printf("n=%zu p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f within_1ms=%lld\n",
              late_ns.size(), at(0.5), at(0.9), at(0.99), at(1.0), static_cast<long long>(within));
}

int cmd_lateness(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: client_bench lateness FILE.records.jsonl\n");
    return 2;
  }
  const auto records = measured_records(argv[2]);
  if (!records) {
    return 1;
  }
  std::vector<TimeNs> late;
  for (const auto& r : *records) {
    late.push_back(r.sent_ns - r.scheduled_ns);
  }
  print_lateness(std::move(late));
  return 0;
}

int cmd_sleepfloor(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: client_bench sleepfloor FILE.records.jsonl\n");
    return 2;
  }
  const auto records = measured_records(argv[2]);
  if (!records || records->empty()) {
    return 1;
  }
  std::vector<TimeNs> offsets;
  for (const auto& r : *records) {
    offsets.push_back(r.scheduled_ns);
  }
  std::sort(offsets.begin(), offsets.end());
  const TimeNs first = offsets.front();
  llmbench::set_thread_timer_slack_ns(1);
  const TimeNs start = llmbench::steady_now_ns() + 100'000'000;
  std::vector<TimeNs> late;
  late.reserve(offsets.size());
  for (const TimeNs off : offsets) {
    const TimeNs due = start + (off - first);
    const timespec ts{.tv_sec = static_cast<time_t>(due / 1'000'000'000),
                      .tv_nsec = static_cast<long>(due % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
    late.push_back(llmbench::steady_now_ns() - due);
  }
  print_lateness(std::move(late));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view cmd = argc > 1 ? argv[1] : "";
  if (cmd == "gen")
    return cmd_gen(argc, argv);
  if (cmd == "count")
    return cmd_count(argc, argv);
  if (cmd == "handler")
    return cmd_handler(argc, argv);
  if (cmd == "chunkmem")
    return cmd_chunkmem(argc, argv);
  if (cmd == "lateness")
    return cmd_lateness(argc, argv);
  if (cmd == "sleepfloor")
    return cmd_sleepfloor(argc, argv);
  std::fprintf(stderr,
               "usage: client_bench gen FILE [events] [usage] | count DIR | "
               "handler [events] [reps] [usage] [piece] | chunkmem [requests] [chunks] | "
               "lateness FILE | sleepfloor FILE\n");
  return 2;
}
