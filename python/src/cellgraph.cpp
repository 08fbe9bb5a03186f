// gwalign._core.cellgraph: the graph-cell kernels (cellgraph/) on numpy arrays, and
// gwalign._core.cellgraph.cuda: the same kernels on CUDA device memory (cellgraph/cuda_*.h).
//
// Zero-copy rules: an input that is C-contiguous and of the kernel's own type (int32 ids,
// float32 / float64 signals) is read in place; anything else is converted once by numpy. Outputs
// are either written into a caller-provided array (keep masks, diffusion results: `out=`) or
// handed over without a copy (removal lists, aggregates: numpy takes the C++ vectors).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "cellgraph/aggregate.h"
#include "cellgraph/cuda_aggregate.h"
#include "cellgraph/cuda_diffusion.h"
#include "cellgraph/cuda_edge_masks.h"
#include "cellgraph/diffusion.h"
#include "cellgraph/edge_masks.h"
#include "core/context.h"
#include "core/cuda_stream.h"
#include "core/device_array.h"
#include "core/error.h"
#include "graph/builder.h"

namespace py = pybind11;

namespace gw::python {
namespace {

// A C-contiguous array of T: the input itself when it already is one (no copy), else a converted
// copy. The returned array keeps the data alive while a span views it.
template <typename T>
py::array_t<T, py::array::c_style> contiguous(const py::handle& a) {
  if (py::isinstance<py::array_t<T, py::array::c_style>>(a)) {
    return py::reinterpret_borrow<py::array_t<T, py::array::c_style>>(a);
  }
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
}

template <typename T>
std::span<const T> view(const py::array_t<T, py::array::c_style>& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}

template <typename T>
py::array take(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::move(shape), owned->data(), free_when_done);
}

// An EdgeMasker with the perturbation arrays converted per call.
class PyEdgeMasker {
 public:
  PyEdgeMasker(Index num_nodes, int threads) : masker_(num_nodes, EdgeMaskOptions{threads}) {}

  int add_type(const std::string& name, const py::handle& src, const py::handle& dst) {
    const auto s = contiguous<Index>(src), d = contiguous<Index>(dst);
    GW_CHECK(s.ndim() == 1 && d.ndim() == 1 && s.size() == d.size(),
             "edge type '" << name << "': src and dst must be 1-D arrays of equal length");
    return masker_.add_type(name, EdgeListView{view(s), view(d), {}});
  }

  py::list removed_edges(const py::handle& ids, const py::handle& ptr) const {
    const auto i = contiguous<Index>(ids);
    const auto p = contiguous<Offset>(ptr);
    std::vector<RemovedEdges> removed;
    {
      py::gil_scoped_release release;
      removed = masker_.removed_edges(PerturbationBatch{view(i), view(p)});
    }
    py::list out;
    for (RemovedEdges& r : removed) {
      const auto n_pos = static_cast<py::ssize_t>(r.positions.size());
      const auto n_ptr = static_cast<py::ssize_t>(r.ptr.size());
      out.append(
          py::make_tuple(take(std::move(r.positions), {n_pos}), take(std::move(r.ptr), {n_ptr})));
    }
    return out;
  }

  // Writes into `out` (uint8 or bool, C-contiguous, B * E_t entries) when given: no copy.
  py::array keep_mask(int type,
                      const py::handle& ids,
                      const py::handle& ptr,
                      py::object out) const {
    const auto i = contiguous<Index>(ids);
    const auto p = contiguous<Offset>(ptr);
    const PerturbationBatch batch{view(i), view(p)};
    const std::size_t size =
        static_cast<std::size_t>(batch.num_samples()) * masker_.num_edges(type);
    py::array target;
    if (out.is_none()) {
      target = py::array_t<std::uint8_t>(static_cast<py::ssize_t>(size));
    } else {
      target = py::reinterpret_borrow<py::array>(out);
      GW_CHECK(target.itemsize() == 1 && (target.flags() & py::array::c_style) &&
                   target.writeable() && static_cast<std::size_t>(target.size()) == size,
               "keep_mask out= must be a writable C-contiguous uint8 / bool array of B * E = "
                   << size << " entries");
    }
    std::span<std::uint8_t> keep(static_cast<std::uint8_t*>(target.mutable_data()), size);
    {
      py::gil_scoped_release release;
      masker_.keep_mask(type, batch, keep);
    }
    return target;
  }

