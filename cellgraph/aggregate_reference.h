// Reference oracle of the per-gene aggregation (cellgraph/aggregate.h): a std::map from gene id to
// a double sum and a count, filled token by token. Not installed; for tests and benchmarks.
// Inputs must be valid (nothing is checked).
#pragma once

#include <span>

#include "cellgraph/aggregate.h"

namespace gw {

GeneAggregate<double> aggregate_by_gene_reference(std::span<const double> embeddings,
                                                  std::span<const Index> gene_ids,
                                                  std::span<const Index> lengths,
                                                  Index batch,
                                                  Index seq_len,
                                                  Index hidden,
                                                  bool skip_cls);
GeneAggregate<double> aggregate_by_gene_reference(std::span<const float> embeddings,
                                                  std::span<const Index> gene_ids,
                                                  std::span<const Index> lengths,
                                                  Index batch,
                                                  Index seq_len,
                                                  Index hidden,
                                                  bool skip_cls);

}  // namespace gw
