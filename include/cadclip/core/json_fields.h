// One description of an options struct's JSON form, for its writer and its
// reader alike:
//   CADCLIP_JSON_FIELDS(BRepEncoderOptions, width, layers, heads, ...)
// in a .cc, inside the struct's namespace, defines to_json and from_json
// there (nlohmann finds them by ADL; declare them in the struct's header).
// Reading keeps a field's default when its key is absent, and a value of the
// wrong type throws JsonFieldError naming the key's path ("brep.width"), so a
// caller can say which file holds it. Keys a reader does not know are found
// with unknown_keys. Include only in .cc files: it pulls in nlohmann/json.hpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cadclip/core/error.h"

namespace cadclip {

// A value of the wrong type at `path`.
class JsonFieldError : public Error {
 public:
  JsonFieldError(std::string path, std::string detail)
      : Error(format("'{}' has the wrong type ({})", path, detail)),
        path_(std::move(path)),
        detail_(std::move(detail)) {}
  const std::string& path() const { return path_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string path_, detail_;
};

// Reads json[key] into `value` when the key is there; otherwise leaves the
// default. Errors below `key` get its name in front of their path.
template <class T>
void read_json_field(const nlohmann::json& json, const char* key, T& value) {
  const auto it = json.find(key);
  if (it == json.end()) return;
  try {
    it->get_to(value);
  } catch (const JsonFieldError& e) {
    throw JsonFieldError(std::string(key) + "." + e.path(), e.detail());
  } catch (const nlohmann::json::exception& e) {
    throw JsonFieldError(key, e.what());
  }
}

// The key paths of `given` ("model.brep.widht") that `known` (what a writer
// writes for the same struct, e.g. nlohmann::json(Options{})) does not have,
// looking into objects that both have.
std::vector<std::string> unknown_keys(const nlohmann::json& given, const nlohmann::json& known);

}  // namespace cadclip

// An optional value is null when empty.
template <class T>
struct nlohmann::adl_serializer<std::optional<T>> {
  static void to_json(nlohmann::json& json, const std::optional<T>& value) {
    if (value) {
      json = *value;
    } else {
      json = nullptr;
    }
  }
  static void from_json(const nlohmann::json& json, std::optional<T>& value) {
    if (json.is_null()) {
      value.reset();
    } else {
      value = json.get<T>();
    }
  }
};

#define CADCLIP_JSON_FIELD_TO(field) json[#field] = value.field;
#define CADCLIP_JSON_FIELD_FROM(field) ::cadclip::read_json_field(json, #field, value.field);
#define CADCLIP_JSON_FIELDS(Type, ...)                                                 \
  void to_json(nlohmann::json& json, const Type& value) {                              \
    json = nlohmann::json::object();                                                   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(CADCLIP_JSON_FIELD_TO, __VA_ARGS__))      \
  }                                                                                    \
  void from_json(const nlohmann::json& json, Type& value) {                            \
    if (!json.is_object())                                                             \
      throw nlohmann::json::type_error::create(                                        \
          302, std::string("type must be object, but is ") + json.type_name(), &json); \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(CADCLIP_JSON_FIELD_FROM, __VA_ARGS__))    \
  }
