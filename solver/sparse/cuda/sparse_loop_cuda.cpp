// The sparse loop's support kernels on a CUDA device (sparse_impl.h: SupportKernels): the cost on
// the support, the Sinkhorn solves and the momentum step run in gw::CudaSparseSinkhorn on one
// stream of Options::device; SparseLoop (sparse_loop.cpp) keeps the sampling and the re-growth on
// the host and calls these, so the loop logic is the CPU path's.
//
// Transfers per iteration: the anchor blocks up ((n + k) M floats), the per-row stats down (24 n
// bytes), the sampled rows' plan values down (M rows, gathered on the device); all plan values
// (8 nnz bytes) come down only for a re-growth and at the end, after which the new support (CSR,
// transpose, starting values; 32 nnz bytes) goes up. With a fused feature cost, the feature
// values of the support's entries are gathered on the host from the dense n x k matrix at each
// set_support and uploaded once (8 nnz bytes), not per iteration.
//
// Compiled into every build: it uses only the public CudaSparseSinkhorn, whose constructor throws
// kNotCompiled without CUDA; make_cuda_support_kernels checks the backend first, so a build
// without CUDA or a machine without a device fails with the same error as the dense CUDA loop.
#include <memory>
#include <span>
#include <vector>

#include "core/context.h"
#include "core/cuda_stream.h"
#include "sinkhorn/cuda_sparse_sinkhorn.h"
#include "solver/sparse/sparse_impl.h"

namespace gw::detail {

namespace {

class CudaSupportKernels final : public SupportKernels {
 public:
  CudaSupportKernels(const PreparedProblem& pb, const Options& options)
      : pb_(pb),
        opt_(options),
        m_max_(options.max_anchors(pb.n, pb.k)),
        fused_(options.fused_weight > 0.0 &&
               (pb.feature_cost != nullptr || pb.source_features != nullptr)),
        sparse_(std::make_unique<CudaSparseSinkhorn>(CudaStream::create(options.device))) {}

  void set_support(SupportPlan& s) override {
    sparse_->check_device_memory(s.n, s.k, s.nnz(), m_max_, fused_);
    sparse_->set_support(s.view(), s.transpose);
    sparse_->set_marginals(pb_.p, pb_.q);  // kept by a same-shape support, reset otherwise
    sparse_->upload_plan(s.values);
    if (fused_) sparse_->set_feature_cost(support_feature_cost(pb_, s), opt_.fused_weight);
    plan_on_device_only_ = false;
  }

  void build_cost(std::span<const float> dx, std::span<const float> dy, int m) override {
    sparse_->anchor_cost(dx, dy, m);
  }

  SinkhornResult sinkhorn(double epsilon, const SinkhornOptions& options) override {
    return sparse_->solve(epsilon, options);
  }

  void plan_momentum(double epsilon, double alpha, std::span<PlanBlendStats> stats) override {
    sparse_->plan_momentum(epsilon, alpha, stats);
    plan_on_device_only_ = true;
  }

  void plan_rows(const SupportPlan& s,
                 std::span<const Index> rows,
                 std::vector<double>& values) override {
    std::size_t count = 0;
    for (Index i : rows) count += static_cast<std::size_t>(s.offsets[i + 1] - s.offsets[i]);
    values.resize(count);
    if (plan_on_device_only_) {
      sparse_->download_plan_rows(rows, values);
      return;
    }
    std::size_t at = 0;
    for (Index i : rows)
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) values[at++] = s.values[e];
  }

  void sync_plan(SupportPlan& s) override {
    if (!plan_on_device_only_) return;
    sparse_->download_plan(s.values);
    plan_on_device_only_ = false;
  }

  void release() override { sparse_.reset(); }

 private:
  const PreparedProblem& pb_;
  const Options& opt_;
  const int m_max_;
  const bool fused_;
  std::unique_ptr<CudaSparseSinkhorn> sparse_;
  bool plan_on_device_only_ = false;  // the device plan is newer than support.values
};

}  // namespace

std::unique_ptr<SupportKernels> make_cuda_support_kernels(const PreparedProblem& problem,
                                                          const Options& options) {
  require_backend(Backend::kCuda, options.device);
  return std::make_unique<CudaSupportKernels>(problem, options);
}

}  // namespace gw::detail
