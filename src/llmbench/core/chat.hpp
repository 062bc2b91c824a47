#pragma once
/// @file
/// Chat message vocabulary shared by workloads (which load them) and protocol (which sends them).

#include <string>
#include <vector>

namespace llmbench {

/// One OpenAI chat message: `{"role": role, "content": content}`.
struct ChatMessage {
  std::string role;  ///< "system", "user", "assistant"
  std::string content;
};

/// A conversation in order.
using ChatMessages = std::vector<ChatMessage>;

}  // namespace llmbench
