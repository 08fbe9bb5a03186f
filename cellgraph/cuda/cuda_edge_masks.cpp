// gw::CudaEdgeMasker: device buffers and the launch sequence around edge_masks_kernels.cu.
// Compiled into every build; without CUDA every entry point throws ErrorCode::kNotCompiled.
#include "cellgraph/cuda_edge_masks.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "cellgraph/cuda/edge_masks_kernels.cuh"
#include "core/cuda/cuda_util.h"
#endif

namespace gw {

#if GW_HAS_CUDA

namespace {
constexpr std::string_view kToDevice = "copy it to the device first (gw::DeviceArray)";
}  // namespace

class CudaEdgeMasker::Impl {
 public:
  Impl(const EdgeMasker& masker, const CudaStream& stream)
      : stream_(stream), device_(stream.device()), num_nodes_(masker.num_nodes()) {
    cuda::DeviceGuard guard(device_);
    const cudaStream_t s = cuda::stream_of(stream_);
    status_.ensure(sizeof(int));
    for (int t = 0; t < masker.num_types(); ++t) {
      const Incidence& incidence = masker.incidence(t);
      Type type;
      type.num_edges = masker.num_edges(t);
      type.max_incident = masker.max_incident(t);
      // Edge ids fit int32 (EdgeMasker::add_type checks E < 2^31), halving the gathered bytes.
      std::vector<Index> edges(incidence.edge_ids.begin(), incidence.edge_ids.end());
      type.offsets.ensure(incidence.offsets.size());
      type.edges.ensure(edges.size());
      cuda::copy_to_device(
          type.offsets.get(), incidence.offsets.data(), incidence.offsets.size(), s);
      cuda::copy_to_device(type.edges.get(), edges.data(), edges.size(), s);
      types_.push_back(std::move(type));
    }
  }

  // Queued kernels may still use the buffers freed after this (a borrowed stream's owner may
  // be gone: wait_before_release waits for the device then).
  ~Impl() { stream_.wait_before_release(); }

  Index num_nodes() const { return num_nodes_; }
  int num_types() const { return static_cast<int>(types_.size()); }
  Offset num_edges(int t) const { return type_at(t).num_edges; }
  int device() const { return device_; }
  const CudaStream& stream() const { return stream_; }

  DeviceBatch upload_batch(const PerturbationBatch& batch) {
    validate_perturbations(batch, num_nodes_);
    cuda::DeviceGuard guard(device_);
    stream_.synchronize();  // earlier work may still read the previous upload
    upload_ids_.ensure(batch.ids.size());
    upload_ptr_.ensure(batch.ptr.size());
    Index* ids = upload_ids_.get();
    Offset* ptr = upload_ptr_.get();
    const cudaStream_t s = cuda::stream_of(stream_);
    cuda::copy_to_device(ids, batch.ids.data(), batch.ids.size(), s);
    cuda::copy_to_device(ptr, batch.ptr.data(), batch.ptr.size(), s);
    return {ids, static_cast<Index>(batch.ids.size()), ptr, batch.num_samples()};
  }

