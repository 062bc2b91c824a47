// File readers for the fixed datasets: ShareGPT (JSON array), MT-Bench and custom prompts (JSONL).
// ShareGPT files can be large (the unfiltered ShareGPT_V3 file vLLM documents is ~640 MB), so it
// is parsed with simdjson; nlohmann::json re-parses only to locate a syntax error, and parses the
// short JSONL lines, where its error positions are the most useful.

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/workload/dataset.hpp"
#include "llmbench/workload/detail/jsonl.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>

namespace llmbench::workload::detail {
namespace {

/// Estimated prompt tokens of a chat (sum of the message contents).
std::int64_t estimate_messages(const ChatMessages& messages) {
  TextTokenEstimate counter;
  for (const auto& m : messages) {
    counter.add(m.content);
  }
  return counter.value();
}

}  // namespace

std::vector<std::string> text_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    fail(path, "no such file or folder");
  }
  if (!fs::is_directory(status)) {
    return {path};
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".txt") {
      files.push_back(entry.path().string());
    }
  }
  if (ec) {
    fail(path, "cannot list folder: " + ec.message());
  }
  if (files.empty()) {
    fail(path, "folder has no .txt files");
  }
  std::sort(files.begin(), files.end());
  return files;
}

// ---- ShareGPT ----

namespace {

/// The human turns of one conversation (at most `limit`), each with the estimated length of the
/// reply right after it (-1: none): a turn that is neither human nor system ("gpt", "chatgpt",
/// "bing", ...) answers the human turn before it. Single-turn (`turn_limit` <= 0) stops after the
/// first reply.
std::vector<ConversationTurn> human_turns(simdjson::dom::array turns, std::int64_t limit,
                                          std::int64_t turn_limit, const std::string& path,
                                          std::size_t index, const std::string& source_id) {
  std::vector<ConversationTurn> kept;
  bool awaiting_reply = false;  // the last kept human turn has no reply yet
  for (const simdjson::dom::element turn : turns) {
    std::string_view from;
    std::string_view value;
    if (turn["from"].get_string().get(from) != simdjson::SUCCESS ||
        turn["value"].get_string().get(value) != simdjson::SUCCESS) {
      fail(path,
           fmt::format("entry {} ({}): a turn lacks string \"from\"/\"value\"", index, source_id));
    }
    const bool human = from == "human" || from == "user";
    if (human) {
      if (static_cast<std::int64_t>(kept.size()) == limit) {
        break;
      }
      kept.push_back({.content = std::string(value), .output_len = -1});
      awaiting_reply = true;
      continue;
    }
    // Only the turn right after a human turn can be its reply (a system turn is none).
    const bool right_after_human = awaiting_reply;
    awaiting_reply = false;
    if (right_after_human && from != "system") {
      kept.back().output_len = std::max<std::int64_t>(1, estimate_text_tokens(value));
    }
    if (right_after_human && turn_limit <= 0) {
      break;
    }
  }
  return kept;
}

}  // namespace

std::vector<Sample> load_sharegpt(const std::string& path, std::int64_t output_len,
                                  std::uint64_t max_file_bytes, std::int64_t turn_limit) {
  return parse_sharegpt(read_file(path, max_file_bytes).value(), path, output_len, turn_limit);
}

