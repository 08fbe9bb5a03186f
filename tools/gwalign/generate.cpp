// `gwalign generate spiral|swissroll --n N --seed S -o FILE`: the benchmark's synthetic point sets
// (tools/datagen/spiral.h) with their ground-truth angles, as plain HDF5 or as an AnnData file;
// `generate shapes` (a pairwise collection) and `generate mesh` (generate_mesh.h) besides.
#include <cxxopts.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "generate_tissue.h"
#include "interrupt.h"
#include "solver_flags.h"
#include "command.h"
#include "generate_mesh.h"
#include "core/config.h"
#include "core/error.h"
#include "core/rng.h"
#include "datagen/shapes.h"
#include "datagen/spiral.h"
#include "io/h5ad.h"
#include "io/hdf5.h"
#include "pairwise/collection.h"

namespace gw::cli {
namespace {

constexpr const char* kGenerateHelp = R"(
Data (bench/README.md, spiral): r = linspace(0.3, 1.0, n), theta = linspace(0, 9, n),
  spiral     2-D: x = (r + e0) cos(theta), y = (r + e1) sin(theta), e ~ N(0, noise^2)
  swissroll  3-D: the same spiral with its own noise, coordinates (x, h, y), h ~ U(0, 1)
The ground truth is theta of each point. Same kind, n, seed and noise: the same file contents.

  shapes     a collection for 'gwalign pairwise': --classes C base shapes (closed 3-D curves from
             random Fourier modes), --per-class P copies each, every copy resampled (100-200
             points along the curve), randomly rotated and noised (--noise, default 0.03 here);
             written as /spaces/<i>/points (n_i x 3) with the class of each copy in /labels

Formats:
  h5    /points (n x d float64), /angles (n float64); attributes kind, n, seed, noise, version
  h5ad  an AnnData file: X and obsm/X_spatial (n x d), obs column 'angle', uns/generator
        (default when the output name ends in .h5ad)
  --embed D (h5ad only) also writes obsm/X_pca (n x D float32): the points mapped into D
        dimensions by a seeded random orthonormal map (a single-cell-like embedding of the same
        manifold; the distances between points are those of the d-D points)

Examples:
  gwalign generate spiral --n 400 --seed 0 -o data/spiral_400.h5
  gwalign generate swissroll --n 500 --seed 0 -o data/swissroll_500.h5
  gwalign generate spiral --n 2000 --seed 1 -o spiral.h5ad
  gwalign align spiral.h5ad roll.h5ad --rep obsm:X_spatial -o plan.h5
  gwalign generate swissroll --n 200000 --seed 2 --embed 30 -o roll.h5ad
  gwalign generate shapes --classes 5 --per-class 20 --seed 0 -o shapes.h5
  gwalign generate mesh --shape bunny --vertices 2000 --seed 0 --out-dir bunny
  gwalign align bunny/source.h5ad bunny/target.h5ad -o bunny/plan.h5

