// libFuzzer: the DeepCAD JSON builder on any text. It must give a solid or a
// failure with a reason; an exception of any kind, or a fault, is a bug.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cad/occt_shape.h"
#include "cadclip/cad/ingest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cadclip::cad::IngestOptions options;
  const cadclip::Result<TopoDS_Shape> shape =
      cadclip::cad::deepcad_to_shape(text, "fuzz.json", options);
  if (!shape && shape.status().reason().empty()) std::abort();
  return 0;
}
