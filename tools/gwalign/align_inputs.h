// Reading one side of `gwalign align` from an HDF5 / h5ad file: its geometry, marginal weights,
// ground-truth angles and features, through gw::io (no HDF5 calls here). Every error names the
// file, the dataset and the flag that picked it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/types.h"
#include "solver/problem.h"

namespace gw::cli {

// What the user asked for one side ("source" or "target").
struct SideRequest {
  std::string role;           // "source" / "target" (flag names: --<role>-rep, ...)
  std::string file;           // SOURCE / TARGET path
  std::string rep;            // matrix spec (X, obsm:KEY, obsp:KEY, /path, FILE:/path); empty: auto
  bool as_distances = false;  // the rep is an n x n distance matrix (dense or CSR)
  std::string weights;        // obs:COL, /path or FILE:/path; empty: uniform
  std::string truth;  // obs:COL, /path or FILE:/path; empty: /angles or obs:angle if present
  int threads = 0;    // for validating distance matrices
};

// One side, loaded.
struct Side {
  Geometry geometry;
  Index n = 0;
  std::string rep;          // the spec used ("/points", "obsm:X_pca", ...)
  std::string description;  // "400 x 2 points", "graph, 200 nodes, 1200 undirected edges", "300 x
                            // 300 distances"
  std::vector<double> weights;  // empty: uniform
  std::vector<double> truth;    // empty: none found
  std::string truth_spec;       // where it came from
};

// The rep used when none is given: the dataset /points (what `gwalign generate` writes), else the
// only obsm entry of an AnnData file, else (no obsm entry) its only obsp entry when that is a CSR
// graph (what `gwalign generate mesh` writes). kInvalidArgument with the fix (--<role>-rep,
// gwalign info) when none applies.
std::string default_rep(const std::string& file, const std::string& role);

// The ground truth used when none is given: the dataset /angles (what `gwalign generate` writes),
// else the obs column "angle" of an AnnData file, else "" (none).
std::string default_truth(const std::string& file);

// Reads the geometry (and weights and truth) of one side:
//   --as-distances        dense or CSR n x n matrix used as distances (CSR: missing = unreachable)
//   CSR under /obsp/      a weighted graph (weights are lengths), symmetrized by max, self-loops
//                         dropped; distances are its shortest paths
//   dense under /obsp/    an error suggesting --as-distances
//   anything else         n x d points (CSR densified) -> kNN graph -> shortest paths
// Data errors (NaN, negative edge, non-square) are kBadData naming the file and dataset.
Side load_side(const SideRequest& request);

// Weights, truth or any per-node vector: obs:COL of an AnnData file, or a 1-D (or n x 1) dataset
// by spec; must have n entries (kBadData naming the spec otherwise).
std::vector<double> read_node_vector(const std::string& file,
                                     const std::string& spec,
                                     Index n,
                                     const std::string& what);

// The n x k feature cost given by --feature-cost SPEC (resolved against SOURCE): dense, finite,
// exactly n x k; used as given.
DenseMatrix<double> load_feature_cost(const std::string& source_file,
                                      const std::string& spec,
                                      Index n,
                                      Index k);

// --features: the source features (n x d) and the target features (k x d), for
// Problem::source_features / target_features (the solver's cost is |f_i - g_j|^2 / max over all
// pairs, built densely only on a dense path). The two matrices must have the same number of
// columns; n and k, when given, must match their rows. O((n + k) d) memory.
struct FeaturePair {
  DenseMatrix<double> source, target;
};
FeaturePair load_features(const std::string& source_file,
                          const std::string& source_spec,
                          const std::string& target_file,
                          const std::string& target_spec,
                          std::optional<Index> n,
                          std::optional<Index> k);

}  // namespace gw::cli
