#include "llmbench/protocol/redact.hpp"

#include "llmbench/protocol/openai.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::protocol {
namespace {

const std::string kKey = "sk-live-4f9a2c7e1b8d6035aa";

// True when some 8-byte piece of `secret` occurs in `text`.
bool has_fragment(const std::string& text, const std::string& secret) {
  for (std::size_t i = 0; i + 8 <= secret.size(); ++i) {
    if (text.find(secret.substr(i, 8)) != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST(Redactor, RemovesTheSecretWholeBareAndInPieces) {
  const Redactor r({"Bearer " + kKey});
  EXPECT_EQ(r.redact("token Bearer " + kKey + " rejected"), "token Bearer [redacted] rejected");
  EXPECT_EQ(r.redact("key=" + kKey), "key=[redacted]");
  EXPECT_EQ(r.redact("prefix " + kKey.substr(0, 8) + "!"), "prefix [redacted]!");
  EXPECT_EQ(r.redact("mid " + kKey.substr(5, 12) + " end"), "mid [redacted] end");
  EXPECT_EQ(r.redact("short " + kKey.substr(0, 7)), "short " + kKey.substr(0, 7));
  EXPECT_EQ(r.redact("nothing here"), "nothing here");
  EXPECT_TRUE(r.contains_secret(kKey.substr(10, 9)));
  EXPECT_FALSE(r.contains_secret("Bearer "));
}

TEST(Redactor, ShortSecretsAreMatchedWholeAndTinyOnesIgnored) {
  const Redactor r({"abc12", "xy"});
  EXPECT_EQ(r.redact("v=abc12;w=xy"), "v=[redacted];w=xy");
  EXPECT_TRUE(Redactor({"", "ab"}).empty());
}

// The 512-byte cut once ran before redaction, so the first bytes of a key at the cut
// survived. Redacting first leaves no 8-byte piece of it.
TEST(Redactor, RedactsBeforeTheCut) {
  const Redactor r({kKey});
  const std::string message = std::string(500, 'x') + kKey + " tail";
  const std::string stored = server_text(message, r, 512);
  EXPECT_LE(stored.size(), 512U);
  EXPECT_FALSE(has_fragment(stored, kKey)) << stored;
  const std::string body = R"({"error":{"message":")" + message + R"("}})";
  const std::string from_body = error_message_from_body(body, r);
  EXPECT_FALSE(has_fragment(from_body, kKey)) << from_body;
  EXPECT_EQ(from_body.substr(0, 500), std::string(500, 'x'));
  // Without the redactor the cut leaves a prefix: the case the fix is for.
  EXPECT_TRUE(has_fragment(error_message_from_body(body), kKey));
}

// A second cut of an already redacted text (the console's "HTTP 401: " + message) kept
// "[redacted" and lost the sign that a secret was there; the mark now stays whole.
TEST(Redactor, CutNeverSplitsTheMark) {
  const Redactor r({kKey});
  const std::string message = "HTTP 401: " + server_text(std::string(498, 'x') + kKey, r, 512);
  const std::string stored = server_text(message, r, 512);
  EXPECT_LE(stored.size(), 512U);
  EXPECT_EQ(stored, "HTTP 401: " + std::string(492, 'x') + "[redacted]");
  // A mark that fits is kept as it is, and a cut shorter than the mark ends before it.
  EXPECT_EQ(server_text("ab[redacted]cd", r, 12), "ab[redacted]");
  EXPECT_EQ(server_text("ab[redacted]cd", r, 11), "a[redacted]");
  EXPECT_EQ(server_text("ab[redacted]cd", r, 5), "ab");
}

// A key spelled with JSON \u escapes is the key once decoded: the /v1/models answer kept it
// because only its raw text was redacted.
TEST(Redactor, JsonTextIsRedactedAfterDecoding) {
  const Redactor r({"Bearer " + kKey});
  std::string escaped;
  for (const char c : kKey) {
    escaped += "\\u00";
    escaped += "0123456789abcdef"[static_cast<unsigned char>(c) >> 4U];
    escaped += "0123456789abcdef"[static_cast<unsigned char>(c) & 15U];
  }
  const std::string body = R"({"data":[{"id":")" + escaped + R"(","owned_by":"Bearer )" + kKey +
                           R"(","n":3}],")" + kKey + R"(":true})";
  const std::string stored = redact_json_text(body, r);
  EXPECT_FALSE(has_fragment(stored, kKey)) << stored;
  EXPECT_EQ(
      stored,
      R"({"[redacted]":true,"data":[{"id":"[redacted]","n":3,"owned_by":"Bearer [redacted]"}]})");
  // Not JSON: redacted as text.
  EXPECT_EQ(redact_json_text("no json " + kKey, r), "no json [redacted]");
  EXPECT_EQ(redact_json_text(body, Redactor{}), body);
}

TEST(Redactor, CutNeverSplitsUtf8) {
  const std::string text = "ab\xC3\xA9";  // "abé"
  EXPECT_EQ(cut_utf8(text, 3), "ab");
  EXPECT_EQ(cut_utf8(text, 4), text);
  EXPECT_EQ(server_text(text, Redactor{}, 3), "ab");
}

}  // namespace
}  // namespace llmbench::protocol
