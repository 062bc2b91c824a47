#pragma once
/// @file
/// A `simulate --cluster` point (private to app; docs/simulator.md "Cluster"): the workload as
/// cluster requests (single requests, conversations, or a trace tiled to a day), the run of
/// `sim::ClusterSimulation` with its records streamed to disk as `--records` says, and the
/// results document with the cluster's versions, pools and replicas.

#include "llmbench/app/plan.hpp"
#include "llmbench/app/result.hpp"
#include "llmbench/app/session.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/workload/dataset.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <vector>

namespace llmbench::app::detail {

/// Runs the cluster of `plan.cluster` over `samples` (the session's, drawn from `plan.dataset`;
/// null with `trace_tile_s`, which reads the trace itself), tells `observer` (may be null) once
/// it is analysed, and writes the results JSON and the records file the plan asks for. The
/// summary counts every request; the records file holds those `--records` keeps. Exit code 1
/// when a request failed or a record could not be written. Throws `Exception` on an unreadable
/// trace or results folder.
RunResult simulate_cluster(const SimPlan& plan,
                           const std::shared_ptr<const std::vector<workload::Sample>>& samples,
                           LoadObserver* observer);

/// The results document of a cluster point: `report::results_json` of its summary with `info`
/// (the fields every document starts with) completed, and under `cluster` the units, steps, KV
/// link, and per version (share, routed share, results), pool (the parts of TTFT) and replica
/// (requests, prefix-cache queries, hits and hit rate, preemptions, steps, busy s, tokens).
nlohmann::json cluster_document(const RunResult& r, report::RunInfo info);

}  // namespace llmbench::app::detail
