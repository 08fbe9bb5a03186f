// `gwalign bench diffusion`: batched Chebyshev heat diffusion (cellgraph/diffusion.h) of a padded
// [B, S, C] signal over B random graphs (n_b in [3S/4, S], ~--edges-per-node stored edges per node
// after symmetrization), against the per-graph loop (the same library call once per graph, as a
// pipeline without batching would do) in the same run.
//   batched_seconds   one call for the batch: operator build + K SpMMs (also split into
//                     build_seconds and apply_seconds)
//   loop_seconds      B calls, one graph each
//   eigen_seconds     the library path: the same recurrence on the same block-diagonal operator
//                     with Eigen (SparseMatrix<T, RowMajor> times a row-major n x C matrix per
//                     step, Eigen's own OpenMP rows; unpad and repad included), checked against
//                     our Y (eigen_max_rel_diff)
//   floor_seconds     max(flop floor, byte floor): the flop floor is K SpMMs of nnz x C
//                     multiply-adds at the FMA peak measured in this process (a register-only FMA
//                     loop with the same threads); the byte floor reads X and the operator once and
//                     writes Y once at the measured read bandwidth.
#include <omp.h>
#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cellgraph/cuda_diffusion.h"
#include "cellgraph/diffusion.h"
#include "cellgraph/workloads.h"
#include "command.h"
#include "core/context.h"
#include "core/device_array.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "tools/floors/floors.h"

namespace gw::cli {
namespace {

// Graph b of a batch as a batch of one.
struct OneGraph {
  std::vector<Offset> ptr;
  DiffusionGraphs view;
};
OneGraph one_graph(const DiffusionGraphSet& set, Index b) {
  OneGraph g;
  const Offset e0 = set.edge_ptr[b];
  const Offset m = set.edge_ptr[b + 1] - e0;
  g.ptr = {0, m};
  g.view = {std::span<const Index>(set.num_nodes).subspan(b, 1),
            g.ptr,
            std::span<const Index>(set.src).subspan(e0, m),
            std::span<const Index>(set.dst).subspan(e0, m),
            {}};
  return g;
}

// The library path for one batched diffusion: Eigen's sparse x dense product per Chebyshev step
// on the operator `op` built (T_{k+1} = 2 L~ T_k - T_{k-1}, Y = sum w_k T_k), written as a user of
// Eigen would. Weights below T's smallest normal number are dropped, as our kernel does, so both
// paths do the same arithmetic. x and y are padded [B, S, C].
template <typename T>
class EigenDiffusion {
 public:
  using Sparse = Eigen::SparseMatrix<T, Eigen::RowMajor, int>;
  using Dense = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  explicit EigenDiffusion(const HeatDiffusion& op)
      : offsets_(op.node_offsets()), seq_(op.seq_len()) {
    const CsrMatrix<double>& csr = op.shifted_laplacian();
    std::vector<Eigen::Triplet<T, int>> entries;
    entries.reserve(csr.nnz());
    for (Index i = 0; i < csr.rows; ++i) {
      for (Offset p = csr.row_offsets[i]; p < csr.row_offsets[i + 1]; ++p) {
        entries.emplace_back(i, csr.col_indices[p], static_cast<T>(csr.values[p]));
      }
    }
    matrix_.resize(csr.rows, csr.cols);
    matrix_.setFromTriplets(entries.begin(), entries.end());
    for (const double w : op.weights()) {
      const T rounded = static_cast<T>(w);
      weights_.push_back(std::abs(rounded) < std::numeric_limits<T>::min() ? T(0) : rounded);
    }
  }

  void apply(const std::vector<T>& x, Index channels, std::vector<T>& y) {
    const Index n = matrix_.rows();
    const Index batch = static_cast<Index>(offsets_.size()) - 1;
    prev_.resize(n, channels);
    cur_.resize(n, channels);
    next_.resize(n, channels);
    out_.resize(n, channels);
    for (Index b = 0; b < batch; ++b) {
      const Index rows = static_cast<Index>(offsets_[b + 1] - offsets_[b]);
      prev_.middleRows(offsets_[b], rows) = Eigen::Map<const Dense>(
          x.data() + static_cast<std::size_t>(b) * seq_ * channels, rows, channels);
    }
    out_ = weights_[0] * prev_;
    const int order = static_cast<int>(weights_.size()) - 1;
    if (order >= 1) {
      cur_.noalias() = matrix_ * prev_;
      out_ += weights_[1] * cur_;
    }
    for (int k = 2; k <= order; ++k) {
      next_.noalias() = matrix_ * cur_;
      prev_ = T(2) * next_ - prev_;
      out_ += weights_[k] * prev_;
      prev_.swap(cur_);
    }
    std::fill(y.begin(), y.end(), T(0));
    for (Index b = 0; b < batch; ++b) {
      const Index rows = static_cast<Index>(offsets_[b + 1] - offsets_[b]);
      Eigen::Map<Dense>(y.data() + static_cast<std::size_t>(b) * seq_ * channels, rows, channels) =
          out_.middleRows(offsets_[b], rows);
    }
  }

