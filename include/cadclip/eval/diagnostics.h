// Whether an evaluation's numbers can be trusted: CAD->CAD self-retrieval at
// 100% and neither tower's embeddings collapsed. Each failure is logged as a
// warning and marked in the report, whose table repeats it.
#pragma once

#include <ATen/core/Tensor.h>

#include "cadclip/eval/report.h"

namespace cadclip::eval {

// Reads report.cad_to_cad and report.embeddings.brep, and `text`, the
// embeddings of the distinct caption texts [T, d]; fills cad_to_cad_ok,
// brep and text. Collapse is judged on the first embed_dim columns, the
// unit embeddings (a size block may follow them: model/size_head.h).
void diagnose(EvalReport& report, const at::Tensor& text, int64_t embed_dim);

}  // namespace cadclip::eval
