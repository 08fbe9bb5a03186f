// gwalign._core: the pybind11 extension behind the pure-Python package `gwalign`.
//
// A thin layer: arrays in, gw::solve / gw::knn_graph / gw::gw_loss, arrays out. Input-building and
// report code is the library's (solver/inputs.h, solver/report.h), shared with the CLI. Python
// conventions (keyword arguments, scipy matrices, tqdm) live in python/gwalign/*.py.
//
// Copies: a side given as points or as a distance matrix is copied once into the geometry the
// solver owns (gw::Geometry holds its data by value), converting the dtype and layout on the way;
// no second copy is made. Outputs (plan, matching, CSR arrays, kNN graphs) are handed to numpy
// without a copy: the arrays view memory owned by the C++ object they came from.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "core/progress.h"
#include "graph/knn.h"
#include "solver/inputs.h"
#include "solver/metrics.h"
#include "solver/options.h"
#include "solver/report.h"
#include "solver/solve.h"

namespace py = pybind11;

namespace gw::python {
namespace {

// ------------------------------------------------------------------------------ Options fields
// The gw::Options fields exposed to Python, one entry each; Python builds its keyword arguments
// (gwalign.align(**options), gwalign.Options(...)) from this list, so a new field needs one line
// here and nothing in the .py files. Plain fields convert as numbers / bools / None.
// clang-format off
#define GW_PY_PLAIN_OPTIONS(X)   \
  X(num_anchors)                 \
  X(warmup_iterations)           \
  X(warmup_anchors)              \
  X(lambda_ema)                  \
  X(epsilon)                     \
  X(epsilon_final)               \
  X(epsilon_decay_iterations)    \
  X(momentum)                    \
  X(max_iterations)              \
  X(min_iterations)              \
  X(tolerance)                   \
  X(check_every)                 \
  X(plateau_ema_weight)          \
  X(plateau_improvement)         \
  X(plateau_patience)            \
  X(sinkhorn_max_iterations)     \
  X(sinkhorn_tolerance)          \
  X(sinkhorn_check_every)        \
  X(polish_iterations)           \
  X(polish_sinkhorn_iterations)  \
  X(polish_sinkhorn_tolerance)   \
  X(auto_precomputed_max_nodes)  \
  X(knn)                         \
  X(num_landmarks)               \
  X(dijkstra_cache_bytes)        \
  X(fused_weight)                \
  X(rho_a)                       \
  X(rho_b)                       \
  X(slack)                       \
  X(slack_shared)                \
  X(partial_mass)                \
  X(profile_anchors)             \
  X(profile_quantiles)           \
  X(profile_epsilon)             \
  X(profile_sinkhorn_iterations) \
  X(restarts)                    \
  X(restart_iterations)          \
  X(multiscale)                  \
  X(multiscale_size)             \
  X(device)                      \
  X(threads)                     \
  X(seed)                        \
  X(round_marginals)             \
  X(top_k)                       \
  X(compute_gw_loss)             \
  X(exact_loss_max_work)         \
  X(loss_anchors)                \
  X(memory_limit)                \
  X(support_size)                \
  X(support_cells)               \
  X(support_regrow_every)        \
  X(support_feature_candidates)  \
  X(exact_max_work)              \
  X(exact_max_iterations)        \
  X(exact_tolerance)             \
  X(mirror_iterations)           \
  X(mirror_epsilon)              \
  X(mirror_epsilon_final)        \
  X(mirror_sinkhorn_iterations)  \
  X(hybrid_sampled_work)         \
  X(hybrid_basin_iterations)     \
  X(hybrid_mirror_iterations)    \
  X(orientation_starts)          \
  X(starts)                      \
  X(start_time_budget)           \
  X(start_probe_iterations)

// Enum fields, exposed by name ("dense", "f32", "profiles"); the library's to_string /
// *_from_string pair converts. distance_mode is optional (None: auto).
#define GW_PY_ENUM_OPTIONS(X)                      \
  X(initial_plan, initial_plan_from_string)        \
  X(plan_format, plan_format_from_string)          \
  X(precision, precision_from_string)              \
  X(backend, backend_from_string)                  \
  X(distance_mode, distance_mode_from_string)      \
  X(support, support_from_string)                \
  X(solver, solver_kind_from_string)             \
  X(exact_method, exact_method_from_string)
// clang-format on

template <typename Enum>
std::string enum_name(const Enum& value) {
  return std::string(to_string(value));
}
template <typename Enum>
std::optional<std::string> enum_name(const std::optional<Enum>& value) {
  if (!value) return std::nullopt;
  return std::string(to_string(*value));
}

template <typename Enum, typename Parse>
void parse_enum(Enum& field,
                const std::optional<std::string>& name,
                Parse parse,
                const char* what) {
  if (!name) throw py::value_error(std::string("Options.") + what + " cannot be None");
  const auto parsed = parse(*name);
  if (!parsed) {
    throw py::value_error(std::string("Options.") + what + ": unknown value '" + *name + "'");
  }
  field = *parsed;
}
template <typename Enum, typename Parse>
void parse_enum(std::optional<Enum>& field,
                const std::optional<std::string>& name,
                Parse parse,
                const char* what) {
  if (!name || *name == "auto") {
    field.reset();
    return;
  }
  Enum value{};
  parse_enum(value, name, parse, what);
  field = value;
}

std::vector<std::string> option_names() {
  std::vector<std::string> names;
#define GW_PY_NAME(field, ...) names.emplace_back(#field);
  GW_PY_PLAIN_OPTIONS(GW_PY_NAME)
  GW_PY_ENUM_OPTIONS(GW_PY_NAME)
#undef GW_PY_NAME
  return names;
}

// A field's value as Python sees it: a Setting<T> reads as its T (and assigning it from Python
// marks it given, as the CLI's flags and C++ assignments do).
template <typename T>
T value_of(const T& field) {
  return field;
}
template <typename T>
T value_of(const Setting<T>& field) {
  return field.value();
}
template <typename Field>
using ValueOf = decltype(value_of(std::declval<const Field&>()));

void bind_options(py::module_& m) {
  py::class_<Options> options(m, "Options");
  options.def(py::init<>());
#define GW_PY_PLAIN(field)                                                           \
  options.def_property(                                                              \
      #field,                                                                        \
      [](const Options& o) { return value_of(o.field); },                            \
      [](Options& o, const ValueOf<decltype(Options::field)>& v) { o.field = v; });
  GW_PY_PLAIN_OPTIONS(GW_PY_PLAIN)
#undef GW_PY_PLAIN
#define GW_PY_ENUM(field, parse)                                                 \
  options.def_property(                                                          \
      #field,                                                                    \
      [](const Options& o) { return enum_name(o.field); },                       \
      [](Options& o, const std::optional<std::string>& name) {                   \
        parse_enum(                                                              \
            o.field, name, [](std::string_view s) { return parse(s); }, #field); \
      });
  GW_PY_ENUM_OPTIONS(GW_PY_ENUM)
#undef GW_PY_ENUM
  options.def("is_valid", [](const Options& o) {
    std::string why;
    const bool ok = o.is_valid(&why);
    return py::make_tuple(ok, why);
  });
  options.def("__copy__", [](const Options& o) { return Options(o); });
  // The settings the caller gave (Setting<T> fields assigned), which the strategy reads as
  // requests for one solver.
  options.def("given", [](const Options& o) {
    std::vector<std::string> names;
    for (std::string_view n : o.given_sampled_settings()) names.emplace_back(n);
    for (std::string_view n : o.given_exact_settings()) names.emplace_back(n);
    if (o.plan_format.given()) names.emplace_back("plan_format");
    return names;
  });
  options.def_static("field_names", &option_names);
}

// ------------------------------------------------------------------------------ arrays

// A numpy array viewing `size` elements at `data`, kept alive by `owner` (no copy).
template <typename T>
py::array view_of(const T* data, std::vector<py::ssize_t> shape, py::handle owner) {
  return py::array_t<T>(std::move(shape), data, owner);
}

// A numpy array that takes over `values` (moved into a capsule that frees it with the array).
template <typename T>
py::array array_from_vector(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::move(shape), owned->data(), free_when_done);
}

// Copies a 2-D array of any strides and of dtype T into a row-major vector of U.
template <typename U, typename T>
std::vector<U> to_row_major(const py::array_t<T>& a) {
  const auto r = a.template unchecked<2>();
  std::vector<U> out(static_cast<std::size_t>(r.shape(0)) * r.shape(1));
  std::size_t p = 0;
  for (py::ssize_t i = 0; i < r.shape(0); ++i) {
    for (py::ssize_t j = 0; j < r.shape(1); ++j) out[p++] = static_cast<U>(r(i, j));
  }
  return out;
}

// The element type of a 2-D float array, copied row-major into U. float32 and float64 are read as
// they are (any strides); other dtypes are converted by numpy first.
template <typename U>
std::vector<U> matrix_values(const py::array& a, const std::string& what) {
  if (a.ndim() != 2) {
    throw Error(ErrorCode::kInvalidArgument,
                what + " must be a 2-D array, got " + std::to_string(a.ndim()) + " dimensions");
  }
  if (py::isinstance<py::array_t<double>>(a)) return to_row_major<U>(a.cast<py::array_t<double>>());
  if (py::isinstance<py::array_t<float>>(a)) return to_row_major<U>(a.cast<py::array_t<float>>());
  return to_row_major<U>(py::array_t<double, py::array::forcecast>::ensure(a));
}

// A 1-D array of integers (int32 or int64, any stride) as a vector of I.
template <typename I>
std::vector<I> index_values(const py::array& a) {
  std::vector<I> out(static_cast<std::size_t>(a.size()));
  auto copy = [&](auto typed) {
    const auto r = typed.template unchecked<1>();
    for (py::ssize_t i = 0; i < r.shape(0); ++i) out[i] = static_cast<I>(r(i));
  };
  if (py::isinstance<py::array_t<std::int32_t>>(a)) {
    copy(a.cast<py::array_t<std::int32_t>>());
  } else {
    copy(py::array_t<std::int64_t, py::array::forcecast>::ensure(a));
  }
  return out;
}

std::vector<double> vector_values(const py::object& o) {
  const auto a = py::array_t<double, py::array::forcecast>::ensure(o);
  if (!a || a.ndim() != 1) throw py::value_error("expected a 1-D array of numbers");
  const auto r = a.unchecked<1>();
  std::vector<double> out(r.shape(0));
  for (py::ssize_t i = 0; i < r.shape(0); ++i) out[i] = r(i);
  return out;
}

// ------------------------------------------------------------------------------ sides

// One side, built and waiting for a solve (which takes its geometry).
struct Side {
  SideGeometry side;
  bool used = false;
};

std::shared_ptr<Side> side_points(const py::array& points, const std::string& what) {
  const py::ssize_t n = points.ndim() == 2 ? points.shape(0) : 0;
  const py::ssize_t d = points.ndim() == 2 ? points.shape(1) : 0;
  std::vector<double> values = matrix_values<double>(points, what);
  GW_CHECK(n >= 1 && d >= 1, what << " must be n x d with n, d >= 1, got " << n << " x " << d);
  auto side = std::make_shared<Side>();
  py::gil_scoped_release release;
  side->side =
      side_from_points(std::move(values), static_cast<Index>(n), static_cast<int>(d), what);
  return side;
}

std::shared_ptr<Side> side_graph(Index n,
                                 const py::array& indptr,
                                 const py::array& indices,
                                 const py::array& data,
                                 const std::string& what) {
  const std::vector<Offset> offsets = index_values<Offset>(indptr);
  const std::vector<Index> columns = index_values<Index>(indices);
  const auto values = py::array_t<float, py::array::forcecast>::ensure(data);
  std::vector<float> lengths(values.size());
  const auto r = values.unchecked<1>();
  for (py::ssize_t i = 0; i < r.shape(0); ++i) lengths[i] = r(i);
  for (const Index c : columns) {
    GW_CHECK_CODE(c >= 0 && c < n,
                  ErrorCode::kBadData,
                  what << ": column index " << c << " is outside [0, " << n << ")");
  }
  auto side = std::make_shared<Side>();
  py::gil_scoped_release release;
  side->side = side_from_csr_graph(n, offsets, columns, lengths, what);
  return side;
}

std::shared_ptr<Side> side_distances(const py::array& matrix,
                                     bool sparse,
                                     int threads,
                                     const std::string& what) {
  GW_CHECK(matrix.ndim() == 2 && matrix.shape(0) == matrix.shape(1) && matrix.shape(0) >= 1,
           what << " must be a square n x n distance matrix, got shape ("
                << (matrix.ndim() >= 1 ? matrix.shape(0) : 0) << ", "
                << (matrix.ndim() >= 2 ? matrix.shape(1) : 0) << ")");
  const auto n = static_cast<Index>(matrix.shape(0));
  std::vector<float> values = matrix_values<float>(matrix, what);
  auto side = std::make_shared<Side>();
  py::gil_scoped_release release;
  side->side = side_from_distance_matrix(std::move(values), n, sparse, threads, what);
  return side;
}

std::shared_ptr<Side> side_nodes(Index n) {
  auto side = std::make_shared<Side>();
  side->side.geometry = Geometry::nodes_only(n);
  side->side.description = "features only";
  return side;
}

// ------------------------------------------------------------------------------ solve

// Calls the Python progress callable at the loop's host checks and turns a pending signal
// (Ctrl-C) or an exception of the callable into a cancelled solve; the exception is re-raised
// once the solve has returned.
struct ProgressBridge {
  py::object callable;
  std::optional<py::error_already_set> pending;