  const EdgeMasker& masker() const { return masker_; }

 private:
  EdgeMasker masker_;
};

// HeatDiffusion plus the arrays its graphs were given in (it keeps no spans after construction,
// but the conversion buffers must live through the constructor).
class PyHeatDiffusion {
 public:
  PyHeatDiffusion(const py::handle& num_nodes,
                  const py::handle& edge_ptr,
                  const py::handle& src,
                  const py::handle& dst,
                  const py::object& weights,
                  Index seq_len,
                  const DiffusionOptions& options) {
    const auto nodes = contiguous<Index>(num_nodes);
    const auto ptr = contiguous<Offset>(edge_ptr);
    const auto s = contiguous<Index>(src), d = contiguous<Index>(dst);
    std::optional<py::array_t<float, py::array::c_style>> w;
    if (!weights.is_none()) w = contiguous<float>(weights);
    DiffusionGraphs graphs{
        view(nodes), view(ptr), view(s), view(d), w ? view(*w) : std::span<const float>()};
    py::gil_scoped_release release;
    op_ = std::make_unique<HeatDiffusion>(graphs, seq_len, options);
  }

  // y = exp(-beta L) x for x [B, S, C]; x is read in place when C-contiguous of its own float
  // type; y is `out` when given (same shape and dtype as x, C-contiguous; no copy), else new.
  py::array apply(const py::array& x, py::object out) const {
    GW_CHECK(
        x.ndim() == 3 && x.shape(0) == op_->num_graphs() && x.shape(1) == op_->seq_len(),
        "x must be [B, S, C] = [" << op_->num_graphs() << ", " << op_->seq_len() << ", channels]");
    if (py::isinstance<py::array_t<double>>(x)) return run<double>(x, out);
    return run<float>(x, out);
  }

  const HeatDiffusion& op() const { return *op_; }

 private:
  template <typename T>
  py::array run(const py::array& x, py::object out) const {
    const auto input = contiguous<T>(x);
    const auto channels = static_cast<Index>(x.shape(2));
    py::array_t<T, py::array::c_style> y;
    if (out.is_none()) {
      y = py::array_t<T, py::array::c_style>({x.shape(0), x.shape(1), x.shape(2)});
    } else {
      const bool same_type = py::isinstance<py::array_t<T, py::array::c_style>>(out);
      GW_CHECK(same_type, "out= must be a C-contiguous array of the input's dtype");
      y = py::reinterpret_borrow<py::array_t<T, py::array::c_style>>(out);
      GW_CHECK(y.size() == input.size() && y.writeable(), "out= must have the shape of x");
    }
    std::span<T> target(y.mutable_data(), static_cast<std::size_t>(y.size()));
    {
      py::gil_scoped_release release;
      op_->apply(view(input), channels, target);
    }
    return y;
  }

  std::unique_ptr<HeatDiffusion> op_;
};

template <typename T>
py::tuple aggregate(const py::array& embeddings,
                    const py::handle& gene_ids,
                    const py::handle& lengths,
                    const AggregateOptions& options) {
  const auto e = contiguous<T>(embeddings);
  const auto ids = contiguous<Index>(gene_ids);
  const auto len = contiguous<Index>(lengths);
  GW_CHECK(e.ndim() == 3, "embeddings must be [B, T, H]");
  const auto b = static_cast<Index>(e.shape(0)), t = static_cast<Index>(e.shape(1));
  const auto h = static_cast<Index>(e.shape(2));
  GeneAggregate<T> result;
  {
    py::gil_scoped_release release;
    result = aggregate_by_gene(view(e), view(ids), view(len), b, t, h, options);
  }
  const auto u = static_cast<py::ssize_t>(result.gene_ids.size());
  return py::make_tuple(take(std::move(result.gene_ids), {u}),
                        take(std::move(result.mean), {u, static_cast<py::ssize_t>(h)}),
                        take(std::move(result.counts), {u}));
}

// ---- CUDA: device pointers in, device buffers out -------------------------------------------
//
// The Python layer (gwalign/cellgraph.py) reads device pointers, shapes and the stream from the
// caller's arrays (__cuda_array_interface__, torch's current stream) and passes them here as
// integers; these classes only enqueue work on that stream. Results of unknown size (removal
// lists, aggregates) are copied device to device into DeviceBuffers, which expose
// __cuda_array_interface__ so torch.as_tensor / cupy.asarray wrap them without a copy.

void* as_pointer(std::uintptr_t address) { return reinterpret_cast<void*>(address); }

// A typed, C-contiguous array in device memory owned by Python (a gw::DeviceArray plus a shape).
class DeviceBuffer {
 public:
  using Storage = std::variant<DeviceArray<float>,
                               DeviceArray<double>,
                               DeviceArray<Index>,
                               DeviceArray<Offset>,
                               DeviceArray<std::uint8_t>>;