std::vector<Sample> parse_sharegpt(const std::string& text, const std::string& path,
                                   std::int64_t output_len, std::int64_t turn_limit) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  // `read_file` leaves simdjson's padding as spare capacity, so this parse copies nothing.
  if (const auto err = parser.parse(text).get(root); err != simdjson::SUCCESS) {
    // Re-parse with nlohmann only to say where the syntax error is.
    try {
      const auto reparsed = nlohmann::json::parse(text);
      (void)reparsed;
    } catch (const nlohmann::json::parse_error& e) {
      const auto at = e.byte > 0 ? e.byte - 1 : 0;
      fail(path,
           fmt::format("line {}: not valid JSON: {}", line_of(text, at), clean_parse_message(e)),
           static_cast<std::int64_t>(at));
    } catch (const nlohmann::json::exception&) {
      // nlohmann rejects what it cannot hold (a number beyond double's range) without a
      // position: simdjson's message below says what is wrong.
    }
    fail(path, std::string("not valid JSON: ") + simdjson::error_message(err));
  }
  simdjson::dom::array entries;
  if (root.get_array().get(entries) != simdjson::SUCCESS) {
    fail(path, "expected a JSON array of conversations at the top level");
  }
  // Single-turn: the first human turn only (vLLM's ShareGPT sampling).
  const std::int64_t limit = turn_limit > 0 ? turn_limit : 1;
  std::vector<Sample> samples;
  std::size_t index = 0;
  std::size_t no_human = 0;        // conversations without a human turn: skipped
  std::vector<Sample> unanswered;  // single-turn prompts without a reply (said at the end)
  for (const simdjson::dom::element entry : entries) {
    const std::size_t this_index = index++;
    simdjson::dom::object object;
    if (entry.get_object().get(object) != simdjson::SUCCESS) {
      fail(path, fmt::format("entry {}: expected an object", this_index));
    }
    std::string_view id;
    std::string source_id = object["id"].get_string().get(id) == simdjson::SUCCESS
                                ? fmt::format("sharegpt:{}", id)
                                : fmt::format("sharegpt:#{}", this_index);
    simdjson::dom::array turns;
    if (object["conversations"].get_array().get(turns) != simdjson::SUCCESS) {
      fail(path, fmt::format("entry {} ({}): \"conversations\" is missing or not an array",
                             this_index, source_id));
    }
    std::vector<ConversationTurn> kept =
        human_turns(turns, limit, turn_limit, path, this_index, source_id);
    if (kept.empty()) {
      ++no_human;
      continue;
    }
    // vLLM's rule for a single-turn run (`ShareGPTDataset`: a conversation needs two turns, the
    // second the reply, whose length is the output length): a prompt nobody answered is
    // dropped, even with --output-len, rather than given a made-up output length.
    const bool answered = turn_limit > 0 || kept.front().output_len >= 0;
    for (auto& t : kept) {
      t.output_len = choose_output_len(output_len, t.output_len);
    }
    Sample sample;
    sample.prompt = kept.front().content;
    sample.prompt_len = estimate_text_tokens(sample.prompt);
    sample.output_len = kept.front().output_len;
    sample.source_id = std::move(source_id);
    if (turn_limit > 0) {
      sample.turns = std::move(kept);
    }
    (answered ? samples : unanswered).push_back(std::move(sample));
  }
  if (samples.empty() && !unanswered.empty()) {
    // A prompt-only file (every reply stripped): vLLM would use none of it. Its prompts are kept
    // so that such files stay usable, with an output length that is said, not silent.
    log::warn(
        "{}: none of its {} conversations has a reply turn, so no output length comes from the "
        "file (vLLM would use none of them): every prompt gets {} output tokens{}",
        path, unanswered.size(), unanswered.front().output_len,
        output_len > 0 ? " (--output-len)" : " (the default; set --output-len)");
    return unanswered;
  }
  if (no_human + unanswered.size() > 0) {
    log::info(
        "{}: {} of {} conversations used; dropped {} without a reply to their first human turn "
        "and {} without a human turn (as vLLM samples ShareGPT: the reply's length is the "
        "output length)",
        path, samples.size(), index, unanswered.size(), no_human);
  }
  return samples;
}

// ---- MT-Bench ----

std::vector<Sample> load_mtbench(const std::string& path, std::int64_t output_len,
                                 std::uint64_t max_file_bytes, std::int64_t turn_limit) {
  return parse_mtbench(read_file(path, max_file_bytes).value(), path, output_len, turn_limit);
}