  bool operator()(const Progress& p) {
    py::gil_scoped_acquire gil;
    if (pending) return false;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!callable.is_none()) {
        const py::object keep_going = callable(p);
        if (!keep_going.is_none() && !keep_going.cast<bool>()) return false;
      }
    } catch (py::error_already_set& e) {
      pending.emplace(std::move(e));
      return false;
    }
    return true;
  }
};

// The problem of a solve from the sides and arrays Python gives (their geometry moved in, so the
// caller moves it back when only the strategy is wanted).
Problem problem_of(Side& source,
                   Side& target,
                   const py::object& p,
                   const py::object& q,
                   const py::object& feature_cost,
                   const py::object& features,
                   const py::object& initial_plan) {
  Problem problem;
  if (!p.is_none()) problem.source_weights = vector_values(p);
  if (!q.is_none()) problem.target_weights = vector_values(q);
  const Index n = source.side.geometry.num_nodes(), k = target.side.geometry.num_nodes();
  auto dense = [&](const py::object& o, const char* what) {
    const py::array a = py::array::ensure(o);
    GW_CHECK(a && a.ndim() == 2 && a.shape(0) == n && a.shape(1) == k,
             what << " must be an n x k = " << n << " x " << k << " array");
    return DenseMatrix<double>(n, k, matrix_values<double>(a, what));
  };
  if (!feature_cost.is_none()) problem.feature_cost = dense(feature_cost, "feature_cost");
  if (!features.is_none()) {
    // (source features n x d, target features k x d): the solver builds their cost only where a
    // path needs it (Problem::source_features).
    const py::tuple pair = features.cast<py::tuple>();
    GW_CHECK(pair.size() == 2, "features must be a pair (source n x d, target k x d)");
    auto matrix = [](const py::handle& o, const char* what) {
      const py::array a = py::array::ensure(o);
      GW_CHECK(a && a.ndim() == 2, what << " must be a 2-D array");
      return DenseMatrix<double>(static_cast<Index>(a.shape(0)), static_cast<Index>(a.shape(1)),
                                 matrix_values<double>(a, what));
    };
    problem.source_features = matrix(pair[0], "source features");
    problem.target_features = matrix(pair[1], "target features");
  }
  if (!initial_plan.is_none()) problem.initial_plan = dense(initial_plan, "initial_plan");
  problem.source = std::move(source.side.geometry);
  problem.target = std::move(target.side.geometry);
  return problem;
}

