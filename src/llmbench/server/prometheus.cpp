#include "llmbench/server/prometheus.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace llmbench::server {

Histogram::Histogram(std::span<const double> bounds, double unit)
    : bounds_(bounds.begin(), bounds.end()),
      unit_(unit),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1)) {
  LLMBENCH_ASSERT(unit > 0, "histogram unit must be > 0");
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    LLMBENCH_ASSERT(i == 0 || bounds_[i] > bounds_[i - 1], "bucket bounds must ascend");
    // v units fall in bucket i when v × unit ≤ bound, i.e. v ≤ floor(bound / unit) (with a
    // relative epsilon so 0.01 s / 1e-9 gives exactly 10,000,000 ns).
    bounds_units_.push_back(static_cast<std::int64_t>(std::floor(bounds_[i] / unit * (1 + 1e-12))));
  }
  for (std::size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::observe(std::int64_t value) noexcept {
  std::size_t i = 0;
  while (i < bounds_units_.size() && value > bounds_units_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::uint64_t Histogram::count() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i)
    n += buckets_[i].load(std::memory_order_relaxed);
  return n;
}

void Histogram::write(std::string& out, std::string_view name, std::string_view labels) const {
  const std::string_view sep = labels.empty() ? "" : ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    if (i < bounds_.size()) {
      // prometheus_client's float formatting (Python repr): "1.0", "0.005", "2560.0".
      const double b = bounds_[i];
      const std::string le = std::floor(b) == b ? fmt::format("{:.1f}", b) : fmt::format("{}", b);
      fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep,
                     le, cumulative);
    } else {
      fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels,
                     sep, cumulative);
    }
  }
  append_sample(out, std::string(name) + "_sum", labels,
                static_cast<double>(sum_.load(std::memory_order_relaxed)) * unit_);
  append_sample(out, std::string(name) + "_count", labels, static_cast<double>(cumulative));
}

std::vector<double> buckets_1_2_5(std::int64_t max_value) {
  std::vector<double> out;
  for (std::int64_t scale = 1; scale <= max_value; scale *= 10) {
    for (const std::int64_t m : {1, 2, 5}) {
      if (m * scale > max_value)
        return out;
      out.push_back(static_cast<double>(m * scale));
    }
    if (scale > max_value / 10)
      break;  // the next decade would overflow or pass max_value
  }
  return out;
}

RequestHistograms::RequestHistograms(std::int64_t max_model_len)
    : queue(kRequestLatencyBuckets, 1e-9),
      prefill(kRequestLatencyBuckets, 1e-9),
      decode(kRequestLatencyBuckets, 1e-9),
      inference(kRequestLatencyBuckets, 1e-9),
      prompt_tokens(buckets_1_2_5(max_model_len), 1),
      generation_tokens(buckets_1_2_5(max_model_len), 1),
      max_tokens(buckets_1_2_5(max_model_len), 1) {}

void RequestHistograms::observe(const RequestTimes& t) noexcept {
  auto interval = [](TimeNs from, TimeNs to) { return std::max<TimeNs>(0, to - from); };
  queue.observe(interval(t.queued_ns, t.scheduled_ns));
  prefill.observe(interval(t.scheduled_ns, t.first_token_ns));
  decode.observe(interval(t.first_token_ns, t.last_token_ns));
  inference.observe(interval(t.scheduled_ns, t.last_token_ns));
  prompt_tokens.observe(t.prompt_tokens);
  generation_tokens.observe(t.generation_tokens);
  max_tokens.observe(t.max_tokens);
}

void RequestHistograms::write(std::string& out, std::string_view labels) const {
  // Names and help texts of vLLM V1 (`vllm/v1/metrics/loggers.py`).
  auto family = [&](std::string_view name, std::string_view help, const Histogram& h) {
    append_family_header(out, name, "histogram", help);
    h.write(out, name, labels);
  };
  family("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
         queue);
  family("vllm:request_inference_time_seconds",
         "Histogram of time spent in RUNNING phase for request.", inference);
  family("vllm:request_prefill_time_seconds",
         "Histogram of time spent in PREFILL phase for request.", prefill);
  family("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
         decode);
  family("vllm:request_prompt_tokens", "Number of prefill tokens processed.", prompt_tokens);
  family("vllm:request_generation_tokens", "Number of generation tokens processed.",
         generation_tokens);
  family("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
         max_tokens);
}

std::string prometheus_label_value(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void append_family_header(std::string& out, std::string_view name, std::string_view type,
                          std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {0} {1}\n# TYPE {0} {2}\n", name, help, type);
}

void append_sample(std::string& out, std::string_view name, std::string_view labels, double value) {
  fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, labels, value);
}

}  // namespace llmbench::server
