// `gwalign generate mesh`: a correspondence problem on a procedural surface mesh
// (tools/datagen/mesh.h) written as files that `gwalign align` reads with its defaults.
#pragma once

#include <cxxopts.hpp>

namespace gw::cli {

// Runs `gwalign generate mesh` on the flags `gwalign generate` parsed (--shape, --vertices, --seed,
// --jitter, --out-dir); rejects the other kinds' flags. Writes, in --out-dir (created if missing):
//   source.h5ad  AnnData, n vertices: X = the vertex coordinates (n x 3, float64, var x, y, z),
//                obsp/mesh = the mesh graph (CSR n x n, both directions, data = edge lengths),
//                uns/generator = shape, vertices, seed, jitter, role, version
//   target.h5ad  the same for the jittered and permuted copy (datagen::jitter_and_permute)
//   truth.h5     /truth (int32, n): truth[i] = the target vertex of source vertex i
// All three are committed together after everything is computed; on any error none is written.
// Returns the exit status (0); errors are thrown as gw::Error.
int generate_mesh_files(const cxxopts::ParseResult& flags);

}  // namespace gw::cli