// gw::choose_strategy for the sides (which stay usable for a solve).
Strategy run_choose_strategy(const std::shared_ptr<Side>& source,
                             const std::shared_ptr<Side>& target,
                             const py::object& p,
                             const py::object& q,
                             const py::object& feature_cost,
                             const py::object& features,
                             const py::object& initial_plan,
                             const Options& options) {
  GW_CHECK(!source->used && !target->used, "a side was already used by a solve; build it again");
  Problem problem = problem_of(*source, *target, p, q, feature_cost, features, initial_plan);
  Strategy strategy;
  try {
    strategy = choose_strategy(problem, options);
  } catch (...) {
    source->side.geometry = std::move(problem.source);
    target->side.geometry = std::move(problem.target);
    throw;
  }
  source->side.geometry = std::move(problem.source);
  target->side.geometry = std::move(problem.target);
  return strategy;
}

std::shared_ptr<Result> run_solve(const std::shared_ptr<Side>& source,
                                  const std::shared_ptr<Side>& target,
                                  const py::object& p,
                                  const py::object& q,
                                  const py::object& feature_cost,
                                  const py::object& features,
                                  const py::object& initial_plan,
                                  Options options,
                                  const py::object& progress) {
  GW_CHECK(!source->used && !target->used, "a side was already used by a solve; build it again");
  Problem problem = problem_of(*source, *target, p, q, feature_cost, features, initial_plan);
  source->used = target->used = true;

  auto bridge = std::make_shared<ProgressBridge>();
  bridge->callable = progress;
  options.progress = [bridge](const Progress& p) { return (*bridge)(p); };
  auto result = std::make_shared<Result>();
  {
    py::gil_scoped_release release;
    *result = solve(problem, options);
  }
  // The callback is dropped with the GIL held (it owns a Python reference).
  options.progress = nullptr;
  result->options.progress = nullptr;
  if (bridge->pending) {
    py::error_already_set error = std::move(*bridge->pending);
    bridge->pending.reset();
    throw error;
  }
  return result;
}

