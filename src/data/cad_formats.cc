#include "cadclip/data/cad_formats.h"

#include <cctype>
#include <string>
#include <vector>

namespace cadclip::data {

namespace {

// The one list: each extension a folder search picks up and the reader it picks.
struct Extension {
  std::string_view name;  // with the dot, lower case
  CadFormat format;
};
constexpr Extension kExtensions[] = {
    {".step", CadFormat::kStep}, {".stp", CadFormat::kStep},  {".iges", CadFormat::kIges},
    {".igs", CadFormat::kIges},  {".brep", CadFormat::kBrep}, {".json", CadFormat::kDeepcadJson}};

}  // namespace

CadFormat format_of(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const Extension& e : kExtensions)
    if (extension == e.name) return e.format;
  return CadFormat::kUnknown;
}

std::vector<std::string> cad_extensions() {
  std::vector<std::string> out;
  for (const Extension& e : kExtensions) out.emplace_back(e.name.substr(1));
  return out;
}

std::string_view format_name(CadFormat format) {
  switch (format) {
    case CadFormat::kStep:
      return "STEP";
    case CadFormat::kIges:
      return "IGES";
    case CadFormat::kBrep:
      return "BREP";
    case CadFormat::kDeepcadJson:
      return "DeepCAD JSON";
    case CadFormat::kUnknown:
      break;
  }
  return "unknown";
}

bool is_cad_path(const std::filesystem::path& path) {
  return format_of(path) != CadFormat::kUnknown;
}

}  // namespace cadclip::data