  DeviceBuffer(Storage storage, std::vector<py::ssize_t> shape)
      : storage_(std::move(storage)), shape_(std::move(shape)) {}

  // Uninitialized memory of `dtype` ("float32", "float64", "int32", "int64", "uint8").
  static DeviceBuffer empty(std::vector<py::ssize_t> shape,
                            const std::string& dtype,
                            const CudaStream& stream) {
    std::size_t count = 1;
    for (const py::ssize_t d : shape) {
      GW_CHECK(d >= 0, "DeviceBuffer: negative dimension " << d);
      count *= static_cast<std::size_t>(d);
    }
    if (dtype == "float32") return {DeviceArray<float>(count, stream), std::move(shape)};
    if (dtype == "float64") return {DeviceArray<double>(count, stream), std::move(shape)};
    if (dtype == "int32") return {DeviceArray<Index>(count, stream), std::move(shape)};
    if (dtype == "int64") return {DeviceArray<Offset>(count, stream), std::move(shape)};
    if (dtype == "uint8") return {DeviceArray<std::uint8_t>(count, stream), std::move(shape)};
    GW_THROW(ErrorCode::kInvalidArgument,
             "DeviceBuffer: dtype '" << dtype << "' is not one of float32, float64, int32, "
                                     << "int64, uint8");
  }

  // A device copy of a numpy array (converted to C order; bool is stored as uint8).
  static DeviceBuffer from_numpy(const py::array& a, const CudaStream& stream) {
    std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
    const auto copy = [&](auto tag) -> DeviceBuffer {
      using T = decltype(tag);
      const auto c = contiguous<T>(a);
      return {DeviceArray<T>(view(c), stream), std::move(shape)};
    };
    const py::dtype dt = a.dtype();
    if (py::isinstance<py::array_t<float>>(a)) return copy(float{});
    if (py::isinstance<py::array_t<double>>(a)) return copy(double{});
    if (py::isinstance<py::array_t<Index>>(a)) return copy(Index{});
    if (py::isinstance<py::array_t<Offset>>(a)) return copy(Offset{});
    if ((dt.kind() == 'u' || dt.kind() == 'b') && dt.itemsize() == 1) {
      return copy(std::uint8_t{});
    }
    GW_THROW(ErrorCode::kInvalidArgument,
             "DeviceBuffer.from_numpy: dtype " << py::str(py::object(dt)).cast<std::string>()
                                               << " is not one of float32, float64, int32, int64, "
                                               << "uint8, bool");
  }

  py::array numpy() const {
    return std::visit(
        [&](const auto& array) -> py::array {
          using T = std::remove_cv_t<std::remove_pointer_t<decltype(array.data())>>;
          std::vector<T> host;
          {
            py::gil_scoped_release release;
            host = array.download();
          }
          return take(std::move(host), shape_);
        },
        storage_);
  }