py::dict progress_dict(const Progress& p) {
  py::dict d;
  d["iteration"] = p.iteration;
  d["max_iterations"] = p.max_iterations;
  d["cost"] = p.cost;
  d["error"] = p.error;
  d["epsilon"] = p.epsilon;
  d["elapsed_seconds"] = p.elapsed_seconds;
  return d;
}

// Candidate and Strategy: how gw::solve chose its path, and why (Result.strategy).
void bind_strategy(py::module_& m) {
  py::class_<Candidate>(m, "Candidate")
      .def_readonly("name", &Candidate::name)
      .def_readonly("possible", &Candidate::possible)
      .def_readonly("why_not", &Candidate::why_not)
      .def_readonly("seconds", &Candidate::seconds)
      .def_readonly("bytes", &Candidate::bytes)
      .def("__repr__", [](const Candidate& c) {
        return "Candidate(" + c.name + ", " + (c.possible ? "possible" : "ruled out") + ")";
      });
  py::class_<Strategy>(m, "Strategy")
      .def_property_readonly("support",
                             [](const Strategy& s) { return std::string(to_string(s.support)); })
      .def_readonly("support_reason", &Strategy::support_reason)
      .def_property_readonly("solver",
                             [](const Strategy& s) { return std::string(to_string(s.solver)); })
      .def_readonly("solver_reason", &Strategy::solver_reason)
      .def_property_readonly(
          "exact_method", [](const Strategy& s) { return std::string(to_string(s.exact_method)); })
      .def_property_readonly("backend",
                             [](const Strategy& s) { return std::string(to_string(s.backend)); })
      .def_readonly("backend_reason", &Strategy::backend_reason)
      .def_property_readonly(
          "precision", [](const Strategy& s) { return std::string(to_string(s.precision)); })
      .def_readonly("precision_reason", &Strategy::precision_reason)
      .def_readonly("threads", &Strategy::threads)
      .def_readonly("threads_reason", &Strategy::threads_reason)
      .def_readonly("loss_computed", &Strategy::loss_computed)
      .def_readonly("loss_exact", &Strategy::loss_exact)
      .def_readonly("loss_reason", &Strategy::loss_reason)
      .def_readonly("estimated_peak_bytes", &Strategy::estimated_peak_bytes)
      .def_readonly("memory_limit_bytes", &Strategy::memory_limit_bytes)
      .def_readonly("candidates", &Strategy::candidates)
      .def("explain", &Strategy::explain)
      .def("to_json", &Strategy::to_json)
      .def("__repr__", [](const Strategy& s) { return s.explain(); });
}

