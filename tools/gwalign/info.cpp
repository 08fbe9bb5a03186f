// `gwalign info FILE`: what an HDF5 / h5ad file holds, with the spec strings (X, obsm:KEY,
// obsp:KEY, obs:COL) that the align command's --source-rep / --target-rep / marginal options take.
#include <cxxopts.hpp>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"
#include "core/json.h"
#include "io/h5ad.h"
#include "io/hdf5.h"

namespace gw::cli {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::ostringstream out;
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? " x " : "") << shape[i];
  return out.str();
}

// "categorical", "string" or the numeric dtype of an obs column.
std::string obs_column_kind(const io::Reader& file, const std::string& column) {
  const std::string path = "/obs/" + column;
  const io::ObjectKind kind = file.kind(path);
  if (kind == io::ObjectKind::kNone) return "missing";
  if (kind == io::ObjectKind::kGroup || file.has_attribute(path, "categories")) {
    return "categorical";
  }
  return std::string(io::to_string(file.info(path).dtype));
}

void print_text(std::ostream& out,
                const std::string& file_name,
                const io::Reader& file,
                const std::vector<io::ObjectInfo>& objects,
                const io::H5adReader* h5ad) {
  out << file_name << ": HDF5 file, " << objects.size() << " objects\n";
  if (h5ad != nullptr) {
    out << "\nAnnData: n_obs = " << h5ad->n_obs() << ", n_vars = " << h5ad->n_vars() << "\n";
    const std::vector<io::H5adEntry> entries = h5ad->entries();
    if (!entries.empty()) {
      out << "\nMatrices (--source-rep / --target-rep):\n";
      std::size_t width = 0;
      for (const auto& entry : entries) width = std::max(width, entry.key.size());
      for (const auto& entry : entries) {
        out << "  " << std::left << std::setw(static_cast<int>(width) + 2) << entry.key;
        if (entry.format == io::MatrixFormat::kOther) {
          const std::string encoding = file.info(entry.object).encoding_type;
          out << "(not a matrix" << (encoding.empty() ? "" : ": " + encoding) << ")\n";
          continue;
        }
        out << std::setw(7) << io::to_string(entry.format) << std::setw(9)
            << io::to_string(entry.dtype) << shape_text(entry.shape) << "\n";
      }
    }
    const std::vector<std::string> columns = h5ad->obs_columns();
    if (!columns.empty()) {
      out << "\nobs columns (obs:COL for marginals; numeric only):\n";
      std::size_t width = 0;
      for (const auto& column : columns) width = std::max(width, column.size() + 4);
      for (const auto& column : columns) {
        out << "  " << std::left << std::setw(static_cast<int>(width) + 2) << ("obs:" + column)
            << obs_column_kind(file, column) << "\n";
      }
    }
    const std::vector<std::string> uns = h5ad->uns_keys();
    if (!uns.empty()) {
      out << "\nuns keys:";
      for (const auto& key : uns) out << " " << key;
      out << "\n";
    }
  }
  out << "\nObjects (plain HDF5 paths: FILE:/path):\n";
  std::size_t width = 0;
  for (const auto& object : objects) width = std::max(width, object.path.size());
  for (const auto& object : objects) {
    out << "  " << std::left << std::setw(static_cast<int>(width) + 2) << object.path
        << std::setw(9) << io::to_string(object.kind);
    if (object.kind == io::ObjectKind::kDataset || !object.shape.empty()) {
      out << std::setw(9) << io::to_string(object.dtype) << shape_text(object.shape);
    }
    if (!object.encoding_type.empty()) out << "  [" << object.encoding_type << "]";
    if (!object.filters.empty()) {
      out << "  (";
      for (std::size_t i = 0; i < object.filters.size(); ++i) {
        out << (i ? ", " : "") << object.filters[i];
      }
      out << ")";
    }
    out << "\n";
  }
}

