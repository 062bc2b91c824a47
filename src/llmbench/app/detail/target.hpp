#pragma once
/// @file
/// The target of a `run` point (private to app): the built-in server started on a free loopback
/// port, and the model discovered from the server's model list.

#include "llmbench/app/plan.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/server/server.hpp"
#include "llmbench/tokenizer/chat_template.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <memory>

namespace llmbench::app::detail {

/// A started built-in server and the URL it listens on.
struct RunningServer {
  std::unique_ptr<server::Server> server;
  http::Url url;
};

/// Starts the built-in server of `plan` on a free loopback port, counting prompts with
/// `tokenizer` and rendering chat with `chat_template` (either may be null; both must outlive
/// the server), and logs what it serves. Throws `Exception` when it cannot listen.
RunningServer start_builtin(const BuiltinServerPlan& plan, const tokenizer::Tokenizer* tokenizer,
                            const tokenizer::ChatTemplate* chat_template);

/// GETs the backend's model list (`protocol::Dialect::models_path`, /v1/models for the OpenAI
/// shapes), once or, with `ready_timeout_s` > 0 (vLLM's --ready-check-timeout-sec), again every
/// 500 ms while the server does not answer or answers 503, until it answers otherwise or the
/// time is up. Its first model (`Dialect::first_model`) becomes `load.request.model` when that
/// is empty, and the endpoint's `{model}` is filled in. Returns the redacted answer (null when
/// it gave none). A GET that gets no answer (refused, TLS verification, timeout) throws
/// `Exception` naming `source` ("--base-url" or "the built-in server"), as does a model that
/// is neither given nor listed.
nlohmann::json discover_model(loadgen::LoadOptions& load, const char* source,
                              double ready_timeout_s);

}  // namespace llmbench::app::detail