void bind_progress(py::module_& m) {
  py::class_<Progress>(m, "Progress")
      .def_readonly("iteration", &Progress::iteration)
      .def_readonly("max_iterations", &Progress::max_iterations)
      .def_readonly("cost", &Progress::cost)
      .def_readonly("error", &Progress::error)
      .def_readonly("epsilon", &Progress::epsilon)
      .def_readonly("elapsed_seconds", &Progress::elapsed_seconds)
      .def("as_dict", &progress_dict);
}

// What a report says about the run besides the Result (solver/report.h).
void bind_run_info(py::module_& m) {
  py::class_<RunInfo>(m, "RunInfo")
      .def(py::init<>())
      .def_readwrite("command", &RunInfo::command)
      .def_readwrite("source", &RunInfo::source)
      .def_readwrite("target", &RunInfo::target)
      .def_readwrite("source_rep", &RunInfo::source_rep)
      .def_readwrite("target_rep", &RunInfo::target_rep)
      .def_readwrite("output", &RunInfo::output)
      .def_readwrite("source_description", &RunInfo::source_description)
      .def_readwrite("target_description", &RunInfo::target_description)
      .def_readwrite("abs_rho", &RunInfo::abs_rho)
      .def_readwrite("truth", &RunInfo::truth);
}

void bind_side(py::module_& m) {
  py::class_<Side, std::shared_ptr<Side>>(m, "Side")
      .def_property_readonly("description", [](const Side& s) { return s.side.description; })
      .def_property_readonly("num_nodes",
                             [](const Side& s) { return s.side.geometry.num_nodes(); });
}