void print_json(std::ostream& out,
                const std::string& file_name,
                const io::Reader& file,
                const std::vector<io::ObjectInfo>& objects,
                const io::H5adReader* h5ad) {
  JsonWriter json(/*pretty=*/true);
  auto shape_array = [&json](const std::vector<std::int64_t>& shape) {
    json.begin_array();
    for (std::int64_t d : shape) json.value(d);
    json.end_array();
  };
  json.begin_object().member("file", file_name);
  if (h5ad != nullptr) {
    json.key("anndata").begin_object();
    json.member("n_obs", h5ad->n_obs()).member("n_vars", h5ad->n_vars());
    json.key("matrices").begin_array();
    for (const auto& entry : h5ad->entries()) {
      json.begin_object()
          .member("spec", entry.key)
          .member("path", entry.object)
          .member("format", io::to_string(entry.format))
          .member("dtype", io::to_string(entry.dtype));
      json.key("shape");
      shape_array(entry.shape);
      json.end_object();
    }
    json.end_array();
    json.key("obs_columns").begin_array();
    for (const auto& column : h5ad->obs_columns()) {
      json.begin_object()
          .member("spec", "obs:" + column)
          .member("kind", obs_column_kind(file, column))
          .end_object();
    }
    json.end_array();
    json.key("uns_keys").begin_array();
    for (const auto& key : h5ad->uns_keys()) json.value(key);
    json.end_array();
    json.end_object();
  }
  json.key("objects").begin_array();
  for (const auto& object : objects) {
    json.begin_object()
        .member("path", object.path)
        .member("kind", io::to_string(object.kind))
        .member("dtype", io::to_string(object.dtype));
    json.key("shape");
    shape_array(object.shape);
    if (!object.encoding_type.empty()) json.member("encoding_type", object.encoding_type);
    json.key("filters").begin_array();
    for (const auto& filter : object.filters) json.value(filter);
    json.end_array();
    json.end_object();
  }
  json.end_array().end_object();
  out << json.str() << "\n";
}

int run_info(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "List what an HDF5 / h5ad file holds: datasets with dtypes and shapes, "
                           "and for AnnData files the X / obsm / obsp / layers matrices and obs "
                           "columns under the names the align command takes.");
  options.add_options()("file",
                        "FILE.h5ad, FILE.h5, or FILE.h5:/group to list one group",
                        cxxopts::value<std::string>())(
      "json", "print one JSON object instead of text")("h,help", "print this help");
  options.parse_positional({"file"});
  options.positional_help("FILE");
  const auto parsed = options.parse(argc, argv);
  if (parsed.count("help")) {
    std::cout
        << options.help()
        << "\nExamples:\n"
           "  gwalign info data/tiny_source.h5ad       # X, obsm, obsp, obs: the --rep names\n"
           "  gwalign info data/spiral_400.h5          # every dataset with dtype and shape\n"
           "  gwalign info plan.h5:/plan --json        # one group, as JSON\n";
    return 0;
  }
  if (!parsed.count("file")) {
    std::cerr << options.help() << "\n";
    return 64;
  }
  const io::H5Path where = io::parse_h5_path(parsed["file"].as<std::string>());
  const io::Reader file(where.file);
  const std::string group = where.object.empty() ? "/" : where.object;
  // A dataset path lists that dataset; a group path everything below it.
  const std::vector<io::ObjectInfo> objects = file.kind(group) == io::ObjectKind::kDataset
                                                  ? std::vector<io::ObjectInfo>{file.info(group)}
                                                  : file.describe(group);

  // AnnData summary only for a whole file that is one.
  std::optional<io::H5adReader> h5ad;
  if (where.object.empty()) {
    io::H5adReader candidate(where.file);
    if (candidate.is_anndata()) h5ad.emplace(std::move(candidate));
  }
  const io::H5adReader* summary = h5ad ? &*h5ad : nullptr;
  if (parsed.count("json")) {
    print_json(std::cout, where.file, file, objects, summary);
  } else {
    print_text(std::cout, where.file, file, objects, summary);
  }
  return 0;
}

}  // namespace

GW_CLI_COMMAND("info",
               "list what an HDF5 / h5ad file holds (datasets, X/obsm/obsp keys)",
               run_info);

}  // namespace gw::cli
