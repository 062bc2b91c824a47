// Fuzzes the built-in server's request path (src/llmbench/server/openai_request.hpp): an HTTP
// body from any client becomes generation parameters or an error value, and the context-length
// check on what was accepted never overflows.
#include "llmbench/server/openai_request.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  llmbench::fuzz::Input input(data, size);
  const unsigned char mode = input.take_byte();
  const bool chat = (mode & 1U) != 0;
  const bool keep_prompt = (mode & 2U) != 0;
  const auto params =
      llmbench::server::parse_generation_request(input.rest(), chat, 16, keep_prompt);
  if (params) {
    static_cast<void>(llmbench::server::check_context_length(*params, 4096));
  }
  return 0;
}
