// gw::CudaAggregator: device buffers and the launch sequences around aggregate_kernels.cu.
// Compiled into every build; without CUDA every entry point throws ErrorCode::kNotCompiled.
#include "cellgraph/cuda_aggregate.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "cellgraph/cuda/aggregate_kernels.cuh"
#include "core/cuda/cuda_util.h"
#endif

namespace gw {

std::string_view to_string(CudaAggregateMethod method) {
  return method == CudaAggregateMethod::kSortByKey ? "sort" : "atomics";
}

std::optional<CudaAggregateMethod> cuda_aggregate_method_from_string(std::string_view name) {
  if (name == "sort") return CudaAggregateMethod::kSortByKey;
  if (name == "atomics") return CudaAggregateMethod::kAtomics;
  return std::nullopt;
}

#if GW_HAS_CUDA

namespace {
constexpr std::string_view kToDevice = "copy it to the device first (gw::DeviceArray)";
}  // namespace

class CudaAggregator::Impl {
 public:
  explicit Impl(const CudaStream& stream) : stream_(stream), device_(stream.device()) {
    cuda::DeviceGuard guard(device_);
    status_.ensure(1);
    num_genes_.ensure(1);
  }

  // Queued kernels may still use the buffers freed after this (a borrowed stream's owner may
  // be gone: wait_before_release waits for the device then).
  ~Impl() { stream_.wait_before_release(); }

  template <typename T>
  void run_async(const T* embeddings,
                 const Index* gene_ids,
                 const Index* lengths,
                 Index batch,
                 Index seq_len,
                 Index hidden,
                 Index id_bound,
                 const AggregateOptions& options,
                 CudaAggregateMethod method) {
    GW_CHECK(batch >= 0 && seq_len >= 0,
             "CudaAggregator: batch and seq_len must be >= 0, got " << batch << " and " << seq_len);
    GW_CHECK(hidden >= 1, "CudaAggregator: hidden must be >= 1, got " << hidden);
    GW_CHECK(
        id_bound >= 1 && id_bound < std::numeric_limits<Index>::max(),
        "CudaAggregator: id_bound (ids are < id_bound) must be in [1, 2^31 - 1), got " << id_bound);
    const Offset count = static_cast<Offset>(batch) * seq_len;
    GW_CHECK(count < std::numeric_limits<Index>::max(),
             "CudaAggregator: " << count << " token positions exceed 2^31 - 1; split the batch");
    cuda::DeviceGuard guard(device_);
    cuda::check_device_pointer(embeddings, device_, "CudaAggregator: embeddings", kToDevice);
    cuda::check_device_pointer(gene_ids, device_, "CudaAggregator: gene_ids", kToDevice);
    cuda::check_device_pointer(lengths, device_, "CudaAggregator: lengths", kToDevice);
    const bool sort = method == CudaAggregateMethod::kSortByKey;
    const Index capacity = sort ? static_cast<Index>(std::min<Offset>(id_bound, count)) : id_bound;
    reserve<T>(count, hidden, id_bound, capacity, sort);

    const cudaStream_t s = cuda::stream_of(stream_);
    const Index first = options.skip_cls ? 1 : 0;
    GW_CUDA_CHECK(cudaMemsetAsync(status_.get(), 0, sizeof(int), s));
    GW_CUDA_CHECK(cudaMemsetAsync(num_genes_.get(), 0, sizeof(Index), s));
    T* mean = mean_.as<T>();
    if (sort) {
      if (count > 0) {
        const Index n = static_cast<Index>(count);
        int end_bit = 1;
        while ((Offset{1} << end_bit) <= id_bound) ++end_bit;  // id_bound itself is the sentinel
        GW_CUDA_CHECK(cuda::launch_make_keys(gene_ids,
                                             lengths,
                                             batch,
                                             seq_len,
                                             first,
                                             id_bound,
                                             keys_.as<Index>(),
                                             values_.as<Index>(),
                                             status_.get(),
                                             s));
        std::size_t bytes = temp_.size();
        GW_CUDA_CHECK(cuda::sort_pairs(temp_.get(),
                                       bytes,
                                       keys_.as<Index>(),
                                       sorted_keys_.as<Index>(),
                                       values_.as<Index>(),
                                       sorted_values_.as<Index>(),
                                       n,
                                       end_bit,
                                       s));
        // Entries past the run count must read as empty runs for the scan of the run starts.
        GW_CUDA_CHECK(cudaMemsetAsync(
            run_counts_.get(), 0, (static_cast<std::size_t>(n) + 1) * sizeof(Offset), s));
        bytes = temp_.size();
        GW_CUDA_CHECK(cuda::run_length_encode(temp_.get(),
                                              bytes,
                                              sorted_keys_.as<Index>(),
                                              unique_.as<Index>(),
                                              run_counts_.as<Offset>(),
                                              num_runs_.as<Index>(),
                                              n,
                                              s));
        bytes = temp_.size();
        GW_CUDA_CHECK(cuda::exclusive_sum(temp_.get(),
                                          bytes,
                                          run_counts_.as<Offset>(),
                                          run_starts_.as<Offset>(),
                                          Offset{n} + 1,
                                          s));
        GW_CUDA_CHECK(cuda::launch_run_means(embeddings,
                                             hidden,
                                             sorted_values_.as<Index>(),
                                             unique_.as<Index>(),
                                             run_counts_.as<Offset>(),
                                             run_starts_.as<Offset>(),
                                             num_runs_.as<Index>(),
                                             id_bound,
                                             capacity,
                                             mean,
                                             num_genes_.get(),
                                             s));
      }
      result_ids_ = unique_.as<Index>();
      result_counts_ = run_counts_.as<Offset>();
    } else {
      GW_CUDA_CHECK(cudaMemsetAsync(
          sums_.get(), 0, static_cast<std::size_t>(id_bound) * hidden * sizeof(double), s));
      GW_CUDA_CHECK(cudaMemsetAsync(table_counts_.get(),
                                    0,
                                    static_cast<std::size_t>(id_bound) * sizeof(unsigned long long),
                                    s));
      GW_CUDA_CHECK(cuda::launch_atomic_accumulate(embeddings,
                                                   gene_ids,
                                                   lengths,
                                                   batch,
                                                   seq_len,
                                                   hidden,
                                                   first,
                                                   id_bound,
                                                   sums_.as<double>(),
                                                   table_counts_.as<unsigned long long>(),
                                                   status_.get(),
                                                   s));
      GW_CUDA_CHECK(cuda::launch_table_flags(
          table_counts_.as<unsigned long long>(), id_bound, flags_.as<Offset>(), s));
      std::size_t bytes = temp_.size();
      GW_CUDA_CHECK(cuda::exclusive_sum(
          temp_.get(), bytes, flags_.as<Offset>(), slots_.as<Offset>(), Offset{id_bound} + 1, s));
      GW_CUDA_CHECK(cuda::launch_compact_table(sums_.as<double>(),
                                               table_counts_.as<unsigned long long>(),
                                               flags_.as<Offset>(),
                                               slots_.as<Offset>(),
                                               id_bound,
                                               hidden,
                                               mean,
                                               out_ids_.as<Index>(),
                                               out_counts_.as<Offset>(),
                                               num_genes_.get(),
                                               s));
      result_ids_ = out_ids_.as<Index>();
      result_counts_ = out_counts_.as<Offset>();
    }
    last_ = {gene_ids,
             lengths,
             batch,
             seq_len,
             hidden,
             id_bound,
             first,
             capacity,
             std::is_same_v<T, double>,
             true};
  }