  std::uintptr_t pointer() const {
    return std::visit([](const auto& a) { return reinterpret_cast<std::uintptr_t>(a.data()); },
                      storage_);
  }
  int device() const {
    return std::visit([](const auto& a) { return a.device(); }, storage_);
  }
  std::string dtype() const {
    static constexpr const char* kNames[] = {"float32", "float64", "int32", "int64", "uint8"};
    return kNames[storage_.index()];
  }
  // numpy's type string of the array interface protocols.
  std::string typestr() const {
    static constexpr const char* kTypes[] = {"<f4", "<f8", "<i4", "<i8", "|u1"};
    return kTypes[storage_.index()];
  }
  const std::vector<py::ssize_t>& shape() const { return shape_; }

  // The stream the buffer's writes were enqueued on, as the CUDA Array Interface encodes it: the
  // cudaStream_t as an integer, 1 for the legacy default stream (the interface reserves 0).
  std::uintptr_t stream_handle() const {
    return std::visit(
        [](const auto& a) {
          const auto handle = reinterpret_cast<std::uintptr_t>(a.stream().get());
          return handle == 0 ? std::uintptr_t{1} : handle;
        },
        storage_);
  }

  // The CUDA Array Interface, version 3 with the `stream` key: the kernels and copies that write
  // the buffer may still be queued on that stream when the call that returned it comes back to
  // Python (nothing here synchronizes), so a consumer on another stream must order itself after
  // it, as the interface's stream key tells consumers that honour it (CuPy, Numba) to do. On the
  // stream that produced it (torch's current stream, the default) no synchronization is needed.
  py::dict cuda_array_interface() const {
    py::dict d;
    d["shape"] = py::tuple(py::cast(shape_));
    d["typestr"] = typestr();
    d["data"] = py::make_tuple(pointer(), false);
    d["strides"] = py::none();
    d["stream"] = stream_handle();
    d["version"] = 3;
    return d;
  }

 private:
  Storage storage_;
  std::vector<py::ssize_t> shape_;
};

// `count` elements of device memory at `source` as a new DeviceBuffer, copied on `stream`.
template <typename T>
DeviceBuffer copy_device(const T* source,
                         std::size_t count,
                         std::vector<py::ssize_t> shape,
                         const CudaStream& stream) {
  DeviceArray<T> array(count, stream);
  array.copy_from_device_async(source, count);
  return {std::move(array), std::move(shape)};
}

// The host value of one device element (synchronizes `stream`).
template <typename T>
T read_device_value(const T* source, const CudaStream& stream) {
  DeviceArray<T> one(1, stream);
  one.copy_from_device_async(source, 1);
  return one.download()[0];
}

CudaStream stream_of(std::uintptr_t handle, int device) {
  return CudaStream::borrow(as_pointer(handle), device);
}

// CudaEdgeMasker over the caller's stream.
class PyCudaEdgeMasker {
 public:
  PyCudaEdgeMasker(const PyEdgeMasker& masker, std::uintptr_t stream, int device)
      : stream_(stream_of(stream, device)), masker_(masker.masker(), stream_) {}

  // Enqueues the dense keep-mask of `type` into device memory `keep` (B * E_t bytes); with
  // `check`, waits for the stream and raises on an invalid batch.
  void keep_mask(int type,
                 std::uintptr_t ids,
                 Index num_ids,
                 std::uintptr_t ptr,
                 Index num_samples,
                 std::uintptr_t keep,
                 bool check) {
    py::gil_scoped_release release;
    masker_.keep_mask_async(
        type, batch(ids, num_ids, ptr, num_samples), static_cast<std::uint8_t*>(as_pointer(keep)));
    if (check) masker_.check();
  }

  // Per type, (positions, ptr) as DeviceBuffers (int64). Reads each list's length from the
  // device, so it waits for the stream.
  py::list removed_edges(std::uintptr_t ids, Index num_ids, std::uintptr_t ptr, Index num_samples) {
    std::vector<std::pair<DeviceBuffer, DeviceBuffer>> lists;
    {
      py::gil_scoped_release release;
      masker_.removed_edges_async(batch(ids, num_ids, ptr, num_samples));
      masker_.check();
      for (int t = 0; t < masker_.num_types(); ++t) {
        const DeviceRemovedEdges r = masker_.device_removed(t);
        const auto b1 = static_cast<std::size_t>(r.num_samples) + 1;
        DeviceBuffer offsets = copy_device(r.ptr, b1, {static_cast<py::ssize_t>(b1)}, stream_);
        const Offset total = read_device_value(r.ptr + r.num_samples, stream_);
        DeviceBuffer positions = copy_device(r.positions,
                                             static_cast<std::size_t>(total),
                                             {static_cast<py::ssize_t>(total)},
                                             stream_);
        lists.emplace_back(std::move(positions), std::move(offsets));
      }
    }
    py::list out;
    for (auto& [positions, offsets] : lists) {
      out.append(py::make_tuple(std::move(positions), std::move(offsets)));
    }
    return out;
  }

