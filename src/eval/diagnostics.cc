#include "cadclip/eval/diagnostics.h"

#include <cmath>
#include <cstdint>

#include "cadclip/core/format.h"
#include "cadclip/core/log.h"

namespace cadclip::eval {

void diagnose(EvalReport& report, const at::Tensor& text, int64_t embed_dim) {
  report.cad_to_cad_ok = report.cad_to_cad.r1 == 1.0;
  if (!report.cad_to_cad_ok) {
    log::warn("eval",
              "CAD->CAD SELF-RETRIEVAL FAILED: R@1 = {}% (must be 100%): {} of {} gallery parts "
              "do not find themselves first, so different parts share embeddings (collapse, "
              "NaN, or a broken B-Rep tower)",
              fixed(100.0 * report.cad_to_cad.r1, 1),
              static_cast<int64_t>(std::llround((1.0 - report.cad_to_cad.r1) * report.gallery)),
              report.gallery);
  }
  report.brep = diagnose_embeddings(report.embeddings.brep.narrow(1, 0, embed_dim));
  report.text = diagnose_embeddings(text.narrow(1, 0, embed_dim));
  if (report.brep.collapsed) {
    log::warn("eval", "B-REP EMBEDDINGS COLLAPSED: {}", report.brep.summary());
  }
  if (report.text.collapsed) {
    log::warn("eval", "TEXT EMBEDDINGS COLLAPSED: {}", report.text.summary());
  }
}

}  // namespace cadclip::eval