  void removed_edges_async(const DeviceBatch& batch) {
    cuda::DeviceGuard guard(device_);
    check_batch(batch);
    reserve(batch.num_ids, batch.num_samples, /*removal=*/true);
    begin_batch(batch);
    const cudaStream_t s = cuda::stream_of(stream_);
    const Index samples = batch.num_samples;
    Offset* counts = counts_.as<Offset>();
    Offset* coff = coff_.as<Offset>();
    Offset* seg = seg_.as<Offset>();
    Index* cand = cand_.as<Index>();
    Index* sorted = sorted_.as<Index>();
    Index* cand_sample = cand_sample_.as<Index>();
    Offset* flags = flags_.as<Offset>();
    Offset* rank = rank_.as<Offset>();
    for (Type& type : types_) {
      const Offset capacity = static_cast<Offset>(batch.num_ids) * type.max_incident;
      type.capacity = capacity;
      type.samples = samples;
      std::size_t bytes = temp_.size();
      GW_CUDA_CHECK(cuda::launch_candidate_counts(batch.ids,
                                                  batch.num_ids,
                                                  sptr_,
                                                  samples,
                                                  type.offsets.get(),
                                                  num_nodes_,
                                                  counts,
                                                  status_.as<int>(),
                                                  s));
      GW_CUDA_CHECK(cuda::exclusive_sum(temp_.get(), bytes, counts, coff, batch.num_ids + 1, s));
      GW_CUDA_CHECK(cuda::launch_segment_offsets(coff, sptr_, samples, seg, s));
      const bool any = capacity > 0 && samples > 0;
      if (any) {
        GW_CUDA_CHECK(cuda::launch_gather_candidates(batch.ids,
                                                     batch.num_ids,
                                                     sptr_,
                                                     samples,
                                                     type.offsets.get(),
                                                     type.edges.get(),
                                                     coff,
                                                     cand,
                                                     cand_sample,
                                                     s));
        bytes = temp_.size();
        GW_CUDA_CHECK(
            cuda::segmented_sort(temp_.get(), bytes, cand, sorted, capacity, samples, seg, s));
        GW_CUDA_CHECK(
            cuda::launch_first_flags(sorted, cand_sample, seg, samples, capacity, flags, s));
        bytes = temp_.size();
        GW_CUDA_CHECK(cuda::inclusive_sum(temp_.get(), bytes, flags, rank, capacity, s));
      }
      // With no candidates every seg[b] is 0, so only ptr (all zero) is written.
      GW_CUDA_CHECK(cuda::launch_scatter_removed(sorted,
                                                 cand_sample,
                                                 flags,
                                                 rank,
                                                 seg,
                                                 samples,
                                                 any ? capacity : 0,
                                                 type.num_edges,
                                                 type.positions.as<Offset>(),
                                                 type.ptr.as<Offset>(),
                                                 s));
    }
    has_removed_ = true;
  }

  DeviceRemovedEdges device_removed(int t) const {
    const Type& type = type_at(t);
    GW_CHECK(has_removed_, "CudaEdgeMasker::device_removed: call removed_edges_async first");
    return {type.positions.as<Offset>(),
            type.ptr.as<Offset>(),
            type.capacity,
            type.samples,
            type.num_edges};
  }

  void keep_mask_async(int t, const DeviceBatch& batch, std::uint8_t* keep) {
    const Type& type = type_at(t);
    cuda::DeviceGuard guard(device_);
    cuda::check_device_pointer(keep, device_, "CudaEdgeMasker::keep_mask_async: keep", kToDevice);
    check_batch(batch);
    reserve(batch.num_ids, batch.num_samples, /*removal=*/false);
    begin_batch(batch);
    const cudaStream_t s = cuda::stream_of(stream_);
    const Offset bytes = static_cast<Offset>(batch.num_samples) * type.num_edges;
    if (bytes > 0) {
      GW_CUDA_CHECK(cudaMemsetAsync(keep, 1, static_cast<std::size_t>(bytes), s));
    }
    GW_CUDA_CHECK(cuda::launch_clear_mask(batch.ids,
                                          batch.num_ids,
                                          sptr_,
                                          batch.num_samples,
                                          type.offsets.get(),
                                          type.edges.get(),
                                          num_nodes_,
                                          type.num_edges,
                                          keep,
                                          status_.as<int>(),
                                          s));
  }

  void synchronize() {
    cuda::DeviceGuard guard(device_);
    stream_.synchronize();
  }

  void check() {
    synchronize();
    int status = 0;
    const cudaStream_t s = cuda::stream_of(stream_);
    cuda::copy_to_host(&status, status_.as<int>(), 1, s);
    if (status == 0) return;
    // Name the problem exactly as the CPU version does, from a host copy of the batch.
    std::vector<Index> ids(last_.num_ids);
    std::vector<Offset> ptr(static_cast<std::size_t>(last_.num_samples) + 1);
    cuda::copy_to_host(ids.data(), last_.ids, ids.size(), s);
    cuda::copy_to_host(ptr.data(), last_.ptr, ptr.size(), s);
    validate_perturbations(PerturbationBatch{ids, ptr}, num_nodes_, "device perturbation batch");
    GW_THROW(ErrorCode::kBadData,
             "device perturbation batch: the device reported an invalid batch (status "
                 << status << ") that its host copy no longer shows; keep the batch unchanged "
                 << "until check()");
  }

