#include "llmbench/metrics/record_io.hpp"

#include "llmbench/core/json_string.hpp"

#include <fmt/core.h>
#include <simdjson.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

namespace llmbench::metrics {

namespace {

constexpr const char* kSource = "request record";

// --- writing -----------------------------------------------------------------------------------

void append_key(std::string& out, std::string_view key) {
  if (out.size() > 1) {
    out += ',';
  }
  out += '"';
  out += key;
  out += "\":";
}

/// Appends the decimal form of `value` (std::to_chars: no allocation, no locale).
void append_number(std::string& out, std::int64_t value) {
  std::array<char, 24> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  out.append(buf.data(), res.ptr);
}

void append_int(std::string& out, std::string_view key, std::int64_t value) {
  append_key(out, key);
  append_number(out, value);
}

char channel_code(Channel channel) noexcept {
  switch (channel) {
    case Channel::Reasoning:
      return 'r';
    case Channel::ToolCall:
      return 't';
    case Channel::Answer:
      break;
  }
  return 'a';
}

// --- reading -----------------------------------------------------------------------------------

// Reads one record field by field; every error names the field and the byte offset of its value
// (of its key for a missing or malformed value).
class LineReader {
 public:
  explicit LineReader(std::string_view line) : padded_(line) {}

  Result<RequestRecord> read() {
    simdjson::ondemand::document doc;
    if (auto error = parser().iterate(padded_).get(doc)) {
      return fail("", first_non_space(), fmt::format("not valid JSON ({})", message(error)));
    }
    simdjson::ondemand::object object;
    if (auto error = doc.get_object().get(object)) {
      const std::int64_t start = first_non_space();
      if (start < static_cast<std::int64_t>(padded_.size()) && padded_.data()[start] == '{') {
        return diagnose_object_bounds(start, error);
      }
      return fail("", start, fmt::format("expected a JSON object ({})", message(error)));
    }
    RequestRecord record;
    bool has_ok = false;
    bool ok_value = true;
    for (auto field_result : object) {
      simdjson::ondemand::field field;
      if (auto error = std::move(field_result).get(field)) {
        return fail("", location(doc), fmt::format("malformed object ({})", message(error)));
      }
      const std::int64_t key_offset = offset_of(field.key().raw()) - 1;
      std::string_view key;
      if (auto error = field.unescaped_key().get(key)) {
        return fail("", key_offset, fmt::format("malformed key ({})", message(error)));
      }
      simdjson::ondemand::value value = field.value();
      const std::int64_t at = offset_of(value.raw_json_token().data());
      field_ = std::string(key);
      offset_ = at;
      bool good = true;
      if (key == "id") {
        good = read_int(value, record.id);
      } else if (key == "warmup") {
        good = read_bool(value, record.warmup);
      } else if (key == "scheduled_ns") {
        good = read_int(value, record.scheduled_ns);
      } else if (key == "slot_ns") {
        good = read_int(value, record.slot_ns);
      } else if (key == "sent_ns") {
        good = read_int(value, record.sent_ns);
      } else if (key == "headers_ns") {
        good = read_int(value, record.headers_ns);
      } else if (key == "done_ns") {
        good = read_int(value, record.done_ns);
      } else if (key == "http_status") {
        std::int64_t status = 0;
        good = read_int(value, status, 0, 999);
        record.http_status = static_cast<int>(status);
      } else if (key == "ok") {
        has_ok = true;
        good = read_bool(value, ok_value);
      } else if (key == "error_kind") {
        std::string name;
        good = read_string(value, name);
        record.error_kind = error_kind_from_string(name);
      } else if (key == "error_message") {
        good = read_string(value, record.error_message);
      } else if (key == "input_tokens") {
        good = read_int(value, record.input_tokens);
      } else if (key == "output_tokens") {
        good = read_int(value, record.output_tokens);
      } else if (key == "output_tokens_local") {
        good = read_int(value, record.output_tokens_local);
      } else if (key == "input_tokens_local") {
        good = read_int(value, record.input_tokens_local);
      } else if (key == "output_tokens_local_source") {
        std::string name;
        good = read_string(value, name);
        record.output_tokens_local_source = local_count_from_string(name);
      } else if (key == "reasoning_tokens") {
        good = read_int(value, record.reasoning_tokens);
      } else if (key == "cached_tokens") {
        good = read_int(value, record.cached_tokens);
      } else if (key == "prompt_len") {
        good = read_int(value, record.prompt_len);
      } else if (key == "max_tokens") {
        good = read_int(value, record.max_tokens);
      } else if (key == "finish_reason") {
        good = read_string(value, record.finish_reason);
      } else if (key == "server_prompt_ms") {
        good = read_double(value, record.server_prompt_ms);
      } else if (key == "server_predicted_ms") {
        good = read_double(value, record.server_predicted_ms);
      } else if (key == "conversation_id") {
        good = read_int(value, record.conversation_id, -1);
      } else if (key == "turn") {
        good = read_int(value, record.turn, -1, std::numeric_limits<std::int32_t>::max());
      } else if (key == "rank") {
        good = read_int(value, record.rank, -1, std::numeric_limits<std::int32_t>::max());
      } else if (key == "chunks") {
        good = read_chunks(value, record.chunks);
      } else {
        // Unknown keys are skipped (the iterator steps over the unread value) so records
        // written by a newer version stay readable.
      }
      if (!good) {
        return fail(field_, offset_, error_);
      }
    }
    field_.clear();
    // current_location() reports OUT_OF_BOUNDS exactly when every token has been consumed.
    if (const char* rest = nullptr; doc.current_location().get(rest) == simdjson::SUCCESS) {
      return fail("", offset_of(rest), "unexpected content after the JSON object");
    }
    if (has_ok && ok_value != record.ok()) {
      return fail("ok", -1,
                  fmt::format("'ok' is {} but error_kind is '{}'", ok_value ? "true" : "false",
                              to_string(record.error_kind)));
    }
    return record;
  }

