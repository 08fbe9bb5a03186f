// Progress reporting from long-running library calls (the GW loop) to a caller (the CLI's
// progress line, a notebook, a log).
#pragma once

#include <functional>

namespace gw {

// A snapshot taken at a host check (every few iterations, never per kernel).
struct Progress {
  int iteration = 0;       // 1-based iteration just finished
  int max_iterations = 0;  // the configured limit
  double cost = 0.0;       // current cost estimate (problem-specific; GW: <Lambda, T>)
  double error = 0.0;      // current convergence measure (GW: ||T_t - T_{t-1}||_F)
  double epsilon = 0.0;    // current entropic regularization
  double elapsed_seconds = 0.0;
  // Multi-level solves (the sparse-support path): level 1 is the coarsest of `levels`; iteration,
  // max_iterations and elapsed_seconds count within the level. A single-level solve: 1 of 1.
  int level = 1;
  int levels = 1;
};

// Called on the orchestrating thread. Return false to stop early (the result then reports
// termination "cancelled"). Must not throw.
using ProgressCallback = std::function<bool(const Progress&)>;

}  // namespace gw