 private:
  Sparse matrix_;
  std::vector<T> weights_;
  std::vector<Offset> offsets_;
  Index seq_;
  Dense prev_, cur_, next_, out_;
};

template <typename T>
void run(const cxxopts::ParseResult& args, BenchReport& report) {
  const Index batch = args["batch"].as<Index>();
  const Index seq = args["seq"].as<Index>();
  const Index channels = args["channels"].as<Index>();
  const int reps = args["reps"].as<int>();
  const std::uint64_t seed = args["seed"].as<std::uint64_t>();
  const std::string backend_name = args["backend"].as<std::string>();
  const auto backend = backend_from_string(backend_name);
  GW_CHECK(backend.has_value(), "--backend must be cpu or cuda, got '" << backend_name << "'");
  GW_CHECK(batch >= 1 && seq >= 2 && channels >= 1,
           "--batch, --seq and --channels must be >= 1, 2, 1");
  ScopedThreads threads(args["threads"].as<int>());

  Rng rng(seed);
  const DiffusionGraphSet set =
      random_diffusion_graphs(rng, batch, seq, args["edges-per-node"].as<double>());
  std::vector<T> x(static_cast<std::size_t>(batch) * seq * channels, T(0));
  for (Index b = 0; b < batch; ++b) {
    for (Index i = 0; i < set.num_nodes[b]; ++i) {
      for (Index c = 0; c < channels; ++c) {
        x[(static_cast<std::size_t>(b) * seq + i) * channels + c] =
            static_cast<T>(2.0 * rng.uniform() - 1.0);
      }
    }
  }
  std::vector<T> y(x.size());
  DiffusionOptions options;
  options.order = args["order"].as<int>();
  options.beta = args["beta"].as<double>();
  options.symmetrize = true;
  options.threads = threads.count();
  const bool loop = !args.count("no-loop");

  const HeatDiffusion op(set.view(), seq, options);
  TimingStats batched, build, apply, per_graph, eigen;
  double library_diff = 0.0;
  if (*backend == Backend::kCpu) {
    build = time_repeated(reps, [&] { HeatDiffusion built(set.view(), seq, options); });
    apply =
        time_repeated(reps, [&] { op.apply(std::span<const T>(x), channels, std::span<T>(y)); });
    batched = time_repeated(reps, [&] {
      diffuse_batch(set.view(), std::span<const T>(x), seq, channels, std::span<T>(y), options);
    });
    EigenDiffusion<T> library(op);
    std::vector<T> y_library(y.size());
    eigen = time_repeated(reps, [&] { library.apply(x, channels, y_library); });
    op.apply(std::span<const T>(x), channels, std::span<T>(y));
    double largest = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      largest = std::max(largest, std::abs(static_cast<double>(y[i])));
      library_diff = std::max(library_diff, std::abs(static_cast<double>(y[i] - y_library[i])));
    }
    library_diff /= std::max(largest, std::numeric_limits<double>::min());
    if (loop) {
      const std::size_t rows = static_cast<std::size_t>(seq) * channels;
      per_graph = time_repeated(reps, [&] {
        for (Index b = 0; b < batch; ++b) {
          const OneGraph g = one_graph(set, b);
          diffuse_batch(g.view,
                        std::span<const T>(x).subspan(b * rows, rows),
                        seq,
                        channels,
                        std::span<T>(y).subspan(b * rows, rows),
                        options);
        }
      });
    }
  } else {
    CudaHeatDiffusion cuda(args["device"].as<int>());
    DeviceArray<T> dx(std::span<const T>(x), cuda.stream());
    DeviceArray<T> dy(y.size(), cuda.stream());
    build = time_repeated(reps, [&] { cuda.prepare(set.view(), seq, options); });
    apply = time_repeated(reps, [&] {
      cuda.apply_async(dx.data(), channels, dy.data());
      cuda.synchronize();
    });
    batched = time_repeated(reps, [&] {
      cuda.prepare(set.view(), seq, options);
      cuda.apply_async(dx.data(), channels, dy.data());
      cuda.synchronize();
    });
    if (loop) {
      const std::size_t rows = static_cast<std::size_t>(seq) * channels;
      per_graph = time_repeated(reps, [&] {
        for (Index b = 0; b < batch; ++b) {
          const OneGraph g = one_graph(set, b);
          cuda.prepare(g.view, seq, options);
          cuda.apply_async(dx.data() + b * rows, channels, dy.data() + b * rows);
        }
        cuda.synchronize();
      });
    }
  }

