#include "align_embedding.h"

#include <charconv>
#include <cmath>
#include <span>
#include <system_error>

#include "core/error.h"
#include "graph/knn.h"

namespace gw::cli {

void add_embedding_options(cxxopts::Options& cli) {
  // clang-format off
  cli.add_options("Joint embedding")
      ("joint-embedding", "also embed both sides in DIM shared dimensions (the anchor's PCA, the "
                          "other side's plan barycentres smoothed on its kNN graph): "
                          "/joint_embedding/source and /target, or obsm/X_gw_joint with "
                          "--write-into-source", cxxopts::value<std::string>())
      ("embedding-anchor", "side whose PCA is the shared frame: source or target (default "
                           "target)", cxxopts::value<std::string>())
      ("embedding-lambda", "Laplacian smoothing weight, >= 0 (0: plain barycentric projection; "
                           "default 1)", cxxopts::value<std::string>());
  // clang-format on
}

std::optional<EmbeddingRequest> embedding_request_from_flags(const cxxopts::ParseResult& flags) {
  if (!flags.count("joint-embedding")) {
    GW_CHECK(!flags.count("embedding-anchor") && !flags.count("embedding-lambda"),
             "--embedding-anchor / --embedding-lambda are used only with --joint-embedding DIM");
    return std::nullopt;
  }
  EmbeddingRequest request;
  // Parsed here rather than by cxxopts so that a malformed value names its flag.
  const std::string dimension = flags["joint-embedding"].as<std::string>();
  const auto parsed =
      std::from_chars(dimension.data(), dimension.data() + dimension.size(), request.dimension);
  GW_CHECK(parsed.ec == std::errc() && parsed.ptr == dimension.data() + dimension.size(),
           "--joint-embedding '" << dimension << "': give a whole number >= 1, e.g. 10");
  GW_CHECK(request.dimension >= 1,
           "--joint-embedding " << request.dimension << ": give a dimension >= 1, e.g. 10");
  if (flags.count("embedding-anchor")) {
    const std::string anchor = flags["embedding-anchor"].as<std::string>();
    GW_CHECK(anchor == "source" || anchor == "target",
             "--embedding-anchor '" << anchor << "': give source or target");
    request.anchor_is_source = anchor == "source";
  }
  if (flags.count("embedding-lambda")) {
    const std::string lambda = flags["embedding-lambda"].as<std::string>();
    const auto parsed =
        std::from_chars(lambda.data(), lambda.data() + lambda.size(), request.lambda);
    GW_CHECK(parsed.ec == std::errc() && parsed.ptr == lambda.data() + lambda.size(),
             "--embedding-lambda '" << lambda << "': give a number >= 0, e.g. 1");
    GW_CHECK(std::isfinite(request.lambda) && request.lambda >= 0.0,
             "--embedding-lambda " << request.lambda << ": give a finite value >= 0");
  }
  return request;
}

void check_embedding_geometry(const Problem& problem) {
  for (const auto& [role, geometry] :
       {std::pair<const char*, const Geometry*>{"source", &problem.source},
        {"target", &problem.target}}) {
    GW_CHECK(geometry->kind() == Geometry::Kind::kPoints,
             "--joint-embedding needs point coordinates on both sides, but the "
                 << role
                 << " geometry is a graph or distance matrix; use a points rep (X, obsm:KEY, "
                    "/points) for both sides");
  }
}

JointEmbeddingResult embed_sides(const EmbeddingRequest& request,
                                 const Problem& problem,
                                 const Result& result,
                                 int knn) {
  KnnGraphOptions knn_options;
  knn_options.k = knn;
  const Geometry& child = request.anchor_is_source ? problem.target : problem.source;
  const CsrGraph child_graph = knn_graph(
      std::span<const double>(child.points()), child.num_nodes(), child.dimension(), knn_options);
  JointEmbeddingProblem p;
  p.anchor = request.anchor_is_source ? "source" : "target";
  auto dataset = [&](const char* name, const Geometry& g) {
    EmbeddingDataset d{name, g.num_nodes(), g.points(), g.dimension(), std::nullopt};
    if (&g == &child) d.graph = CsrGraphView(child_graph);
    return d;
  };
  p.datasets = {dataset("source", problem.source), dataset("target", problem.target)};
  EmbeddingPlan plan{"source", "target", result.n, result.k, {}, {}, {}, {}};
  if (!result.plan.empty()) {
    plan.dense = result.plan;
  } else {
    plan.row_offsets = result.plan_topk.row_offsets;
    plan.col_indices = result.plan_topk.col_indices;
    plan.values = result.plan_topk.values;
  }
  p.plans = {plan};
  JointEmbeddingOptions options;
  options.dimension = request.dimension;
  options.lambda = request.lambda;
  return joint_embedding(p, options);
}

}  // namespace gw::cli