std::vector<Sample> parse_mtbench(std::string_view text, const std::string& path,
                                  std::int64_t output_len, std::int64_t turn_limit) {
  std::vector<Sample> samples;
  for_each_jsonl(text, path, [&](const JsonlLine& line) {
    const auto& v = line.value;
    const auto id = v.find("question_id");
    if (id == v.end() || !(id->is_number_integer() || id->is_string())) {
      fail_line(path, line.number, "missing \"question_id\" (integer)", line.offset);
    }
    const auto turns = v.find("turns");
    if (turns == v.end() || !turns->is_array() || turns->empty() || !(*turns)[0].is_string()) {
      fail_line(path, line.number, "\"turns\" must be a non-empty array of strings", line.offset);
    }
    Sample sample;
    sample.prompt = (*turns)[0].get<std::string>();
    sample.prompt_len = estimate_text_tokens(sample.prompt);
    sample.output_len = choose_output_len(output_len, -1);
    sample.source_id = "mtbench:" + (id->is_string() ? id->get<std::string>() : id->dump());
    if (turn_limit > 0) {
      const auto n = std::min<std::size_t>(turns->size(), static_cast<std::size_t>(turn_limit));
      for (std::size_t i = 0; i < n; ++i) {
        if (!(*turns)[i].is_string()) {
          fail_line(path, line.number, fmt::format("turns[{}] must be a string", i), line.offset);
        }
        sample.turns.push_back(
            {.content = (*turns)[i].get<std::string>(), .output_len = sample.output_len});
      }
    }
    samples.push_back(std::move(sample));
  });
  return samples;
}

// ---- custom JSONL ----

std::vector<Sample> load_custom(const std::string& path, std::int64_t output_len,
                                std::uint64_t max_file_bytes) {
  return parse_custom(read_file(path, max_file_bytes).value(), path, output_len);
}

std::vector<Sample> parse_custom(std::string_view text, const std::string& path,
                                 std::int64_t output_len) {
  std::vector<Sample> samples;
  for_each_jsonl(text, path, [&](const JsonlLine& line) {
    const auto& v = line.value;
    Sample sample;
    const auto prompt = v.find("prompt");
    const auto messages = v.find("messages");
    if (prompt == v.end() && messages == v.end()) {
      fail_line(path, line.number, "missing \"prompt\" or \"messages\"", line.offset);
    }
    if (prompt != v.end()) {
      if (!prompt->is_string() || prompt->get_ref<const std::string&>().empty()) {
        fail_line(path, line.number, "\"prompt\" must be a non-empty string", line.offset);
      }
      sample.prompt = prompt->get<std::string>();
    }
    if (messages != v.end()) {
      if (!messages->is_array() || messages->empty()) {
        fail_line(path, line.number, "\"messages\" must be a non-empty array", line.offset);
      }
      for (std::size_t i = 0; i < messages->size(); ++i) {
        const auto& m = (*messages)[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() ||
            !m.contains("content") || !m["content"].is_string()) {
          fail_line(path, line.number,
                    fmt::format("messages[{}] must be an object with string \"role\" and "
                                "\"content\"",
                                i),
                    line.offset);
        }
        sample.messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
      }
      if (prompt == v.end()) {
        // Completions endpoints get the last user message (or the last message if none is
        // from the user).
        const auto user = std::find_if(sample.messages.rbegin(), sample.messages.rend(),
                                       [](const ChatMessage& m) { return m.role == "user"; });
        sample.prompt =
            user != sample.messages.rend() ? user->content : sample.messages.back().content;
      }
    }
    std::int64_t own = -1;
    if (const auto len = v.find("output_len"); len != v.end()) {
      if (len->is_number_unsigned()) {
        const auto u = len->get<std::uint64_t>();
        own = u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                  ? 0
                  : static_cast<std::int64_t>(u);
      } else if (len->is_number_integer()) {
        own = len->get<std::int64_t>();
      } else {
        own = 0;
      }
      if (own <= 0) {
        fail_line(path, line.number,
                  fmt::format("\"output_len\" must be a positive integer, got {}", len->dump()),
                  line.offset);
      }
    }
    sample.prompt_len = sample.messages.empty() ? estimate_text_tokens(sample.prompt)
                                                : estimate_messages(sample.messages);
    sample.output_len = choose_output_len(output_len, own);
    sample.source_id = fmt::format("line {}", line.number);
    samples.push_back(std::move(sample));
  });
  return samples;
}

}  // namespace llmbench::workload::detail