  const Offset nnz = op.nnz();
  const Index nodes = op.num_nodes();
  const double macs = static_cast<double>(options.order) * static_cast<double>(nnz) * channels;
  const double bytes = static_cast<double>(sizeof(T)) * nodes * channels +        // read X
                       static_cast<double>(sizeof(T)) * batch * seq * channels +  // write Y
                       static_cast<double>(nnz) * (sizeof(Index) + sizeof(T)) +
                       static_cast<double>(nodes) * sizeof(Offset);  // operator once
  report.set("backend", backend_name).set("precision", sizeof(T) == 4 ? "f32" : "f64");
  report.set("batch", std::int64_t{batch}).set("seq", std::int64_t{seq});
  report.set("channels", std::int64_t{channels}).set("order", options.order);
  report.set("beta", options.beta).set("nodes", std::int64_t{nodes}).set("nnz", nnz);
  report.set_timing("batched_", batched);
  report.set_timing("build_", build);
  report.set_timing("apply_", apply);
  if (loop) {
    report.set_timing("loop_", per_graph);
    report.set("loop_speedup", per_graph.median / batched.median);
  }
  report.set("multiply_adds", macs);
  if (*backend == Backend::kCpu) {
    const double peak = floors::fma_peak<T>(threads.count());
    const double bandwidth = floors::read_bandwidth(std::size_t{256} << 20, threads.count());
    const double flop_floor = 2.0 * macs / peak;
    const double byte_floor = bytes / bandwidth;
    report.set("fma_peak_gflops", peak / 1e9).set("read_bandwidth_gbs", bandwidth / 1e9);
    report.set("flop_floor_seconds", flop_floor).set("byte_floor_seconds", byte_floor);
    report.set("floor_seconds", std::max(flop_floor, byte_floor));
    report.set("floor_kind", flop_floor >= byte_floor ? "flops" : "bytes");
    report.set("ratio_to_floor", batched.median / std::max(flop_floor, byte_floor));
    report.set("apply_ratio_to_floor", apply.median / std::max(flop_floor, byte_floor));
    report.set_timing("eigen_", eigen);
    report.set("eigen_over_apply", eigen.median / apply.median);
    report.set("eigen_ratio_to_floor", eigen.median / std::max(flop_floor, byte_floor));
    report.set("eigen_max_rel_diff", library_diff);
    report.set("threads", threads.count());
  } else {
    report.set("apply_gflops", 2.0 * macs / apply.median / 1e9);
  }
  report.set("seconds", batched.median);
}

int run_bench_diffusion(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Time batched Chebyshev heat diffusion against the per-graph loop.\n"
                           "Example: gwalign bench diffusion --batch 64 --seq 512 --channels 64 "
                           "--json");
  // clang-format off
  options.add_options()
      ("batch", "graphs per batch (B)", cxxopts::value<Index>()->default_value("64"))
      ("seq", "padded nodes per graph (S)", cxxopts::value<Index>()->default_value("512"))
      ("channels", "channels per node (C = H * D)", cxxopts::value<Index>()->default_value("64"))
      ("order", "Chebyshev order K", cxxopts::value<int>()->default_value("64"))
      ("beta", "diffusion time", cxxopts::value<double>()->default_value("0.1"))
      ("edges-per-node", "stored edges per node after symmetrization",
       cxxopts::value<double>()->default_value("5"))
      ("precision", "f32 | f64", cxxopts::value<std::string>()->default_value("f32"))
      ("no-loop", "skip the per-graph loop")
      ("backend", "cpu | cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("device", "CUDA device with --backend cuda", cxxopts::value<int>()->default_value("0"));
  // clang-format on
  add_common_bench_options(options, 5);
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  const std::string precision = args["precision"].as<std::string>();
  const auto parsed = precision_from_string(precision);
  GW_CHECK(parsed.has_value(), "--precision must be f32 or f64, got '" << precision << "'");
  BenchReport report("diffusion");
  if (*parsed == Precision::kF32) {
    run<float>(args, report);
  } else {
    run<double>(args, report);
  }
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

}  // namespace

GW_CLI_BENCH("diffusion",
             "batched Chebyshev heat diffusion vs the per-graph loop (CPU/CUDA)",
             run_bench_diffusion);

}  // namespace gw::cli
