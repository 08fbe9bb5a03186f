// The solver flags every command that solves shares, and the one function that maps them onto
// gw::Options. A flag that is given sets its field (a Setting<T> field is then marked given, which
// the library's choose_strategy reads as a request); a flag left out leaves the library's default,
// so the CLI, the C++ API and the Python module choose the same strategy for the same settings.
#pragma once

#include <cxxopts.hpp>

#include <string>
#include <string_view>

#include "solver/options.h"
#include "solver/problem.h"

namespace gw::cli {

// Declares the solver flags (group "Solver"), each defaulting to the value of a default-constructed
// gw::Options, so --help shows the library's current defaults:
//   --mode auto|precomputed|dijkstra|landmark  --knn  --landmarks  --M  --eps  --eps-final
//   --eps-decay-iter  --alpha  --max-iter  --min-iter  --tol  --check-every  --plateau-improvement
//   --plateau-patience  --sinkhorn-max-iter  --sinkhorn-tol  --lambda-ema  --fused-weight  --rho-a
//   --rho-b  --partial-mass  --no-slack  --init product|profiles  --multiscale  --multiscale-size
//   --precision f32|f64  --backend cpu|cuda  --device  --threads  --seed  --top-k  --dense
//   --no-loss  --loss-anchors  --support auto|dense|sparse  --memory-limit  --support-size
//   --support-cells  --support-regrow-every
void add_solver_options(cxxopts::Options& options);

// The flags of add_solver_options as gw::Options (plan format: top-k CSR unless --dense).
// Throws gw::Error(kInvalidArgument) naming the flag for an unknown enum name or a value the
// library rejects (Options::is_valid), so a bad flag fails before any file is read.
Options solver_options_from_flags(const cxxopts::ParseResult& flags);

// A byte count from a flag: a non-negative number with an optional K, M, G or T suffix (powers of
// 1024). Throws kInvalidArgument naming `flag` otherwise.
std::size_t parse_byte_size(const std::string& text, std::string_view flag);

// Usage errors (kInvalidArgument, exit 64) for solver flags that another flag makes inert, e.g.
// --top-k with --dense, --device with --backend cpu, --multiscale-size without --multiscale,
// --landmarks with --mode precomputed. Only flags given on the command line are checked (a
// default never conflicts). Called by solver_options_from_flags; Options::is_valid covers the
// combinations a library caller can make too (restarts, partial mass without slack).
void check_inert_flags(const cxxopts::ParseResult& flags, const Options& options);

// Usage errors for geometry flags that the loaded inputs make inert: --knn when neither side is a
// point cloud; --mode, --landmarks, --dijkstra-cache-mb, --precomputed-max-nodes when both sides
// are given as distances (or features only, with --fused-weight 1).
void check_geometry_flags(const cxxopts::ParseResult& flags,
                          Geometry::Kind source,
                          Geometry::Kind target);

// Shortest text that reads back as exactly `value` ("0.001", "1e-05", "inf").
std::string format_number(double value);

}  // namespace gw::cli
