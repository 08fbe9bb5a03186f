// gwalign._core's tissue-section functions (spatial/): shared genes, expression features, the
// section aligner, the atlas-to-section mapping and annotation transfer, on numpy arrays. The Python layer
// (python/gwalign/spatial.py) reads AnnData and hands over plain arrays; the numbers come from the
// same library calls `gwalign slices` / `gwalign transfer` make, so both front ends agree.
//
// Inputs are converted once by numpy to C-contiguous arrays of the library's types (float64
// coordinates / features / plan masses, float32 counts, int64 offsets, int32 indices and codes)
// and read in place; the GIL is released while the library runs. Outputs own their vectors.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "solver/options.h"
#include "spatial/expression.h"
#include "spatial/mapping.h"
#include "spatial/plan_view.h"
#include "spatial/slices.h"
#include "spatial/transfer.h"

namespace py = pybind11;

namespace gw::python {
namespace {

template <typename T>
using CArray = py::array_t<T, py::array::c_style | py::array::forcecast>;

template <typename T>
CArray<T> c_array(const py::handle& a) {
  CArray<T> c = CArray<T>::ensure(a);
  if (!c) throw py::error_already_set();
  return c;
}

template <typename T>
py::array_t<T> owned_array(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::move(shape), owned->data(), free_when_done);
}

// A 2-D array as the library's row-major double matrix.
DenseMatrix<double> dense_matrix(const py::handle& a, const std::string& what) {
  const CArray<double> c = c_array<double>(a);
  GW_CHECK(c.ndim() == 2, what << " must be a 2-D array, got " << c.ndim() << " dimensions");
  const auto rows = static_cast<Index>(c.shape(0)), cols = static_cast<Index>(c.shape(1));
  return DenseMatrix<double>(rows, cols, std::vector<double>(c.data(), c.data() + c.size()));
}

// blocks: one float32 n_s x g array per section (counts on the shared genes, in shared order).
py::tuple expression_features_arrays(const py::list& blocks,
                                     const std::string& cost,
                                     int dimensions,
                                     std::uint64_t seed) {
  std::vector<spatial::ExpressionBlock> data;
  for (const py::handle& b : blocks) {
    const CArray<float> c = c_array<float>(b);
    GW_CHECK(c.ndim() == 2, "expression block " << data.size() << " must be cells x genes");
    spatial::ExpressionBlock block;
    block.rows = static_cast<Index>(c.shape(0));
    block.genes = static_cast<Index>(c.shape(1));
    block.values.assign(c.data(), c.data() + c.size());
    data.push_back(std::move(block));
  }
  spatial::ExpressionOptions options;
  options.cost = spatial::expression_cost_from_string(cost);
  options.dimensions = dimensions;
  options.seed = seed;
  spatial::ExpressionFeatures f;
  {
    py::gil_scoped_release release;
    f = spatial::expression_features(data, options);
  }
  py::list features;
  for (DenseMatrix<double>& m : f.features) {
    const py::ssize_t rows = m.rows, cols = m.cols;
    features.append(owned_array(std::move(m.values), {rows, cols}));
  }
  return py::make_tuple(features, f.explained_variance_ratio, f.randomized);
}

template <typename T>
py::array_t<T> copy_of(const std::vector<T>& v) {
  return owned_array(std::vector<T>(v), {static_cast<py::ssize_t>(v.size())});
}

// The plan (plan_dense, or plan_csr as (data, indices, indptr)), its shape and the losses.
void put_plan(py::dict& d, const Result& r) {
  if (!r.plan.empty()) {
    d["plan_dense"] = owned_array(std::vector<double>(r.plan), {r.n, r.k});
  } else {
    const CsrMatrix<double>& csr = r.plan_topk;
    d["plan_csr"] =
        py::make_tuple(copy_of(csr.values), copy_of(csr.col_indices), copy_of(csr.row_offsets));
  }
  d["n"] = r.n;
  d["k"] = r.k;
  d["fused_weight"] = r.options.fused_weight;
  d["gw_loss"] = r.gw_loss;
  d["gw_loss_exact"] = r.gw_loss_exact;
  d["cost_estimate"] = r.gw_cost_estimate;
}

py::dict pair_dict(spatial::PairAlignment& p) {
  py::dict d;
  d["fixed"] = p.fixed;
  d["moving"] = p.moving;
  const Result& r = p.result;
  put_plan(d, r);
  const spatial::Registration& reg = p.registration;
  d["registration_residual_rms"] = reg.rms_residual;
  d["registration_residual"] = reg.residual;
  d["rotation_degrees"] = reg.transform.angle() * 180.0 / 3.14159265358979323846;
  d["rotation"] = reg.transform.rotation;
  d["translation"] = reg.transform.translation;
  d["reflection"] = reg.transform.reflection;
  d["overlap"] = p.overlap;
  d["overlap_mass"] = p.overlap_mass;
  d["refinements"] = p.refinements;
  d["registration_method"] = p.searched ? "search" : "plan";
  d["solve_seconds"] = p.solve_seconds;
  d["register_seconds"] = p.register_seconds;
  d["solve_json"] = r.to_json(false);
  return d;
}

// coordinates / features: one n_s x 2 and one n_s x f array per section (features may be empty
// lists when fused_weight is 0). overlap: None (balanced), a fraction, or "auto".
py::tuple align_sections_arrays(const std::vector<std::string>& names,
                                const py::list& coordinates,
                                const py::list& features,
                                const Options& solver,
                                const py::object& overlap,
                                int reference,
                                double z_spacing,
                                int refine,
                                bool allow_reflection,
                                const std::string& registration,
                                double search_extent) {
  GW_CHECK(
      names.size() == coordinates.size(),
      "align_sections: " << names.size() << " names for " << coordinates.size() << " sections");
  std::vector<spatial::SectionData> sections(names.size());
  for (std::size_t s = 0; s < names.size(); ++s) {
    sections[s].name = names[s];
    DenseMatrix<double> xy = dense_matrix(coordinates[s], "coordinates of '" + names[s] + "'");
    sections[s].n = xy.rows;
    sections[s].dimension = static_cast<int>(xy.cols);
    sections[s].coordinates = std::move(xy.values);
    if (s < features.size())
      sections[s].features = dense_matrix(features[s], "features of '" + names[s] + "'");
  }
  spatial::SlicesOptions options;
  options.solver = solver;
  if (py::isinstance<py::str>(overlap)) {
    const std::string text = overlap.cast<std::string>();
    GW_CHECK(text == "auto",
             "overlap must be a fraction in (0, 1], 'auto' or None, got '" << text << "'");
    options.estimate_overlap = true;
  } else if (!overlap.is_none()) {
    options.overlap = overlap.cast<double>();
  }
  options.reference = reference;
  options.z_spacing = z_spacing;
  options.refine = refine;
  GW_CHECK(refine >= 0, "refine must be >= 0, got " << refine);
  options.registration.allow_reflection = allow_reflection;
  options.registration_mode = spatial::registration_mode_from_string(registration);
  GW_CHECK(options.registration_mode != spatial::RegistrationMode::kSearch || solver.fused_weight > 0.0,
           "registration='search' scores positions by expression; it needs fused_weight > 0");
  GW_CHECK(std::isfinite(search_extent) && search_extent >= 0.0 && search_extent <= 2.0,
           "search_extent must be a fraction of the diameter in [0, 2], got " << search_extent);
  options.search_options.extent = search_extent;
  spatial::SlicesResult result;
  {
    py::gil_scoped_release release;
    result = spatial::align_sections(sections, options);
  }
  py::list aligned;
  for (std::size_t s = 0; s < result.aligned.size(); ++s) {
    aligned.append(owned_array(std::move(result.aligned[s]), {sections[s].n, 3}));
  }
  py::list pairs;
  for (spatial::PairAlignment& p : result.pairs) pairs.append(pair_dict(p));
  return py::make_tuple(aligned, pairs);
}

// The plan as CSR arrays (data float64, indices int32, indptr int64) of an n x k matrix.
struct PlanArrays {
  CArray<double> data;
  CArray<Index> indices;
  CArray<Offset> indptr;
  spatial::PlanView view;