 private:
  static simdjson::ondemand::parser& parser() {
    thread_local simdjson::ondemand::parser instance;
    return instance;
  }

  static std::string message(simdjson::error_code error) { return simdjson::error_message(error); }

  std::int64_t offset_of(const char* p) const noexcept {
    if (p == nullptr || p < padded_.data() || p > padded_.data() + padded_.size()) {
      return -1;
    }
    return static_cast<std::int64_t>(p - padded_.data());
  }

  std::int64_t location(simdjson::ondemand::document& doc) const noexcept {
    const char* p = nullptr;
    if (doc.current_location().get(p)) {
      return static_cast<std::int64_t>(padded_.size());
    }
    return offset_of(p);
  }

  std::int64_t first_non_space() const noexcept {
    std::size_t i = 0;
    const std::string_view s(padded_.data(), padded_.size());
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) {
      ++i;
    }
    return static_cast<std::int64_t>(i);
  }

  // simdjson rejects a root object whose last token is not its closing brace without saying
  // where; find the brace that closes the object at `start` to point at the real problem.
  Error diagnose_object_bounds(std::int64_t start, simdjson::error_code error) const {
    const std::string_view s(padded_.data(), padded_.size());
    int depth = 0;
    bool in_string = false;
    for (auto i = static_cast<std::size_t>(start); i < s.size(); ++i) {
      const char c = s[i];
      if (in_string) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        std::size_t rest = i + 1;
        while (rest < s.size() &&
               (s[rest] == ' ' || s[rest] == '\t' || s[rest] == '\r' || s[rest] == '\n')) {
          ++rest;
        }
        if (rest < s.size()) {
          return fail("", static_cast<std::int64_t>(rest),
                      "unexpected content after the JSON object");
        }
        break;
      }
    }
    if (depth > 0) {
      return fail("", static_cast<std::int64_t>(s.size()),
                  "the JSON object is not closed (truncated line?)");
    }
    return fail("", start, fmt::format("malformed JSON object ({})", message(error)));
  }

