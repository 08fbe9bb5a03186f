#include "pairwise/collection.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/error.h"
#include "io/hdf5.h"
#include "solver/inputs.h"

namespace gw::pairwise {
namespace {

// "0" .. "N-1" only: a leading zero or sign would let two names map to one index.
bool parse_index(const std::string& name, Index& out) {
  if (name.empty() || (name.size() > 1 && name[0] == '0')) return false;
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data(), end, out);
  return ec == std::errc() && ptr == end && out >= 0;
}

Space read_space(const io::Reader& reader, const std::string& group) {
  const std::string where = "'" + reader.path() + "' " + group;
  const bool has_points = reader.exists(group + "/points");
  const bool has_graph = reader.exists(group + "/graph");
  const bool has_distances = reader.exists(group + "/distances");
  const int kinds = int{has_points} + int{has_graph} + int{has_distances};
  GW_CHECK_CODE(kinds >= 1,
                ErrorCode::kNotFound,
                where << " holds none of points, graph, distances; write exactly one of them "
                         "(points: n x d; graph: a CSR group; distances: n x n)");
  GW_CHECK_CODE(kinds == 1,
                ErrorCode::kBadData,
                where << " holds more than one of points, graph, distances; keep exactly one");
  Space space;
  if (has_points) {
    const std::string path = group + "/points";
    io::Array<double> points = reader.read_array<double>(path, 2);
    GW_CHECK_CODE(points.rows() >= 2 && points.cols() >= 1,
                  ErrorCode::kBadData,
                  "'" << reader.path() << "' " << path << " is " << points.rows() << " x "
                      << points.cols() << "; a space needs at least 2 points of dimension >= 1");
    SideGeometry side = side_from_points(std::move(points.data),
                                         static_cast<Index>(points.rows()),
                                         static_cast<int>(points.cols()),
                                         "points " + path + " in '" + reader.path() + "'");
    space.geometry = std::move(side.geometry);
    space.description = group + ": " + side.description;
  } else if (has_graph) {
    const std::string path = group + "/graph";
    GW_CHECK_CODE(reader.kind(path) == io::ObjectKind::kGroup,
                  ErrorCode::kBadData,
                  "'" << reader.path() << "' " << path
                      << " is a dataset; a graph is a CSR group (data, indices, indptr, shape)");
    const io::CsrArray<float> csr = reader.read_csr<float>(path);
    GW_CHECK_CODE(csr.rows == csr.cols && csr.rows >= 2,
                  ErrorCode::kBadData,
                  "'" << reader.path() << "' " << path << " is " << csr.rows << " x " << csr.cols
                      << "; a graph must be square with at least 2 nodes");
    SideGeometry side = side_from_csr_graph(static_cast<Index>(csr.rows),
                                            csr.indptr,
                                            csr.indices,
                                            csr.data,
                                            "graph " + path + " in '" + reader.path() + "'");
    space.geometry = std::move(side.geometry);
    space.description = group + ": " + side.description;
  } else {
    const std::string path = group + "/distances";
    io::Array<float> matrix = reader.read_array<float>(path, 2);
    GW_CHECK_CODE(matrix.rows() == matrix.cols() && matrix.rows() >= 2,
                  ErrorCode::kBadData,
                  "'" << reader.path() << "' " << path << " is " << matrix.rows() << " x "
                      << matrix.cols() << "; a distance matrix must be square, at least 2 x 2");
    SideGeometry side =
        side_from_distance_matrix(std::move(matrix.data),
                                  static_cast<Index>(matrix.rows()),
                                  /*sparse=*/false,
                                  1,
                                  "distances " + path + " in '" + reader.path() + "'");
    space.geometry = std::move(side.geometry);
    space.description = group + ": " + side.description;
  }
  const Index n = space.geometry.num_nodes();
  const std::string weights_path = group + "/weights";
  if (reader.exists(weights_path)) {
    io::Array<double> weights = reader.read_array<double>(weights_path, 1);
    GW_CHECK_CODE(weights.rows() == n,
                  ErrorCode::kBadData,
                  "'" << reader.path() << "' " << weights_path << " has " << weights.rows()
                      << " entries for a space of " << n << " nodes; give one weight per node");
    double total = 0.0;
    for (std::size_t i = 0; i < weights.data.size(); ++i) {
      const double w = weights.data[i];
      GW_CHECK_CODE(std::isfinite(w) && w >= 0.0,
                    ErrorCode::kBadData,
                    "'" << reader.path() << "' " << weights_path << "[" << i << "] = " << w
                        << "; weights must be finite and >= 0");
      total += w;
    }
    GW_CHECK_CODE(total > 0.0,
                  ErrorCode::kBadData,
                  "'" << reader.path() << "' " << weights_path
                      << " sums to 0; give at least one positive weight");
    space.weights = std::move(weights.data);
  }
  return space;
}

}  // namespace

