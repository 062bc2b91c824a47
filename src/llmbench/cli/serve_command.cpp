// `llmbench serve`: the built-in OpenAI-compatible server, by default the simulated serving
// engine in real time (`--timing engine`), or the exact fixed timing model (`--timing fixed`).

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/server/server.hpp"
#include "llmbench/tokenizer/resolve.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace llmbench::cli {

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
                  "name under $LLMBENCH_DATA/tokenizers) instead of estimating them from bytes");
  add_server_flags(*sub, *flags, "");
  return [flags, port_file, tokenizer_name, sub] {
    check_serve_flags(*flags, given_flags(*sub), "");
    server::ServerOptions options = resolve_server_options(*flags, data_dir(), "");
    std::optional<tokenizer::ResolvedTokenizer> tok;
    if (!tokenizer_name->empty()) {
      auto resolved = tokenizer::load_tokenizer(*tokenizer_name);
      if (!resolved)
        throw Exception(Error{resolved.error().what(), "--tokenizer", -1});
      tok.emplace(std::move(*resolved));
      options.tokenizer = &tok->tokenizer;
      log::info("prompt tokens are counted with {}", tok->path.string());
    }
    server::run_blocking(options, [&](std::uint16_t port) {
      if (!port_file->empty()) {
        server::write_port_file(*port_file, port);
      }
    });
    return 0;
  };
}

}  // namespace llmbench::cli
