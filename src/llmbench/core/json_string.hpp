#pragma once
/// @file
/// JSON string writing shared by the hand-written JSON emitters on hot paths (per-request JSONL,
/// the built-in server's SSE chunks), where building a JSON DOM per line would cost too much.

#include <cstddef>
#include <string>
#include <string_view>

namespace llmbench {

/// Appends `s` to `out` as a JSON string literal with its quotes (RFC 8259 §7): `"` and `\`
/// escaped, \n \r \t by name, other control characters and DEL as \u00XX. Invalid UTF-8 bytes
/// become U+FFFD (`utf8_sequence_length`, core/utf8.hpp), so the output is always valid JSON
/// whatever a server put into a message.
void append_json_string(std::string& out, std::string_view s);

}  // namespace llmbench
