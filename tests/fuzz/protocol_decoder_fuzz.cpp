// Fuzzes the public decoder API of src/llmbench/protocol/openai.hpp: stream events and whole
// bodies from a hostile server. Errors are values; nothing may crash, hang or read out of bounds.
#include "llmbench/protocol/openai.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  llmbench::fuzz::Input input(data, size);
  const unsigned char mode = input.take_byte();
  llmbench::protocol::Decoder decoder;
  const std::string_view text = input.rest();
  if ((mode & 1U) == 0) {
    static_cast<void>(decoder.decode_event(text));
    static_cast<void>(decoder.decode_event(text));  // the reused parser must give no new trouble
    static_cast<void>(decoder.decode_sse((mode & 2U) != 0 ? "error" : "message", text));
    static_cast<void>(decoder.decode_field("error", text));
  } else {
    static_cast<void>(decoder.decode_body(text));
    static_cast<void>(llmbench::protocol::error_message_from_body(text));
  }
  return 0;
}
