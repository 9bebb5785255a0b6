#include "cadclip/train/train_reporter.h"

#include <utility>

#include "cadclip/core/format.h"
#include "cadclip/core/log.h"

namespace cadclip::train {
namespace fs = std::filesystem;

TrainReporter::TrainReporter(const fs::path& run_folder, bool leader, bool resuming, int64_t step,
                             std::unique_ptr<Checkpointer> checkpointer)
    : leader_(leader), checkpointer_(std::move(checkpointer)) {
  // A resumed run's records up to its checkpoint stay; the new ones follow them.
  if (leader && resuming) keep_metrics_through(run_folder / "metrics.jsonl", step);
  metrics_ = std::make_unique<MetricsLog>(run_folder, leader, /*append=*/resuming);
}

void TrainReporter::sources(const nlohmann::json& per_source) {
  metrics_->write({{"kind", "sources"}, {"step", 0}, {"sources", per_source}}, 0);
}

void TrainReporter::start(int64_t steps) {
  if (leader_) progress_ = std::make_unique<Progress>("train", ProgressOptions{steps, "steps"});
}

void TrainReporter::step(int64_t epoch, const TrainingPlan& plan, const StepResult& result) {
  if (!leader_) return;
  progress_->advance(1, {{"loss", fixed(result.loss, 4)},
                         {"lr", format("{}", result.lr)},
                         {"skipped", std::to_string(plan.skipped())},
                         {"samples/s", fixed(result.samples / result.seconds, 1)},
                         {"epoch", std::to_string(epoch + 1)}});
  metrics_->write({{"kind", "train"},
                   {"step", plan.global_step()},
                   {"epoch", epoch},
                   {"loss", result.loss},
                   {"lr", result.lr},
                   {"logit_scale", result.logit_scale},
                   {"skipped", plan.skipped()},
                   {"samples_per_s", result.samples / result.seconds},
                   {"masked_pairs", result.masked_pairs},
                   {"queue_rows", result.queue_rows},
                   {"masked_queue_pairs", result.masked_queue}},
                  plan.global_step());
}

void TrainReporter::validation(int64_t epoch, int64_t global_step, const ValidationReport& report) {
  nlohmann::json record = report.record;
  record["kind"] = "validation";
  record["step"] = global_step;
  record["epoch"] = epoch;
  metrics_->write(record, global_step);
  log::info("train", "epoch {}: validation text->CAD R@1 {}", epoch + 1, report.summary);
}

void TrainReporter::checkpoint(const std::string& name, const RunPosition& position) {
  checkpointer_->save(name, position);
}

void TrainReporter::stopped(int64_t steps) {
  if (!leader_) return;
  progress_->finish();
  log::info("train", "stopped after {} steps as asked; resume with --resume", steps);
}

void TrainReporter::done(const TrainingPlan& plan, int64_t truncated, int64_t max_text_length) {
  if (!leader_) return;
  progress_->finish();
  log::info("train", "done: {} steps, {} skipped, {} captions truncated to {} tokens, last loss {}",
            plan.taken(), plan.skipped(), truncated, max_text_length, fixed(plan.last_loss(), 4));
}

void TrainReporter::pairwise(const data::PairwiseCache::Stats& kept, int64_t budget_mb) {
  if (!leader_) return;
  if (budget_mb == 0) {
    log::info("train", "pairwise inputs recomputed at every step (--pairwise-cache-mb 0)");
    return;
  }
  log::info("train", "pairwise inputs of {} models kept in memory: {} (budget {} MiB){}",
            with_commas(kept.kept), human_bytes(static_cast<uint64_t>(kept.bytes)), budget_mb,
            kept.not_kept > 0 ? format("; {} computations were not kept for lack of budget: raise "
                                       "--pairwise-cache-mb to save them",
                                       with_commas(kept.not_kept))
                              : std::string());
}

}  // namespace cadclip::train
