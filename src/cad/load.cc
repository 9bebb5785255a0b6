// Reading STEP, IGES and BREP files into shapes in millimetres, with cheap
// checks before OCCT sees the bytes (OCCT aborts on some malformed files that
// these checks reject: no header, truncated, garbage).
#include <BRepBuilderAPI_Transform.hxx>
#include <BRepTools.hxx>
#include <BRep_Builder.hxx>
#include <IFSelect_ReturnStatus.hxx>
#include <IGESControl_Controller.hxx>
#include <IGESControl_Reader.hxx>
#include <IGESData_GlobalSection.hxx>
#include <IGESData_IGESModel.hxx>
#include <Interface_Static.hxx>
#include <Message.hxx>
#include <Message_Messenger.hxx>
#include <Message_PrinterOStream.hxx>
#include <STEPControl_Controller.hxx>
#include <STEPControl_Reader.hxx>
#include <Standard_ErrorHandler.hxx>
#include <Standard_Failure.hxx>
#include <TColStd_SequenceOfAsciiString.hxx>
#include <TCollection_HAsciiString.hxx>
#include <gp_Trsf.hxx>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <mutex>
#include <system_error>

#include "cad/occt_shape.h"
#include "cadclip/core/format.h"

namespace cadclip::cad {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The first and last `count` bytes of a file (the whole file when it is small).
struct HeadTail {
  std::string head, tail;
  uintmax_t size = 0;
};

Result<HeadTail> read_head_tail(const std::filesystem::path& path, size_t count) {
  std::error_code error;
  HeadTail out;
  out.size = std::filesystem::file_size(path, error);
  if (error) return Status::failure(format("cannot read {}: {}", path.string(), error.message()));
  if (out.size == 0) return Status::failure(format("{} is empty (0 bytes)", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::failure(format("cannot open {} for reading", path.string()));
  const size_t head = static_cast<size_t>(std::min<uintmax_t>(count, out.size));
  out.head.resize(head);
  in.read(out.head.data(), static_cast<std::streamsize>(head));
  const size_t tail = static_cast<size_t>(std::min<uintmax_t>(count, out.size));
  out.tail.resize(tail);
  in.seekg(static_cast<std::streamoff>(out.size - tail));
  in.read(out.tail.data(), static_cast<std::streamsize>(tail));
  if (!in) return Status::failure(format("cannot read {}", path.string()));
  return out;
}

// A file's unit name as cadclip records it: STEP says "millimetre", "inch",
// "metre"; IGES "MM", "IN", "INCH", "M", "FT"... Both become the short names of
// --assume-unit (mm, cm, m, inch, ft, um; mil and km too); anything else is
// kept as the file wrote it.
std::string canonical_unit(std::string_view raw) {
  const std::string name = lower(raw);
  if (name == "mm" || name == "millimetre" || name == "millimeter") return "mm";
  if (name == "cm" || name == "centimetre" || name == "centimeter") return "cm";
  if (name == "m" || name == "metre" || name == "meter") return "m";
  if (name == "in" || name == "inch") return "inch";
  if (name == "ft" || name == "foot" || name == "feet") return "ft";
  if (name == "um" || name == "micron" || name == "micrometre" || name == "micrometer") return "um";
  if (name == "mil") return "mil";
  if (name == "km" || name == "kilometre" || name == "kilometer") return "km";
  return std::string(raw);
}

// Scales a shape by `factor` (a copy with transformed geometry, not a location).
Result<TopoDS_Shape> scaled(const TopoDS_Shape& shape, double factor, std::string_view what) {
  if (factor == 1.0) return shape;
  gp_Trsf scale;
  scale.SetScale(gp_Pnt(0, 0, 0), factor);
  BRepBuilderAPI_Transform transform(shape, scale, /*copy=*/true);
  if (!transform.IsDone() || transform.Shape().IsNull())
    return Status::failure(format("{}: scaling to millimetres failed", what));
  return transform.Shape();
}

// OCCT's XSTEP readers convert lengths into the "cascade unit", a process-wide
// parameter that OCCT 7.6 reads at transfer time (XSAlgo_AlgoContainer::
// PrepareForTransfer). Set it every time: another caller may have changed it.
Status set_cascade_unit_mm(std::string_view what) {
  if (!STEPControl_Controller::Init() || !IGESControl_Controller::Init() ||
      !Interface_Static::SetCVal("xstep.cascade.unit", "MM"))
    return Status::failure(format("{}: OCCT refused xstep.cascade.unit=MM", what));
  return Status::ok();
}

Result<LoadedShape> read_step(const std::filesystem::path& path, const IngestOptions& options) {
  const std::string what = path.string();
  Result<HeadTail> bytes = read_head_tail(path, 4096);
  if (!bytes) return bytes.status();
  if (bytes->head.find("ISO-10303-21") == std::string::npos) {
    // A STEP file saved as UTF-16 (by a text editor) holds the header with a
    // NUL beside every letter.
    const std::string& head = bytes->head;
    const bool bom = head.starts_with("\xFF\xFE") || head.starts_with("\xFE\xFF");
    const bool wide = head.find(std::string("I\0S\0O\0", 6)) != std::string::npos ||
                      head.find(std::string("\0I\0S\0O", 6)) != std::string::npos;
    if (bom || wide)
      return Status::failure(
          format("{} is not a STEP file as OCCT reads it: it is UTF-16 text, and STEP files "
                 "are ASCII (or UTF-8); convert it, e.g. `iconv -f UTF-16 -t UTF-8 FILE > "
                 "FILE-utf8.step`, and read that",
                 what));
    return Status::failure(
        format("{} is not a STEP file: no ISO-10303-21 header in its first bytes", what));
  }
  if (bytes->tail.find("END-ISO-10303-21") == std::string::npos)
    return Status::failure(format(
        "{} is truncated or not a complete STEP file: no END-ISO-10303-21 at its end", what));

  quiet_occt_messages();
  std::lock_guard<std::mutex> lock(xstep_mutex());
  if (Status unit = set_cascade_unit_mm(what); !unit) return unit;
  STEPControl_Reader reader;
  if (reader.ReadFile(path.c_str()) != IFSelect_RetDone)
    return Status::failure(format("{}: OCCT could not parse the STEP data", what));

  TColStd_SequenceOfAsciiString lengths, angles, solid_angles;
  reader.FileUnits(lengths, angles, solid_angles);
  if (reader.NbRootsForTransfer() <= 0)
    return Status::failure(
        format("{}: no STEP entity that OCCT can turn into geometry (unsupported or missing "
               "shape representations)",
               what));
  if (reader.TransferRoots() <= 0)
    return Status::failure(format("{}: OCCT transferred none of the STEP roots", what));
  TopoDS_Shape shape = reader.OneShape();
  if (shape.IsNull()) return Status::failure(format("{}: the STEP transfer gave no shape", what));

  LoadedShape out;
  if (lengths.Length() > 0) {
    // OCCT has already converted the stated unit into the cascade unit (mm).
    out.unit = "file:" + canonical_unit(lengths.Value(1).ToCString());
    out.shape = shape;
    return out;
  }
  // No stated length unit: OCCT took the numbers as they are.
  Result<double> factor = millimetres_per_unit(options.assume_unit);
  if (!factor) return factor.status();
  Result<TopoDS_Shape> mm = scaled(shape, factor.value(), what);
  if (!mm) return mm.status();
  out.unit = "assumed:" + options.assume_unit;
  out.shape = mm.value();
  return out;
}

Result<LoadedShape> read_iges(const std::filesystem::path& path, const IngestOptions& options) {
  const std::string what = path.string();
  Result<HeadTail> bytes = read_head_tail(path, 4096);
  if (!bytes) return bytes.status();
  // Fixed 80-column records; column 73 names the section (S start, G global, T end).
  const std::string& head = bytes->head;
  const char first_section = head.size() > 72 ? head[72] : ' ';
  if (first_section != 'S' && first_section != 'G')
    return Status::failure(
        format("{} is not an IGES file: its first record has no S or G section letter in column 73",
               what));
  std::string tail = bytes->tail;
  while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
  const size_t line_start = tail.find_last_of('\n');
  const std::string last = tail.substr(line_start == std::string::npos ? 0 : line_start + 1);
  if (last.size() < 73 || last[72] != 'T')
    return Status::failure(
        format("{} is truncated: its last record is not the IGES terminate (T) section", what));

  quiet_occt_messages();
  std::lock_guard<std::mutex> lock(xstep_mutex());
  if (Status unit = set_cascade_unit_mm(what); !unit) return unit;
  IGESControl_Reader reader;
  if (reader.ReadFile(path.c_str()) != IFSelect_RetDone)
    return Status::failure(format("{}: OCCT could not parse the IGES data", what));
  Handle(IGESData_IGESModel) model = reader.IGESModel();
  if (model.IsNull()) return Status::failure(format("{}: OCCT read no IGES model", what));
  const IGESData_GlobalSection& global = model->GlobalSection();
  std::string unit_name;
  if (!global.UnitName().IsNull()) unit_name = global.UnitName()->ToCString();
  if (reader.NbRootsForTransfer() <= 0)
    return Status::failure(format("{}: no IGES entity that OCCT can turn into geometry", what));
  if (reader.TransferRoots() <= 0)
    return Status::failure(format("{}: OCCT transferred none of the IGES roots", what));
  TopoDS_Shape shape = reader.OneShape();
  if (shape.IsNull()) return Status::failure(format("{}: the IGES transfer gave no shape", what));
  // IGES always states a unit (flag 1-11; OCCT converts it into the cascade unit).
  LoadedShape out;
  out.unit = "file:" +
             (unit_name.empty() ? format("flag{}", global.UnitFlag()) : canonical_unit(unit_name));
  out.shape = shape;
  return out;
}

Result<LoadedShape> read_brep(const std::filesystem::path& path, const IngestOptions& options) {
  const std::string what = path.string();
  Result<HeadTail> bytes = read_head_tail(path, 256);
  if (!bytes) return bytes.status();
  const std::string& head = bytes->head;
  if (head.find("CASCADE Topology V") == std::string::npos &&
      head.find("DBRep_DrawableShape") == std::string::npos)
    return Status::failure(format(
        "{} is not a text BREP file: no 'CASCADE Topology V' header (binary BREP is not read)",
        what));
  Result<double> factor = millimetres_per_unit(options.assume_unit);
  if (!factor) return factor.status();
  TopoDS_Shape shape;
  BRep_Builder builder;
  if (!BRepTools::Read(shape, path.c_str(), builder))
    return Status::failure(format("{}: OCCT could not read the BREP data", what));
  if (shape.IsNull()) return Status::failure(format("{}: the BREP file holds no shape", what));
  Result<TopoDS_Shape> mm = scaled(shape, factor.value(), what);
  if (!mm) return mm.status();
  return LoadedShape{mm.value(), "assumed:" + options.assume_unit};
}

}  // namespace

// OCCT's readers report through the default messenger, which prints to
// stdout; only apps/ may write there, and per-file chatter is no use in a
// batch job. Failures reach the caller as statuses instead.
void quiet_occt_messages() {
  static std::once_flag once;
  std::call_once(once, [] {
    Message::DefaultMessenger()->RemovePrinters(STANDARD_TYPE(Message_PrinterOStream));
  });
}

std::mutex& xstep_mutex() {
  static std::mutex mutex;
  return mutex;
}

Result<double> millimetres_per_unit(std::string_view unit) {
  const std::string name = lower(unit);
  if (name == "mm" || name == "millimetre" || name == "millimeter") return 1.0;
  if (name == "cm" || name == "centimetre" || name == "centimeter") return 10.0;
  if (name == "m" || name == "metre" || name == "meter") return 1000.0;
  if (name == "in" || name == "inch") return 25.4;
  if (name == "ft" || name == "foot") return 304.8;
  if (name == "um" || name == "micron" || name == "micrometre") return 0.001;
  return Status::failure(
      format("unknown length unit '{}': use mm, cm, m, inch, ft or um (--assume-unit)", unit));
}

Result<LoadedShape> read_shape(const std::filesystem::path& path, const IngestOptions& options) {
  const data::CadFormat kind = data::format_of(path);
  try {
    OCC_CATCH_SIGNALS
    switch (kind) {
      case data::CadFormat::kStep:
        return read_step(path, options);
      case data::CadFormat::kIges:
        return read_iges(path, options);
      case data::CadFormat::kBrep:
        return read_brep(path, options);
      case data::CadFormat::kDeepcadJson:
      case data::CadFormat::kUnknown:
        break;
    }
  } catch (const Standard_Failure& failure) {
    return Status::failure(format("{}: OCCT failed while reading: {} ({})", path.string(),
                                  failure.GetMessageString(), failure.DynamicType()->Name()));
  }
  return Status::failure(format("{}: read_shape takes .step/.stp, .iges/.igs or .brep, not '{}'",
                                path.string(), path.extension().string()));
}

}  // namespace cadclip::cad
