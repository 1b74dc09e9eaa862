// A minimal JSON writer: compact output, commas handled, non-finite numbers written as null.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flashvision::tool {

/// Builds one JSON text. Call key() before each value inside an object.
class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();
  /// The value, or null when absent.
  template <typename T>
  JsonWriter& value(const std::optional<T>& maybe) {
    return maybe ? value(*maybe) : null();
  }
  /// Inserts already formatted JSON (e.g. a nested document) as one value.
  JsonWriter& raw(std::string_view json);

  const std::string& str() const { return out_; }

 private:
  void before_value();

  std::string out_;
  std::vector<bool> first_in_scope_;  ///< one entry per open object or array
  bool after_key_ = false;
};

/// `text` as a quoted JSON string.
std::string json_quote(std::string_view text);

}  // namespace flashvision::tool