  DeviceGeneAggregate device_result() const {
    GW_CHECK(last_.valid, "CudaAggregator::device_result: call run_async first");
    return {
        result_ids_, mean_.get(), result_counts_, num_genes_.get(), last_.capacity, last_.hidden};
  }

  void synchronize() {
    cuda::DeviceGuard guard(device_);
    stream_.synchronize();
  }

  void check() {
    synchronize();
    int status = 0;
    const cudaStream_t s = cuda::stream_of(stream_);
    cuda::copy_to_host(&status, status_.get(), 1, s);
    if (status == 0) return;
    // Name the first problem as the CPU version does, from host copies of the inputs.
    std::vector<Index> lengths(last_.batch);
    cuda::copy_to_host(lengths.data(), last_.lengths, lengths.size(), s);
    for (Index b = 0; b < last_.batch; ++b) {
      GW_CHECK(lengths[b] >= 0 && lengths[b] <= last_.seq_len,
               "aggregate_by_gene: lengths[" << b << "] = " << lengths[b] << " is outside [0, "
                                             << last_.seq_len << "]");
    }
    std::vector<Index> ids(static_cast<std::size_t>(last_.batch) * last_.seq_len);
    cuda::copy_to_host(ids.data(), last_.gene_ids, ids.size(), s);
    for (Index b = 0; b < last_.batch; ++b) {
      for (Index t = last_.first; t < lengths[b]; ++t) {
        const Index id = ids[static_cast<std::size_t>(b) * last_.seq_len + t];
        GW_CHECK_CODE(id >= 0 && id < last_.id_bound,
                      ErrorCode::kBadData,
                      "aggregate_by_gene: gene id " << id << " at row " << b << ", position " << t
                                                    << " is outside [0, " << last_.id_bound
                                                    << ") (id_bound); raise id_bound or fix the "
                                                       "ids");
      }
    }
    GW_THROW(ErrorCode::kBadData,
             "CudaAggregator: the device reported invalid input (status "
                 << status << ") that its host copy no longer shows; keep the inputs unchanged "
                 << "until check()");
  }

