// gwalign._core.joint_embedding: the joint embedding (embedding/joint_embedding.h) on numpy arrays.
//
// The Python layer (python/gwalign/_embedding.py) hands over C-contiguous arrays of the library's
// own types (float64 points and plan values, int64 offsets, int32 indices); anything else is
// converted here once by numpy. The C++ call reads them in place with the GIL released. Outputs
// are handed to numpy without a copy: each array owns the C++ vector it views.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "embedding/joint_embedding.h"

namespace py = pybind11;

namespace gw::python {
namespace {

template <typename T>
using CArray = py::array_t<T, py::array::c_style | py::array::forcecast>;

// Keeps every converted array alive for the duration of the call (spans view them).
struct Holder {
  std::vector<py::array> arrays;

  template <typename T>
  std::span<const T> keep(const py::handle& a) {
    CArray<T> c = CArray<T>::ensure(a);
    if (!c) throw py::error_already_set();
    arrays.push_back(c);
    return {c.data(), static_cast<std::size_t>(c.size())};
  }
};

py::array_t<double> to_numpy(EmbeddingMatrix&& m) {
  auto* owned = new std::vector<double>(std::move(m.values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  return py::array_t<double>({static_cast<py::ssize_t>(m.rows), static_cast<py::ssize_t>(m.cols)},
                             owned->data(),
                             free_when_done);
}

// datasets: [(name, n, points or None, (indptr, indices) or None)]
// plans:    [(row_name, col_name, rows, cols, dense or None, (indptr, indices, data) or None)]
py::tuple joint_embedding_arrays(const std::string& anchor,
                                 const py::list& datasets,
                                 const py::list& plans,
                                 int dimension,
                                 double lambda,
                                 double cg_tolerance,
                                 int cg_max_iterations) {
  Holder holder;
  JointEmbeddingProblem problem;
  problem.anchor = anchor;
  for (const py::handle item : datasets) {
    const py::tuple t = item.cast<py::tuple>();
    EmbeddingDataset d;
    d.name = t[0].cast<std::string>();
    d.num_points = t[1].cast<Index>();
    if (!t[2].is_none()) {
      const py::array points = py::array::ensure(t[2]);
      GW_CHECK(points && points.ndim() == 2,
               "joint_embedding: the points of '" << d.name << "' must be a 2-D array (n x d)");
      d.dimension = static_cast<int>(points.shape(1));
      d.points = holder.keep<double>(points);
    }
    if (!t[3].is_none()) {
      const py::tuple g = t[3].cast<py::tuple>();
      const std::span<const Offset> offsets = holder.keep<Offset>(g[0]);
      const std::span<const Index> indices = holder.keep<Index>(g[1]);
      GW_CHECK(offsets.size() == static_cast<std::size_t>(d.num_points) + 1,
               "joint_embedding: the graph of '" << d.name << "' has " << offsets.size() - 1
                                                 << " rows but the dataset has " << d.num_points
                                                 << " points");
      d.graph = CsrGraphView{d.num_points, offsets, indices, {}};
    }
    problem.datasets.push_back(std::move(d));
  }
  for (const py::handle item : plans) {
    const py::tuple t = item.cast<py::tuple>();
    EmbeddingPlan p;
    p.row_dataset = t[0].cast<std::string>();
    p.col_dataset = t[1].cast<std::string>();
    p.rows = t[2].cast<Index>();
    p.cols = t[3].cast<Index>();
    if (!t[4].is_none()) {
      p.dense = holder.keep<double>(t[4]);
    } else {
      const py::tuple csr = t[5].cast<py::tuple>();
      p.row_offsets = holder.keep<Offset>(csr[0]);
      p.col_indices = holder.keep<Index>(csr[1]);
      p.values = holder.keep<double>(csr[2]);
    }
    problem.plans.push_back(std::move(p));
  }
  JointEmbeddingOptions options;
  options.dimension = dimension;
  options.lambda = lambda;
  options.cg_tolerance = cg_tolerance;
  options.cg_max_iterations = cg_max_iterations;

  JointEmbeddingResult result;
  {
    py::gil_scoped_release release;
    result = joint_embedding(problem, options);
  }
  py::dict embeddings;
  py::dict per_dataset;
  for (JointEmbeddingResult::Dataset& d : result.datasets) {
    py::dict info;
    info["parent"] = d.parent.empty() ? py::object(py::none()) : py::object(py::str(d.parent));
    info["zero_mass_points"] = d.zero_mass_points;
    info["cg_iterations"] = d.cg_iterations;
    info["cg_residual"] = d.cg_residual;
    per_dataset[py::str(d.name)] = info;
    embeddings[py::str(d.name)] = to_numpy(std::move(d.embedding));
  }
  py::dict info;
  info["datasets"] = per_dataset;
  info["dimension"] = result.dimension;
  info["anchor_components"] = result.anchor_components;
  info["anchor_variances"] = result.anchor_variances;
  info["unused_plans"] = result.unused_plans;
  return py::make_tuple(embeddings, info);
}

}  // namespace

void bind_embedding(py::module_& m) {
  m.def("joint_embedding_arrays",
        &joint_embedding_arrays,
        py::arg("anchor"),
        py::arg("datasets"),
        py::arg("plans"),
        py::arg("dimension"),
        py::arg("lambda_reg"),
        py::arg("cg_tolerance"),
        py::arg("cg_max_iterations"));
}

}  // namespace gw::python
