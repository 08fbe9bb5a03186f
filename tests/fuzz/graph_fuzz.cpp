// Fuzz harness "graph": CSR validation (gw::validate, gw::io::validate_csr) on arbitrary arrays,
// and the graph builders (build_csr with every policy, to_edge_list, build_incidence) on arbitrary
// edge lists. Whatever validation accepts must be safe for the algorithms that trust it
// (connected components, the normalized Laplacian, the symmetry test, batching); whatever it
// rejects must be rejected with gw::Error, never a crash. Built graphs are checked against their
// own invariants: a graph from build_csr passes validate(), and its edge list rebuilds it.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "fuzz_input.h"
#include "graph/batch.h"
#include "graph/builder.h"
#include "graph/components.h"
#include "graph/csr_graph.h"
#include "graph/incidence.h"
#include "graph/laplacian.h"
#include "io/hdf5.h"

namespace {

using gw::fuzz::FuzzInput;

// Small graphs keep each execution fast; the bugs of interest are in the bookkeeping, not size.
constexpr std::int64_t kMaxNodes = 64;
constexpr std::int64_t kMaxEdges = 256;

void require(bool condition) {
  if (!condition) std::abort();  // an invariant of a graph the library itself built is broken
}

float take_weight(FuzzInput& in) {
  const double w = in.take_double();
  return in.take_bool() ? static_cast<float>(w) : static_cast<float>(in.take_in(0, 8));
}

// Runs the algorithms that trust a validated graph.
void exercise_valid(const gw::CsrGraphView& graph) {
  const gw::Components components = gw::connected_components(graph);
  require(components.labels.size() == static_cast<std::size_t>(graph.num_nodes));
  (void)gw::normalized_laplacian(graph);
  (void)gw::build_incidence(graph);
  const gw::GraphBatch batch = gw::batch_graphs(std::span<const gw::CsrGraphView>(&graph, 1));
  const gw::CsrGraph back = gw::unbatch_graph(batch, 0);
  require(back.num_edges() == graph.num_edges());
}

// Raw CSR arrays, as a user's file could hold them.
void fuzz_raw_csr(FuzzInput& in) {
  const auto n = static_cast<gw::Index>(in.take_in(-2, kMaxNodes));
  const std::int64_t offsets = in.take_in(0, kMaxNodes + 3);
  std::vector<gw::Offset> row_offsets(static_cast<std::size_t>(offsets));
  gw::Offset running = 0;
  for (auto& offset : row_offsets) {
    // Mostly monotone (so deeper checks are reached), sometimes anything.
    running += in.take_in(0, 4);
    offset = in.take_bool() ? running : static_cast<gw::Offset>(in.take<std::int32_t>());
  }
  const std::int64_t edges = in.take_in(0, kMaxEdges);
  std::vector<gw::Index> cols(static_cast<std::size_t>(edges));
  for (auto& c : cols) c = static_cast<gw::Index>(in.take_in(-2, kMaxNodes + 2));
  std::vector<float> weights;
  if (in.take_bool()) {
    weights.resize(static_cast<std::size_t>(in.take_bool() ? edges : in.take_in(0, kMaxEdges)));
    for (auto& w : weights) w = take_weight(in);
  }
  const gw::CsrGraphView view{n, row_offsets, cols, weights};
  bool valid = true;
  try {
    gw::validate(view, "fuzz");
  } catch (const gw::Error&) {
    valid = false;
  }
  // (is_symmetric is left out here: it requires sorted columns, which validate() does not.)
  if (valid) exercise_valid(view);

  gw::io::CsrArray<float> csr;
  csr.rows = in.take_in(-1, kMaxNodes);
  csr.cols = in.take_in(-1, kMaxNodes);
  csr.indptr = row_offsets;
  csr.indices = cols;
  csr.data = weights.empty() ? std::vector<float>(cols.size(), 1.0f) : weights;
  try {
    gw::io::validate_csr(csr, "fuzz");
  } catch (const gw::Error&) {
  }
}

// Edge lists through the builders.
void fuzz_builders(FuzzInput& in) {
  const auto n = static_cast<gw::Index>(in.take_in(-1, kMaxNodes));
  const std::int64_t edges = in.take_in(0, kMaxEdges);
  std::vector<gw::Index> src(static_cast<std::size_t>(edges)), dst(src.size());
  for (std::size_t e = 0; e < src.size(); ++e) {
    src[e] = static_cast<gw::Index>(in.take_in(-1, kMaxNodes));
    dst[e] = static_cast<gw::Index>(in.take_in(-1, kMaxNodes));
  }
  std::vector<float> weights;
  if (in.take_bool()) {
    weights.resize(in.take_bool() ? src.size() : static_cast<std::size_t>(in.take_in(0, 8)));
    for (auto& w : weights) w = take_weight(in);
  }
  gw::BuildOptions options;
  options.symmetrize = in.take_bool();
  options.duplicates = static_cast<gw::DuplicatePolicy>(in.take_in(0, 3));
  options.self_loops = in.take_bool() ? gw::SelfLoopPolicy::kDrop : gw::SelfLoopPolicy::kKeep;
  const gw::EdgeListView list{src, dst, weights};
  try {
    (void)gw::build_incidence(n, list);
  } catch (const gw::Error&) {
  }
  gw::CsrGraph graph;
  try {
    graph = gw::build_csr(n, list, options);
  } catch (const gw::Error&) {
    return;
  }
  gw::validate(graph, "build_csr output");  // throws (an uncaught error: a finding) if broken
  exercise_valid(graph);
  if (options.symmetrize) require(gw::is_symmetric(graph));
  const gw::EdgeList round_trip = gw::to_edge_list(graph);
  const gw::CsrGraph rebuilt = gw::build_csr(graph.num_nodes(), round_trip.view());
  require(rebuilt.row_offsets() == graph.row_offsets());
  require(rebuilt.col_indices() == graph.col_indices());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  if (in.take_bool()) {
    fuzz_raw_csr(in);
  } else {
    fuzz_builders(in);
  }
  return 0;
}
