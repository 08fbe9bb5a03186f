// gwalign._core.cellgraph: the graph-cell kernels (cellgraph/) on numpy arrays.
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
#include <vector>

#include "cellgraph/aggregate.h"
#include "cellgraph/diffusion.h"
#include "cellgraph/edge_masks.h"
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
}

}  // namespace gw::python
