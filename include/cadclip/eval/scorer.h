// The scores of an evaluation from its embeddings: per caption level
// text->CAD and CAD->text retrieval with the shared-caption ceiling, and
// CAD->CAD self-retrieval. Parts with equal geometry count as hits.
#pragma once

#include <cstddef>

#include <ATen/core/Tensor.h>

#include "cadclip/eval/gallery.h"
#include "cadclip/eval/metrics.h"
#include "cadclip/eval/queries.h"
#include "cadclip/eval/report.h"

namespace cadclip::eval {

class Scorer {
 public:
  // brep: [G, d], text: [Q, d], unit rows in gallery and query order.
  // `queries` and `groups` must outlive the scorer.
  Scorer(const CaptionQueries& queries, const GeometryGroups& groups, at::Tensor brep,
         at::Tensor text);

  // Level `level` of queries.levels(): its name, retrieval both ways and the
  // ceiling (truncated is left 0: the scorer does not see tokens).
  LevelReport level(size_t level) const;
  // Each gallery embedding against the gallery: it (or a part of the same
  // geometry) comes first unless embeddings coincide across parts.
  RetrievalMetrics cad_to_cad() const;

 private:
  const CaptionQueries& queries_;
  const GeometryGroups& groups_;
  at::Tensor brep_;
  at::Tensor text_;
};

}  // namespace cadclip::eval