  mesh       a correspondence problem on a surface mesh (tools/datagen/mesh.h): --shape KIND
             (head, bunny, teapot, cactus, quadruped, bird, hand, human, lizard; asymmetric
             shapes made of smooth-blended ellipsoids and tubes, triangulated by marching
             tetrahedra) with about --vertices N vertices (300-100,000, within 10%); the target is
             a copy whose vertices move by N(0, (jitter x bounding-box diagonal)^2) per coordinate
             (--jitter, default 0.01) and are randomly permuted. Writes to --out-dir DIR:
               source.h5ad, target.h5ad  X = vertex coordinates (n x 3), obsp/mesh = the mesh
                                         graph (CSR, edge lengths; align's default geometry)
               truth.h5                  /truth (int32): the target vertex of each source vertex
)";

// An n x dims float32 embedding of the d-D points: x Q with Q a d x dims matrix of orthonormal
// rows (Gram-Schmidt on seeded Gaussian rows), so distances are preserved exactly up to rounding.
std::vector<float> orthonormal_embedding(const datagen::PointSet& set, Index dims, std::uint64_t seed) {
  const Index d = set.dimension;
  Rng rng(seed, /*stream=*/17);
  std::vector<double> q(static_cast<std::size_t>(d) * dims);
  for (Index r = 0; r < d; ++r) {
    double* row = &q[static_cast<std::size_t>(r) * dims];
    for (Index c = 0; c < dims; ++c) row[c] = rng.normal();
    for (Index prev = 0; prev < r; ++prev) {
      const double* other = &q[static_cast<std::size_t>(prev) * dims];
      double dot = 0.0;
      for (Index c = 0; c < dims; ++c) dot += row[c] * other[c];
      for (Index c = 0; c < dims; ++c) row[c] -= dot * other[c];
    }
    double norm = 0.0;
    for (Index c = 0; c < dims; ++c) norm += row[c] * row[c];
    norm = std::sqrt(norm);
    for (Index c = 0; c < dims; ++c) row[c] /= norm;
  }
  std::vector<float> out(static_cast<std::size_t>(set.n) * dims);
  for (Index i = 0; i < set.n; ++i) {
    for (Index c = 0; c < dims; ++c) {
      double v = 0.0;
      for (Index r = 0; r < d; ++r)
        v += set.points[static_cast<std::size_t>(i) * d + r] * q[static_cast<std::size_t>(r) * dims + c];
      out[static_cast<std::size_t>(i) * dims + c] = static_cast<float>(v);
    }
  }
  return out;
}

int generate_shapes(const cxxopts::ParseResult& flags) {
  GW_CHECK(flags.count("classes") && flags.count("per-class"),
           "give the collection's size: gwalign generate shapes --classes C --per-class P -o FILE");
  GW_CHECK(!flags.count("n") && !flags.count("format") && !flags.count("embed"),
           "--n, --format and --embed are for spiral / swissroll; shapes takes --classes, "
           "--per-class, --min-points and --max-points");
  datagen::ShapesOptions options;
  options.classes = flags["classes"].as<int>();
  options.per_class = flags["per-class"].as<int>();
  options.min_points = flags["min-points"].as<Index>();
  options.max_points = flags["max-points"].as<Index>();
  options.seed = flags["seed"].as<std::uint64_t>();
  if (flags.count("noise")) options.noise = flags["noise"].as<double>();
  const std::vector<datagen::ShapeCopy> copies = datagen::shape_classes(options);
  std::vector<pairwise::PointCloud> clouds;
  std::vector<std::int64_t> labels;
  for (const datagen::ShapeCopy& copy : copies) {
    clouds.push_back({copy.n, 3, copy.points});
    labels.push_back(copy.label);
  }
  const std::string output = flags["output"].as<std::string>();
  check_output_path(output, "-o", {});
  // The writer's temporary exists only inside write_point_collection, which commits at its end:
  // a signal there is deferred until the file is complete (then ignored: the output is whole), and
  // a file size limit is a write error that removes the temporary rather than a kill.
  const InterruptScope interrupts;
  pairwise::write_point_collection(output,
                                   clouds,
                                   labels,
                                   {{"kind", "shapes"},
                                    {"classes", std::to_string(options.classes)},
                                    {"per_class", std::to_string(options.per_class)},
                                    {"seed", std::to_string(options.seed)},
                                    {"noise", format_number(options.noise)},
                                    {"generator", "gwalign " GW_VERSION_STRING " generate"}});
  std::cout << "wrote " << output << ": " << clouds.size() << " shapes (" << options.classes
            << " classes x " << options.per_class << ", " << options.min_points << "-"
            << options.max_points << " points each, seed " << options.seed << ")\n";
  return 0;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int run_generate(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "tissue") return run_generate_tissue(argc - 1, argv + 1);
  cxxopts::Options cli(argv[0],
                       "Generate the spiral (2-D) or swiss roll (3-D) point set of the spiral "
                       "benchmark, with ground-truth angles; a collection of shapes; or a "
                       "correspondence problem on a surface mesh.");
  // clang-format off
  cli.add_options()
      ("kind", "spiral | swissroll | shapes | mesh (tissue: see gwalign generate tissue --help)",
       cxxopts::value<std::string>())
      ("n", "number of points", cxxopts::value<Index>())
      ("seed", "random seed", cxxopts::value<std::uint64_t>()->default_value("0"))
      ("noise", "standard deviation of the radial noise", cxxopts::value<double>()
       ->default_value("0.05"))
      ("o,output", "output file (.h5 or .h5ad)", cxxopts::value<std::string>())
      ("format", "h5 | h5ad (default: from the output name)", cxxopts::value<std::string>())
      ("embed", "h5ad only: also write obsm/X_pca, the points in this many dimensions (0: none)",
       cxxopts::value<Index>()->default_value("0"))
      ("classes", "shapes: number of base shapes", cxxopts::value<int>())
      ("per-class", "shapes: copies per base shape", cxxopts::value<int>())
      ("min-points", "shapes: fewest points of a copy", cxxopts::value<Index>()
       ->default_value("100"))
      ("max-points", "shapes: most points of a copy", cxxopts::value<Index>()
       ->default_value("200"))
      ("shape", "mesh: the kind of shape (head, bunny, teapot, ...)", cxxopts::value<std::string>())
      ("vertices", "mesh: about this many vertices", cxxopts::value<Index>())
      ("jitter", "mesh: the target's noise per coordinate, as a fraction of the bounding-box "
                 "diagonal", cxxopts::value<double>()->default_value("0.01"))
      ("out-dir", "mesh: the folder for source.h5ad, target.h5ad and truth.h5",
       cxxopts::value<std::string>())
      ("h,help", "print this help");
  // clang-format on
  cli.parse_positional({"kind"});
  cli.positional_help("spiral|swissroll --n N -o FILE | shapes ... | mesh --shape KIND ...");
  const auto flags = cli.parse(argc, argv);
  if (flags.count("help")) {
    std::cout << cli.help() << kGenerateHelp;
    return 0;
  }
  GW_CHECK(flags.unmatched().empty(),
           "unexpected argument '" << flags.unmatched().front()
                                   << "'; usage: gwalign generate spiral|swissroll --n N -o FILE");
  GW_CHECK(flags.count("kind"), "give the kind: gwalign generate spiral|swissroll --n N -o FILE");
  if (flags["kind"].as<std::string>() == "mesh") return generate_mesh_files(flags);
  for (const char* mesh_only : {"shape", "vertices", "jitter", "out-dir"}) {
    GW_CHECK(!flags.count(mesh_only), "--" << mesh_only << " is for 'generate mesh' only");
  }
  GW_CHECK(flags.count("output"), "give the output file with -o FILE.h5 (or .h5ad)");
  if (flags["kind"].as<std::string>() == "shapes") return generate_shapes(flags);
  GW_CHECK(!flags.count("classes") && !flags.count("per-class") && !flags.count("min-points") &&
               !flags.count("max-points"),
           "--classes, --per-class, --min-points and --max-points are for shapes only");
  GW_CHECK(flags.count("n"), "give the number of points with --n N");
  GW_CHECK(flags.count("output"), "give the output file with -o FILE.h5 (or .h5ad)");
  const std::string kind = flags["kind"].as<std::string>();
  GW_CHECK(kind == "spiral" || kind == "swissroll",
           "kind must be spiral, swissroll, shapes or mesh, got '" << kind << "'");
  const Index n = flags["n"].as<Index>();
  GW_CHECK(n >= 2, "--n must be >= 2, got " << n);
  const double noise = flags["noise"].as<double>();
  GW_CHECK(noise >= 0.0, "--noise must be >= 0, got " << noise);
  const std::uint64_t seed = flags["seed"].as<std::uint64_t>();
  const std::string output = flags["output"].as<std::string>();
  check_output_path(output, "-o", {});
  const std::string format = flags.count("format") ? flags["format"].as<std::string>()
                                                   : (ends_with(output, ".h5ad") ? "h5ad" : "h5");
  GW_CHECK(format == "h5" || format == "h5ad",
           "--format must be h5 or h5ad, got '" << format << "'");
  const Index embed = flags["embed"].as<Index>();
  GW_CHECK(embed >= 0, "--embed must be >= 0, got " << embed);
  GW_CHECK(embed == 0 || format == "h5ad",
           "--embed writes obsm/X_pca and needs the h5ad format (an output name ending in .h5ad "
           "or --format h5ad)");

  const datagen::PointSet set =
      kind == "spiral" ? datagen::spiral(n, seed, noise) : datagen::swiss_roll(n, seed, noise);
  GW_CHECK(embed == 0 || embed >= set.dimension,
           "--embed must be at least the points' dimension " << set.dimension << ", got " << embed);
  io::Array<double> points{set.points, {set.n, set.dimension}};
  io::Array<double> angles{set.angles, {set.n}};
  // HDF5 via gw::io has no unsigned 64-bit scalars; seeds beyond int64 are stored as text.
  const bool seed_fits = seed <= static_cast<std::uint64_t>(INT64_MAX);

  // While the temporary output exists, SIGINT / SIGTERM are deferred to the check before commit()
  // (the temporary is removed as Interrupted unwinds, cli_util.h) and a file size limit is a write
  // error, not a kill that would leave the temporary behind.
  const InterruptScope interrupts;
  if (format == "h5") {
    io::Writer out(output);
    out.write_array<double>("/points", points);
    out.write_array<double>("/angles", angles);
    out.set_attribute("/", "kind", kind);
    out.set_attribute("/", "n", std::int64_t{n});
    if (seed_fits) {
      out.set_attribute("/", "seed", static_cast<std::int64_t>(seed));
    } else {
      out.set_attribute("/", "seed", std::to_string(seed));
    }
    out.set_attribute("/", "noise", noise);
    out.set_attribute("/", "generator", "gwalign " GW_VERSION_STRING " generate");
    throw_if_interrupted();
    out.commit();
  } else {
    const std::vector<std::string> var_names = set.dimension == 2
                                                   ? std::vector<std::string>{"x", "y"}
                                                   : std::vector<std::string>{"x", "h", "y"};
    io::H5adWriter out = io::H5adWriter::create(output, set.n, set.dimension, {}, var_names);
    out.set_x(points);
    out.put_obsm("X_spatial", points);
    if (embed > 0) {
      out.put_obsm("X_pca", io::Array<float>{orthonormal_embedding(set, embed, seed), {set.n, embed}});
    }
    out.put_obs_column<double>("angle", set.angles);
    out.put_uns("generator/kind", kind);
    if (seed_fits) {
      out.put_uns("generator/seed", static_cast<std::int64_t>(seed));
    } else {
      out.put_uns("generator/seed", std::to_string(seed));
    }
    out.put_uns("generator/noise", noise);
    out.put_uns("generator/version", GW_VERSION_STRING);
    throw_if_interrupted();
    out.commit();
  }
  std::cout << "wrote " << output << ": " << kind << ", " << set.n << " x " << set.dimension
            << " points with angles (seed " << seed << ", noise " << noise << ", " << format
            << ")\n";
  return 0;
}

}  // namespace

GW_CLI_COMMAND("generate",
               "write synthetic data: spiral / swiss roll (points + angles), a shape collection, "
               "a mesh correspondence problem, or tissue sections (h5ad)",
               run_generate);

}  // namespace gw::cli
