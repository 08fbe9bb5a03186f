// Uses a few installed headers and libraries: core, graph and io.
#include <cstdio>
#include <filesystem>
#include <span>
#include <vector>

#include "core/config.h"
#include "core/rng.h"
#include "graph/components.h"
#include "graph/knn.h"
#include "io/hdf5.h"

int main() {
  gw::Rng rng(7);
  std::vector<double> points(300 * 3);
  for (double& x : points) x = rng.uniform();
  gw::KnnGraphOptions options;
  options.k = 5;
  const gw::CsrGraph graph = gw::knn_graph(std::span<const double>(points), 300, 3, options);
  const gw::Components comps = gw::connected_components(graph);

  const auto file = std::filesystem::temp_directory_path() / "gwalign_consumer.h5";
  gw::io::Writer writer(file.string());
  const std::int64_t shape[] = {300, 3};
  writer.write_array<double>("/points", std::span<const double>(points), shape);
  writer.commit();
  const auto back = gw::io::Reader(file.string()).read_array<double>("/points", 2);
  std::filesystem::remove(file);

  std::printf("gwalign %s: %lld edges, connected components: %d, round trip %s\n",
              GW_VERSION_STRING, static_cast<long long>(graph.num_edges()), comps.count,
              back.data == points ? "ok" : "MISMATCH");
  return back.data == points ? 0 : 1;
}
