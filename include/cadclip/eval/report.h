// What an evaluation reports: retrieval per caption level both ways, CAD->CAD
// self-retrieval, embedding diagnostics and the shared-caption ceiling
// (docs/EVAL.md lists every field), as a table for people, JSON for programs,
// and the embeddings behind it as safetensors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "cadclip/eval/metrics.h"

namespace cadclip::eval {

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
  at::Tensor brep;                          // [G, d] fp32 CPU: unit rows, then any size block
  std::vector<std::string> query_ids;       // [Q] the model each caption describes
  std::vector<std::string> query_levels;    // [Q]
  at::Tensor text;                          // [Q, d] fp32 CPU, as brep
  std::vector<std::string> query_texts;     // [Q] the caption each query is
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
