#pragma once
/// @file
/// The flags of `vllm bench serve` that `llmbench run` has no flag for under that name, so that a
/// pasted vLLM command line runs: each is accepted and named in one warning (with what llmbench
/// does instead), or refused with a one-line reason that names it when ignoring it would measure
/// another load (docs/peer-flags.md). Flag names, arities and meanings are those of vLLM's
/// `vllm/benchmarks/serve.py` and `vllm/benchmarks/datasets.py` (`add_cli_args`,
/// `add_dataset_parser`). Unknown flags get "did you mean" (`unknown_flag_message`).

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::cli {

/// What `llmbench run` does with a `vllm bench serve` flag it has no flag for.
enum class PeerFlagRule : std::uint8_t {
  Ignored,  ///< accepted; named in one warning with `PeerFlag::note`
  Refused,  ///< an error naming the flag, with `PeerFlag::note` as the reason
};

/// One `vllm bench serve` flag llmbench does not have under that name.
struct PeerFlag {
  std::string_view flag;  ///< "--trust-remote-code"
  int arity;              ///< 0: store_true; 1: one value; -1: one or more (argparse nargs="+")
  PeerFlagRule rule;
  std::string_view note;  ///< what llmbench does instead, or why it refuses
};

/// Every such flag (one table; `tests/unit/cli/vllm_flags_test.cpp` checks each is accepted or
/// refused as the table says).
const std::vector<PeerFlag>& vllm_peer_flags();

/// Registers every flag of `vllm_peer_flags` on `app`, hidden from `--help` (docs/peer-flags.md
/// lists them); values are parsed by CLI11 and dropped, but for `--endpoint-type` (vLLM's older
/// name for `--backend`), stored in `endpoint_type`.
void add_vllm_peer_flags(CLI::App& app, std::string& endpoint_type);

/// For `given` (the flags given, "--name"): throws `Exception` naming the first refused one;
/// else returns one warning naming every ignored one with its note, or "" when none was given.
std::string vllm_peer_flag_warning(const std::vector<std::string>& given);

/// Rewrites each `--flag` of `args` (after the subcommand) that `app` does not know but that is
/// the start of exactly one flag it knows into that flag ("--random-input 2048" is
/// "--random-input-len 2048"), as Python's argparse does for `vllm bench serve` (allow_abbrev);
/// returns one note per flag rewritten.
std::vector<std::string> expand_flag_prefixes(const CLI::App& app, std::vector<std::string>& args);

/// For a command line `args` (after the subcommand) that `app` rejected: "unknown flag --x (did
/// you mean '--y'?); llmbench <name> --help lists them" for the first `--flag` that `app` does
/// not know, or "" when every `--flag` is known (the rejection was about something else).
std::string unknown_flag_message(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace llmbench::cli
