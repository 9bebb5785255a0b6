// One description of an options struct's fields, from which its JSON form
// (for its writer and its reader alike) and its flags' help both come:
//   CADCLIP_OPTION_FIELDS(IngestLimits,
//       (max_faces, "A model with more faces fails, never truncated; 0 = no limit"),
//       (timeout, limits.file_timeout_s, "Seconds one file may take"), ...)
// in a .cc, inside the struct's namespace, defines to_json and from_json
// there (nlohmann finds them by ADL), and field_help(options, &options.field),
// the help of the field at that address (what its flag's --help shows);
// declare the three in the struct's header. An entry is (field, help), under
// the key "field", or (key, member.path, help) for a member of a member.
// CADCLIP_FIELD_HELP defines field_help alone (for a struct whose JSON form
// is written by hand), CADCLIP_JSON_FIELDS(Type, field, ...) the JSON form
// alone (for a struct no flag shows).
// Reading keeps a field's default when its key is absent, and a value of the
// wrong type throws JsonFieldError naming the key's path ("brep.width"), so a
// caller can say which file holds it. Keys a reader does not know are found
// with unknown_keys; read_options_file does both for a --config file.
// Include only in .cc files: it pulls in nlohmann/json.hpp.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"

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

// The JSON in `file` (a --config file); throws cadclip::Error naming the file
// when it cannot be read or is not JSON.
nlohmann::json read_json_file(const std::filesystem::path& file);

// `options` with the values of `json`, read from the --config file `file`
// (keys it lacks keep their value). Throws cadclip::Error naming the file
// and the key that is unknown or has the wrong type.
template <class Options>
void apply_options_json(const nlohmann::json& json, const std::filesystem::path& file,
                        Options& options) {
  // A misspelt key would silently leave its default: refuse it.
  const std::vector<std::string> unknown = unknown_keys(json, nlohmann::json(Options{}));
  if (!unknown.empty())
    throw Error(
        format("--config {}: unknown option(s) {}; the file takes the keys that "
               "--print-config writes",
               file.string(), join(unknown)));
  try {
    from_json(json, options);
  } catch (const Error& e) {
    throw Error(format("--config {}: {}", file.string(), e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("--config {}: {}", file.string(), e.what()));
  }
}

// `options` with the values of the JSON file `file`: `cadclip JOB --config FILE`.
template <class Options>
void read_options_file(const std::filesystem::path& file, Options& options) {
  apply_options_json(read_json_file(file), file, options);
}

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
#define CADCLIP_JSON_OBJECT_FUNCTIONS(Type, write, read)                               \
  void to_json(nlohmann::json& json, const Type& value) {                              \
    json = nlohmann::json::object();                                                   \
    write                                                                              \
  }                                                                                    \
  void from_json(const nlohmann::json& json, Type& value) {                            \
    if (!json.is_object())                                                             \
      throw nlohmann::json::type_error::create(                                        \
          302, std::string("type must be object, but is ") + json.type_name(), &json); \
    read                                                                               \
  }
#define CADCLIP_JSON_FIELDS(Type, ...)                                                     \
  CADCLIP_JSON_OBJECT_FUNCTIONS(                                                           \
      Type, NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(CADCLIP_JSON_FIELD_TO, __VA_ARGS__)), \
      NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(CADCLIP_JSON_FIELD_FROM, __VA_ARGS__)))

// An entry (field, help) or (key, member.path, help) to the macro of its arity.
#define CADCLIP_ENTRY_PICK(_1, _2, _3, name, ...) name
#define CADCLIP_ENTRY(prefix, ...) \
  CADCLIP_ENTRY_PICK(__VA_ARGS__, prefix##_AT, prefix##_NAMED, unused)(__VA_ARGS__)
#define CADCLIP_ENTRY_TO(entry) CADCLIP_ENTRY(CADCLIP_ENTRY_TO, CADCLIP_ENTRY_ARGS entry)
#define CADCLIP_ENTRY_FROM(entry) CADCLIP_ENTRY(CADCLIP_ENTRY_FROM, CADCLIP_ENTRY_ARGS entry)
#define CADCLIP_ENTRY_HELP(entry) CADCLIP_ENTRY(CADCLIP_ENTRY_HELP, CADCLIP_ENTRY_ARGS entry)
#define CADCLIP_ENTRY_ARGS(...) __VA_ARGS__
#define CADCLIP_ENTRY_TO_NAMED(field, help) json[#field] = value.field;
#define CADCLIP_ENTRY_TO_AT(key, path, help) json[#key] = value.path;
#define CADCLIP_ENTRY_FROM_NAMED(field, help) ::cadclip::read_json_field(json, #field, value.field);
#define CADCLIP_ENTRY_FROM_AT(key, path, help) ::cadclip::read_json_field(json, #key, value.path);
#define CADCLIP_ENTRY_HELP_NAMED(field, help) \
  if (field_address == &value.field) return help;
#define CADCLIP_ENTRY_HELP_AT(key, path, help) \
  if (field_address == &value.path) return help;

#define CADCLIP_FIELD_HELP(Type, ...)                                          \
  std::string_view field_help(const Type& value, const void* field_address) {  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(CADCLIP_ENTRY_HELP, __VA_ARGS__)) \
    return {};                                                                 \
  }
#define CADCLIP_OPTION_FIELDS(Type, ...)                                              \
  CADCLIP_JSON_OBJECT_FUNCTIONS(                                                      \
      Type, NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(CADCLIP_ENTRY_TO, __VA_ARGS__)), \
      NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(CADCLIP_ENTRY_FROM, __VA_ARGS__)))     \
  CADCLIP_FIELD_HELP(Type, __VA_ARGS__)
