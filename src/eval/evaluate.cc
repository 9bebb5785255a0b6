#include "cadclip/eval/evaluate.h"

#include <chrono>

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/eval/diagnostics.h"
#include "cadclip/eval/gallery.h"
#include "cadclip/eval/queries.h"
#include "cadclip/eval/scorer.h"

namespace cadclip::eval {

namespace {

using Clock = std::chrono::steady_clock;

// Puts the model in eval mode and gives it back its training mode on every
// exit, so that the trainer's per-epoch validation leaves it training.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(torch::nn::Module& module)
      : module_(module), was_training_(module.is_training()) {
    module_.eval();
  }
  ~EvalModeGuard() { module_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

void check_options(const EvalOptions& options, int64_t max_length) {
  if (options.batch_size < 1) {
    throw Error(format("evaluation: batch size {} must be at least 1", options.batch_size));
  }
  if (max_length < 2) {
    throw Error(
        format("evaluation: the maximum text length is {}; it must be at least 2 tokens "
               "([CLS] and [SEP]); set --max-text-length or the model's max_length",
               max_length));
  }
}

// Each level's scores, with the captions the length limit cut.
std::vector<LevelReport> level_reports(const Scorer& scorer, const CaptionQueries& queries,
                                       const text::TokenRows& rows, int64_t max_length) {
  std::vector<LevelReport> levels;
  for (size_t l = 0; l < queries.levels().size(); ++l) {
    LevelReport level = scorer.level(l);
    level.truncated = queries.cut(l, rows.full_lengths, max_length);
    if (level.truncated > 0) {
      log::info("eval", "level '{}': {} of {} captions are longer than {} tokens and were cut",
                level.level, level.truncated, queries.of_level(l).size(), max_length);
    }
    levels.push_back(std::move(level));
  }
  return levels;
}

std::string seconds_between(Clock::time_point from, Clock::time_point to) {
  return fixed(std::chrono::duration<double>(to - from).count(), 2);
}

}  // namespace

EvalReport evaluate(model::TwoTowerImpl& model, const text::Tokenizer& tokenizer,
                    int64_t max_text_length, const data::Dataset& dataset,
                    const std::vector<data::Caption>& captions,
                    const std::vector<std::string>& split_ids, const EvalOptions& options) {
  const Clock::time_point start = Clock::now();
  check_options(options, max_text_length);
  const Gallery gallery(dataset, split_ids, options.split);
  const CaptionQueries queries(captions, gallery, options.levels, options.split);
  EvalReport report;
  report.split = options.split;
  report.max_text_length = max_text_length;
  report.gallery = gallery.size();
  report.missing = gallery.missing();
  report.uncaptioned = queries.uncaptioned(gallery.size());

  // Each text tokenized once: the rows, and the lengths that tell which
  // captions the limit cuts.
  const model::TextEmbedder embedder(model, tokenizer, max_text_length);
  const text::TokenRows rows = embedder.tokenize(queries.texts());

  torch::NoGradGuard no_grad;
  EvalModeGuard eval_mode(model);
  const auto total = gallery.size() + static_cast<int64_t>(queries.texts().size());
  Progress progress("eval", {.total = total, .unit = "items"});
  GalleryEmbeddings brep = gallery.embed(model, options.batch_size, progress);
  const Clock::time_point brep_done = Clock::now();
  const at::Tensor text = embedder.embed(queries.texts(), rows, {.max_rows = options.batch_size},
                                         options.pooled_text_cache, [&](int64_t texts) {
                                           progress.advance(texts, {{"tower", "text"}});
                                         });
  progress.finish();
  const Clock::time_point text_done = Clock::now();
  std::vector<std::string> query_texts;
  query_texts.reserve(static_cast<size_t>(queries.size()));
  for (int64_t q = 0; q < queries.size(); ++q)
    query_texts.push_back(queries.texts()[static_cast<size_t>(queries.text_of(q))]);
  report.embeddings = {std::move(brep.ids),   std::move(brep.hashes), std::move(brep.brep),
                       queries.ids(),         queries.query_levels(), queries.per_query(text),
                       std::move(query_texts)};

  const GeometryGroups groups(report.embeddings.gallery_hashes);
  report.distinct_geometry = groups.count();
  const Scorer scorer(queries, groups, report.embeddings.brep, report.embeddings.text);
  report.levels = level_reports(scorer, queries, rows, max_text_length);
  // Parts compare with parts by shape alone: a search by part leaves its
  // size block out (TwoTowerImpl::as_part_query).
  const int64_t embed_dim = model.options().embed_dim;
  report.cad_to_cad = Scorer(queries, groups, report.embeddings.brep.narrow(1, 0, embed_dim),
                             report.embeddings.text.narrow(1, 0, embed_dim))
                          .cad_to_cad();
  diagnose(report, text, embed_dim);

  const Clock::time_point end = Clock::now();
  report.seconds = std::chrono::duration<double>(end - start).count();
  log::info("eval",
            "split '{}': {} parts read and embedded in {}s, {} distinct captions in {}s, scored "
            "in {}s",
            options.split, gallery.size(), seconds_between(start, brep_done),
            queries.texts().size(), seconds_between(brep_done, text_done),
            seconds_between(text_done, end));
  return report;
}

}  // namespace cadclip::eval
