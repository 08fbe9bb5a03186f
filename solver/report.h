// The report of one alignment run: the scalars and the JSON document that `gwalign align` writes
// (--report, the attributes of its output, uns/gw of an h5ad) and that the Python package returns
// as Result.report. One definition here so that both front ends produce the same keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "solver/result.h"

namespace gw {

// Where a run's inputs came from: file names and specs (the CLI) or descriptions of in-memory
// arrays (the Python package). Empty strings are reported as empty.
struct RunInfo {
  std::string command = "gwalign align";  // the front end ("gwalign align", "gwalign.align")
  std::string source, target;             // files (or "<ndarray>" and the like)
  std::string source_rep, target_rep;     // geometry specs ("obsm:X_pca", "/points")
  std::string output;                     // output file ("" when none)
  std::string source_description, target_description;  // "400 x 2 points (kNN graph)", ...
  std::optional<double> abs_rho;  // |Spearman rho| of matched ground truth, when known
  std::string truth;              // where the ground truth came from ("/angles vs /angles")
};

// One scalar of the report: written as an HDF5 attribute or an uns entry.
using ReportScalar = std::variant<double, std::int64_t, bool, std::string>;
using ReportScalars = std::vector<std::pair<std::string, ReportScalar>>;

// The report's scalars in a fixed order: version, termination, message, iterations, n, k,
// plan_mass, plan_format, top_k, gw_cost_estimate, gw_loss, gw_loss_stderr, gw_loss_exact,
// total_seconds, backend, threads, seed (as text beyond int64), epsilon, num_anchors,
// max_iterations, fused_weight, source, target, source_rep, target_rep, source_distances,
// target_distances, and abs_rho and truth when the ground truth is known.
ReportScalars report_scalars(const Result& result, const RunInfo& run);

// The full report as a pretty-printed JSON object: command, version, source, target, source_rep,
// target_rep, source_geometry, target_geometry, output, iterations, total_seconds, abs_rho (null
// when unknown), truth, and result (Result::to_json).
std::string report_json(const Result& result, const RunInfo& run);

}  // namespace gw