  Error fail(const std::string& field, std::int64_t offset, std::string text) const {
    std::string source = kSource;
    if (!field.empty()) {
      source += fmt::format(" field '{}'", field);
    }
    return Error{std::move(text), std::move(source), offset};
  }

  bool set_error(std::int64_t offset, std::string text) {
    offset_ = offset;
    error_ = std::move(text);
    return false;
  }

  bool read_int(simdjson::ondemand::value& value, std::int64_t& out,
                std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    const std::int64_t at = offset_of(value.raw_json_token().data());
    std::int64_t v = 0;
    if (auto error = value.get_int64().get(v)) {
      return set_error(at, fmt::format("expected an integer ({})", message(error)));
    }
    if (v < min || v > max) {
      return set_error(at, fmt::format("{} is out of range [{}, {}]", v, min, max));
    }
    out = v;
    return true;
  }

  bool read_double(simdjson::ondemand::value& value, double& out) {
    const std::int64_t at = offset_of(value.raw_json_token().data());
    if (auto error = value.get_double().get(out)) {
      return set_error(at, fmt::format("expected a number ({})", message(error)));
    }
    return true;
  }

  bool read_bool(simdjson::ondemand::value& value, bool& out) {
    const std::int64_t at = offset_of(value.raw_json_token().data());
    if (auto error = value.get_bool().get(out)) {
      return set_error(at, fmt::format("expected true or false ({})", message(error)));
    }
    return true;
  }

  bool read_string(simdjson::ondemand::value& value, std::string& out) {
    const std::int64_t at = offset_of(value.raw_json_token().data());
    std::string_view s;
    if (auto error = value.get_string().get(s)) {
      return set_error(at, fmt::format("expected a string ({})", message(error)));
    }
    out.assign(s);
    return true;
  }

  // "chunks": [[time_ns, tokens, bytes, "a"|"r"|"t"], ...]
  bool read_chunks(simdjson::ondemand::value& value, std::vector<Chunk>& out) {
    simdjson::ondemand::array chunks;
    if (auto error = value.get_array().get(chunks)) {
      return set_error(offset_, fmt::format("expected an array ({})", message(error)));
    }
    std::size_t index = 0;
    for (auto item_result : chunks) {
      simdjson::ondemand::value item;
      if (auto error = item_result.get(item)) {
        return set_error(offset_, fmt::format("malformed chunk {} ({})", index, message(error)));
      }
      const std::int64_t item_at = offset_of(item.raw_json_token().data());
      simdjson::ondemand::array parts;
      if (auto error = item.get_array().get(parts)) {
        return set_error(item_at, fmt::format("chunk {}: expected [time_ns, tokens, bytes, "
                                              "channel] ({})",
                                              index, message(error)));
      }
      Chunk chunk;
      std::size_t part = 0;
      for (auto part_result : parts) {
        simdjson::ondemand::value v;
        if (auto error = part_result.get(v)) {
          return set_error(item_at, fmt::format("chunk {}: malformed ({})", index, message(error)));
        }
        std::int64_t number = 0;
        const std::int64_t part_at = offset_of(v.raw_json_token().data());
        constexpr std::array<const char*, 4> kNames = {"time_ns", "tokens", "bytes", "channel"};
        if (part >= 4) {
          return set_error(item_at, fmt::format("chunk {}: more than 4 elements", index));
        }
        bool good = true;
        if (part == 0) {
          good = read_int(v, number);
          chunk.time_ns = number;
        } else if (part == 1 || part == 2) {
          good = read_int(v, number, part == 1 ? -1 : 0, std::numeric_limits<std::int32_t>::max());
          (part == 1 ? chunk.tokens : chunk.bytes) = static_cast<std::int32_t>(number);
        } else {
          std::string code;
          good = read_string(v, code);
          if (good && code == "a") {
            chunk.channel = Channel::Answer;
          } else if (good && code == "r") {
            chunk.channel = Channel::Reasoning;
          } else if (good && code == "t") {
            chunk.channel = Channel::ToolCall;
          } else if (good) {
            good = set_error(part_at,
                             fmt::format("unknown channel \"{}\" (expected a, r or t)", code));
          }
        }
        if (!good) {
          error_ = fmt::format("chunk {} {}: {}", index, kNames[part], error_);
          return false;
        }
        ++part;
      }
      if (part != 4) {
        return set_error(item_at,
                         fmt::format("chunk {}: expected 4 elements, got {}", index, part));
      }
      out.push_back(chunk);
      ++index;
    }
    return true;
  }