  Offset num_edges(int type) const { return masker_.num_edges(type); }

 private:
  static DeviceBatch batch(std::uintptr_t ids, Index num_ids, std::uintptr_t ptr, Index b) {
    return DeviceBatch{static_cast<const Index*>(as_pointer(ids)),
                       num_ids,
                       static_cast<const Offset*>(as_pointer(ptr)),
                       b};
  }

  CudaStream stream_;
  CudaEdgeMasker masker_;
};

// CudaHeatDiffusion with the CPU operator uploaded once, over the caller's stream.
class PyCudaHeatDiffusion {
 public:
  PyCudaHeatDiffusion(const PyHeatDiffusion& op, std::uintptr_t stream, int device)
      : stream_(stream_of(stream, device)), diffusion_(stream_) {
    py::gil_scoped_release release;
    diffusion_.prepare(op.op());
  }

  // Enqueues y = exp(-beta L) x for device arrays [B, S, channels] of `dtype` ("float32" or
  // "float64"); returns at once.
  void apply(std::uintptr_t x, Index channels, std::uintptr_t y, const std::string& dtype) {
    py::gil_scoped_release release;
    if (dtype == "float64") {
      diffusion_.apply_async(
          static_cast<const double*>(as_pointer(x)), channels, static_cast<double*>(as_pointer(y)));
    } else {
      GW_CHECK(dtype == "float32",
               "HeatDiffusion: dtype must be float32 or float64, got " << dtype);
      diffusion_.apply_async(
          static_cast<const float*>(as_pointer(x)), channels, static_cast<float*>(as_pointer(y)));
    }
  }

  void synchronize() {
    py::gil_scoped_release release;
    diffusion_.synchronize();
  }

 private:
  CudaStream stream_;
  CudaHeatDiffusion diffusion_;
};

// CudaAggregator over the caller's stream; results copied into DeviceBuffers.
class PyCudaAggregator {
 public:
  PyCudaAggregator(std::uintptr_t stream, int device)
      : stream_(stream_of(stream, device)), aggregator_(stream_) {}

  py::tuple run(std::uintptr_t embeddings,
                const std::string& dtype,
                std::uintptr_t gene_ids,
                std::uintptr_t lengths,
                Index batch,
                Index seq_len,
                Index hidden,
                Index id_bound,
                bool skip_cls,
                const std::string& method) {
    const auto m = cuda_aggregate_method_from_string(method);
    GW_CHECK(m.has_value(),
             "aggregate_by_gene: method must be 'sort' or 'atomics', got '" << method << "'");
    GW_CHECK(dtype == "float32" || dtype == "float64",
             "aggregate_by_gene: embeddings must be float32 or float64, got " << dtype);
    AggregateOptions options;
    options.skip_cls = skip_cls;
    std::optional<DeviceBuffer> ids, mean, counts;
    {
      py::gil_scoped_release release;
      const auto* g = static_cast<const Index*>(as_pointer(gene_ids));
      const auto* l = static_cast<const Index*>(as_pointer(lengths));
      if (dtype == "float64") {
        aggregator_.run_async(static_cast<const double*>(as_pointer(embeddings)),
                              g,
                              l,
                              batch,
                              seq_len,
                              hidden,
                              id_bound,
                              options,
                              *m);
      } else {
        aggregator_.run_async(static_cast<const float*>(as_pointer(embeddings)),
                              g,
                              l,
                              batch,
                              seq_len,
                              hidden,
                              id_bound,
                              options,
                              *m);
      }
      aggregator_.check();
      const DeviceGeneAggregate r = aggregator_.device_result();
      const Index u = read_device_value(r.num_genes, stream_);
      const auto un = static_cast<std::size_t>(u);
      const auto us = static_cast<py::ssize_t>(u), hs = static_cast<py::ssize_t>(hidden);
      ids = copy_device(r.gene_ids, un, {us}, stream_);
      counts = copy_device(r.counts, un, {us}, stream_);
      const std::size_t values = un * static_cast<std::size_t>(hidden);
      if (dtype == "float64") {
        mean = copy_device(static_cast<const double*>(r.mean), values, {us, hs}, stream_);
      } else {
        mean = copy_device(static_cast<const float*>(r.mean), values, {us, hs}, stream_);
      }
    }
    return py::make_tuple(std::move(*ids), std::move(*mean), std::move(*counts));
  }

