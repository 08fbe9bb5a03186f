#include "cellgraph/edge_masks.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <utility>

#include <omp.h>

#include "core/context.h"
#include "core/error.h"

namespace gw {

namespace {

// Beyond this many distinct genes per sample the pairwise merges (O(k * output)) lose to one
// sort of the concatenated lists (O(output log output)).
constexpr std::size_t kMaxPairwiseMerge = 8;
// Removal lists of fewer incident entries than this run on one thread (see removal_lists).
constexpr Offset kParallelMinEntries = Offset{1} << 20;

// Distinct genes of every sample, ascending within a sample: genes[gptr[b] .. gptr[b+1]).
struct DistinctGenes {
  std::vector<Index> genes;
  std::vector<Offset> gptr;
};

DistinctGenes distinct_genes(const PerturbationBatch& batch) {
  const Index samples = batch.num_samples();
  DistinctGenes out;
  out.genes.assign(batch.ids.begin(), batch.ids.end());
  out.gptr.assign(static_cast<std::size_t>(samples) + 1, 0);
  Offset write = 0;
  for (Index b = 0; b < samples; ++b) {
    auto first = out.genes.begin() + batch.ptr[b];
    auto last = out.genes.begin() + batch.ptr[b + 1];
    std::sort(first, last);
    last = std::unique(first, last);
    // Compact in place: sample b's distinct genes move left to start at `write` (write <= ptr[b]).
    write = std::copy(first, last, out.genes.begin() + write) - out.genes.begin();
    out.gptr[b + 1] = write;
  }
  out.genes.resize(write);
  return out;
}

// out = the union of the ascending, duplicate-free lists a and b (ascending, duplicate-free).
// Branch-free: each step emits the smaller head and advances every list whose head it was, so
// an edge present in both lists is emitted once. The data-dependent branches of std::set_union
// mispredict about half the time on these interleaved lists.
std::size_t merge_union(std::span<const Offset> a, std::span<const Offset> b, Offset* out) {
  std::size_t i = 0, j = 0, o = 0;
  while (i < a.size() && j < b.size()) {
    const Offset x = a[i];
    const Offset y = b[j];
    out[o++] = x < y ? x : y;
    // i advances iff x <= y, j iff y <= x, from sign bits (ids < 2^62, no overflow): written as
    // arithmetic because GCC turns the comparisons into an unpredictable branch.
    i += 1 - (static_cast<std::uint64_t>(y - x) >> 63);
    j += 1 - (static_cast<std::uint64_t>(x - y) >> 63);
  }
  for (; i < a.size(); ++i) out[o++] = a[i];
  for (; j < b.size(); ++j) out[o++] = b[j];
  return o;
}

// The union of the incidence lists of `genes` (each ascending and duplicate-free), ascending and
// duplicate-free. An edge between two perturbed genes appears in both lists; the union keeps it
// once. Lists are merged shortest first, so long lists are copied fewer times. The result lives
// in one of the two scratch vectors (which only grow, so steady-state calls never allocate).
std::span<const Offset> union_of_incident(const Incidence& incidence,
                                          std::span<const Index> genes,
                                          std::vector<Offset>& a,
                                          std::vector<Offset>& b) {
  if (genes.empty()) return {};
  if (genes.size() == 1) return incidence.edges_of(genes[0]);
  std::size_t total = 0;
  for (Index g : genes) total += incidence.edges_of(g).size();
  if (a.size() < total) a.resize(total);
  if (b.size() < total) b.resize(total);
  if (genes.size() > kMaxPairwiseMerge) {
    std::size_t size = 0;
    for (Index g : genes) {
      const auto list = incidence.edges_of(g);
      size = std::copy(list.begin(), list.end(), a.begin() + size) - a.begin();
    }
    std::sort(a.begin(), a.begin() + size);
    size = std::unique(a.begin(), a.begin() + size) - a.begin();
    return std::span<const Offset>(a.data(), size);
  }
  std::array<std::span<const Offset>, kMaxPairwiseMerge> lists;
  for (std::size_t i = 0; i < genes.size(); ++i) lists[i] = incidence.edges_of(genes[i]);
  std::sort(lists.begin(), lists.begin() + genes.size(), [](const auto& x, const auto& y) {
    return x.size() < y.size();
  });
  Offset* in = a.data();
  Offset* out = b.data();
  std::size_t size = merge_union(lists[0], lists[1], in);
  for (std::size_t i = 2; i < genes.size(); ++i) {
    size = merge_union(std::span<const Offset>(in, size), lists[i], out);
    std::swap(in, out);
  }
  return std::span<const Offset>(in, size);
}

// Per-thread results of the merge tasks: every task's list is appended to its thread's arena.
struct TaskList {
  int thread = 0;
  std::size_t offset = 0;
  std::size_t size = 0;
};

// One edge type as removal_lists sees it.
struct TypeLists {
  const Incidence* incidence;
  Offset num_edges;
};

// Removal lists of the given types for the batch's distinct genes. One task per (type, sample):
// its merged list goes to the thread's arena, then, once every count is known, all lists are
// placed (plus b * E) in their final arrays; one parallel region. Tasks are small (a few thousand
// ids), so dynamic scheduling balances the hub's samples against the rest.
std::vector<RemovedEdges> removal_lists(const std::vector<TypeLists>& types,
                                        const DistinctGenes& distinct,
                                        Index samples,
                                        int team) {
  const int num_types = static_cast<int>(types.size());
  const Offset tasks = static_cast<Offset>(num_types) * samples;
  // Small batches run on one thread: B = 64 triples on the yeast graph merge ~150k entries in
  // ~0.8 ms, and a thread team's barriers cost more than that whenever another process holds a
  // core (measured: 17 ms median with two threads on the shared 2-core benchmark machine).
  Offset entries = 0;
  for (const TypeLists& type : types) {
    for (const Index g : distinct.genes) {
      entries += type.incidence->offsets[g + 1] - type.incidence->offsets[g];
    }
  }
  if (entries < kParallelMinEntries) team = 1;
  std::vector<TaskList> lists(tasks);
  std::vector<std::vector<Offset>> arenas(team);
  std::vector<RemovedEdges> out(num_types);
#pragma omp parallel num_threads(team)
  {
    const int me = omp_get_thread_num();
    std::vector<Offset>& arena = arenas[me];
    std::vector<Offset> a, b;
#pragma omp for schedule(dynamic, 4)
    for (Offset task = 0; task < tasks; ++task) {
      const int t = static_cast<int>(task / samples);
      const Index s = static_cast<Index>(task % samples);
      const std::span<const Index> genes(distinct.genes.data() + distinct.gptr[s],
                                         distinct.gptr[s + 1] - distinct.gptr[s]);
      const std::span<const Offset> list = union_of_incident(*types[t].incidence, genes, a, b);
      lists[task] = {me, arena.size(), list.size()};
      arena.insert(arena.end(), list.begin(), list.end());
    }
#pragma omp single
    for (int t = 0; t < num_types; ++t) {
      RemovedEdges& r = out[t];
      r.num_edges = types[t].num_edges;
      r.ptr.assign(static_cast<std::size_t>(samples) + 1, 0);
      for (Index s = 0; s < samples; ++s) {
        r.ptr[s + 1] =
            r.ptr[s] + static_cast<Offset>(lists[static_cast<Offset>(t) * samples + s].size);
      }
      r.positions.resize(r.ptr[samples]);
    }
#pragma omp for schedule(dynamic, 8)
    for (Offset task = 0; task < tasks; ++task) {
      const int t = static_cast<int>(task / samples);
      const Index s = static_cast<Index>(task % samples);
      RemovedEdges& r = out[t];
      const Offset base = static_cast<Offset>(s) * r.num_edges;
      const TaskList& list = lists[task];
      const Offset* src = arenas[list.thread].data() + list.offset;
      Offset* dst = r.positions.data() + r.ptr[s];
      for (std::size_t i = 0; i < list.size; ++i) dst[i] = base + src[i];
    }
  }
  return out;
}

Offset checked_batch_nodes(Index num_samples, Index num_nodes, const char* what) {
  const Offset total = static_cast<Offset>(num_samples) * num_nodes;
  GW_CHECK(total <= std::numeric_limits<Index>::max(),
           what << ": " << num_samples << " samples x " << num_nodes
                << " genes exceed the node id range (2^31 - 1); filter smaller batches");
  return total;
}

}  // namespace

void validate_perturbations(const PerturbationBatch& batch,
                            Index num_nodes,
                            std::string_view what) {
  GW_CHECK(!batch.ptr.empty(),
           what << ": ptr is empty; it needs B + 1 entries (a batch of no samples is ptr = [0])");
  GW_CHECK(batch.ptr[0] == 0, what << ": ptr[0] = " << batch.ptr[0] << "; it must be 0");
  const Index samples = batch.num_samples();
  for (Index b = 0; b < samples; ++b) {
    GW_CHECK(batch.ptr[b + 1] >= batch.ptr[b],
             what << ": ptr decreases at sample " << b << " (ptr[" << b << "] = " << batch.ptr[b]
                  << ", ptr[" << b + 1 << "] = " << batch.ptr[b + 1]
                  << "); ptr must be non-decreasing");
  }
  GW_CHECK(batch.ptr[samples] == static_cast<Offset>(batch.ids.size()),
           what << ": ptr ends at " << batch.ptr[samples] << " but there are " << batch.ids.size()
                << " ids; ptr[B] must equal the id count");
  std::ostringstream bad;
  Offset bad_count = 0;
  for (Index b = 0; b < samples; ++b) {
    for (Offset i = batch.ptr[b]; i < batch.ptr[b + 1]; ++i) {
      const Index id = batch.ids[i];
      if (id >= 0 && id < num_nodes) continue;
      bad << (bad_count > 0 ? ", " : "") << id << " (sample " << b << ")";
      ++bad_count;
    }
  }
  if (bad_count > 0) {
    GW_THROW(ErrorCode::kBadData,
             what << ": " << bad_count << " gene id" << (bad_count > 1 ? "s" : "")
                  << " outside [0, " << num_nodes << "): " << bad.str()
                  << "; ids must index the graph's genes");
  }
}

EdgeMasker::EdgeMasker(Index num_nodes, const EdgeMaskOptions& options)
    : num_nodes_(num_nodes), options_(options) {
  GW_CHECK(num_nodes >= 0, "EdgeMasker: gene count must be >= 0, got " << num_nodes);
  resolve_threads(options.threads);  // rejects a negative count now rather than per call
}

int EdgeMasker::add_type(std::string name, const EdgeListView& edges) {
  GW_CHECK(edges.src.size() == edges.dst.size(),
           "EdgeMasker::add_type('" << name << "'): " << edges.src.size() << " sources but "
                                    << edges.dst.size() << " targets");
  GW_CHECK(edges.src.size() <= static_cast<std::size_t>(std::numeric_limits<Index>::max()),
           "EdgeMasker::add_type('" << name << "'): " << edges.src.size()
                                    << " edges exceed 2^31 - 1 per type; split the type");
  Type type;
  type.name = std::move(name);
  type.incidence = build_incidence(num_nodes_, edges);  // validates the endpoints
  type.src.assign(edges.src.begin(), edges.src.end());
  type.dst.assign(edges.dst.begin(), edges.dst.end());
  for (Index g = 0; g < num_nodes_; ++g) {
    type.max_incident =
        std::max(type.max_incident, type.incidence.offsets[g + 1] - type.incidence.offsets[g]);
  }
  types_.push_back(std::move(type));
  return static_cast<int>(types_.size()) - 1;
}

int EdgeMasker::add_type(std::string name, const CsrGraphView& graph) {
  GW_CHECK(graph.num_nodes == num_nodes_,
           "EdgeMasker::add_type('" << name << "'): the CSR graph has " << graph.num_nodes
                                    << " nodes but the gene graph has " << num_nodes_);
  validate(graph, "edge type '" + name + "'");
  const EdgeList edges = to_edge_list(graph);
  return add_type(std::move(name), edges.view());
}

const EdgeMasker::Type& EdgeMasker::type_at(int type) const {
  GW_CHECK(type >= 0 && type < num_types(),
           "EdgeMasker: edge type " << type << " outside [0, " << num_types() << ")");
  return types_[type];
}

int EdgeMasker::threads() const { return resolve_threads(options_.threads); }

const std::string& EdgeMasker::name(int type) const { return type_at(type).name; }
Offset EdgeMasker::num_edges(int type) const {
  return static_cast<Offset>(type_at(type).src.size());
}
EdgeListView EdgeMasker::edges(int type) const {
  const Type& t = type_at(type);
  return {t.src, t.dst, {}};
}
const Incidence& EdgeMasker::incidence(int type) const { return type_at(type).incidence; }
Offset EdgeMasker::max_incident(int type) const { return type_at(type).max_incident; }
Offset EdgeMasker::total_edges() const {
  Offset total = 0;
  for (const Type& t : types_) total += static_cast<Offset>(t.src.size());
  return total;
}

std::vector<RemovedEdges> EdgeMasker::removed_edges(const PerturbationBatch& batch) const {
  validate_perturbations(batch, num_nodes_);
  std::vector<TypeLists> types;
  for (const Type& t : types_) types.push_back({&t.incidence, static_cast<Offset>(t.src.size())});
  return removal_lists(types, distinct_genes(batch), batch.num_samples(), threads());
}

RemovedEdges EdgeMasker::removed_edges(int type, const PerturbationBatch& batch) const {
  const Type& t = type_at(type);
  validate_perturbations(batch, num_nodes_);
  const std::vector<TypeLists> types = {{&t.incidence, static_cast<Offset>(t.src.size())}};
  return std::move(removal_lists(types, distinct_genes(batch), batch.num_samples(), threads())[0]);
}

void EdgeMasker::keep_mask(int type,
                           const PerturbationBatch& batch,
                           std::span<std::uint8_t> keep) const {
  const Type& t = type_at(type);
  validate_perturbations(batch, num_nodes_);
  const Index samples = batch.num_samples();
  const Offset edges = static_cast<Offset>(t.src.size());
  GW_CHECK(static_cast<Offset>(keep.size()) == static_cast<Offset>(samples) * edges,
           "EdgeMasker::keep_mask('" << t.name << "'): the output holds " << keep.size()
                                     << " bytes; it needs B * E = " << samples << " * " << edges);
  const int team = threads();
  // Per sample: fill, then clear the removals while the sample's E bytes are still in cache
  // (E <= ~1 MB for the largest yeast type); repeated genes clear the same bytes again, harmlessly.
  // With fewer samples than threads the fill is split across the team first instead.
  if (samples >= team) {
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
    for (Index b = 0; b < samples; ++b) {
      std::uint8_t* mask = keep.data() + static_cast<Offset>(b) * edges;
      // An edge type with no edges has an empty (possibly null) mask: memset must not see it.
      if (edges > 0) std::memset(mask, 1, static_cast<std::size_t>(edges));
      for (Offset i = batch.ptr[b]; i < batch.ptr[b + 1]; ++i) {
        for (const Offset e : t.incidence.edges_of(batch.ids[i])) mask[e] = 0;
      }
    }
    return;
  }
  const Offset total = static_cast<Offset>(keep.size());
  const Offset chunk = std::max<Offset>(1 << 16, (total + team - 1) / team);
  const Offset chunks = (total + chunk - 1) / chunk;
#pragma omp parallel for num_threads(team) schedule(static, 1)
  for (Offset c = 0; c < chunks; ++c) {
    const Offset begin = c * chunk;
    std::memset(keep.data() + begin, 1, static_cast<std::size_t>(std::min(chunk, total - begin)));
  }
  for (Index b = 0; b < samples; ++b) {
    std::uint8_t* mask = keep.data() + static_cast<Offset>(b) * edges;
    for (Offset i = batch.ptr[b]; i < batch.ptr[b + 1]; ++i) {
      for (const Offset e : t.incidence.edges_of(batch.ids[i])) mask[e] = 0;
    }
  }
}

std::vector<std::uint8_t> EdgeMasker::keep_mask(int type, const PerturbationBatch& batch) const {
  const Offset edges = num_edges(type);
  validate_perturbations(batch, num_nodes_);
  std::vector<std::uint8_t> keep(static_cast<std::size_t>(batch.num_samples() * edges));
  keep_mask(type, batch, keep);
  return keep;
}

BatchEdgeList EdgeMasker::filter_edges(int type, const RemovedEdges& removed) const {
  const Type& t = type_at(type);
  const Offset edges = static_cast<Offset>(t.src.size());
  const char* what = "EdgeMasker::filter_edges";
  GW_CHECK(removed.num_edges == edges,
           what << "('" << t.name << "'): the removal list is for a type of " << removed.num_edges
                << " edges but this type has " << edges);
  GW_CHECK(!removed.ptr.empty() && removed.ptr[0] == 0,
           what << ": the removal list's ptr must start at 0 (B + 1 entries)");
  const Index samples = removed.num_samples();
  GW_CHECK(removed.ptr[samples] == static_cast<Offset>(removed.positions.size()),
           what << ": the removal list's ptr ends at " << removed.ptr[samples] << " but it holds "
                << removed.positions.size() << " positions");
  for (Index b = 0; b < samples; ++b) {
    GW_CHECK(removed.ptr[b + 1] >= removed.ptr[b],
             what << ": the removal list's ptr decreases at sample " << b);
    const Offset lo = static_cast<Offset>(b) * edges;
    for (Offset i = removed.ptr[b]; i < removed.ptr[b + 1]; ++i) {
      const Offset p = removed.positions[i];
      GW_CHECK(p >= lo && p < lo + edges && (i == removed.ptr[b] || p > removed.positions[i - 1]),
               what << ": removal position " << p << " (entry " << i << ") is not ascending "
                    << "inside sample " << b << "'s range [" << lo << ", " << lo + edges << ")");
    }
  }
  checked_batch_nodes(samples, num_nodes_, what);

  BatchEdgeList out;
  out.ptr.assign(static_cast<std::size_t>(samples) + 1, 0);
  for (Index b = 0; b < samples; ++b) {
    out.ptr[b + 1] = out.ptr[b] + edges - (removed.ptr[b + 1] - removed.ptr[b]);
  }
  const Offset total = out.ptr[samples];
  out.src.resize(total);
  out.dst.resize(total);
  out.edge_ids.resize(total);
#pragma omp parallel for num_threads(threads()) schedule(dynamic, 1)
  for (Index b = 0; b < samples; ++b) {
    const Offset base = static_cast<Offset>(b) * edges;
    const Index node_base = static_cast<Index>(static_cast<Offset>(b) * num_nodes_);
    const Offset* next_removed = removed.positions.data() + removed.ptr[b];
    const Offset* end_removed = removed.positions.data() + removed.ptr[b + 1];
    Offset w = out.ptr[b];
    for (Offset e = 0; e < edges; ++e) {
      if (next_removed != end_removed && *next_removed == base + e) {
        ++next_removed;
        continue;
      }
      out.src[w] = node_base + t.src[e];
      out.dst[w] = node_base + t.dst[e];
      out.edge_ids[w] = e;
      ++w;
    }
  }
  return out;
}

BatchEdgeList EdgeMasker::filter_edges(int type,
                                       std::span<const std::uint8_t> keep,
                                       Index num_samples) const {
  const Type& t = type_at(type);
  const Offset edges = static_cast<Offset>(t.src.size());
  const char* what = "EdgeMasker::filter_edges";
  GW_CHECK(num_samples >= 0, what << ": sample count must be >= 0, got " << num_samples);
  GW_CHECK(static_cast<Offset>(keep.size()) == static_cast<Offset>(num_samples) * edges,
           what << "('" << t.name << "'): the mask holds " << keep.size()
                << " bytes; it needs B * E = " << num_samples << " * " << edges);
  checked_batch_nodes(num_samples, num_nodes_, what);
  BatchEdgeList out;
  out.ptr.assign(static_cast<std::size_t>(num_samples) + 1, 0);
  std::vector<Offset> kept(num_samples, 0);
#pragma omp parallel for num_threads(threads()) schedule(dynamic, 1)
  for (Index b = 0; b < num_samples; ++b) {
    const std::uint8_t* mask = keep.data() + static_cast<Offset>(b) * edges;
    Offset count = 0;
    for (Offset e = 0; e < edges; ++e) count += mask[e] != 0 ? 1 : 0;
    kept[b] = count;
  }
  for (Index b = 0; b < num_samples; ++b) out.ptr[b + 1] = out.ptr[b] + kept[b];
  const Offset total = out.ptr[num_samples];
  out.src.resize(total);
  out.dst.resize(total);
  out.edge_ids.resize(total);
#pragma omp parallel for num_threads(threads()) schedule(dynamic, 1)
  for (Index b = 0; b < num_samples; ++b) {
    const std::uint8_t* mask = keep.data() + static_cast<Offset>(b) * edges;
    const Index node_base = static_cast<Index>(static_cast<Offset>(b) * num_nodes_);
    Offset w = out.ptr[b];
    for (Offset e = 0; e < edges; ++e) {
      if (mask[e] == 0) continue;
      out.src[w] = node_base + t.src[e];
      out.dst[w] = node_base + t.dst[e];
      out.edge_ids[w] = e;
      ++w;
    }
  }
  return out;
}

}  // namespace gw
