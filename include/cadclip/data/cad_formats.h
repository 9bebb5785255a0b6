// The CAD files cadclip reads, by extension (case-insensitive): the one list
// that prepare, index, the server's uploads and their messages go by. Reading
// them is the cad layer's work (cad/ingest.h); knowing them is not, so layers
// built without Open CASCADE still tell a part file from another.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip::data {

enum class CadFormat { kStep, kIges, kBrep, kDeepcadJson, kUnknown };

// .step/.stp, .iges/.igs, .brep, .json (DeepCAD); kUnknown otherwise.
CadFormat format_of(const std::filesystem::path& path);
std::string_view format_name(CadFormat format);       // "STEP", "IGES", "BREP", "DeepCAD JSON"
bool is_cad_path(const std::filesystem::path& path);  // format_of(path) != kUnknown
// The extensions, without the dot: step stp iges igs brep json.
std::vector<std::string> cad_extensions();

// For messages: ".step, .stp, .iges, .igs, .brep or DeepCAD .json".
inline constexpr std::string_view kCadExtensions =
    ".step, .stp, .iges, .igs, .brep or DeepCAD .json";

}  // namespace cadclip::data
