// `gwalign align --joint-embedding DIM`: the joint embedding of the two sides (embedding/) from the
// plan just solved. Flag parsing and checks live here so that align.cpp only calls in; the
// algorithm is the library's.
#pragma once

#include <cxxopts.hpp>

#include <optional>
#include <string>

#include "embedding/joint_embedding.h"
#include "solver/problem.h"
#include "solver/result.h"

namespace gw::cli {

struct EmbeddingRequest {
  int dimension = 0;
  bool anchor_is_source = false;  // --embedding-anchor source|target (default target)
  double lambda = JointEmbeddingOptions{}.lambda;
};

// Adds the group "Joint embedding" (--joint-embedding, --embedding-anchor, --embedding-lambda).
void add_embedding_options(cxxopts::Options& cli);

// The request, or std::nullopt without --joint-embedding. kInvalidArgument (exit 64) for a DIM
// below 1, a negative or non-finite lambda, an unknown anchor name, or --embedding-anchor /
// --embedding-lambda given without --joint-embedding.
std::optional<EmbeddingRequest> embedding_request_from_flags(const cxxopts::ParseResult& flags);

// Both sides must be point clouds (the anchor's PCA needs coordinates, the other side's kNN graph
// needs them too); kInvalidArgument naming the side otherwise. Called before solving.
void check_embedding_geometry(const Problem& problem);

// Embeds both sides: the anchor side's PCA, the other side's barycentric projection through the
// plan (dense or top-k CSR) smoothed on its kNN graph (k = knn). Datasets are named "source" and
// "target".
JointEmbeddingResult embed_sides(const EmbeddingRequest& request,
                                 const Problem& problem,
                                 const Result& result,
                                 int knn);

}  // namespace gw::cli