using ResultClass = py::class_<Result, std::shared_ptr<Result>>;

// How the solve ended, its figures, and the path it took.
void add_result_summary(ResultClass& result) {
  result
      .def_property_readonly("termination",
                             [](const Result& r) { return std::string(to_string(r.termination)); })
      .def_readonly("message", &Result::message)
      .def_readonly("iterations", &Result::iterations)
      .def_readonly("n", &Result::n)
      .def_readonly("k", &Result::k)
      .def_readonly("plan_mass", &Result::plan_mass)
      .def_readonly("gw_cost_estimate", &Result::gw_cost_estimate)
      .def_readonly("gw_loss", &Result::gw_loss)
      .def_readonly("gw_loss_stderr", &Result::gw_loss_stderr)
      .def_readonly("gw_loss_exact", &Result::gw_loss_exact)
      .def_readonly("total_seconds", &Result::total_seconds)
      .def_property_readonly("backend",
                             [](const Result& r) { return std::string(to_string(r.backend)); })
      .def_readonly("threads", &Result::threads)
      .def_readonly("seed", &Result::seed)
      .def_readonly("source_distances", &Result::source_distances)
      .def_readonly("target_distances", &Result::target_distances)
      .def_readonly("restart_losses", &Result::restart_losses)
      .def_readonly("restart_chosen", &Result::restart_chosen)
      .def_readonly("multiscale_used", &Result::multiscale_used)
      .def_readonly("strategy", &Result::strategy)
      .def_property_readonly(
          "solver", [](const Result& r) { return std::string(to_string(r.strategy.solver)); })
      .def_property_readonly("solver_reason",
                             [](const Result& r) { return r.strategy.solver_reason; })
      .def_property_readonly("support",
                             [](const Result& r) { return std::string(to_string(r.strategy.support)); })
      .def_property_readonly("exact_method",
                             [](const Result& r) {
                               return r.strategy.solver == SolverKind::kExact
                                          ? std::string(to_string(r.strategy.exact_method))
                                          : std::string();
                             })
      .def_readonly("start_chosen", &Result::start_chosen)
      .def_readonly("float64_finish_iterations", &Result::float64_finish_iterations);
}

// The per-start, per-phase and per-iteration records, and the options the solve ran with.
void add_result_records(ResultClass& result) {
  result
      .def_property_readonly("starts",
                             [](const Result& r) {
                               py::list rows;
                               for (const StartRecord& s : r.starts) {
                                 py::dict d;
                                 d["name"] = s.name;
                                 d["gw_loss"] = s.gw_loss;
                                 d["objective"] = s.objective;
                                 d["iterations"] = s.iterations;
                                 d["seconds"] = s.seconds;
                                 d["map_objective"] = s.map_objective;
                                 d["skipped"] = s.skipped;
                                 d["stopped"] = s.stopped;
                                 rows.append(d);
                               }
                               return rows;
                             })
      .def_readonly("options", &Result::options)
      .def("ok", &Result::ok)
      .def_property_readonly("timings",
                             [](const Result& r) {
                               py::dict d;
                               for (const auto& [phase, s] : r.timings.entries())
                                 d[phase.c_str()] = s;
                               return d;
                             })
      .def_property_readonly("log",
                             [](const Result& r) {
                               py::list rows;
                               for (const IterationRecord& it : r.log) {
                                 py::dict d;
                                 d["iteration"] = it.iteration;
                                 d["cost"] = it.cost;
                                 d["error"] = it.error;
                                 d["epsilon"] = it.epsilon;
                                 d["sinkhorn_iterations"] = it.sinkhorn_iterations;
                                 d["sinkhorn_error"] = it.sinkhorn_error;
                                 d["seconds"] = it.seconds;
                                 rows.append(d);
                               }
                               return rows;
                             });
}

