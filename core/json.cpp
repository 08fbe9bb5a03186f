#include "core/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace gw {

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

void JsonWriter::newline_indent() {
  if (!pretty_) return;
  out_ += '\n';
  out_.append(2 * scopes_.size(), ' ');
}

void JsonWriter::before_value() {
  if (scopes_.empty()) {
    GW_CHECK_CODE(out_.empty(), ErrorCode::kInternal, "JsonWriter: a second top-level value");
    return;
  }
  if (scopes_.back() == Scope::kObject) {
    GW_CHECK_CODE(after_key_, ErrorCode::kInternal, "JsonWriter: value without a key in an object");
    after_key_ = false;
    return;
  }
  if (!first_.back()) out_ += ',';
  first_.back() = false;
  newline_indent();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  GW_CHECK_CODE(!scopes_.empty() && scopes_.back() == Scope::kObject && !after_key_,
                ErrorCode::kInternal,
                "JsonWriter: key '" << name << "' outside an object");
  if (!first_.back()) out_ += ',';
  first_.back() = false;
  newline_indent();
  out_ += '"';
  out_ += json_escape(name);
  out_ += pretty_ ? "\": " : "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  scopes_.push_back(Scope::kObject);
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  GW_CHECK_CODE(!scopes_.empty() && scopes_.back() == Scope::kObject && !after_key_,
                ErrorCode::kInternal,
                "JsonWriter: end_object without a matching begin_object");
  const bool empty = first_.back();
  scopes_.pop_back();
  first_.pop_back();
  if (!empty) newline_indent();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  scopes_.push_back(Scope::kArray);
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  GW_CHECK_CODE(!scopes_.empty() && scopes_.back() == Scope::kArray,
                ErrorCode::kInternal,
                "JsonWriter: end_array without a matching begin_array");
  const bool empty = first_.back();
  scopes_.pop_back();
  first_.pop_back();
  if (!empty) newline_indent();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ += '"';
  out_ += json_escape(text);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return null();
  before_value();
  // Shortest text that reads back as the same double (std::to_chars round-trip guarantee).
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof(buf), number);
  out_.append(buf, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

}  // namespace gw
