// Quality metrics for alignments, shared by tests, benchmarks and the CLI.
#pragma once

#include <span>
#include <vector>

#include "core/types.h"

namespace gw {

// Argmax of every row of a dense n x k plan (row-major, row stride k); ties go to the smallest
// column. O(n k).
std::vector<Index> argmax_matching(std::span<const double> plan, Index n, Index k);

// Spearman rank correlation of two equally long samples: the Pearson correlation of their ranks,
// with tied values given their average rank. NaN for fewer than two values or a constant sample.
// O(n log n).
double spearman(std::span<const double> x, std::span<const double> y);

// Fraction of source nodes i with matching[i] == truth[i] (truth[i] < 0: node without a
// counterpart, skipped). NaN when no node has a counterpart.
double node_correctness(std::span<const Index> matching, std::span<const Index> truth);

// Fraction of source nodes whose label equals the label of their matched target node.
double label_transfer_accuracy(std::span<const Index> matching,
                               std::span<const int> source_labels,
                               std::span<const int> target_labels);

}  // namespace gw
