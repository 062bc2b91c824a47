#pragma once
/// @file
/// How `simulate`, `serve` and `plan` show the communication terms: which came from a
/// measurement (`llmbench probe comm`, `--calibration FILE`) and which from the datasheet
/// (sim/comm_traffic.hpp), and `plan`'s table of the bytes and time each forward pass spends
/// communicating under TP and under DP/EP.

#include "llmbench/sim/comm_model.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/sim/profiles.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::app {

/// One "label: text" line per communication term of `spec` ("TP all-reduce:", "EP all-to-all:"),
/// saying measured or datasheet and why (for the console's engine lines).
std::vector<std::pair<std::string, std::string>> comm_term_lines(const sim::EngineSpec& spec);

/// What `plan` needs for its communication section.
struct CommPlanInput {
  const sim::ModelProfile& model;
  const sim::HardwareProfile& gpu;
  const sim::Efficiency& efficiency;
  const sim::CommModel* comm;  ///< nullptr: none measured
  std::string calibration_file;
  int tp = 1;
  int ep = 1;
  int dp = 1;
  std::vector<std::int64_t> batch_tokens;  ///< tokens per replica per forward pass
};

/// Prints the term sources and, for more than one GPU, the traffic per forward pass of the
/// configured layout against TPn and DPn+EPn (or DPn) for each batch size
/// (`sim::forward_pass_traffic`).
void print_comm_plan(const CommPlanInput& in);

}  // namespace llmbench::app