// The plan and the matching: NumPy views into the Result (no copy); each array keeps the Result
// alive.
void add_result_arrays(ResultClass& result) {
  result
      .def_property_readonly("plan_dense",
                             [](py::object self) -> py::object {
                               const auto& r = self.cast<const Result&>();
                               if (r.plan.empty()) return py::none();
                               return view_of(r.plan.data(), {r.n, r.k}, self);
                             })
      .def_property_readonly(
          "plan_csr_arrays",
          [](py::object self) -> py::object {
            const auto& r = self.cast<const Result&>();
            if (r.plan_topk.row_offsets.empty()) return py::none();
            const auto& c = r.plan_topk;
            const auto nnz = static_cast<py::ssize_t>(c.values.size());
            return py::make_tuple(
                view_of(c.values.data(), {nnz}, self),
                view_of(c.col_indices.data(), {nnz}, self),
                view_of(
                    c.row_offsets.data(), {static_cast<py::ssize_t>(c.row_offsets.size())}, self));
          })
      .def_property_readonly(
          "matching",
          [](py::object self) {
            const auto& r = self.cast<const Result&>();
            return view_of(r.matching.data(), {static_cast<py::ssize_t>(r.matching.size())}, self);
          });
}

// The Result as text and JSON, and the report of a run (solver/report.h) the CLI writes too.
void add_result_reports(ResultClass& result) {
  result
      .def("brief_report", &Result::brief_report)
      .def("full_report", &Result::full_report)
      .def("to_json", &Result::to_json, py::arg("pretty") = true)
      .def("report_json", [](const Result& r, const RunInfo& run) { return report_json(r, run); })
      .def("report_scalars", [](const Result& r, const RunInfo& run) {
        py::list out;
        for (const auto& [name, value] : report_scalars(r, run)) {
          std::visit([&](const auto& v) { out.append(py::make_tuple(name, v)); }, value);
        }
        return out;
      });
}

void bind_result(py::module_& m) {
  ResultClass result(m, "Result");
  add_result_summary(result);
  add_result_records(result);
  add_result_arrays(result);
  add_result_reports(result);
}

// Registered in this order so that each signature names the classes it uses.
void bind_results(py::module_& m) {
  bind_strategy(m);
  bind_progress(m);
  bind_run_info(m);
  bind_side(m);
  bind_result(m);
}

// ------------------------------------------------------------------------------ other functions

py::tuple knn_graph_arrays(const py::array& points, int k, bool connect) {
  GW_CHECK(points.ndim() == 2, "points must be a 2-D n x d array");
  const auto n = static_cast<Index>(points.shape(0));
  const auto d = static_cast<int>(points.shape(1));
  KnnGraphOptions options;
  options.k = k;
  options.connect = connect;
  CsrGraph graph;
  // C-contiguous float32 / float64 is read in place; anything else is converted (one copy).
  auto run = [&](auto typed) {
    using T = typename decltype(typed)::value_type;
    std::span<const T> values(typed.data(), static_cast<std::size_t>(typed.size()));
    py::gil_scoped_release release;
    graph = knn_graph(values, n, d, options);
  };
  if (py::isinstance<py::array_t<float, py::array::c_style>>(points)) {
    run(points.cast<py::array_t<float, py::array::c_style>>());
  } else {
    run(py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(points));
  }
  const auto nnz = static_cast<py::ssize_t>(graph.num_edges());
  // CsrGraph only exposes const access; the arrays are copied out of it once (no Python-side copy).
  std::vector<float> weights = graph.weights();
  std::vector<Index> columns = graph.col_indices();
  std::vector<Offset> offsets = graph.row_offsets();
  return py::make_tuple(array_from_vector(std::move(weights), {nnz}),
                        array_from_vector(std::move(columns), {nnz}),
                        array_from_vector(std::move(offsets), {static_cast<py::ssize_t>(n) + 1}));
}