  template <typename T>
  GeneAggregate<T> download() {
    check();
    GW_CHECK(last_.valid, "CudaAggregator::download: call run_async first");
    constexpr bool kDouble = std::is_same_v<T, double>;
    GW_CHECK(last_.is_double == kDouble,
             "CudaAggregator::download_" << (kDouble ? "double" : "float")
                                         << ": the last run's embeddings were "
                                         << (last_.is_double ? "double" : "float"));
    GeneAggregate<T> out;
    out.hidden = last_.hidden;
    Index genes = 0;
    const cudaStream_t s = cuda::stream_of(stream_);
    cuda::copy_to_host(&genes, num_genes_.get(), 1, s);
    GW_CHECK_CODE(genes >= 0 && genes <= last_.capacity,
                  ErrorCode::kInternal,
                  "CudaAggregator: " << genes << " genes exceed the capacity " << last_.capacity);
    out.gene_ids.resize(genes);
    out.counts.resize(genes);
    out.mean.resize(static_cast<std::size_t>(genes) * last_.hidden);
    cuda::copy_to_host(out.gene_ids.data(), result_ids_, out.gene_ids.size(), s);
    cuda::copy_to_host(out.counts.data(), result_counts_, out.counts.size(), s);
    cuda::copy_to_host(out.mean.data(), mean_.as<T>(), out.mean.size(), s);
    return out;
  }

  template <typename T>
  GeneAggregate<T> aggregate(std::span<const T> embeddings,
                             std::span<const Index> gene_ids,
                             std::span<const Index> lengths,
                             Index batch,
                             Index seq_len,
                             Index hidden,
                             Index id_bound,
                             const AggregateOptions& options,
                             CudaAggregateMethod method) {
    const std::size_t tokens = static_cast<std::size_t>(std::max<Index>(batch, 0)) *
                               static_cast<std::size_t>(std::max<Index>(seq_len, 0));
    GW_CHECK(embeddings.size() == tokens * static_cast<std::size_t>(std::max<Index>(hidden, 0)) &&
                 gene_ids.size() == tokens &&
                 lengths.size() == static_cast<std::size_t>(std::max<Index>(batch, 0)),
             "CudaAggregator::aggregate: array sizes do not match [B, T, H] = ["
                 << batch << ", " << seq_len << ", " << hidden << "]");
    cuda::DeviceGuard guard(device_);
    stream_.synchronize();
    in_embeddings_.ensure(embeddings.size() * sizeof(T));
    in_ids_.ensure(gene_ids.size());
    in_lengths_.ensure(lengths.size());
    T* d_embeddings = in_embeddings_.as<T>();
    Index* d_ids = in_ids_.get();
    Index* d_lengths = in_lengths_.get();
    copy_in(d_embeddings, embeddings);
    copy_in(d_ids, gene_ids);
    copy_in(d_lengths, lengths);
    run_async<T>(d_embeddings, d_ids, d_lengths, batch, seq_len, hidden, id_bound, options, method);
    return download<T>();
  }