  PlanArrays(const py::handle& d, const py::handle& i, const py::handle& p, Index n, Index k)
      : data(c_array<double>(d)),
        indices(c_array<Index>(i)),
        indptr(c_array<Offset>(p)),
        view(spatial::PlanView::csr({indptr.data(), static_cast<std::size_t>(indptr.size())},
                                    {indices.data(), static_cast<std::size_t>(indices.size())},
                                    {data.data(), static_cast<std::size_t>(data.size())},
                                    n,
                                    k)) {}
};

spatial::TransferOptions transfer_options(const std::string& direction) {
  spatial::TransferOptions o;
  o.direction = spatial::direction_from_string(direction);
  return o;
}

py::tuple transfer_categorical_arrays(const py::handle& data,
                                      const py::handle& indices,
                                      const py::handle& indptr,
                                      Index n,
                                      Index k,
                                      const py::handle& codes,
                                      int num_classes,
                                      const std::string& direction) {
  const PlanArrays plan(data, indices, indptr, n, k);
  const CArray<std::int32_t> c = c_array<std::int32_t>(codes);
  const spatial::TransferOptions options = transfer_options(direction);
  spatial::CategoricalTransfer t;
  {
    py::gil_scoped_release release;
    t = spatial::transfer_categorical(
        plan.view, {c.data(), static_cast<std::size_t>(c.size())}, num_classes, options);
  }
  const py::ssize_t m = static_cast<py::ssize_t>(t.label.size());
  return py::make_tuple(owned_array(std::move(t.probabilities), {m, num_classes}),
                        owned_array(std::move(t.label), {m}),
                        owned_array(std::move(t.confidence), {m}),
                        owned_array(std::move(t.mass), {m}),
                        t.unreached);
}

py::tuple transfer_continuous_arrays(const py::handle& data,
                                     const py::handle& indices,
                                     const py::handle& indptr,
                                     Index n,
                                     Index k,
                                     const py::handle& values,
                                     const std::string& direction) {
  const PlanArrays plan(data, indices, indptr, n, k);
  const CArray<double> v = c_array<double>(values);
  GW_CHECK(v.ndim() == 2, "transfer: values must be senders x columns");
  const spatial::TransferOptions options = transfer_options(direction);
  spatial::ContinuousTransfer t;
  {
    py::gil_scoped_release release;
    t = spatial::transfer_continuous(plan.view,
                                     {v.data(), static_cast<std::size_t>(v.size())},
                                     static_cast<Index>(v.shape(1)),
                                     options);
  }
  const py::ssize_t m = static_cast<py::ssize_t>(t.mass.size());
  const py::ssize_t cols = t.columns;
  return py::make_tuple(owned_array(std::move(t.values), {m, cols}),
                        owned_array(std::move(t.mass), {m}),
                        t.unreached);
}

// The atlas (geometry n x e, features n x f) onto the section (coordinates k x 2, features k x f).
py::dict map_atlas_arrays(const std::string& atlas_name,
                          const py::handle& atlas_geometry,
                          const py::handle& atlas_features,
                          const std::string& section_name,
                          const py::handle& coordinates,
                          const py::handle& section_features,
                          const Options& options) {
  spatial::AtlasData atlas;
  atlas.name = atlas_name;
  atlas.geometry = dense_matrix(atlas_geometry, "the representation of '" + atlas_name + "'");
  atlas.features = dense_matrix(atlas_features, "features of '" + atlas_name + "'");
  spatial::SectionData section;
  section.name = section_name;
  DenseMatrix<double> xy = dense_matrix(coordinates, "coordinates of '" + section_name + "'");
  section.n = xy.rows;
  section.dimension = static_cast<int>(xy.cols);
  section.coordinates = std::move(xy.values);
  section.features = dense_matrix(section_features, "features of '" + section_name + "'");
  Result r;
  {
    py::gil_scoped_release release;
    r = spatial::map_atlas(atlas, section, options);
  }
  py::dict d;
  put_plan(d, r);
  d["solve_json"] = r.to_json(false);
  return d;
}

}  // namespace