double exact_gw_loss(const py::array& dx, const py::array& dy, const py::array& plan) {
  GW_CHECK(dx.ndim() == 2 && dy.ndim() == 2 && plan.ndim() == 2,
           "gw_loss needs 2-D arrays Dx (n x n), Dy (k x k) and plan (n x k)");
  const auto n = static_cast<Index>(plan.shape(0)), k = static_cast<Index>(plan.shape(1));
  GW_CHECK(dx.shape(0) == n && dx.shape(1) == n && dy.shape(0) == k && dy.shape(1) == k,
           "gw_loss: Dx must be n x n and Dy k x k for an n x k plan (n = " << n << ", k = " << k
                                                                            << ")");
  const std::vector<double> x = matrix_values<double>(dx, "Dx");
  const std::vector<double> y = matrix_values<double>(dy, "Dy");
  const std::vector<double> t = matrix_values<double>(plan, "plan");
  py::gil_scoped_release release;
  return gw_loss(x, y, t, n, k);
}

void register_errors(py::module_& m) {
  static py::exception<Error> base(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.code()) {
        case ErrorCode::kInvalidArgument:
        case ErrorCode::kBadData:
          type = PyExc_ValueError;
          break;
        case ErrorCode::kNotFound:
          type = PyExc_FileNotFoundError;
          break;
        case ErrorCode::kUnsupported:
        case ErrorCode::kNotCompiled:
          type = PyExc_NotImplementedError;
          break;
        case ErrorCode::kCannotCreate:
        case ErrorCode::kIo:
          type = PyExc_OSError;
          break;
        case ErrorCode::kInternal:
          type = PyExc_RuntimeError;
          break;
      }
      PyErr_SetString(type, e.what());
    }
  });
}

}  // namespace

void bind_cellgraph(py::module_& parent);  // cellgraph.cpp
void bind_embedding(py::module_& m);       // embedding.cpp
void bind_spatial(py::module_& m);         // spatial.cpp

}  // namespace gw::python

PYBIND11_MODULE(_core, m) {
  using namespace gw::python;
  m.doc() = "gwalign's native core (pybind11); use the `gwalign` package instead.";
  m.attr("__version__") = GW_VERSION_STRING;
  m.attr("has_cuda") = static_cast<bool>(GW_HAS_CUDA);
  register_errors(m);
  bind_options(m);
  bind_results(m);
  bind_cellgraph(m);
  bind_embedding(m);
  bind_spatial(m);
  m.def("side_points", &side_points, py::arg("points"), py::arg("what"));
  m.def("side_graph",
        &side_graph,
        py::arg("n"),
        py::arg("indptr"),
        py::arg("indices"),
        py::arg("data"),
        py::arg("what"));
  m.def("side_distances",
        &side_distances,
        py::arg("matrix"),
        py::arg("sparse"),
        py::arg("threads"),
        py::arg("what"));
  m.def("side_nodes", &side_nodes, py::arg("n"));
  m.def("solve",
        &run_solve,
        py::arg("source"),
        py::arg("target"),
        py::arg("p"),
        py::arg("q"),
        py::arg("feature_cost"),
        py::arg("features"),
        py::arg("initial_plan"),
        py::arg("options"),
        py::arg("progress"));
  m.def("choose_strategy",
        &run_choose_strategy,
        py::arg("source"),
        py::arg("target"),
        py::arg("p"),
        py::arg("q"),
        py::arg("feature_cost"),
        py::arg("features"),
        py::arg("initial_plan"),
        py::arg("options"));
  m.def("feature_cost_from_features", [](const py::array& f, const py::array& g) {
    GW_CHECK(f.ndim() == 2 && g.ndim() == 2 && f.shape(1) == g.shape(1),
             "features must be n x d and k x d arrays with the same d");
    const auto n = static_cast<gw::Index>(f.shape(0));
    const auto k = static_cast<gw::Index>(g.shape(0));
    const std::vector<double> fv = matrix_values<double>(f, "source features");
    const std::vector<double> gv = matrix_values<double>(g, "target features");
    gw::DenseMatrix<double> cost;
    {
      py::gil_scoped_release release;
      cost = gw::feature_cost_from_features(fv, n, gv, k, f.shape(1));
    }
    return array_from_vector(std::move(cost.values), {n, k});
  });
  m.def("knn_graph_arrays", &knn_graph_arrays, py::arg("points"), py::arg("k"), py::arg("connect"));
  m.def("spearman", [](const py::object& x, const py::object& y) {
    const std::vector<double> a = vector_values(x), b = vector_values(y);
    GW_CHECK(a.size() == b.size(),
             "spearman: the samples have " << a.size() << " and " << b.size() << " values");
    return gw::spearman(a, b);
  });
  m.def("gw_loss", &exact_gw_loss, py::arg("dx"), py::arg("dy"), py::arg("plan"));
}
