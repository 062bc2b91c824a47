#pragma once
/// @file
/// The `config_effective` section of the results JSON (docs/metrics.md, after MLPerf LoadGen's
/// effective settings): the serialization of the structs a point ran with, under the same key
/// as the requested flag for the same concept (the requested section is the flags as typed,
/// serialized by `cli` when it resolves them). A number JSON cannot hold (an infinite rate) is
/// written "inf" (`number_or_inf`).

#include "llmbench/app/plan.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/workload/dataset.hpp"

#include <nlohmann/json.hpp>

namespace llmbench::app {

/// The dataset as loaded (`DatasetOptions`, without its sample count), with the dataset and
/// prompt kinds under their flag names as typed (`names`) and `tokenizer` as given.
nlohmann::json dataset_json(const workload::DatasetOptions& dataset, const WorkloadNames& names);

/// The parsed load shape and reporting choices (`ReportSetup`): request_rate, burstiness,
/// metric_percentiles (numbers), percentile_metrics (names) and goodput ({ttft_ms, tpot_ms,
/// e2el_ms}, null where not set).
nlohmann::json report_setup_json(const ReportSetup& setup);

/// The engine that ran (`sim::EngineSpec`): profiles, parallelism, scheduler and KV plan, and
/// the step-time model's efficiencies. `scheduler` and `exec_model` are the names `requested`
/// gave (their defaults when not given).
nlohmann::json engine_spec_json(const sim::EngineSpec& spec, const sim::EngineOverrides& requested);

/// The load `run` sent (`LoadOptions`): target, request shape, load shape, timeouts in seconds
/// and header names (never their values, which may be secrets).
nlohmann::json load_options_json(const loadgen::LoadOptions& load);

/// The built-in server (`BuiltinServerPlan`): "timing", "model", the fixed model's knobs or the
/// engine of `engine_spec_json`, and "max_model_len".
nlohmann::json builtin_server_json(const BuiltinServerPlan& builtin);

/// `run`'s effective configuration: the dataset, report setup and load of `plan` with `load`
/// (the load as sent), the built-in server (null for a given URL) and the samples loaded.
nlohmann::json run_effective_config(const RunPlan& plan, const loadgen::LoadOptions& load,
                                    std::size_t samples);

}  // namespace llmbench::app
