// `llmbench serve`: the built-in OpenAI-compatible server, by default the simulated serving
// engine in real time (`--timing engine`), or the exact fixed timing model (`--timing fixed`).

#include "llmbench/app/tokenizers.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/server/server.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

/// Adds serve's connection limits (--timeout-keep-alive, --header-timeout, --body-timeout,
/// --max-connections) and fault injection flags (--fault and --fault-*, with a footer listing
/// `server::kFaultKinds`) bound to `opts`; returns the list the --fault values are parsed into.
std::shared_ptr<std::vector<std::string>> add_connection_and_fault_flags(
    CLI::App* sub, server::ServerOptions& opts) {
  // Connection limits.
  sub->add_option("--timeout-keep-alive", opts.timeout_keep_alive_s,
                  "Seconds an idle keep-alive connection is kept (0 = forever)")
      ->capture_default_str();
  sub->add_option("--header-timeout", opts.header_timeout_s,
                  "Seconds from a request's first byte to the end of its headers (0 = none)")
      ->capture_default_str();
  sub->add_option("--body-timeout", opts.body_timeout_s,
                  "Seconds to read a request body (0 = none)")
      ->capture_default_str();
  sub->add_option("--max-connections", opts.max_connections,
                  "Open connections at most, more get 503 (0 = the descriptor limit - 64)")
      ->capture_default_str();
  // Fault injection (docs/faults.md).
  auto faults = std::make_shared<std::vector<std::string>>();
  server::FaultSettings& fs = opts.faults;
  sub->add_option("--fault", *faults,
                  "Inject KIND[:rate] into that share of generation requests (repeatable; "
                  "kinds below)");
  sub->add_option("--fault-seed", fs.seed, "Seed of the fault assignment")->capture_default_str();
  sub->add_option("--fault-stall-s", fs.stall_s, "Seconds a stall lasts")->capture_default_str();
  sub->add_option("--fault-huge-event-bytes", fs.huge_event_bytes, "Size of the huge event")
      ->capture_default_str();
  sub->add_option("--fault-drip-bytes", fs.drip_bytes, "Bytes per write of a slow drip")
      ->capture_default_str();
  sub->add_option("--fault-drip-ms", fs.drip_ms, "Milliseconds between drip writes")
      ->capture_default_str();
  std::string kinds = "Fault kinds (--fault KIND[:rate], docs/faults.md):\n";
  for (const auto& info : server::kFaultKinds)
    kinds += fmt::format("  {:<16}{}\n", info.name, info.help);
  sub->footer(kinds);
  return faults;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "serve",
      "Run the built-in OpenAI-compatible server (the simulated serving engine in real time, or "
      "--timing fixed) on 127.0.0.1");
  auto flags = std::make_shared<ServeFlags>();
  auto port_file = std::make_shared<std::string>();
  server::ServerOptions& opts = flags->options;
  sub->add_option("--host", opts.host, "Listen address (loopback by default)")
      ->capture_default_str();
  sub->add_option("--port", opts.port, "TCP port; 0 picks a free one")->capture_default_str();
  sub->add_option("--port-file", *port_file, "Write the bound port to this file once listening");
  sub->add_option("--threads", opts.threads, "Worker threads")->capture_default_str();
  sub->add_option("--model,--served-model-name", flags->model,
                  "Model id to report (default: the model profile's name; llmbench-sim with "
                  "--timing fixed)");
  sub->add_option("--emission-log", opts.emission_log_path,
                  "Append one JSON line per request with the time each chunk was written");
  auto tokenizer_name = std::make_shared<std::string>();
  sub->add_option("--tokenizer", *tokenizer_name,
                  "Count prompt tokens exactly with this tokenizer (a tokenizer.json path or a "
                  "name under $LLMBENCH_DATA/tokenizers) instead of estimating them from bytes; "
                  "chat prompts are rendered with its chat template first, when it has one");
  add_server_flags(*sub, *flags, "");
  auto faults = add_connection_and_fault_flags(sub, opts);
  return [flags, port_file, tokenizer_name, faults] {
    check_serve_flags(*flags, "");
    for (const std::string& text : *faults) {
      auto rule = server::parse_fault(text, "--fault");
      if (!rule)
        throw Exception(rule.error());
      flags->options.faults.rules.push_back(*rule);
    }
    server::ServerOptions options = resolve_server_options(*flags, data_dir(), "");
    // As `run`'s built-in server: the same lookup (aliases too) and the same logs.
    const auto tok = app::load_tokenizer(*tokenizer_name);
    const auto chat_template = app::load_chat_template(*tokenizer_name);
    options.tokenizer = tok.get();
    options.chat_template = chat_template.get();
    server::run_blocking(options, [&](std::uint16_t port) {
      if (!port_file->empty()) {
        server::write_port_file(*port_file, port);
      }
    });
    return 0;
  };
}

}  // namespace llmbench::cli
