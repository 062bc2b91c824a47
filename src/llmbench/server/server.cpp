#include "llmbench/server/server.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/http/listener.hpp"
#include "llmbench/server/detail/state.hpp"

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <pthread.h>
#include <sys/resource.h>

namespace llmbench::server {

namespace detail {

ServerState::ServerState(ServerOptions opts)
    : options(std::move(opts)),
      ttft_ns(ms_to_ns(options.ttft_ms)),
      itl_ns(ms_to_ns(options.itl_ms)),
      created_s(std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count()),
      timing(make_timing(*this)) {}

std::unique_ptr<TimingModel> make_timing(const ServerState& state) {
  return state.options.timing == Timing::Engine ? make_engine_timing(state)
                                                : make_fixed_timing(state);
}

}  // namespace detail

namespace {

/// Seconds to whole milliseconds, rounded up so a small positive limit never becomes "none".
std::chrono::milliseconds seconds_to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000)));
}

/// The connection cap: `requested`, or the descriptor limit minus a reserve for the
/// listener, the log and /health (`ServerOptions::max_connections`).
std::int64_t connection_cap(std::int64_t requested) {
  if (requested > 0)
    return requested;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return 0;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(limit.rlim_cur) - 64);
}

}  // namespace

bool is_loopback_host(std::string_view host) noexcept {
  if (host == "localhost" || host == "::1")
    return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(host), ec);
  return !ec && address.is_loopback();
}

Server::Server(ServerOptions options) {
  validate(options);
  state_ = std::make_unique<detail::ServerState>(std::move(options));
}

Server::~Server() {
  stop();
}

std::uint16_t Server::start() {
  if (listener_)
    throw Exception("server: start() called twice");
  const ServerOptions& options = state_->options;
  if (!options.emission_log_path.empty()) {
    state_->emission_log = std::make_unique<EmissionLog>(options.emission_log_path);
  }
  http::ListenerOptions listener_options;
  listener_options.host = options.host;
  listener_options.port = options.port;
  listener_options.threads = options.threads;
  listener_options.idle_timeout = seconds_to_ms(options.timeout_keep_alive_s);
  listener_options.header_timeout = seconds_to_ms(options.header_timeout_s);
  listener_options.body_timeout = seconds_to_ms(options.body_timeout_s);
  listener_options.max_connections = connection_cap(options.max_connections);
  if (!is_loopback_host(options.host)) {
    log::warn(
        "listening on {}: the simulated server is reachable from other machines (use "
        "--host 127.0.0.1 to keep it local)",
        options.host);
  }
  detail::ServerState* state = state_.get();
  state->timing->start();
  listener_ = std::make_unique<http::Listener>(
      listener_options, [state](http::ServerRequest& request, http::ResponseWriter& writer) {
        return detail::handle_request(*state, request, writer);
      });
  return listener_->start();
}

void Server::stop() {
  if (!listener_)
    return;
  // Waiters must not be woken on io_contexts that are being torn down.
  state_->timing->stop();
  listener_->stop();
  if (state_->emission_log)
    state_->emission_log->flush();
}

std::uint16_t Server::port() const noexcept {
  return listener_ ? listener_->port() : 0;
}

ServerStats Server::stats() const noexcept {
  const auto& s = *state_;
  constexpr auto relaxed = std::memory_order_relaxed;
  const detail::Gauges gauges = s.timing->gauges();
  ServerStats stats;
  stats.running = gauges.running;
  stats.waiting = gauges.waiting;
  stats.requests_total = s.requests_total.load(relaxed);
  stats.success_total = s.success_total.load(relaxed);
  stats.rejected_total = s.rejected_total.load(relaxed);
  stats.cancelled_total = s.cancelled_total.load(relaxed);
  stats.prompt_tokens_total = gauges.prompt_tokens;
  stats.generation_tokens_total = gauges.generation_tokens;
  stats.open_connections = listener_ ? listener_->open_connections() : 0;
  stats.refused_connections = listener_ ? listener_->refused_connections() : 0;
  return stats;
}

const ServerOptions& Server::options() const noexcept {
  return state_->options;
}

void write_port_file(const std::string& path, std::uint16_t port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << '\n';
    out.flush();
    if (!out)
      throw Exception(Error{"cannot write port file", tmp, -1});
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Exception(Error{
        std::string("cannot rename port file into place: ") + std::strerror(errno), path, -1});
  }
}

std::int64_t raise_open_file_limit() noexcept {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return -1;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
      limit = raised;
  }
  return static_cast<std::int64_t>(limit.rlim_cur);
}

int run_blocking(const ServerOptions& options,
                 const std::function<void(std::uint16_t port)>& on_ready) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &signals, &previous);
  struct RestoreMask {
    sigset_t mask;
    ~RestoreMask() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous};

  raise_open_file_limit();
  Server server(options);
  const std::uint16_t port = server.start();
  if (options.timing == Timing::Engine) {
    const auto& e = options.engine->spec;
    log::info(
        "serving model '{}' on http://{}:{}: simulated engine {} on {} x {} (TP{}), {} KV "
        "blocks of {} tokens, max_num_seqs {}, max_num_batched_tokens {}, prefix caching {}, "
        "{} thread(s)",
        options.model, options.host, port, e.model.name, e.memory.tp, e.gpu.name, e.memory.tp,
        e.engine.num_gpu_blocks, e.engine.block_size, e.engine.scheduler.max_num_seqs,
        e.engine.scheduler.max_num_batched_tokens,
        e.engine.scheduler.enable_prefix_caching ? "on" : "off", options.threads);
  } else {
    log::info(
        "serving model '{}' on http://{}:{} (fixed timing: ttft {} ms, itl {} ms, {} "
        "token(s)/chunk, max_num_seqs {}, {} thread(s))",
        options.model, options.host, port, options.ttft_ms, options.itl_ms,
        options.tokens_per_chunk, options.max_num_seqs, options.threads);
  }
  for (const auto& rule : options.faults.rules) {
    log::warn("injecting fault '{}' into {:.4g}% of generation requests (seed {})",
              fault_info(rule.kind).name, rule.rate * 100, options.faults.seed);
  }
  if (on_ready)
    on_ready(port);
  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  log::info("received signal {}, stopping", signal_number);
  server.stop();
  return signal_number;
}

}  // namespace llmbench::server
