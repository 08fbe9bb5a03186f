#include "spatial/transfer.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace gw::spatial {
namespace {

// Visits every entry as (sender, receiver, mass) for the chosen direction.
template <typename Fn>
void for_each_entry(const PlanView& plan, Direction direction, Fn&& fn) {
  for (Index i = 0; i < plan.rows(); ++i) {
    plan.for_each_in_row(i, [&](Index j, double p) {
      if (p <= 0.0) return;
      if (direction == Direction::kPush) {
        fn(i, j, p);
      } else {
        fn(j, i, p);
      }
    });
  }
}

Index senders(const PlanView& plan, Direction d) { return d == Direction::kPush ? plan.rows() : plan.cols(); }
Index receivers(const PlanView& plan, Direction d) { return d == Direction::kPush ? plan.cols() : plan.rows(); }

void check_plan_masses(const PlanView& plan) {
  bool ok = true;
  for (Index i = 0; i < plan.rows() && ok; ++i)
    plan.for_each_in_row(i, [&](Index, double p) { ok = ok && std::isfinite(p) && p >= 0.0; });
  GW_CHECK_CODE(ok, ErrorCode::kBadData, "transfer: the plan holds a negative or non-finite mass");
}

// Flags receivers whose mass is at most zero_mass of the mean receiver mass.
Index flag_unreached(const std::vector<double>& mass, double zero_mass, std::vector<std::uint8_t>& has_mass) {
  double total = 0.0;
  for (double m : mass) total += m;
  const double threshold = mass.empty() ? 0.0 : zero_mass * total / static_cast<double>(mass.size());
  has_mass.assign(mass.size(), 0);
  Index unreached = 0;
  for (std::size_t r = 0; r < mass.size(); ++r) {
    has_mass[r] = mass[r] > threshold ? 1 : 0;
    unreached += has_mass[r] ? 0 : 1;
  }
  return unreached;
}

}  // namespace

const char* to_string(Direction direction) { return direction == Direction::kPush ? "push" : "pull"; }

Direction direction_from_string(std::string_view text) {
  if (text == "push") return Direction::kPush;
  if (text == "pull") return Direction::kPull;
  GW_THROW(ErrorCode::kInvalidArgument,
           "transfer direction must be push (source -> target) or pull (target -> source), got '"
               << std::string(text) << "'");
}

CategoricalTransfer transfer_categorical(const PlanView& plan,
                                         std::span<const std::int32_t> codes,
                                         int num_classes,
                                         const TransferOptions& options) {
  const Direction dir = options.direction;
  GW_CHECK(num_classes >= 1, "transfer: need at least one class, got " << num_classes);
  GW_CHECK(codes.size() == static_cast<std::size_t>(senders(plan, dir)),
           "transfer (" << to_string(dir) << "): " << codes.size() << " labels for "
                        << senders(plan, dir) << " sending nodes");
  for (std::size_t s = 0; s < codes.size(); ++s) {
    GW_CHECK(codes[s] >= -1 && codes[s] < num_classes,
             "transfer: label code " << codes[s] << " of node " << s << " is outside [-1, "
                                     << num_classes << ")");
  }
  check_plan_masses(plan);
  const Index m = receivers(plan, dir);
  CategoricalTransfer out;
  out.num_classes = num_classes;
  out.probabilities.assign(static_cast<std::size_t>(m) * num_classes, 0.0);
  out.mass.assign(m, 0.0);
  std::vector<double> labelled(m, 0.0);
  for_each_entry(plan, dir, [&](Index s, Index r, double p) {
    out.mass[r] += p;
    if (codes[s] < 0) return;
    labelled[r] += p;
    out.probabilities[static_cast<std::size_t>(r) * num_classes + codes[s]] += p;
  });
  out.unreached = flag_unreached(out.mass, options.zero_mass, out.has_mass);
  out.label.assign(m, -1);
  out.confidence.assign(m, 0.0);
  for (Index r = 0; r < m; ++r) {
    double* row = &out.probabilities[static_cast<std::size_t>(r) * num_classes];
    // A receiver fed by unlabelled senders only is as uninformed as one without mass.
    if (out.has_mass[r] && !(labelled[r] > 0.0)) {
      out.has_mass[r] = 0;
      ++out.unreached;
    }
    if (!out.has_mass[r]) {
      for (int c = 0; c < num_classes; ++c) row[c] = 0.0;
      continue;
    }
    int best = 0;
    for (int c = 0; c < num_classes; ++c) {
      row[c] /= labelled[r];
      if (row[c] > row[best]) best = c;
    }
    out.label[r] = best;
    out.confidence[r] = row[best];
  }
  return out;
}

ContinuousTransfer transfer_continuous(const PlanView& plan,
                                       std::span<const double> values,
                                       Index columns,
                                       const TransferOptions& options) {
  const Direction dir = options.direction;
  GW_CHECK(columns >= 1, "transfer: need at least one value column, got " << columns);
  const std::size_t expected = static_cast<std::size_t>(senders(plan, dir)) * columns;
  GW_CHECK(values.size() == expected, "transfer (" << to_string(dir) << "): " << values.size()
                                                   << " values, expected " << senders(plan, dir)
                                                   << " sending nodes x " << columns << " columns");
  for (double v : values) {
    GW_CHECK_CODE(std::isfinite(v), ErrorCode::kBadData, "transfer: a value to transfer is not finite");
  }
  check_plan_masses(plan);
  const Index m = receivers(plan, dir);
  ContinuousTransfer out;
  out.columns = columns;
  out.values.assign(static_cast<std::size_t>(m) * columns, 0.0);
  out.mass.assign(m, 0.0);
  for_each_entry(plan, dir, [&](Index s, Index r, double p) {
    out.mass[r] += p;
    const double* v = &values[static_cast<std::size_t>(s) * columns];
    double* dst = &out.values[static_cast<std::size_t>(r) * columns];
    for (Index c = 0; c < columns; ++c) dst[c] += p * v[c];
  });
  out.unreached = flag_unreached(out.mass, options.zero_mass, out.has_mass);
  for (Index r = 0; r < m; ++r) {
    double* dst = &out.values[static_cast<std::size_t>(r) * columns];
    for (Index c = 0; c < columns; ++c) {
      dst[c] = out.has_mass[r] ? dst[c] / out.mass[r] : std::numeric_limits<double>::quiet_NaN();
    }
  }
  return out;
}

}  // namespace gw::spatial