void bind_spatial(py::module_& m) {
  m.attr("MAPPING_FUSED_WEIGHT") = spatial::kMappingFusedWeight;
  m.attr("MAPPING_RHO_A") = spatial::kMappingRhoA;
  m.attr("MAPPING_DENSE_MAX_ENTRIES") = spatial::kMappingDenseMaxEntries;
  m.attr("MAPPING_FEATURE_CANDIDATES") = spatial::kMappingFeatureCandidates;
  m.def(
      "spatial_unit_rows",
      [](const py::handle& features) {
        DenseMatrix<double> f = dense_matrix(features, "features");
        spatial::scale_rows_to_unit_length(f);
        const py::ssize_t rows = f.rows, cols = f.cols;
        return owned_array(std::move(f.values), {rows, cols});
      },
      py::arg("features"));
  m.def("spatial_map_atlas",
        &map_atlas_arrays,
        py::arg("atlas_name"),
        py::arg("atlas_geometry"),
        py::arg("atlas_features"),
        py::arg("section_name"),
        py::arg("coordinates"),
        py::arg("section_features"),
        py::arg("options"));
  m.def("spatial_shared_genes", [](const std::vector<std::vector<std::string>>& var_names) {
    spatial::SharedGenes s = spatial::shared_genes(var_names);
    return py::make_tuple(s.names, s.columns);
  });
  m.def("spatial_expression_features",
        &expression_features_arrays,
        py::arg("blocks"),
        py::arg("cost"),
        py::arg("dimensions"),
        py::arg("seed"));
  m.def("spatial_align_sections",
        &align_sections_arrays,
        py::arg("names"),
        py::arg("coordinates"),
        py::arg("features"),
        py::arg("options"),
        py::arg("overlap"),
        py::arg("reference"),
        py::arg("z_spacing"),
        py::arg("refine"),
        py::arg("allow_reflection"),
        py::arg("registration") = "auto",
        py::arg("search_extent") = 0.4);
  m.def("spatial_transfer_categorical",
        &transfer_categorical_arrays,
        py::arg("data"),
        py::arg("indices"),
        py::arg("indptr"),
        py::arg("n"),
        py::arg("k"),
        py::arg("codes"),
        py::arg("num_classes"),
        py::arg("direction"));
  m.def("spatial_transfer_continuous",
        &transfer_continuous_arrays,
        py::arg("data"),
        py::arg("indices"),
        py::arg("indptr"),
        py::arg("n"),
        py::arg("k"),
        py::arg("values"),
        py::arg("direction"));
}

}  // namespace gw::python