  std::vector<RemovedEdges> download_removed() {
    check();
    GW_CHECK(has_removed_, "CudaEdgeMasker::download_removed: call removed_edges_async first");
    const cudaStream_t s = cuda::stream_of(stream_);
    std::vector<RemovedEdges> out;
    for (const Type& type : types_) {
      RemovedEdges r;
      r.num_edges = type.num_edges;
      r.ptr.resize(static_cast<std::size_t>(type.samples) + 1);
      cuda::copy_to_host(r.ptr.data(), type.ptr.as<Offset>(), r.ptr.size(), s);
      GW_CHECK_CODE(r.ptr.back() >= 0 && r.ptr.back() <= type.capacity,
                    ErrorCode::kInternal,
                    "CudaEdgeMasker: removal list of " << r.ptr.back() << " entries exceeds its "
                                                       << "bound " << type.capacity);
      r.positions.resize(r.ptr.back());
      cuda::copy_to_host(r.positions.data(), type.positions.as<Offset>(), r.positions.size(), s);
      out.push_back(std::move(r));
    }
    return out;
  }

  std::vector<RemovedEdges> removed_edges(const PerturbationBatch& batch) {
    const DeviceBatch device_batch = upload_batch(batch);
    removed_edges_async(device_batch);
    return download_removed();
  }

  std::vector<std::uint8_t> keep_mask(int t, const PerturbationBatch& batch) {
    const Offset bytes = static_cast<Offset>(batch.num_samples()) * num_edges(t);
    const DeviceBatch device_batch = upload_batch(batch);
    cuda::DeviceGuard guard(device_);
    keep_.ensure(static_cast<std::size_t>(bytes));
    std::uint8_t* keep = keep_.get();
    keep_mask_async(t, device_batch, keep);
    check();
    std::vector<std::uint8_t> out(static_cast<std::size_t>(bytes));
    cuda::copy_to_host(out.data(), keep, out.size(), cuda::stream_of(stream_));
    return out;
  }