  double time_read(const void* buffer, Offset bytes, int reps) {
    GW_CHECK(reps >= 1, "CudaAggregator::time_read: reps must be >= 1, got " << reps);
    cuda::DeviceGuard guard(device_);
    cuda::check_device_pointer(buffer, device_, "CudaAggregator::time_read: buffer", kToDevice);
    sink_.ensure(1);
    unsigned long long* sink = sink_.get();
    cudaEvent_t start = nullptr, stop = nullptr;
    GW_CUDA_CHECK(cudaEventCreate(&start));
    GW_CUDA_CHECK(cudaEventCreate(&stop));
    const cudaStream_t s = cuda::stream_of(stream_);
    float best_ms = 1e30f;
    for (int rep = 0; rep <= reps; ++rep) {  // the first pass warms up
      GW_CUDA_CHECK(cudaEventRecord(start, s));
      GW_CUDA_CHECK(cuda::launch_read_bytes(buffer, bytes, sink, s));
      GW_CUDA_CHECK(cudaEventRecord(stop, s));
      GW_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0.0f;
      GW_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (rep > 0) best_ms = std::min(best_ms, ms);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return best_ms * 1e-3;
  }

  int device() const { return device_; }
  const CudaStream& stream() const { return stream_; }

 private:
  struct LastRun {
    const Index* gene_ids = nullptr;
    const Index* lengths = nullptr;
    Index batch = 0, seq_len = 0, hidden = 0, id_bound = 0, first = 0, capacity = 0;
    bool is_double = false;
    bool valid = false;
  };

  template <typename T>
  void copy_in(T* device, std::span<const T> host) {
    cuda::copy_to_device(device, host.data(), host.size(), cuda::stream_of(stream_));
  }

  // Sizes every buffer of a run; growing waits for the stream first (queued work may use the
  // buffers being freed), so runs within the sizes seen so far never allocate or wait.
  template <typename T>
  void reserve(Offset count, Index hidden, Index id_bound, Index capacity, bool sort) {
    const std::size_t n = static_cast<std::size_t>(count);
    const std::size_t table = static_cast<std::size_t>(id_bound);
    std::vector<std::pair<cuda::DeviceBuffer<std::byte>*, std::size_t>> needs = {
        {&mean_, static_cast<std::size_t>(capacity) * hidden * sizeof(T)}};
    std::size_t temp = 0, bytes = 0;
    if (sort) {
      if (count > 0) {
        GW_CUDA_CHECK(cuda::sort_pairs(nullptr,
                                       bytes,
                                       nullptr,
                                       nullptr,
                                       nullptr,
                                       nullptr,
                                       static_cast<Index>(count),
                                       32,
                                       nullptr));
        temp = std::max(temp, bytes);
        bytes = 0;
        GW_CUDA_CHECK(cuda::run_length_encode(nullptr,
                                              bytes,
                                              nullptr,
                                              nullptr,
                                              nullptr,
                                              nullptr,
                                              static_cast<Index>(count),
                                              nullptr));
        temp = std::max(temp, bytes);
        bytes = 0;
        GW_CUDA_CHECK(cuda::exclusive_sum(nullptr, bytes, nullptr, nullptr, count + 1, nullptr));
        temp = std::max(temp, bytes);
      }
      needs.insert(needs.end(),
                   {{&keys_, n * sizeof(Index)},
                    {&values_, n * sizeof(Index)},
                    {&sorted_keys_, n * sizeof(Index)},
                    {&sorted_values_, n * sizeof(Index)},
                    {&unique_, n * sizeof(Index)},
                    {&run_counts_, (n + 1) * sizeof(Offset)},
                    {&run_starts_, (n + 1) * sizeof(Offset)},
                    {&num_runs_, sizeof(Index)}});
    } else {
      GW_CUDA_CHECK(
          cuda::exclusive_sum(nullptr, bytes, nullptr, nullptr, Offset{id_bound} + 1, nullptr));
      temp = std::max(temp, bytes);
      needs.insert(needs.end(),
                   {{&sums_, table * hidden * sizeof(double)},
                    {&table_counts_, table * sizeof(unsigned long long)},
                    {&flags_, (table + 1) * sizeof(Offset)},
                    {&slots_, (table + 1) * sizeof(Offset)},
                    {&out_ids_, table * sizeof(Index)},
                    {&out_counts_, table * sizeof(Offset)}});
    }
    needs.push_back({&temp_, temp});
    bool grow = false;
    for (const auto& [buffer, size] : needs) {
      grow = grow || buffer->size() < std::max<std::size_t>(size, 1);
    }
    if (!grow) return;
    stream_.synchronize();
    for (const auto& [buffer, size] : needs) buffer->ensure(size);
  }

  CudaStream stream_;
  int device_;
  cuda::DeviceBuffer<int> status_;
  cuda::DeviceBuffer<Index> num_genes_;
  cuda::DeviceBuffer<unsigned long long> sink_;
  cuda::DeviceBuffer<Index> in_ids_, in_lengths_;
  cuda::DeviceBuffer<std::byte> in_embeddings_;  // T
  // Sized together by reserve() (several element types, hence bytes); mean_ holds T.
  cuda::DeviceBuffer<std::byte> mean_, temp_;
  cuda::DeviceBuffer<std::byte> keys_, values_, sorted_keys_, sorted_values_, unique_, run_counts_,
      run_starts_, num_runs_;
  cuda::DeviceBuffer<std::byte> sums_, table_counts_, flags_, slots_, out_ids_, out_counts_;
  const Index* result_ids_ = nullptr;
  const Offset* result_counts_ = nullptr;
  LastRun last_;
};

CudaAggregator::CudaAggregator(int device) : CudaAggregator(CudaStream::create(device)) {}
CudaAggregator::CudaAggregator(const CudaStream& stream) : impl_(std::make_unique<Impl>(stream)) {}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled() {
  GW_THROW(ErrorCode::kNotCompiled,
           "CudaAggregator: this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use gw::aggregate_by_gene (CPU)");
}
}  // namespace

// Never constructed (the constructor throws); it gives the forwarding methods below something to
// call in a build without CUDA.
class CudaAggregator::Impl {
 public:
  template <typename T, typename... Args>
  void run_async(const Args&...) {
    not_compiled();
  }
  DeviceGeneAggregate device_result() const { not_compiled(); }
  void synchronize() { not_compiled(); }
  void check() { not_compiled(); }
  template <typename T>
  GeneAggregate<T> download() {
    not_compiled();
  }
  template <typename T, typename... Args>
  GeneAggregate<T> aggregate(const Args&...) {
    not_compiled();
  }
  double time_read(const void*, Offset, int) { not_compiled(); }
  int device() const { not_compiled(); }
  const CudaStream& stream() const { not_compiled(); }
};

CudaAggregator::CudaAggregator(int) { not_compiled(); }
CudaAggregator::CudaAggregator(const CudaStream&) { not_compiled(); }

#endif  // GW_HAS_CUDA

CudaAggregator::~CudaAggregator() = default;
CudaAggregator::CudaAggregator(CudaAggregator&&) noexcept = default;
CudaAggregator& CudaAggregator::operator=(CudaAggregator&&) noexcept = default;

CudaAggregator::Impl& CudaAggregator::impl() const {
#if GW_HAS_CUDA
  GW_CHECK(impl_ != nullptr, "CudaAggregator: use of a moved-from object");
  return *impl_;
#else
  not_compiled();
#endif
}

void CudaAggregator::run_async(const float* embeddings,
                               const Index* gene_ids,
                               const Index* lengths,
                               Index batch,
                               Index seq_len,
                               Index hidden,
                               Index id_bound,
                               const AggregateOptions& options,
                               CudaAggregateMethod method) {
  impl().run_async<float>(
      embeddings, gene_ids, lengths, batch, seq_len, hidden, id_bound, options, method);
}
void CudaAggregator::run_async(const double* embeddings,
                               const Index* gene_ids,
                               const Index* lengths,
                               Index batch,
                               Index seq_len,
                               Index hidden,
                               Index id_bound,
                               const AggregateOptions& options,
                               CudaAggregateMethod method) {
  impl().run_async<double>(
      embeddings, gene_ids, lengths, batch, seq_len, hidden, id_bound, options, method);
}
DeviceGeneAggregate CudaAggregator::device_result() const { return impl().device_result(); }
GeneAggregate<float> CudaAggregator::download_float() { return impl().download<float>(); }
GeneAggregate<double> CudaAggregator::download_double() { return impl().download<double>(); }
GeneAggregate<float> CudaAggregator::aggregate(std::span<const float> embeddings,
                                               std::span<const Index> gene_ids,
                                               std::span<const Index> lengths,
                                               Index batch,
                                               Index seq_len,
                                               Index hidden,
                                               Index id_bound,
                                               const AggregateOptions& options,
                                               CudaAggregateMethod method) {
  return impl().aggregate<float>(
      embeddings, gene_ids, lengths, batch, seq_len, hidden, id_bound, options, method);
}
GeneAggregate<double> CudaAggregator::aggregate(std::span<const double> embeddings,
                                                std::span<const Index> gene_ids,
                                                std::span<const Index> lengths,
                                                Index batch,
                                                Index seq_len,
                                                Index hidden,
                                                Index id_bound,
                                                const AggregateOptions& options,
                                                CudaAggregateMethod method) {
  return impl().aggregate<double>(
      embeddings, gene_ids, lengths, batch, seq_len, hidden, id_bound, options, method);
}
void CudaAggregator::synchronize() { impl().synchronize(); }
void CudaAggregator::check() { impl().check(); }
double CudaAggregator::time_read(const void* buffer, Offset bytes, int reps) {
  return impl().time_read(buffer, bytes, reps);
}
int CudaAggregator::device() const { return impl().device(); }
const CudaStream& CudaAggregator::stream() const { return impl().stream(); }

}  // namespace gw