 private:
  CudaStream stream_;
  CudaAggregator aggregator_;
};

void bind_cellgraph_cuda(py::module_& parent) {
  py::module_ m = parent.def_submodule(
      "cuda",
      "graph-cell kernels on CUDA device memory (cellgraph/cuda_*.h); every call enqueues "
      "on the caller's stream");
  m.def("device_count", &cuda_device_count);
  m.def(
      "pointer_device",
      [](std::uintptr_t pointer) {
        return cuda_pointer_device(reinterpret_cast<const void*>(pointer));
      },
      py::arg("pointer"),
      "the ordinal of the CUDA device holding this device pointer (ValueError for host memory)");

  py::class_<DeviceBuffer>(m, "DeviceBuffer")
      .def_static(
          "empty", &DeviceBuffer::empty, py::arg("shape"), py::arg("dtype"), py::arg("stream"))
      .def_static("from_numpy", &DeviceBuffer::from_numpy, py::arg("array"), py::arg("stream"))
      .def("numpy", &DeviceBuffer::numpy)
      .def_property_readonly("ptr", &DeviceBuffer::pointer)
      .def_property_readonly("device", &DeviceBuffer::device)
      .def_property_readonly("dtype", &DeviceBuffer::dtype)
      .def_property_readonly("shape",
                             [](const DeviceBuffer& b) { return py::tuple(py::cast(b.shape())); })
      .def_property_readonly("stream", &DeviceBuffer::stream_handle)
      .def_property_readonly("__cuda_array_interface__", &DeviceBuffer::cuda_array_interface);

  py::class_<CudaStream>(m, "Stream")
      .def_static("create", &CudaStream::create, py::arg("device") = 0)
      .def_static(
          "borrow",
          [](std::uintptr_t handle, int device) { return stream_of(handle, device); },
          py::arg("handle"),
          py::arg("device") = 0)
      .def_property_readonly(
          "handle", [](const CudaStream& s) { return reinterpret_cast<std::uintptr_t>(s.get()); })
      .def_property_readonly("device", &CudaStream::device)
      .def("synchronize", [](const CudaStream& s) {
        py::gil_scoped_release release;
        s.synchronize();
      });

  py::class_<PyCudaEdgeMasker>(m, "EdgeMasker")
      .def(py::init<const PyEdgeMasker&, std::uintptr_t, int>(),
           py::arg("masker"),
           py::arg("stream"),
           py::arg("device"))
      .def("keep_mask",
           &PyCudaEdgeMasker::keep_mask,
           py::arg("type"),
           py::arg("ids"),
           py::arg("num_ids"),
           py::arg("ptr"),
           py::arg("num_samples"),
           py::arg("keep"),
           py::arg("check"))
      .def("removed_edges",
           &PyCudaEdgeMasker::removed_edges,
           py::arg("ids"),
           py::arg("num_ids"),
           py::arg("ptr"),
           py::arg("num_samples"))
      .def("num_edges", &PyCudaEdgeMasker::num_edges);

  py::class_<PyCudaHeatDiffusion>(m, "HeatDiffusion")
      .def(py::init<const PyHeatDiffusion&, std::uintptr_t, int>(),
           py::arg("op"),
           py::arg("stream"),
           py::arg("device"))
      .def("apply",
           &PyCudaHeatDiffusion::apply,
           py::arg("x"),
           py::arg("channels"),
           py::arg("y"),
           py::arg("dtype"))
      .def("synchronize", &PyCudaHeatDiffusion::synchronize);

  py::class_<PyCudaAggregator>(m, "Aggregator")
      .def(py::init<std::uintptr_t, int>(), py::arg("stream"), py::arg("device"))
      .def("run",
           &PyCudaAggregator::run,
           py::arg("embeddings"),
           py::arg("dtype"),
           py::arg("gene_ids"),
           py::arg("lengths"),
           py::arg("batch"),
           py::arg("seq_len"),
           py::arg("hidden"),
           py::arg("id_bound"),
           py::arg("skip_cls"),
           py::arg("method"));
}

}  // namespace