Collection read_collection(const std::string& path) {
  const io::Reader reader(path);
  GW_CHECK_CODE(reader.kind("/spaces") == io::ObjectKind::kGroup,
                ErrorCode::kNotFound,
                "'" << path << "' has no group /spaces; write each space as /spaces/<i>/points "
                    << "(or graph, or distances), i = 0 .. N-1 (see 'gwalign generate shapes')");
  const std::vector<std::string> names = reader.list("/spaces");
  GW_CHECK_CODE(names.size() >= 2,
                ErrorCode::kBadData,
                "'" << path << "' /spaces holds " << names.size()
                    << " space(s); pairwise distances need at least 2");
  const Index count = static_cast<Index>(names.size());
  std::vector<bool> seen(count, false);
  for (const std::string& name : names) {
    Index index = -1;
    GW_CHECK_CODE(parse_index(name, index) && index < count,
                  ErrorCode::kBadData,
                  "'" << path << "' /spaces/" << name << " is not named by an index 0 .. "
                      << count - 1 << "; name the " << count << " spaces 0, 1, ..., " << count - 1);
    seen[index] = true;
  }
  // With count names that are all valid distinct indices below count, every index is present.
  Collection collection;
  collection.path = path;
  collection.spaces.reserve(count);
  for (Index i = 0; i < count; ++i) {
    collection.spaces.push_back(read_space(reader, "/spaces/" + std::to_string(i)));
  }
  if (reader.exists("/labels")) {
    io::Array<std::int64_t> labels = reader.read_array<std::int64_t>("/labels", 1);
    GW_CHECK_CODE(labels.rows() == count,
                  ErrorCode::kBadData,
                  "'" << path << "' /labels has " << labels.rows() << " entries for " << count
                      << " spaces; give one integer label per space (or remove /labels)");
    collection.labels = std::move(labels.data);
  }
  return collection;
}

void write_point_collection(const std::string& path,
                            std::span<const PointCloud> clouds,
                            std::span<const std::int64_t> labels,
                            const std::vector<std::pair<std::string, std::string>>& attributes) {
  GW_CHECK(
      labels.empty() || labels.size() == clouds.size(),
      "write_point_collection: " << labels.size() << " labels for " << clouds.size() << " clouds");
  io::Writer out(path);
  out.ensure_group("/spaces");
  for (std::size_t i = 0; i < clouds.size(); ++i) {
    const PointCloud& cloud = clouds[i];
    GW_CHECK(cloud.points.size() == static_cast<std::size_t>(cloud.n) * cloud.d,
             "write_point_collection: cloud " << i << " has " << cloud.points.size()
                                              << " values for " << cloud.n << " x " << cloud.d);
    const std::int64_t shape[2] = {cloud.n, cloud.d};
    out.write_array<double>(
        "/spaces/" + std::to_string(i) + "/points", std::span<const double>(cloud.points), shape);
  }
  if (!labels.empty()) {
    const std::int64_t shape[1] = {static_cast<std::int64_t>(labels.size())};
    out.write_array<std::int64_t>("/labels", labels, shape);
  }
  for (const auto& [name, value] : attributes) out.set_attribute("/", name, value);
  out.commit();
}

}  // namespace gw::pairwise