  simdjson::padded_string padded_;
  std::string field_;
  std::int64_t offset_ = -1;
  std::string error_;
};

}  // namespace

std::string record_to_json_line(const RequestRecord& r) {
  std::string out;
  out.reserve(320 + r.chunks.size() * 24 + r.error_message.size());
  out += '{';
  append_int(out, "id", r.id);
  append_key(out, "warmup");
  out += r.warmup ? "true" : "false";
  append_int(out, "scheduled_ns", r.scheduled_ns);
  append_int(out, "slot_ns", r.slot_ns);
  append_int(out, "sent_ns", r.sent_ns);
  append_int(out, "headers_ns", r.headers_ns);
  append_int(out, "done_ns", r.done_ns);
  append_int(out, "http_status", r.http_status);
  append_key(out, "ok");
  out += r.ok() ? "true" : "false";
  append_key(out, "error_kind");
  append_json_string(out, to_string(r.error_kind));
  append_key(out, "error_message");
  append_json_string(out, r.error_message);
  append_int(out, "input_tokens", r.input_tokens);
  append_int(out, "output_tokens", r.output_tokens);
  append_int(out, "input_tokens_local", r.input_tokens_local);
  append_int(out, "output_tokens_local", r.output_tokens_local);
  if (r.output_tokens_local_source != LocalCount::None) {
    append_key(out, "output_tokens_local_source");
    append_json_string(out, to_string(r.output_tokens_local_source));
  }
  append_int(out, "reasoning_tokens", r.reasoning_tokens);
  append_int(out, "cached_tokens", r.cached_tokens);
  append_int(out, "prompt_len", r.prompt_len);
  append_int(out, "max_tokens", r.max_tokens);
  append_key(out, "finish_reason");
  append_json_string(out, r.finish_reason);
  // Server-reported timings (llama.cpp `timings`) only when the server sent them.
  if (r.server_prompt_ms >= 0 && std::isfinite(r.server_prompt_ms)) {
    append_key(out, "server_prompt_ms");
    fmt::format_to(std::back_inserter(out), "{}", r.server_prompt_ms);
  }
  if (r.server_predicted_ms >= 0 && std::isfinite(r.server_predicted_ms)) {
    append_key(out, "server_predicted_ms");
    fmt::format_to(std::back_inserter(out), "{}", r.server_predicted_ms);
  }
  // Multi-turn runs only: a single-turn line is byte for byte what it was before.
  if (r.conversation_id >= 0) {
    append_int(out, "conversation_id", r.conversation_id);
  }
  if (r.turn >= 1) {
    append_int(out, "turn", r.turn);
  }
  if (r.rank >= 0) {
    append_int(out, "rank", r.rank);
  }
  append_key(out, "chunks");
  out += '[';
  // The hot part of a long stream's line: one small array per chunk, written without fmt
  // (format_to through a back_insert_iterator cost ~400 ns per chunk; this is a few tens).
  out.reserve(out.size() + r.chunks.size() * 32 + 2);
  for (std::size_t i = 0; i < r.chunks.size(); ++i) {
    const Chunk& c = r.chunks[i];
    out += i == 0 ? "[" : ",[";
    append_number(out, c.time_ns);
    out += ',';
    append_number(out, c.tokens);
    out += ',';
    append_number(out, c.bytes);
    out += ",\"";
    out += channel_code(c.channel);
    out += "\"]";
  }
  out += "]}";
  return out;
}

Result<RequestRecord> record_from_json_line(std::string_view line) {
  LineReader reader(line);
  return reader.read();
}

}  // namespace llmbench::metrics
