// Evaluation of a two-tower model on one split, composed of the gallery (the
// split's unique models, eval/gallery.h), its captions as queries per level
// (eval/queries.h), the text embedder (model/text_embedding.h), the scorer
// (eval/scorer.h) and the diagnostics (eval/diagnostics.h); the report it
// gives is in eval/report.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/eval/report.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/text/tokenizer.h"

namespace cadclip::eval {

// A frozen text tower gives the same pooled features for a text at every
// epoch, so the trainer's validation keeps them and runs the tower over its
// captions once per run; only the text head (which trains) runs at every
// evaluation.
using model::PooledTextCache;

struct EvalOptions {
  std::vector<std::string> levels;  // caption levels to report; empty = every level present
  int64_t batch_size = 64;          // models or texts per forward pass
  std::string split = "test";       // the split's name, only for the report
  // When set, pooled features come from here and new ones are added: only for
  // a text tower that does not change between calls.
  PooledTextCache* pooled_text_cache = nullptr;
};

// `model` is the module itself (*two_tower). Embeds and scores under NoGradGuard with the model in
// eval mode (its training mode is restored afterwards), on the model's device. `split_ids` may
// repeat ids (counted once). Logs a warning when CAD->CAD self-retrieval is below 100% or a tower's
// embeddings collapsed. Throws cadclip::Error when no split id is in the dataset, a requested level
// has no caption in the gallery, or max_text_length (tokens per caption with [CLS]/[SEP]: the
// model's own, or what the caller asks) is below 2.
EvalReport evaluate(model::TwoTowerImpl& model, const text::Tokenizer& tokenizer,
                    int64_t max_text_length, const data::Dataset& dataset,
                    const std::vector<data::Caption>& captions,
                    const std::vector<std::string>& split_ids, const EvalOptions& options);

}  // namespace cadclip::eval
