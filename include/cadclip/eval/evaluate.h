// Evaluation of a two-tower model on one split: embeds the split's unique
// models (the gallery) and their captions (the queries, per caption level),
// then reports retrieval both ways, CAD->CAD self-retrieval, embedding
// diagnostics and the shared-caption ceiling (docs/EVAL.md lists every field).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>

#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/eval/metrics.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/text/tokenizer.h"

namespace cadclip::eval {

// Pooled text-tower features by text. A frozen text tower gives the same
// features for a text at every epoch, so the trainer's validation keeps them
// here and runs the tower over its captions once per run; only the text head
// (which trains) runs at every evaluation.
struct PooledTextCache {
  std::unordered_map<std::string, at::Tensor> pooled;  // text -> [text_width]
};

struct EvalOptions {
  std::vector<std::string> levels;  // caption levels to report; empty = every level present
  int64_t batch_size = 64;          // models or texts per forward pass
  std::string split = "test";       // the split's name, only for the report
  // When set, pooled features come from here and new ones are added: only for
  // a text tower that does not change between calls.
  PooledTextCache* pooled_text_cache = nullptr;
};

struct LevelReport {
  std::string level;
  RetrievalMetrics text_to_cad;  // queries: the level's captions; gallery: the split's models
  RetrievalMetrics cad_to_text;  // queries: models with a caption at this level; gallery: captions
  CaptionCeiling ceiling;        // of text_to_cad
  int64_t truncated = 0;         // captions longer than max_text_length tokens (cut to fit)
};

// The embeddings behind a report, in gallery and query order.
struct EvalEmbeddings {
  std::vector<std::string> gallery_ids;     // [G]
  std::vector<std::string> gallery_hashes;  // [G] geometry hashes (may be empty strings)
  at::Tensor brep;                          // [G, d] fp32 CPU, unit rows
  std::vector<std::string> query_ids;       // [Q] the model each caption describes
  std::vector<std::string> query_levels;    // [Q]
  at::Tensor text;                          // [Q, d] fp32 CPU, unit rows
};

struct EvalReport {
  std::string split;
  int64_t gallery = 0;            // G: unique models of the split found in the dataset
  int64_t distinct_geometry = 0;  // distinct geometry hashes among them
  int64_t missing = 0;            // split ids not in the dataset (failed to prepare), skipped
  int64_t uncaptioned = 0;        // gallery models without a caption at any reported level
  int64_t max_text_length = 0;    // the limit the captions were cut to
  std::vector<LevelReport> levels;
  RetrievalMetrics cad_to_cad;  // each gallery embedding against the gallery
  bool cad_to_cad_ok = false;   // cad_to_cad.r1 == 1 (equal-hash parts count as hits)
  EmbeddingDiagnostics brep;    // over the gallery embeddings
  EmbeddingDiagnostics text;    // over the distinct caption texts' embeddings
  double seconds = 0;           // wall time of evaluate()
  EvalEmbeddings embeddings;    // not part of the JSON; see save_embeddings
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

// Mean over the report's levels of text->CAD R@1 (the trainer's validation
// metric); 0 when there is no level.
double mean_text_to_cad_r1(const EvalReport& report);

// A table for people (R@k and ceilings in percent).
std::string format_table(const EvalReport& report);
// Every field but the embeddings, for programs (shares in [0, 1]).
nlohmann::json to_json(const EvalReport& report);

// Both towers' embeddings as safetensors: "brep" [G, d] F32 and "text" [Q, d]
// F32; ids in __metadata__ as JSON lists ("brep_ids", "brep_hashes",
// "text_ids", "text_levels"), plus "format" = "cadclip.embeddings" and
// "schema_version". Written atomically; docs/EVAL.md has the layout.
void save_embeddings(const std::filesystem::path& path, const EvalEmbeddings& embeddings);

}  // namespace cadclip::eval
