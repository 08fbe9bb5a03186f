// Annotation transfer through a transport plan (moscot's push and pull; Tangram's and PASTE's
// label projection): the plan P (n source rows x k target columns) is read as a soft
// correspondence, and a node's transferred value is the plan-weighted average over the nodes it
// is coupled to.
//
//   push (source -> target): for target j, prob_j(c) = sum_i P_ij [label_i = c] / sum_i P_ij
//   pull (target -> source): for source i, prob_i(c) = sum_j P_ij [label_j = c] / sum_j P_ij
//
// Continuous values (obsm / X columns) are averaged the same way (barycentric projection). A node
// whose plan mass is at most `zero_mass` of the mean node mass receives nothing: it is flagged
// (has_mass = 0), its probabilities and values are 0 and its label is -1 (NaN for continuous
// values). Partial plans leave such nodes outside the overlap.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/types.h"
#include "spatial/plan_view.h"

namespace gw::spatial {

enum class Direction {
  kPush,  // source (rows) -> target (columns)
  kPull,  // target (columns) -> source (rows)
};
// "push" / "pull"; from_string throws kInvalidArgument naming the accepted values.
const char* to_string(Direction direction);
Direction direction_from_string(std::string_view text);

struct TransferOptions {
  Direction direction = Direction::kPush;
  // A receiving node with mass <= zero_mass x (total mass / receiving nodes) is flagged as
  // unreached. 1e-6: far below any node the plan really couples (a balanced plan gives each node
  // 1/n of the mass), far above float rounding of an entropic plan's tails.
  double zero_mass = 1e-6;
};

// Per receiving node (m = k for push, n for pull).
struct CategoricalTransfer {
  int num_classes = 0;
  // m x num_classes, row-major: the class probabilities (each row sums to 1, or is all 0 when
  // the node has no mass).
  std::vector<double> probabilities;
  std::vector<std::int32_t> label;  // argmax (ties: smallest class), -1 without mass
  std::vector<double> confidence;   // the argmax's probability, 0 without mass
  std::vector<double> mass;         // the node's plan mass (row or column sum)
  std::vector<std::uint8_t> has_mass;
  Index unreached = 0;              // nodes flagged
};

// `codes` holds one class per sending node (n for push, k for pull), each in
// [0, num_classes) or -1 (missing, as anndata stores NaN in a categorical): missing senders are
// left out, the probabilities are normalized over the labelled mass, and a receiver fed by
// missing labels only is flagged like one without mass. kInvalidArgument on a shape mismatch or an
// out-of-range code. O(nnz + m num_classes). Thread-safe.
CategoricalTransfer transfer_categorical(const PlanView& plan,
                                         std::span<const std::int32_t> codes,
                                         int num_classes,
                                         const TransferOptions& options = {});

struct ContinuousTransfer {
  Index columns = 0;
  // m x columns, row-major: the barycentric averages (NaN for nodes without mass).
  std::vector<double> values;
  std::vector<double> mass;
  std::vector<std::uint8_t> has_mass;
  Index unreached = 0;
};

// `values` is (sending nodes) x columns, row-major. Non-finite values are kBadData.
ContinuousTransfer transfer_continuous(const PlanView& plan,
                                       std::span<const double> values,
                                       Index columns,
                                       const TransferOptions& options = {});

}  // namespace gw::spatial
