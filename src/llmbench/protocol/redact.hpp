#pragma once
/// @file
/// One redactor for every string a server controls (error messages, `finish_reason`, the model
/// list): credentials the client sends must never reach records, results, logs or the console,
/// even when a server echoes them back whole, without their scheme, or cut short.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::protocol {

/// Removes secrets from text. A secret is a credential value the client sends (a header value
/// such as "Bearer sk-...", an API key). Every run of bytes covered by some 8-byte fragment of a
/// secret's words (space-separated: the scheme "Bearer" is no secret by itself) becomes
/// "[redacted]", so the secret whole, with or without its scheme, and any part of it of 8 or more
/// bytes (a prefix left by a cut) are all removed. One-word secrets of 4 to 7 bytes are removed
/// where they occur whole; shorter ones are ignored (they would match ordinary words).
/// Immutable after construction; safe to share between threads.
class Redactor {
 public:
  /// Fragments of this many bytes identify a secret.
  static constexpr std::size_t kFragmentBytes = 8;
  /// What a removed run is replaced with.
  static constexpr std::string_view kMark = "[redacted]";

  Redactor() = default;
  /// Takes the secrets to remove; empty strings and one-word secrets under 4 bytes are skipped.
  explicit Redactor(const std::vector<std::string>& secrets);

  /// `text` with every secret run replaced by `kMark`. Linear in the text's length.
  [[nodiscard]] std::string redact(std::string_view text) const;
  /// True when `redact` would change `text`.
  [[nodiscard]] bool contains_secret(std::string_view text) const;
  /// True when there is nothing to remove.
  [[nodiscard]] bool empty() const noexcept { return fragments_.empty() && short_.empty(); }

 private:
  /// For each byte of `text`, whether it lies in a secret run.
  [[nodiscard]] std::vector<bool> covered(std::string_view text) const;

  std::vector<std::uint64_t> fragments_;  // sorted 8-byte windows of the long secrets
  std::vector<std::string> short_;        // secrets of 4-7 bytes, matched whole
};

/// A server-controlled string ready to store: secrets removed first (`redactor`), then cut to at
/// most `max_bytes` without splitting a UTF-8 sequence. Redacting before the cut is what keeps a
/// secret's prefix out of a cut message. A cut never splits a `Redactor::kMark`: when one
/// straddles it, the text before the mark is cut shorter so the whole mark still fits (or, with
/// `max_bytes` under the mark's size, the text ends before it).
std::string server_text(std::string_view text, const Redactor& redactor, std::size_t max_bytes);

/// A server's JSON answer (the `/v1/models` list) ready to store: when `body` is JSON, every
/// string in it, member names too, is redacted after decoding (so a secret spelled with `\u`
/// escapes, RFC 8259 §7, is found as well) and the result is serialized again (compact);
/// otherwise `body` is redacted as text.
std::string redact_json_text(std::string_view body, const Redactor& redactor);

/// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence (RFC 3629 §3: a cut
/// never lands on a continuation byte 10xxxxxx).
std::string cut_utf8(std::string_view text, std::size_t max_bytes);

}  // namespace llmbench::protocol
