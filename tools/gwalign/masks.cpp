// `gwalign masks GRAPH.h5 PERTS.h5 -o OUT.h5 [--dense]`: per-sample edge masks of a multi-edge-type
// gene graph for a batch of perturbation sets (cellgraph/edge_masks.h), HDF5 in and out, so that
// training pipelines can precompute them. The file layouts are in kHelp below (and `--help`).
#include <cxxopts.hpp>

#include <cstdint>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "cellgraph/cuda_edge_masks.h"
#include "cellgraph/edge_masks.h"
#include "cli_util.h"
#include "interrupt.h"
#include "command.h"
#include "core/context.h"
#include "core/error.h"
#include "core/json.h"
#include "core/timer.h"
#include "io/hdf5.h"

namespace gw::cli {
namespace {

constexpr const char* kHelp =
    "Edge masks of a multi-edge-type gene graph for a batch of perturbation sets.\n"
    "An edge is dropped in a sample iff one of its endpoints is perturbed (direction ignored).\n"
    "\n"
    "GRAPH.h5[:/group]  the group (default /edge_types) holds one entry per edge type, processed\n"
    "  in name order, each one of:\n"
    "    <name>             an integer dataset [2, E]: row 0 sources, row 1 targets (edge_index)\n"
    "    <name>/edge_index  the same, inside a group\n"
    "    <name>             a CSR group (indptr, indices, data, shape [n, n]; scipy / anndata\n"
    "                       layout): edge e = CSR position e, rows are sources, data is ignored\n"
    "  and an integer attribute num_nodes (the gene count n) on the group (optional when every\n"
    "  type is a CSR group: then their shape gives n). Self loops and parallel edges are allowed.\n"
    "PERTS.h5[:/group]  the group (default /) holds ids (integer [K]: perturbed gene ids in\n"
    "  [0, n)) and ptr (integer [B + 1]: sample b perturbs ids[ptr[b] .. ptr[b+1]), ptr[0] = 0,\n"
    "  non-decreasing, ptr[B] = K). Empty samples and repeated ids are fine.\n"
    "OUT.h5  for every type /edge_types/<name>/ with attribute num_edges (E) and either\n"
    "    removed      int64 [R]: dropped positions b * E + e, ascending (the default form)\n"
    "    removed_ptr  int64 [B + 1]: sample b's positions are removed[removed_ptr[b] ..\n"
    "                 removed_ptr[b+1])\n"
    "  or, with --dense,\n"
    "    keep         bool [B, E]: keep[b, e] = false iff edge e is dropped in sample b\n"
    "  and root attributes num_nodes, num_samples, form (\"removed\" or \"dense\").\n"
    "Any bad input (an id outside [0, n), an inconsistent ptr, a malformed graph entry) stops\n"
    "the command with a one-line error before anything is written; OUT.h5 is written atomically.\n"
    "\n"
    "Example: gwalign masks graph.h5 perts.h5 -o masks.h5";

struct EdgeTypeEntry {
  std::string name;
  std::vector<Index> src, dst;  // edge_index entries
  io::CsrArray<float> csr;      // or a CSR group
  bool is_csr = false;
};

std::vector<EdgeTypeEntry> read_edge_types(const io::Reader& file,
                                           const std::string& group,
                                           Index& num_nodes) {
  GW_CHECK_CODE(file.kind(group) == io::ObjectKind::kGroup,
                ErrorCode::kNotFound,
                "graph file '" << file.path() << "' has no group '" << group
                               << "' (one entry per edge type); see gwalign masks --help");
  std::vector<EdgeTypeEntry> types;
  for (const std::string& name : file.list(group)) {
    const std::string path = (group == "/" ? "" : group) + "/" + name;
    EdgeTypeEntry entry;
    entry.name = name;
    std::string edge_index;
    if (file.kind(path) == io::ObjectKind::kDataset) {
      edge_index = path;
    } else if (file.kind(path + "/edge_index") == io::ObjectKind::kDataset) {
      edge_index = path + "/edge_index";
    } else if (file.exists(path + "/indptr") && file.exists(path + "/indices")) {
      entry.csr = file.read_csr<float>(path);
      entry.is_csr = true;
    } else {
      GW_THROW(ErrorCode::kBadData,
               "graph file '" << file.path() << "': '" << path
                              << "' is neither an edge_index dataset [2, E], a group with one, "
                                 "nor a CSR group; see gwalign masks --help");
    }
    if (!edge_index.empty()) {
      const io::Array<std::int32_t> array = file.read_array<std::int32_t>(edge_index, 2);
      GW_CHECK_CODE(array.shape[0] == 2,
                    ErrorCode::kBadData,
                    "graph file '" << file.path() << "': '" << edge_index << "' has shape ["
                                   << array.shape[0] << ", " << array.shape[1]
                                   << "]; an edge_index is [2, E]");
      const std::size_t m = static_cast<std::size_t>(array.shape[1]);
      entry.src.assign(array.data.begin(), array.data.begin() + m);
      entry.dst.assign(array.data.begin() + m, array.data.end());
    }
    types.push_back(std::move(entry));
  }
  GW_CHECK_CODE(!types.empty(),
                ErrorCode::kBadData,
                "graph file '" << file.path() << "': group '" << group << "' holds no edge type");

  if (file.has_attribute(group, "num_nodes")) {
    const io::Array<std::int64_t> n = file.read_attribute<std::int64_t>(group, "num_nodes");
    GW_CHECK_CODE(n.size() == 1 && n.data[0] >= 0 && n.data[0] <= INT32_MAX,
                  ErrorCode::kBadData,
                  "graph file '" << file.path() << "': attribute num_nodes of '" << group
                                 << "' must be one integer in [0, 2^31 - 1]");
    num_nodes = static_cast<Index>(n.data[0]);
  } else {
    num_nodes = -1;
    for (const EdgeTypeEntry& entry : types) {
      GW_CHECK_CODE(entry.is_csr,
                    ErrorCode::kNotFound,
                    "graph file '" << file.path() << "': group '" << group
                                   << "' needs an integer attribute num_nodes (the gene count)");
      if (num_nodes < 0) num_nodes = static_cast<Index>(entry.csr.rows);
    }
  }
  for (const EdgeTypeEntry& entry : types) {
    if (!entry.is_csr) continue;
    GW_CHECK_CODE(entry.csr.rows == num_nodes && entry.csr.cols == num_nodes,
                  ErrorCode::kBadData,
                  "graph file '" << file.path() << "': CSR edge type '" << entry.name
                                 << "' has shape [" << entry.csr.rows << ", " << entry.csr.cols
                                 << "] but the graph has " << num_nodes << " genes");
  }
  return types;
}

int run_masks(int argc, char** argv) {
  cxxopts::Options options(argv[0], kHelp);
  // clang-format off
  options.add_options()
      ("graph", "GRAPH.h5[:/group]", cxxopts::value<std::string>())
      ("perts", "PERTS.h5[:/group]", cxxopts::value<std::string>())
      ("o,output", "output HDF5 file", cxxopts::value<std::string>())
      ("dense", "write dense keep-masks instead of removal lists")
      ("backend", "cpu | cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("device", "CUDA device with --backend cuda", cxxopts::value<int>()->default_value("0"))
      ("threads", "CPU threads (0 = all)", cxxopts::value<int>()->default_value("0"))
      ("json", "print a JSON summary on stdout")
      ("h,help", "print this help");
  // clang-format on
  options.parse_positional({"graph", "perts"});
  options.positional_help("GRAPH.h5 PERTS.h5");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  GW_CHECK(args.count("graph") && args.count("perts"),
           "gwalign masks needs GRAPH.h5 and PERTS.h5; see --help");
  GW_CHECK(args.count("output"), "gwalign masks needs -o OUT.h5");
  const std::string backend_name = args["backend"].as<std::string>();
  const auto backend = backend_from_string(backend_name);
  GW_CHECK(backend.has_value(), "--backend must be cpu or cuda, got '" << backend_name << "'");
  const bool dense = args.count("dense") > 0;
  Stopwatch watch;

  const io::H5Path graph_path = io::parse_h5_path(args["graph"].as<std::string>());
  const io::H5Path perts_path = io::parse_h5_path(args["perts"].as<std::string>());
  const std::string output = args["output"].as<std::string>();
  check_output_path(output, "-o", {{graph_path.file, "GRAPH"}, {perts_path.file, "PERTS"}});
  Index num_nodes = 0;
  const io::Reader graph_file(graph_path.file);
  const std::vector<EdgeTypeEntry> entries = read_edge_types(
      graph_file, graph_path.object.empty() ? "/edge_types" : graph_path.object, num_nodes);

  const io::Reader perts_file(perts_path.file);
  const std::string perts_group = perts_path.object.empty() ? "" : perts_path.object;
  const io::Array<std::int32_t> ids = perts_file.read_array<std::int32_t>(perts_group + "/ids", 1);
  const io::Array<std::int64_t> ptr = perts_file.read_array<std::int64_t>(perts_group + "/ptr", 1);
  const PerturbationBatch batch{ids.data, ptr.data};
  validate_perturbations(batch, num_nodes, "perturbations in '" + perts_path.file + "'");
  const Index samples = batch.num_samples();

  EdgeMasker masker(num_nodes, EdgeMaskOptions{args["threads"].as<int>()});
  for (const EdgeTypeEntry& entry : entries) {
    if (entry.is_csr) {
      masker.add_type(entry.name, CsrGraphView{num_nodes, entry.csr.indptr, entry.csr.indices, {}});
    } else {
      masker.add_type(entry.name, EdgeListView{entry.src, entry.dst, {}});
    }
  }

  // From here on a temporary output exists: SIGINT / SIGTERM are deferred to the checks below, so
  // that the temporary is removed as the Interrupted exception unwinds (cli_util.h), and a file
  // size limit is a write error instead of a kill that would leave it behind.
  const InterruptScope interrupts;
  io::Writer out(output);
  Offset written = 0;
  const auto write_type_group = [&](int t) {
    throw_if_interrupted();  // stop between edge types, not only after the last
    const std::string group = "/edge_types/" + masker.name(t);
    out.ensure_group(group);
    out.set_attribute<std::int64_t>(group, "num_edges", masker.num_edges(t));
    return group;
  };
  if (*backend == Backend::kCpu) {
    if (dense) {
      for (int t = 0; t < masker.num_types(); ++t) {
        const std::vector<std::uint8_t> keep = masker.keep_mask(t, batch);
        const std::int64_t shape[] = {samples, masker.num_edges(t)};
        io::DatasetOptions as_bool;
        as_bool.as_bool = true;
        out.write_array<std::uint8_t>(write_type_group(t) + "/keep", keep, shape, as_bool);
        written += static_cast<Offset>(keep.size());
      }
    } else {
      const std::vector<RemovedEdges> removed = masker.removed_edges(batch);
      for (int t = 0; t < masker.num_types(); ++t) {
        const std::string group = write_type_group(t);
        const std::int64_t shape[] = {static_cast<std::int64_t>(removed[t].positions.size())};
        const std::int64_t ptr_shape[] = {samples + 1};
        out.write_array<std::int64_t>(group + "/removed", removed[t].positions, shape);
        out.write_array<std::int64_t>(group + "/removed_ptr", removed[t].ptr, ptr_shape);
        written += static_cast<Offset>(removed[t].positions.size());
      }
    }
  } else {
    CudaEdgeMasker cuda(masker, args["device"].as<int>());
    if (dense) {
      for (int t = 0; t < masker.num_types(); ++t) {
        const std::vector<std::uint8_t> keep = cuda.keep_mask(t, batch);
        const std::int64_t shape[] = {samples, masker.num_edges(t)};
        io::DatasetOptions as_bool;
        as_bool.as_bool = true;
        out.write_array<std::uint8_t>(write_type_group(t) + "/keep", keep, shape, as_bool);
        written += static_cast<Offset>(keep.size());
      }
    } else {
      const std::vector<RemovedEdges> removed = cuda.removed_edges(batch);
      for (int t = 0; t < masker.num_types(); ++t) {
        const std::string group = write_type_group(t);
        const std::int64_t shape[] = {static_cast<std::int64_t>(removed[t].positions.size())};
        const std::int64_t ptr_shape[] = {samples + 1};
        out.write_array<std::int64_t>(group + "/removed", removed[t].positions, shape);
        out.write_array<std::int64_t>(group + "/removed_ptr", removed[t].ptr, ptr_shape);
        written += static_cast<Offset>(removed[t].positions.size());
      }
    }
  }
  out.set_attribute<std::int64_t>("/", "num_nodes", num_nodes);
  out.set_attribute<std::int64_t>("/", "num_samples", samples);
  out.set_attribute("/", "form", dense ? "dense" : "removed");
  throw_if_interrupted();
  out.commit();

  JsonWriter json;
  json.begin_object()
      .member("output", out.path())
      .member("form", dense ? "dense" : "removed")
      .member("backend", backend_name)
      .member("genes", std::int64_t{num_nodes})
      .member("edge_types", masker.num_types())
      .member("edges", masker.total_edges())
      .member("samples", std::int64_t{samples})
      .member(dense ? "mask_entries" : "removed_edges", written)
      .member("seconds", watch.seconds())
      .end_object();
  if (args.count("json")) {
    std::cout << json.str() << "\n";
  } else {
    std::cout << "gwalign masks: " << samples << " samples x " << masker.num_types()
              << " edge types (" << masker.total_edges() << " edges) -> " << out.path() << " ("
              << (dense ? "dense keep-masks, " : "removal lists, ") << written
              << (dense ? " entries" : " removed edges") << ")\n";
  }
  return 0;
}

}  // namespace

GW_CLI_COMMAND("masks", "per-sample edge masks of a gene graph for perturbation sets", run_masks);

}  // namespace gw::cli
