// Writing and reading the pairwise output file (pairwise/output_impl.h).
#include <cstdio>
#include <span>
#include <sstream>

#include "core/config.h"
#include "core/error.h"
#include "io/hdf5.h"
#include "pairwise/output_impl.h"
#include "pairwise/pair_solve.h"

namespace gw::pairwise::detail {
namespace {

// 64-bit FNV-1a over bytes: a fingerprint of the collection's contents for the settings attribute,
// so that --resume refuses a collection that changed but kept its sizes (not a cryptographic hash:
// it guards against mistakes, not against forgery).
class Fingerprint {
 public:
  template <typename T>
  void add(std::span<const T> values) {
    add(static_cast<std::uint64_t>(values.size()));  // so that adjacent arrays cannot shift
    add_bytes(values.data(), values.size_bytes());
  }
  void add(std::uint64_t value) { add_bytes(&value, sizeof value); }
  std::uint64_t value() const { return hash_; }

 private:
  void add_bytes(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t b = 0; b < bytes; ++b) {
      hash_ ^= p[b];
      hash_ *= 0x100000001b3ULL;
    }
  }
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// Every space's data as read (points, the symmetrized graph, or the matrix), its weights, and the
// labels. A geometry given as a provider (not something read_collection makes) adds only its kind
// and size: its distances are not at hand without computing them.
std::uint64_t collection_fingerprint(const Collection& collection) {
  Fingerprint f;
  f.add(static_cast<std::uint64_t>(collection.size()));
  for (const Space& space : collection.spaces) {
    const Geometry& g = space.geometry;
    f.add(static_cast<std::uint64_t>(g.kind()));
    f.add(static_cast<std::uint64_t>(g.num_nodes()));
    switch (g.kind()) {
      case Geometry::Kind::kPoints:
        f.add(static_cast<std::uint64_t>(g.dimension()));
        f.add(std::span<const double>(g.points()));
        break;
      case Geometry::Kind::kGraph:
        f.add(std::span<const Offset>(g.graph().row_offsets()));
        f.add(std::span<const Index>(g.graph().col_indices()));
        f.add(std::span<const float>(g.graph().weights()));
        break;
      case Geometry::Kind::kDistances:
        f.add(static_cast<std::uint64_t>(g.distances().cols));
        f.add(std::span<const float>(g.distances().values));
        break;
      default:
        break;
    }
    f.add(std::span<const double>(space.weights));
  }
  f.add(std::span<const std::int64_t>(collection.labels));
  return f.value();
}

std::vector<double> square(const PairIndex& index, const std::vector<double>& values, double diag) {
  const Index n = index.n;
  std::vector<double> out(static_cast<std::size_t>(n) * n, diag);
  for (Index i = 0; i < n; ++i) {
    for (Index j = i + 1; j < n; ++j) {
      const double v = values[index.of(i, j)];
      out[static_cast<std::size_t>(i) * n + j] = v;
      out[static_cast<std::size_t>(j) * n + i] = v;
    }
  }
  return out;
}

}  // namespace

std::string settings_of(const Collection& collection, const RunOptions& options) {
  const Options& s = options.solver;
  std::int64_t nodes = 0;
  for (const Space& space : collection.spaces) nodes += space.geometry.num_nodes();
  char fingerprint[17];
  std::snprintf(fingerprint,
                sizeof fingerprint,
                "%016llx",
                static_cast<unsigned long long>(collection_fingerprint(collection)));
  std::ostringstream out;
  out.precision(17);
  out << "spaces=" << collection.size() << " nodes=" << nodes << " data=fnv1a64:" << fingerprint
      << " seed=" << options.seed << " nearest=" << options.nearest << " points="
      << (options.point_metric == PointMetric::kEuclidean ? "euclidean" : "knn-geodesic")
      << " knn=" << s.knn << " M=" << s.num_anchors << " eps=" << s.epsilon
      << " eps_final=" << s.epsilon_final << " max_iter=" << s.max_iterations
      << " min_iter=" << s.min_iterations << " warmup=" << s.warmup_iterations << "x"
      << s.warmup_anchors << " profile_anchors=" << s.profile_anchors
      << " polish=" << s.polish_iterations << " restarts=" << s.restarts << " starts=" << s.starts
      << " exact_tol=" << s.exact_tolerance << " precision=" << to_string(s.precision)
      << " solver=" << to_string(s.solver);
  return out.str();
}

void write_output(const std::string& path,
                  const Collection& collection,
                  const RunOptions& options,
                  const std::string& settings,
                  const State& state) {
  const PairIndex index{collection.size()};
  const Index n = collection.size();
  const std::int64_t shape[2] = {n, n};
  std::int64_t done = 0, pruned = 0;
  for (std::int8_t s : state.status) {
    done += s != kPending;
    pruned += s == kPruned;
  }
  std::vector<double> distance(state.objective.size());
  for (std::size_t p = 0; p < distance.size(); ++p) distance[p] = gw_distance(state.objective[p]);
  for (std::size_t p = 0; p < distance.size(); ++p) {
    if (std::isnan(state.objective[p])) distance[p] = kNaN;
  }
  io::Writer out(path);
  auto put = [&](const char* name, const std::vector<double>& values, double diag) {
    const std::vector<double> full = square(index, values, diag);
    out.write_array<double>(name, std::span<const double>(full), shape);
  };
  put("/distances", state.objective, 0.0);
  put("/gw_distance", distance, 0.0);
  put("/stderr", state.standard_error, 0.0);
  put("/seconds", state.seconds, kNaN);
  if (!state.lower_bound.empty()) put("/lower_bound", state.lower_bound, 0.0);
  std::vector<std::int8_t> status(static_cast<std::size_t>(n) * n, kDone);
  for (Index i = 0; i < n; ++i) {
    for (Index j = i + 1; j < n; ++j) {
      const std::int8_t s = state.status[index.of(i, j)];
      status[static_cast<std::size_t>(i) * n + j] = s;
      status[static_cast<std::size_t>(j) * n + i] = s;
    }
  }
  out.write_array<std::int8_t>("/status", std::span<const std::int8_t>(status), shape);
  if (!collection.labels.empty()) {
    const std::int64_t label_shape[1] = {n};
    out.write_array<std::int64_t>(
        "/labels", std::span<const std::int64_t>(collection.labels), label_shape);
  }
  out.set_attribute("/", "complete", std::int64_t{done == index.total() ? 1 : 0});
  out.set_attribute("/", "n_spaces", std::int64_t{n});
  out.set_attribute("/", "pairs_total", index.total());
  out.set_attribute("/", "pairs_done", done);
  out.set_attribute("/", "pairs_pruned", pruned);
  out.set_attribute("/", "seed", std::to_string(options.seed));
  out.set_attribute("/", "nearest", std::int64_t{options.nearest});
  out.set_attribute("/", "settings", settings);
  out.set_attribute("/", "collection", collection.path);
  out.set_attribute("/", "generator", "gwalign " GW_VERSION_STRING " pairwise");
  out.commit();
}

State read_output(const std::string& path,
                  const Collection& collection,
                  const std::string& settings) {
  const io::Reader reader(path);
  GW_CHECK_CODE(reader.has_attribute("/", "settings") &&
                    reader.read_string_attribute("/", "settings") == settings,
                ErrorCode::kInvalidArgument,
                "'" << path << "' was written by a different run (its settings attribute is not '"
                    << settings << "'); resume with the same collection and flags, or remove it");
  const PairIndex index{collection.size()};
  const Index n = collection.size();
  State state(index.total());
  const io::Array<double> objective = reader.read_array<double>("/distances", 2);
  const io::Array<double> standard_error = reader.read_array<double>("/stderr", 2);
  const io::Array<double> seconds = reader.read_array<double>("/seconds", 2);
  const io::Array<std::int8_t> status = reader.read_array<std::int8_t>("/status", 2);
  // A doctored or truncated file must not be read past its end.
  auto check_shape = [&](const char* name, std::int64_t rows, std::int64_t cols) {
    GW_CHECK_CODE(rows == n && cols == n,
                  ErrorCode::kBadData,
                  "'" << path << "' " << name << " is " << rows << " x " << cols << ", not " << n
                      << " x " << n << "; remove the output and start again");
  };
  check_shape("/distances", objective.rows(), objective.cols());
  check_shape("/stderr", standard_error.rows(), standard_error.cols());
  check_shape("/seconds", seconds.rows(), seconds.cols());
  check_shape("/status", status.rows(), status.cols());
  for (Index i = 0; i < n; ++i) {
    for (Index j = i + 1; j < n; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * n + j;
      const std::int64_t p = index.of(i, j);
      state.status[p] = status.data[at];
      state.objective[p] = objective.data[at];
      state.standard_error[p] = standard_error.data[at];
      state.seconds[p] = seconds.data[at];
    }
  }
  return state;
}

}  // namespace gw::pairwise::detail
