// Categorical obs columns of .h5ad files (h5ad.h): anndata 0.8's group encoding and 0.7's codes
// with /obs/__categories, read; the 0.8 encoding written.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/error.h"
#include "io/h5ad.h"

namespace gw::io {
namespace {

std::string obs_object(std::string_view name) { return "/obs/" + std::string(name); }

// Categories stored as strings or as numbers (anndata writes integer / float categories as a
// numeric array): numbers become their shortest text.
std::vector<std::string> read_categories(const Reader& file, const std::string& object) {
  if (file.info(object).dtype == DType::kString) return file.read_strings(object);
  const Array<double> values = file.read_array<double>(object, 1);
  std::vector<std::string> out;
  for (double v : values.data) {
    std::ostringstream text;
    text.precision(17);
    if (v == std::floor(v) && std::abs(v) < 1e15) {
      text << static_cast<long long>(v);
    } else {
      text << v;
    }
    out.push_back(text.str());
  }
  return out;
}

std::vector<std::int32_t> read_codes(const Reader& file, const std::string& object,
                                     std::size_t categories, std::string_view name,
                                     const std::string& path) {
  Array<std::int32_t> codes = file.read_array<std::int32_t>(object, 1);
  for (std::size_t i = 0; i < codes.data.size(); ++i) {
    GW_CHECK_CODE(codes.data[i] >= -1 && codes.data[i] < static_cast<std::int64_t>(categories),
                  ErrorCode::kBadData,
                  "obs column '" << name << "' in '" << path << "': code " << codes.data[i]
                                 << " of row " << i << " is outside [-1, " << categories << ")");
  }
  return std::move(codes.data);
}

}  // namespace

bool H5adReader::obs_column_is_categorical(std::string_view name) const {
  const std::string object = obs_object(name);
  const ObjectKind kind = file_.kind(object);
  if (kind == ObjectKind::kNone) {
    std::string listed;
    for (const std::string& c : obs_columns()) listed += (listed.empty() ? "" : ", ") + c;
    GW_THROW(ErrorCode::kNotFound, "obs column '" << name << "' not found in '" << path()
                                                  << "'; obs columns: " << listed);
  }
  if (kind == ObjectKind::kGroup) return true;
  if (file_.has_attribute(object, "categories")) return true;
  if (file_.exists("/obs/__categories/" + std::string(name))) return true;
  return file_.info(object).dtype == DType::kString;
}

Categorical H5adReader::read_obs_categorical(std::string_view name) const {
  const std::string object = obs_object(name);
  GW_CHECK_CODE(obs_column_is_categorical(name), ErrorCode::kBadData,
                "obs column '" << name << "' in '" << path()
                               << "' is numeric; a categorical or string column is needed");
  Categorical out;
  if (file_.kind(object) == ObjectKind::kGroup) {
    GW_CHECK_CODE(file_.exists(object + "/categories") && file_.exists(object + "/codes"),
                  ErrorCode::kBadData,
                  "obs column '" << name << "' in '" << path()
                                 << "' is a group without categories and codes datasets");
    out.categories = read_categories(file_, object + "/categories");
    out.codes = read_codes(file_, object + "/codes", out.categories.size(), name, path());
    if (file_.has_attribute(object, "ordered")) {
      const Array<std::uint8_t> ordered = file_.read_attribute<std::uint8_t>(object, "ordered");
      out.ordered = !ordered.data.empty() && ordered.data[0] != 0;
    }
  } else if (file_.info(object).dtype == DType::kString) {
    const std::vector<std::string> values = file_.read_strings(object);
    std::map<std::string, std::int32_t> index;
    for (const std::string& v : values) index.emplace(v, 0);
    std::int32_t next = 0;
    for (auto& [text, code] : index) {
      code = next++;
      out.categories.push_back(text);
    }
    out.codes.reserve(values.size());
    for (const std::string& v : values) out.codes.push_back(index.at(v));
  } else {
    // anndata 0.7: the attribute is an object reference to this dataset of categories.
    const std::string categories = "/obs/__categories/" + std::string(name);
    GW_CHECK_CODE(file_.exists(categories), ErrorCode::kBadData,
                  "obs column '" << name << "' in '" << path() << "' has codes but no "
                                 << categories << " dataset");
    out.categories = read_categories(file_, categories);
    out.codes = read_codes(file_, object, out.categories.size(), name, path());
  }
  GW_CHECK_CODE(static_cast<std::int64_t>(out.codes.size()) == n_obs(), ErrorCode::kBadData,
                "obs column '" << name << "' in '" << path() << "' has " << out.codes.size()
                               << " values but n_obs = " << n_obs());
  return out;
}

void H5adWriter::put_obs_categorical(std::string_view name, const Categorical& column) {
  GW_CHECK(!name.empty() && name.find('/') == std::string_view::npos,
           "obs column '" << name << "' must be non-empty and contain no '/'");
  GW_CHECK(static_cast<std::int64_t>(column.codes.size()) == n_obs_,
           "put_obs_categorical('" << name << "'): " << column.codes.size()
                                   << " codes for n_obs = " << n_obs_);
  const auto categories = static_cast<std::int64_t>(column.categories.size());
  for (std::size_t i = 0; i < column.codes.size(); ++i) {
    GW_CHECK(column.codes[i] >= -1 && column.codes[i] < categories,
             "put_obs_categorical('" << name << "'): code " << column.codes[i] << " of row " << i
                                     << " is outside [-1, " << categories << ")");
  }
  Reader& reader = file_.reader();
  GW_CHECK_CODE(reader.kind("/obs") == ObjectKind::kGroup, ErrorCode::kBadData,
                "'" << file_.path() << "' has no obs dataframe group");
  std::string index = "_index";
  if (reader.has_attribute("/obs", "_index") &&
      reader.attribute_dtype("/obs", "_index") == DType::kString) {
    index = reader.read_string_attribute("/obs", "_index");
  }
  GW_CHECK(name != index && name != "__categories",
           "put_obs_categorical: '" << name << "' is reserved in the obs dataframe");
  std::vector<std::string> order;
  if (reader.has_attribute("/obs", "column-order") &&
      reader.attribute_dtype("/obs", "column-order") == DType::kString) {
    order = reader.read_string_array_attribute("/obs", "column-order");
  }
  const std::string object = obs_object(name);
  file_.remove(object);
  file_.remove("/obs/__categories/" + std::string(name));
  file_.ensure_group(object);
  file_.set_attribute(object, "encoding-type", "categorical");
  file_.set_attribute(object, "encoding-version", "0.2.0");
  file_.set_attribute(object, "ordered", column.ordered);
  file_.write_strings(object + "/categories", column.categories);
  file_.set_attribute(object + "/categories", "encoding-type", "string-array");
  file_.set_attribute(object + "/categories", "encoding-version", "0.2.0");
  const std::int64_t n = n_obs_;
  // pandas stores codes in the narrowest signed type that holds the category count.
  if (categories < 128) {
    std::vector<std::int8_t> narrow(column.codes.begin(), column.codes.end());
    file_.write_array<std::int8_t>(object + "/codes", narrow, {&n, 1});
  } else {
    file_.write_array<std::int32_t>(object + "/codes", column.codes, {&n, 1});
  }
  file_.set_attribute(object + "/codes", "encoding-type", "array");
  file_.set_attribute(object + "/codes", "encoding-version", "0.2.0");
  if (std::find(order.begin(), order.end(), name) == order.end()) order.emplace_back(name);
  file_.set_attribute("/obs", "column-order", std::span<const std::string>(order));
}

}  // namespace gw::io
