#include "llmbench/cli/vllm_flags.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/suggest.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace llmbench::cli {

namespace {

constexpr auto kIgnored = PeerFlagRule::Ignored;
constexpr auto kRefused = PeerFlagRule::Refused;
constexpr std::string_view kNoHub =
    "llmbench reads local files (--dataset-path), not the Hugging Face Hub";
constexpr std::string_view kNoMm = "llmbench sends text prompts only, no images";
constexpr std::string_view kPlot = "the HTML report (--report FILE.html) has the timeline";

}  // namespace

const std::vector<PeerFlag>& vllm_peer_flags() {
  static const std::vector<PeerFlag> table{
      {"--trust-remote-code", 0, kIgnored,
       "llmbench runs no model code: tokenizers are read from tokenizer.json"},
      {"--tokenizer-mode", 1, kIgnored, "llmbench reads tokenizer.json (vLLM's 'hf' mode)"},
      {"--skip-tokenizer-init", 0, kIgnored, "without --tokenizer llmbench loads none"},
      {"--request-id-prefix", 1, kIgnored, "requests carry X-Request-Id: llmbench-<n>"},
      {"--logprobs", 1, kIgnored,
       "not sent; give --extra-body '{\"logprobs\": N}' to have the server compute them"},
      {"--use-beam-search", 0, kIgnored, "vllm bench serve does not send it either"},
      {"--profile", 0, kIgnored,
       "llmbench does not call /start_profile and /stop_profile; profile on the server"},
      {"--endpoint-type", 1, kIgnored, "read as --backend (vLLM's older name)"},
      {"--hf-split", 1, kIgnored, kNoHub},
      {"--hf-subset", 1, kIgnored, kNoHub},
      {"--hf-name", 1, kIgnored, kNoHub},
      {"--hf-output-len", 1, kIgnored, "give --output-len"},
      {"--no-oversample", 0, kIgnored,
       "llmbench repeats a dataset's prompts to reach --num-prompts and says so"},
      {"--skip-chat-template", 0, kIgnored,
       "prompts are sent as the dataset gives them; chat backends leave the template to the "
       "server"},
      {"--custom-skip-chat-template", 0, kIgnored,
       "prompts are sent as the dataset gives them; chat backends leave the template to the "
       "server"},
      {"--disable-shuffle", 0, kIgnored, "llmbench draws prompts in an order fixed by --seed"},
      {"--random-batch-size", 1, kIgnored, "one prompt per request"},
      {"--self-timed", 0, kIgnored,
       "--dataset-name trace keeps the trace's times unless --request-rate is given"},
      {"--no-self-timed", 0, kIgnored, "give --request-rate with --dataset-name trace"},
      {"--probe-request-rate", 1, kIgnored, "no side probe requests are sent"},
      {"--chat-template-kwargs", 1, kIgnored,
       "give --extra-body '{\"chat_template_kwargs\": {...}}' for the server's template"},
      {"--plot-timeline", 0, kIgnored, kPlot},
      {"--timeline-itl-thresholds", 1, kIgnored, kPlot},
      {"--plot-dataset-stats", 0, kIgnored, kPlot},
      {"--lora-modules", -1, kRefused,
       "llmbench sends every request to the one --model; it cannot spread them over LoRA "
       "adapters"},
      {"--lora-assignment", 1, kRefused,
       "llmbench sends every request to the one --model; it cannot spread them over LoRA "
       "adapters"},
      {"--random-mm-input-len", 1, kRefused, kNoMm},
      {"--random-mm-output-len", 1, kRefused, kNoMm},
      {"--random-mm-range-ratio", 1, kRefused, kNoMm},
      {"--random-mm-prefix-len", 1, kRefused, kNoMm},
      {"--random-mm-base-items-per-request", 1, kRefused, kNoMm},
      {"--random-mm-num-mm-items-range-ratio", 1, kRefused, kNoMm},
      {"--random-mm-limit-mm-per-prompt", 1, kRefused, kNoMm},
      {"--random-mm-bucket-config", 1, kRefused, kNoMm},
  };
  return table;
}

void add_vllm_peer_flags(CLI::App& app, std::string& endpoint_type) {
  for (const auto& p : vllm_peer_flags()) {
    const std::string name(p.flag);
    if (name == "--endpoint-type") {
      app.add_option(name, endpoint_type, "vllm bench serve's older name for --backend")->group("");
      continue;
    }
    const std::string help = fmt::format("vllm bench serve's {}: {}{}", name,
                                         p.rule == kRefused ? "refused, " : "", p.note);
    CLI::Option* opt = nullptr;
    if (p.arity == 0) {
      opt = app.add_flag(name, help);
    } else {
      opt = app.add_option(name, help)
                ->type_size(1)
                ->expected(1, p.arity < 0 ? -1 : 1)
                ->allow_extra_args(p.arity < 0);
    }
    opt->group("");
  }
}

std::string vllm_peer_flag_warning(const std::vector<std::string>& given) {
  std::string ignored;
  for (const auto& p : vllm_peer_flags()) {
    if (std::find(given.begin(), given.end(), p.flag) == given.end())
      continue;
    if (p.rule == kRefused) {
      throw Exception(Error{fmt::format("vllm bench serve's flag is refused: {}", p.note),
                            std::string(p.flag), -1});
    }
    ignored += fmt::format("{}{} ({})", ignored.empty() ? "" : "; ", p.flag, p.note);
  }
  return ignored.empty() ? ignored
                         : "vllm bench serve flags accepted without effect here: " + ignored;
}

namespace {

/// Every long name of `app`'s options, "--name".
std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> known;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& n : opt->get_lnames()) known.push_back("--" + n);
  }
  return known;
}

}  // namespace

std::vector<std::string> expand_flag_prefixes(const CLI::App& app, std::vector<std::string>& args) {
  const auto known = long_names(app);
  std::vector<std::string> notes;
  for (auto& arg : args) {
    if (arg.size() < 4 || arg.rfind("--", 0) != 0)
      continue;
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (std::find(known.begin(), known.end(), name) != known.end())
      continue;
    const std::string* match = nullptr;
    std::size_t matches = 0;
    for (const auto& k : known) {
      if (k.rfind(name, 0) == 0) {
        match = &k;
        ++matches;
      }
    }
    if (matches != 1)
      continue;
    notes.push_back(fmt::format("{} read as {} (the one flag it starts)", name, *match));
    arg = *match + (eq == std::string::npos ? "" : arg.substr(eq));
  }
  return notes;
}

std::string unknown_flag_message(const CLI::App& app, const std::vector<std::string>& args) {
  const auto known = long_names(app);
  for (const auto& arg : args) {
    if (arg.size() < 3 || arg.rfind("--", 0) != 0)
      continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end())
      continue;
    return fmt::format("unknown flag {}{}; llmbench {} --help lists them", name,
                       did_you_mean(name, known), app.get_name());
  }
  return "";
}

}  // namespace llmbench::cli
