// Writing a shape as STEP in millimetres (synthetic parts, tests, benchmarks).
#include <IFSelect_ReturnStatus.hxx>
#include <Interface_Static.hxx>
#include <STEPControl_Controller.hxx>
#include <STEPControl_StepModelType.hxx>
#include <STEPControl_Writer.hxx>
#include <Standard_ErrorHandler.hxx>
#include <Standard_Failure.hxx>

#include <unistd.h>

#include <system_error>

#include "cad/occt_shape.h"
#include "cadclip/core/format.h"

namespace cadclip::cad {

Status write_step(const TopoDS_Shape& shape, const std::filesystem::path& path) {
  if (shape.IsNull())
    return Status::failure(format("{}: cannot write a null shape", path.string()));
  // Same folder, so the rename below is atomic; the pid keeps concurrent writers apart.
  const std::filesystem::path temporary =
      path.parent_path() / format(".{}.{}.tmp", path.filename().string(), ::getpid());
  try {
    OCC_CATCH_SIGNALS
    quiet_occt_messages();
    std::lock_guard<std::mutex> lock(xstep_mutex());
    // The parameters exist once the controller is initialised, and a writer
    // takes write.step.unit when it is constructed: set it before.
    if (!STEPControl_Controller::Init() || !Interface_Static::SetCVal("write.step.unit", "MM") ||
        !Interface_Static::SetCVal("xstep.cascade.unit", "MM"))
      return Status::failure(format("{}: OCCT refused the STEP unit parameters", path.string()));
    STEPControl_Writer writer;
    if (writer.Transfer(shape, STEPControl_AsIs) != IFSelect_RetDone)
      return Status::failure(
          format("{}: OCCT could not transfer the shape to STEP", path.string()));
    if (writer.Write(temporary.c_str()) != IFSelect_RetDone) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      return Status::failure(
          format("{}: OCCT could not write the STEP file (is the folder "
                 "writable?)",
                 path.string()));
    }
  } catch (const Standard_Failure& failure) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return Status::failure(
        format("{}: OCCT failed writing STEP: {}", path.string(), failure.GetMessageString()));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error)
    return Status::failure(format("{}: cannot rename the written STEP file into place: {}",
                                  path.string(), error.message()));
  return Status::ok();
}

}  // namespace cadclip::cad
