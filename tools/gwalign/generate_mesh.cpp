#include "generate_mesh.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli_util.h"
#include "core/config.h"
#include "core/error.h"
#include "datagen/mesh.h"
#include "interrupt.h"
#include "io/h5ad.h"
#include "io/hdf5.h"

namespace gw::cli {
namespace {

// The mesh graph as an anndata obsp matrix: both directions of every edge, columns sorted in each
// row, data = edge lengths (what align_inputs reads as a graph of lengths).
io::CsrArray<double> mesh_graph(const datagen::Mesh& mesh) {
  io::CsrArray<double> csr;
  csr.rows = csr.cols = mesh.n;
  csr.indptr.assign(static_cast<std::size_t>(mesh.n) + 1, 0);
  for (Offset e = 0; e < mesh.num_edges(); ++e) {
    ++csr.indptr[mesh.edge_src[e] + 1];
    ++csr.indptr[mesh.edge_dst[e] + 1];
  }
  for (Index i = 0; i < mesh.n; ++i) csr.indptr[i + 1] += csr.indptr[i];
  std::vector<std::vector<std::pair<Index, double>>> rows(mesh.n);
  for (Offset e = 0; e < mesh.num_edges(); ++e) {
    rows[mesh.edge_src[e]].emplace_back(mesh.edge_dst[e], mesh.edge_length[e]);
    rows[mesh.edge_dst[e]].emplace_back(mesh.edge_src[e], mesh.edge_length[e]);
  }
  for (auto& row : rows) {
    std::sort(row.begin(), row.end());
    for (const auto& [column, length] : row) {
      csr.indices.push_back(column);
      csr.data.push_back(length);
    }
  }
  return csr;
}

struct MeshRequest {
  datagen::MeshKind kind{};
  Index vertices = 0;
  std::uint64_t seed = 0;
  double jitter = 0.0;
  std::filesystem::path out_dir;
};

void write_side(io::H5adWriter& out,
                const datagen::Mesh& mesh,
                const MeshRequest& request,
                const char* role) {
  out.set_x(io::Array<double>{mesh.vertices, {mesh.n, 3}});
  out.put_obsp("mesh", mesh_graph(mesh));
  out.put_uns("generator/kind", "mesh");
  out.put_uns("generator/shape", datagen::to_string(request.kind));
  out.put_uns("generator/vertices_requested", std::int64_t{request.vertices});
  // HDF5 via gw::io has no unsigned 64-bit scalars; seeds beyond int64 are stored as text.
  if (request.seed <= static_cast<std::uint64_t>(INT64_MAX)) {
    out.put_uns("generator/seed", static_cast<std::int64_t>(request.seed));
  } else {
    out.put_uns("generator/seed", std::to_string(request.seed));
  }
  out.put_uns("generator/jitter", request.jitter);
  out.put_uns("generator/role", role);
  out.put_uns("generator/version", GW_VERSION_STRING);
}

MeshRequest parse_request(const cxxopts::ParseResult& flags) {
  for (const char* other : {"n",
                            "output",
                            "format",
                            "embed",
                            "noise",
                            "classes",
                            "per-class",
                            "min-points",
                            "max-points"}) {
    GW_CHECK(!flags.count(other),
             "--" << other << " is not a flag of 'generate mesh', which takes --shape, --vertices, "
                  << "--seed, --jitter and --out-dir");
  }
  const std::string kinds(datagen::mesh_kind_list());
  GW_CHECK(flags.count("shape") && flags.count("vertices") && flags.count("out-dir"),
           "give the shape, its size and the output folder: gwalign generate mesh --shape KIND "
           "--vertices N --out-dir DIR (kinds: "
               << kinds << ")");
  MeshRequest request;
  const std::string shape = flags["shape"].as<std::string>();
  const auto kind = datagen::mesh_kind_from_string(shape);
  GW_CHECK(kind.has_value(), "--shape '" << shape << "' is not a mesh kind; use one of " << kinds);
  request.kind = *kind;
  request.vertices = flags["vertices"].as<Index>();
  GW_CHECK(request.vertices >= datagen::kMinMeshVertices &&
               request.vertices <= datagen::kMaxMeshVertices,
           "--vertices must be in [" << datagen::kMinMeshVertices << ", "
                                     << datagen::kMaxMeshVertices << "], got " << request.vertices
                                     << " (kinds: " << kinds << ")");
  request.seed = flags["seed"].as<std::uint64_t>();
  request.jitter = flags["jitter"].as<double>();
  GW_CHECK(std::isfinite(request.jitter) && request.jitter >= 0.0 && request.jitter <= 1.0,
           "--jitter must be in [0, 1] (a fraction of the bounding-box diagonal), got "
               << flags["jitter"].as<double>());
  request.out_dir = flags["out-dir"].as<std::string>();
  std::error_code ec;
  GW_CHECK_CODE(!std::filesystem::exists(request.out_dir, ec) ||
                    std::filesystem::is_directory(request.out_dir, ec),
                ErrorCode::kCannotCreate,
                "--out-dir '" << request.out_dir.string()
                              << "' exists and is not a folder; give a folder (it is created if "
                                 "missing)");
  return request;
}

void write_files(const MeshRequest& request,
                 const datagen::Mesh& source,
                 const datagen::PermutedMesh& target) {
  const std::string source_file = (request.out_dir / "source.h5ad").string();
  const std::string target_file = (request.out_dir / "target.h5ad").string();
  const std::string truth_file = (request.out_dir / "truth.h5").string();

  // The three files are temporaries until the commits at the end (each commit is a rename), so an
  // error or a signal before them leaves none behind (interrupt.h).
  const InterruptScope interrupts;
  io::H5adWriter source_out = io::H5adWriter::create(source_file, source.n, 3, {}, {"x", "y", "z"});
  write_side(source_out, source, request, "source");
  io::H5adWriter target_out =
      io::H5adWriter::create(target_file, target.mesh.n, 3, {}, {"x", "y", "z"});
  write_side(target_out, target.mesh, request, "target");
  io::Writer truth_out(truth_file);
  truth_out.write_array<std::int32_t>(
      "/truth", io::Array<std::int32_t>{{target.truth.begin(), target.truth.end()}, {source.n}});
  truth_out.set_attribute(
      "/truth", "meaning", "truth[i] = the vertex of target.h5ad that source vertex i became");
  truth_out.set_attribute("/", "shape", datagen::to_string(request.kind));
  truth_out.set_attribute("/", "jitter", request.jitter);
  truth_out.set_attribute("/", "generator", "gwalign " GW_VERSION_STRING " generate mesh");
  throw_if_interrupted();
  source_out.commit();
  target_out.commit();
  truth_out.commit();
  std::cout << "wrote " << source_file << ", " << target_file << " and " << truth_file << ": "
            << datagen::to_string(request.kind) << ", " << source.n << " vertices, "
            << source.num_edges() << " edges (requested " << request.vertices << ", seed "
            << request.seed << ", jitter " << request.jitter << ")\n";
}

}  // namespace

int generate_mesh_files(const cxxopts::ParseResult& flags) {
  const MeshRequest request = parse_request(flags);
  const datagen::Mesh source = datagen::generate_mesh(request.kind, request.vertices, request.seed);
  const datagen::PermutedMesh target =
      datagen::jitter_and_permute(source, request.jitter, request.seed);

  std::error_code ec;
  const bool created = std::filesystem::create_directories(request.out_dir, ec);
  GW_CHECK_CODE(!ec,
                ErrorCode::kCannotCreate,
                "cannot create --out-dir '" << request.out_dir.string() << "': " << ec.message());
  try {
    write_files(request, source, target);
  } catch (...) {
    // Nothing is left of a failed run, not even the folder it made.
    if (created) std::filesystem::remove(request.out_dir, ec);
    throw;
  }
  return 0;
}

}  // namespace gw::cli
