// Fuzzes the tokenizer loaders (src/llmbench/tokenizer/tokenizer.hpp): a tokenizer.json or a
// tiktoken rank file from an untrusted download. A file that loads is then used: it encodes a
// fixed text and decodes the ids again.
#include "llmbench/tokenizer/tokenizer.hpp"

#include "fuzz_input.hpp"
#include <array>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  llmbench::fuzz::Input input(data, size);
  const unsigned char mode = input.take_byte();
  const std::string_view text = input.rest();
  auto tok = (mode & 1U) == 0
                 ? llmbench::tokenizer::Tokenizer::from_json(text, "", "fuzz.json")
                 : llmbench::tokenizer::Tokenizer::from_tiktoken(text, "", "fuzz.tiktoken");
  if (!tok) {
    return 0;
  }
  constexpr std::array<std::string_view, 3> kTexts = {
      "Hello world! 123", " \xE4\xBD\xA0\xE5\xA5\xBD <|endoftext|>\n\n", "a  b\tc\xF0\x9F\x98\x80"};
  for (const std::string_view sample : kTexts) {
    const auto ids = tok->encode(sample, (mode & 2U) != 0);
    if (ids) {
      static_cast<void>(tok->decode(*ids, (mode & 4U) != 0));
    }
  }
  return 0;
}
