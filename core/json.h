// A minimal JSON writer for reports and benchmark output (no parsing).
//
// Usage:
//   JsonWriter json;
//   json.begin_object().key("what").value("knn").key("n").value(20000).end_object();
//   std::string text = json.str();   // {"what":"knn","n":20000}
//
// Numbers are written in the shortest form that reads back exactly (std::to_chars); NaN and +-Inf
// are written as null (JSON has no representation for them). Strings are escaped per RFC 8259.
// Misnesting (a value without a key inside an object, end_object() inside an array) throws
// gw::Error(kInternal).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

class JsonWriter {
 public:
  // pretty = true puts each member on its own line, indented by two spaces per level.
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(float number) { return value(static_cast<double>(number)); }
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(long long number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(std::uint64_t number);
  JsonWriter& value(bool flag);
  JsonWriter& null();
  // Inserts already-serialized JSON (e.g. a nested report) as one value.
  JsonWriter& raw(std::string_view json);

  // key(name).value(v) in one call.
  template <typename T>
  JsonWriter& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // The text written so far; complete once every object/array is closed.
  const std::string& str() const { return out_; }

 private:
  enum class Scope { kObject, kArray };
  void before_value();
  void newline_indent();

  bool pretty_;
  std::string out_;
  std::vector<Scope> scopes_;
  std::vector<bool> first_;  // per scope: nothing written yet
  bool after_key_ = false;
};

// `text` with JSON string escaping applied (no surrounding quotes).
std::string json_escape(std::string_view text);

}  // namespace gw