  double time_fill(std::uint8_t* buffer, Offset bytes, int reps) {
    GW_CHECK(reps >= 1, "CudaEdgeMasker::time_fill: reps must be >= 1, got " << reps);
    cuda::DeviceGuard guard(device_);
    cuda::check_device_pointer(buffer, device_, "CudaEdgeMasker::time_fill: buffer", kToDevice);
    cudaEvent_t start = nullptr, stop = nullptr;
    GW_CUDA_CHECK(cudaEventCreate(&start));
    GW_CUDA_CHECK(cudaEventCreate(&stop));
    const cudaStream_t s = cuda::stream_of(stream_);
    float best_ms = 1e30f;
    for (int rep = 0; rep <= reps; ++rep) {  // the first pass warms up
      GW_CUDA_CHECK(cudaEventRecord(start, s));
      GW_CUDA_CHECK(cudaMemsetAsync(buffer, rep & 1, static_cast<std::size_t>(bytes), s));
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

 private:
  struct Type {
    Offset num_edges = 0;
    Offset max_incident = 0;
    cuda::DeviceBuffer<Offset> offsets;  // [n + 1]
    cuda::DeviceBuffer<Index> edges;     // [sum of degrees]
    // Grown by reserve() with the batch buffers below, hence bytes.
    cuda::DeviceBuffer<std::byte> positions;  // Offset [capacity]
    cuda::DeviceBuffer<std::byte> ptr;        // Offset [samples + 1]
    Offset capacity = 0;
    Index samples = 0;
  };

  const Type& type_at(int t) const {
    GW_CHECK(t >= 0 && t < num_types(),
             "CudaEdgeMasker: edge type " << t << " outside [0, " << num_types() << ")");
    return types_[t];
  }

  void check_batch(const DeviceBatch& batch) const {
    GW_CHECK(batch.num_ids >= 0 && batch.num_samples >= 0,
             "CudaEdgeMasker: a device batch needs num_ids >= 0 and num_samples >= 0, got "
                 << batch.num_ids << " and " << batch.num_samples);
    GW_CHECK(batch.ptr != nullptr, "CudaEdgeMasker: the device batch has no ptr (B + 1 entries)");
    GW_CHECK(batch.num_ids == 0 || batch.ids != nullptr,
             "CudaEdgeMasker: the device batch has " << batch.num_ids << " ids but no id array");
    cuda::check_device_pointer(batch.ids, device_, "CudaEdgeMasker: batch ids", kToDevice);
    cuda::check_device_pointer(batch.ptr, device_, "CudaEdgeMasker: batch ptr", kToDevice);
  }

  // Sizes every buffer a batch of this shape needs. Growing frees buffers that work still in
  // flight may use, so a batch larger than all before it waits for the stream once; batches within
  // the sizes seen so far never allocate or wait.
  void reserve(Index num_ids, Index samples, bool removal) {
    const std::size_t ids1 = static_cast<std::size_t>(num_ids) + 1;
    const std::size_t segs = static_cast<std::size_t>(samples) + 1;
    std::vector<std::pair<cuda::DeviceBuffer<std::byte>*, std::size_t>> needs = {
        {&status_, sizeof(int)}, {&sptr_buffer_, segs * sizeof(Offset)}};
    if (removal) {
      Offset max_capacity = 0;
      std::size_t temp = 0, bytes = 0;
      GW_CUDA_CHECK(cuda::exclusive_sum(nullptr, bytes, nullptr, nullptr, num_ids + 1, nullptr));
      temp = std::max(temp, bytes);
      for (Type& type : types_) {
        const Offset capacity = static_cast<Offset>(num_ids) * type.max_incident;
        max_capacity = std::max(max_capacity, capacity);
        needs.push_back({&type.positions, static_cast<std::size_t>(capacity) * sizeof(Offset)});
        needs.push_back({&type.ptr, segs * sizeof(Offset)});
        if (capacity > 0 && samples > 0) {
          bytes = 0;
          GW_CUDA_CHECK(cuda::segmented_sort(
              nullptr, bytes, nullptr, nullptr, capacity, samples, nullptr, nullptr));
          temp = std::max(temp, bytes);
          bytes = 0;
          GW_CUDA_CHECK(cuda::inclusive_sum(nullptr, bytes, nullptr, nullptr, capacity, nullptr));
          temp = std::max(temp, bytes);
        }
      }
      const std::size_t cap = static_cast<std::size_t>(max_capacity);
      needs.insert(needs.end(),
                   {{&counts_, ids1 * sizeof(Offset)},
                    {&coff_, ids1 * sizeof(Offset)},
                    {&seg_, segs * sizeof(Offset)},
                    {&cand_, cap * sizeof(Index)},
                    {&sorted_, cap * sizeof(Index)},
                    {&cand_sample_, cap * sizeof(Index)},
                    {&flags_, cap * sizeof(Offset)},
                    {&rank_, cap * sizeof(Offset)},
                    {&temp_, temp}});
    }
    bool grow = false;
    for (const auto& [buffer, bytes] : needs)
      grow = grow || buffer->size() < std::max<std::size_t>(bytes, 1);
    if (!grow) return;
    stream_.synchronize();
    for (const auto& [buffer, bytes] : needs) buffer->ensure(bytes);
  }

  // Common start of a batch call: status reset and the sanitized ptr.
  void begin_batch(const DeviceBatch& batch) {
    const cudaStream_t s = cuda::stream_of(stream_);
    sptr_ = sptr_buffer_.as<Offset>();
    GW_CUDA_CHECK(cudaMemsetAsync(status_.get(), 0, sizeof(int), s));
    GW_CUDA_CHECK(cuda::launch_sanitize_ptr(
        batch.ptr, batch.num_samples, batch.num_ids, sptr_, status_.as<int>(), s));
    last_ = batch;
  }

  CudaStream stream_;
  int device_;
  Index num_nodes_;
  std::vector<Type> types_;
  cuda::DeviceBuffer<Index> upload_ids_;
  cuda::DeviceBuffer<Offset> upload_ptr_;
  cuda::DeviceBuffer<std::uint8_t> keep_;
  // Sized together by reserve() (several element types, hence bytes).
  cuda::DeviceBuffer<std::byte> status_;
  cuda::DeviceBuffer<std::byte> sptr_buffer_, counts_, coff_, seg_, cand_, sorted_, cand_sample_,
      flags_, rank_;
  cuda::DeviceBuffer<std::byte> temp_;
  Offset* sptr_ = nullptr;
  DeviceBatch last_;
  bool has_removed_ = false;
};

CudaEdgeMasker::CudaEdgeMasker(const EdgeMasker& masker, int device)
    : CudaEdgeMasker(masker, CudaStream::create(device)) {}
CudaEdgeMasker::CudaEdgeMasker(const EdgeMasker& masker, const CudaStream& stream)
    : impl_(std::make_unique<Impl>(masker, stream)) {}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled() {
  GW_THROW(ErrorCode::kNotCompiled,
           "CudaEdgeMasker: this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use gw::EdgeMasker (CPU)");
}
}  // namespace

// Never constructed (the constructor throws); it gives the forwarding methods below something to
// call in a build without CUDA.
class CudaEdgeMasker::Impl {
 public:
  Index num_nodes() const { not_compiled(); }
  int num_types() const { not_compiled(); }
  Offset num_edges(int) const { not_compiled(); }
  int device() const { not_compiled(); }
  const CudaStream& stream() const { not_compiled(); }
  DeviceBatch upload_batch(const PerturbationBatch&) { not_compiled(); }
  void removed_edges_async(const DeviceBatch&) { not_compiled(); }
  DeviceRemovedEdges device_removed(int) const { not_compiled(); }
  void keep_mask_async(int, const DeviceBatch&, std::uint8_t*) { not_compiled(); }
  void synchronize() { not_compiled(); }
  void check() { not_compiled(); }
  std::vector<RemovedEdges> download_removed() { not_compiled(); }
  std::vector<RemovedEdges> removed_edges(const PerturbationBatch&) { not_compiled(); }
  std::vector<std::uint8_t> keep_mask(int, const PerturbationBatch&) { not_compiled(); }
  double time_fill(std::uint8_t*, Offset, int) { not_compiled(); }
};

CudaEdgeMasker::CudaEdgeMasker(const EdgeMasker&, int) { not_compiled(); }
CudaEdgeMasker::CudaEdgeMasker(const EdgeMasker&, const CudaStream&) { not_compiled(); }

#endif  // GW_HAS_CUDA

CudaEdgeMasker::~CudaEdgeMasker() = default;
CudaEdgeMasker::CudaEdgeMasker(CudaEdgeMasker&&) noexcept = default;
CudaEdgeMasker& CudaEdgeMasker::operator=(CudaEdgeMasker&&) noexcept = default;

CudaEdgeMasker::Impl& CudaEdgeMasker::impl() const {
#if GW_HAS_CUDA
  GW_CHECK(impl_ != nullptr, "CudaEdgeMasker: use of a moved-from object");
  return *impl_;
#else
  not_compiled();
#endif
}

Index CudaEdgeMasker::num_nodes() const { return impl().num_nodes(); }
int CudaEdgeMasker::num_types() const { return impl().num_types(); }
Offset CudaEdgeMasker::num_edges(int type) const { return impl().num_edges(type); }
DeviceBatch CudaEdgeMasker::upload_batch(const PerturbationBatch& batch) {
  return impl().upload_batch(batch);
}
void CudaEdgeMasker::removed_edges_async(const DeviceBatch& batch) {
  impl().removed_edges_async(batch);
}
DeviceRemovedEdges CudaEdgeMasker::device_removed(int type) const {
  return impl().device_removed(type);
}
void CudaEdgeMasker::keep_mask_async(int type, const DeviceBatch& batch, std::uint8_t* keep) {
  impl().keep_mask_async(type, batch, keep);
}
void CudaEdgeMasker::synchronize() { impl().synchronize(); }
void CudaEdgeMasker::check() { impl().check(); }
std::vector<RemovedEdges> CudaEdgeMasker::download_removed() { return impl().download_removed(); }
std::vector<RemovedEdges> CudaEdgeMasker::removed_edges(const PerturbationBatch& batch) {
  return impl().removed_edges(batch);
}
std::vector<std::uint8_t> CudaEdgeMasker::keep_mask(int type, const PerturbationBatch& batch) {
  return impl().keep_mask(type, batch);
}
double CudaEdgeMasker::time_fill(std::uint8_t* buffer, Offset bytes, int reps) {
  return impl().time_fill(buffer, bytes, reps);
}
int CudaEdgeMasker::device() const { return impl().device(); }
const CudaStream& CudaEdgeMasker::stream() const { return impl().stream(); }

}  // namespace gw