void bind_cellgraph(py::module_& parent) {
  py::module_ m = parent.def_submodule("cellgraph", "graph-cell kernels (cellgraph/)");

  py::class_<PyEdgeMasker>(m, "EdgeMasker")
      .def(py::init<Index, int>(), py::arg("num_nodes"), py::arg("threads") = 0)
      .def("add_type", &PyEdgeMasker::add_type, py::arg("name"), py::arg("src"), py::arg("dst"))
      .def("removed_edges", &PyEdgeMasker::removed_edges, py::arg("ids"), py::arg("ptr"))
      .def("keep_mask",
           &PyEdgeMasker::keep_mask,
           py::arg("type"),
           py::arg("ids"),
           py::arg("ptr"),
           py::arg("out") = py::none())
      .def_property_readonly("num_nodes",
                             [](const PyEdgeMasker& e) { return e.masker().num_nodes(); })
      .def_property_readonly("num_types",
                             [](const PyEdgeMasker& e) { return e.masker().num_types(); })
      .def("num_edges", [](const PyEdgeMasker& e, int type) { return e.masker().num_edges(type); })
      .def("name", [](const PyEdgeMasker& e, int type) { return e.masker().name(type); });

  py::class_<DiffusionOptions>(m, "DiffusionOptions")
      .def(py::init<>())
      .def_readwrite("order", &DiffusionOptions::order)
      .def_readwrite("beta", &DiffusionOptions::beta)
      .def_readwrite("lambda_max", &DiffusionOptions::lambda_max)
      .def_readwrite("estimate_lambda_max", &DiffusionOptions::estimate_lambda_max)
      .def_readwrite("lanczos_steps", &DiffusionOptions::lanczos_steps)
      .def_readwrite("halve_c0", &DiffusionOptions::halve_c0)
      .def_readwrite("symmetrize", &DiffusionOptions::symmetrize)
      .def_readwrite("threads", &DiffusionOptions::threads);

  py::class_<PyHeatDiffusion>(m, "HeatDiffusion")
      .def(py::init<const py::handle&,
                    const py::handle&,
                    const py::handle&,
                    const py::handle&,
                    const py::object&,
                    Index,
                    const DiffusionOptions&>(),
           py::arg("num_nodes"),
           py::arg("edge_ptr"),
           py::arg("src"),
           py::arg("dst"),
           py::arg("weights"),
           py::arg("seq_len"),
           py::arg("options"))
      .def("apply", &PyHeatDiffusion::apply, py::arg("x"), py::arg("out") = py::none())
      .def_property_readonly("lambda_max",
                             [](const PyHeatDiffusion& d) { return d.op().lambda_max(); })
      .def_property_readonly("weights", [](const PyHeatDiffusion& d) { return d.op().weights(); });

  m.def(
      "aggregate_by_gene",
      [](const py::array& embeddings,
         const py::handle& gene_ids,
         const py::handle& lengths,
         bool skip_cls,
         int threads) {
        AggregateOptions options;
        options.skip_cls = skip_cls;
        options.threads = threads;
        if (py::isinstance<py::array_t<double>>(embeddings)) {
          return aggregate<double>(embeddings, gene_ids, lengths, options);
        }
        return aggregate<float>(embeddings, gene_ids, lengths, options);
      },
      py::arg("embeddings"),
      py::arg("gene_ids"),
      py::arg("lengths"),
      py::arg("skip_cls") = false,
      py::arg("threads") = 0);

  bind_cellgraph_cuda(m);
}

}  // namespace gw::python
