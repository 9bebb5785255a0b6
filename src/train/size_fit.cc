#include "cadclip/train/size_fit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/data/prepared.h"
#include "cadclip/data/splits.h"
#include "cadclip/eval/evaluate.h"
#include "cadclip/model/size_head.h"
#include "cadclip/model/text_embedding.h"

namespace cadclip::train {

namespace fs = std::filesystem;

void SizeFitOptions::validate() const {
  if (data.empty()) throw Error("fit-sizes: name at least one prepared folder with --data");
  if (bins_per_decade <= 0)
    throw Error(format("--bins-per-decade {} is invalid: it must be positive (25 is usual)",
                       bins_per_decade));
  if (weights.empty()) throw Error("--weights names no weight; give at least one, e.g. 0.2");
  for (const double w : weights)
    if (!(w > 0 && std::isfinite(w)))
      throw Error(format("--weights {} is invalid: each weight must be positive", w));
  if (epochs < 1) throw Error(format("--epochs {} is invalid: at least 1", epochs));
  if (batch_size < 1) throw Error(format("--batch-size {} is invalid: at least 1", batch_size));
  if (text_batch < 1) throw Error(format("--text-batch {} is invalid: at least 1", text_batch));
  if (!(lr > 0 && std::isfinite(lr))) throw Error(format("--lr {} is invalid: positive", lr));
  if (!(weight_decay >= 0))
    throw Error(format("--weight-decay {} is invalid: 0 or more", weight_decay));
  if (select_every < 0)
    throw Error(
        format("--select-every {} is invalid: 0 (keep the last epoch) or more", select_every));
  if (!(embedding_dropout >= 0 && embedding_dropout < 1))
    throw Error(
        format("--embedding-dropout {} is invalid: at least 0 and below 1", embedding_dropout));
}

void to_json(nlohmann::json& json, const SizeFitReport& report) {
  nlohmann::json scores = nlohmann::json::array();
  for (const SizeWeightScore& s : report.scores)
    scores.push_back(
        {{"weight", s.weight}, {"bore_weight", s.bore_weight}, {"r1", s.r1}, {"mean", s.mean}});
  nlohmann::json rounds = nlohmann::json::array();
  for (const SizeFitRound& r : report.rounds)
    rounds.push_back({{"epoch", r.epoch}, {"validation_r1", r.mean}});
  json = {{"captions", report.captions},
          {"captions_with_numbers", report.captions_with_numbers},
          {"nll", report.nll},
          {"validation_r1_alone", report.alone_mean},
          {"validation_r1_by_weight", scores},
          {"validation_r1_by_epoch", rounds},
          {"epoch", report.epoch},
          {"validation_r1", report.validation_mean},
          {"weight", report.weight},
          {"bore_weight", report.bore_weight},
          {"seconds", report.seconds}};
}

namespace {

// What the head learns to predict of one part: its log10 box sides, and its
// central bore as model::log_bore gives it.
struct PartSize {
  std::array<float, 3> sides{};
  std::array<float, 2> bore{};
};

// The train split's captions of one folder and their parts' sizes.
struct TrainingCaptions {
  std::vector<std::string> texts;
  std::vector<PartSize> sizes;
};

void add_training_captions(const data::PreparedData& prepared, const fs::path& folder, bool bore,
                           TrainingCaptions& out) {
  const std::vector<std::string>& train = prepared.splits.of(data::Split::kTrain);
  const std::unordered_set<std::string> in_train(train.begin(), train.end());
  std::unordered_map<std::string, PartSize> sizes_of;
  const size_t before = out.texts.size();
  for (const data::Caption& c : prepared.captions.captions) {
    if (!in_train.contains(c.id)) continue;
    auto it = sizes_of.find(c.id);
    if (it == sizes_of.end()) {
      const std::optional<int64_t> row = prepared.dataset.find(c.id);
      if (!row) continue;  // a caption of a part that did not build
      const data::BRepGraph graph = prepared.dataset.graph(*row);
      PartSize size{model::log_box_sides(graph), {}};
      if (bore) size.bore = model::log_bore(graph);
      it = sizes_of.emplace(c.id, size).first;
    }
    out.texts.push_back(c.text);
    out.sizes.push_back(it->second);
  }
  if (out.texts.size() == before)
    throw Error(
        format("fit-sizes: {} has no captioned part in its train split; name a prepared "
               "folder with captions.jsonl and a train split",
               folder.string()));
}

// One validation split, fixed while the head learns: each caption's cosine
// with every part, what the head reads of it, and the parts' side of the
// block; and which parts each caption counts as its own.
struct ValidationSplit {
  at::Tensor cosine;  // [Q, G]
  at::Tensor inputs;  // [Q, head input width]: the embedding and the numbers
  at::Tensor stated;  // [Q, 1]: 1 where the caption states a number
  at::Tensor parts;   // [G, block width]: the parts' sides in bins (q)
  at::Tensor own;     // [Q, G] bool: its part or a twin
};

// The block's scores of one split under the head as it is now: the box's and
// the bore's terms at weight 1.
struct BlockScores {
  at::Tensor box, bore;  // [Q, G]; bore undefined without the bore side
};

ValidationSplit validation_split(model::BuiltModel& built, const data::PreparedData& prepared,
                                 const fs::path& folder) {
  const std::vector<std::string>& ids = prepared.splits.of(data::Split::kValidation);
  if (ids.empty())
    throw Error(
        format("fit-sizes: {} has an empty validation split, which chooses the size "
               "block's weight; prepare it with a validation share",
               folder.string()));
  eval::EvalOptions options;
  options.split = "validation";
  const eval::EvalReport report =
      eval::evaluate(*built.model, *built.text.tokenizer, built.text.max_length, prepared.dataset,
                     prepared.captions.captions, ids, options);
  const eval::EvalEmbeddings& e = report.embeddings;
  // The head was added at weight 1, so the parts' block columns are q itself.
  const int64_t d = built.model->options().embed_dim;
  ValidationSplit split;
  const at::Tensor embedded = e.text.narrow(1, 0, d);
  split.cosine = at::matmul(embedded, e.brep.narrow(1, 0, d).t());
  const at::Tensor numbers =
      model::size_number_features(e.query_texts, built.model->size_head->bore());
  split.inputs = at::cat({embedded, numbers}, 1);
  split.stated = numbers.select(1, 0).unsqueeze(1);
  split.parts = e.brep.narrow(1, d, e.brep.size(1) - d);
  const auto q = static_cast<int64_t>(e.query_ids.size());
  const auto g = static_cast<int64_t>(e.gallery_ids.size());
  std::unordered_map<std::string, int64_t> part_row;
  for (int64_t j = 0; j < g; ++j) part_row.emplace(e.gallery_ids[static_cast<size_t>(j)], j);
  split.own = at::zeros({q, g}, at::kBool);
  auto own = split.own.accessor<bool, 2>();
  for (int64_t i = 0; i < q; ++i) {
    const int64_t part = part_row.at(e.query_ids[static_cast<size_t>(i)]);
    const std::string& hash = e.gallery_hashes[static_cast<size_t>(part)];
    for (int64_t j = 0; j < g; ++j)
      own[i][j] = j == part || (!hash.empty() && e.gallery_hashes[static_cast<size_t>(j)] == hash);
  }
  return split;
}

BlockScores block_scores(model::SizeHead& head, const ValidationSplit& split) {
  c10::InferenceMode inference;
  const at::Tensor p = head->probabilities(split.inputs) * split.stated;
  const int64_t box = head->box_width();
  BlockScores scores;
  scores.box = at::matmul(p.narrow(1, 0, box), split.parts.narrow(1, 0, box).t());
  if (head->bore()) {
    const int64_t rest = head->block_width() - box;
    scores.bore = at::matmul(p.narrow(1, box, rest), split.parts.narrow(1, box, rest).t());
  }
  return scores;
}

// Text->CAD R@1 at the box's `weight` and the bore's `bore_weight`, counted
// as `cadclip eval` counts: a part of equal geometry is the part, and a tie
// with another part counts against it.
double r1_at(const ValidationSplit& split, const BlockScores& block, double weight,
             double bore_weight) {
  at::Tensor score = split.cosine + weight * block.box;
  if (block.bore.defined()) score = score + bore_weight * block.bore;
  const at::Tensor best_own = std::get<0>(score.masked_fill(~split.own, -INFINITY).max(1));
  const at::Tensor beaten = (score >= best_own.unsqueeze(1)).logical_and(~split.own).any(1);
  return 1.0 - beaten.to(at::kDouble).mean().item<double>();
}

// The validation splits' R@1 at every candidate weight (with the bore side,
// every pair: the bore may deserve less, or more, than the box) under the
// head as it is now.
std::vector<SizeWeightScore> score_weights(model::SizeHead& head,
                                           const std::vector<ValidationSplit>& validation,
                                           const SizeFitOptions& o) {
  std::vector<BlockScores> blocks;
  for (const ValidationSplit& split : validation) blocks.push_back(block_scores(head, split));
  const std::vector<double> bore_weights = o.bore ? o.weights : std::vector<double>{0.0};
  std::vector<SizeWeightScore> scores;
  for (const double w : o.weights) {
    for (const double wb : bore_weights) {
      SizeWeightScore& s = scores.emplace_back();
      s.weight = w;
      s.bore_weight = wb;
      for (size_t f = 0; f < validation.size(); ++f) {
        s.r1.push_back(r1_at(validation[f], blocks[f], w, wb));
        s.mean += s.r1.back();
      }
      s.mean /= static_cast<double>(validation.size());
    }
  }
  return scores;
}

const SizeWeightScore& best_score(const std::vector<SizeWeightScore>& scores) {
  return *std::max_element(scores.begin(), scores.end(),
                           [](const auto& a, const auto& b) { return a.mean < b.mean; });
}

// The captions' inputs with their embedding columns (the first `width`)
// dropped at rate p and the rest scaled up; the numbers stay whole, so that
// the head learns to read sizes from them rather than recall a caption.
at::Tensor with_embedding_dropout(const at::Tensor& inputs, int64_t width, double p) {
  if (p <= 0) return inputs;
  const at::Tensor keep = at::bernoulli(at::full({inputs.size(0), width}, 1 - p)) / (1 - p);
  return at::cat(
      {inputs.narrow(1, 0, width) * keep, inputs.narrow(1, width, inputs.size(1) - width)}, 1);
}

// One pass over the training captions in a random order -> the mean loss.
double train_epoch(model::SizeHead& head, torch::optim::Optimizer& optimizer,
                   const at::Tensor& inputs, const at::Tensor& sides, const at::Tensor& bores,
                   const SizeFitOptions& o) {
  const int64_t n = inputs.size(0);
  const int64_t width = inputs.size(1) - model::size_number_inputs(o.bore);
  const at::Tensor order = at::randperm(n, at::kLong);
  double total = 0;
  for (int64_t begin = 0; begin < n; begin += o.batch_size) {
    const at::Tensor batch = order.narrow(0, begin, std::min(o.batch_size, n - begin));
    const at::Tensor x =
        with_embedding_dropout(inputs.index_select(0, batch), width, o.embedding_dropout);
    const at::Tensor loss = head->nll(x, sides.index_select(0, batch),
                                      o.bore ? bores.index_select(0, batch) : at::Tensor());
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    total += loss.item<double>() * static_cast<double>(batch.size(0));
  }
  return total / static_cast<double>(n);
}

// Trains `head` on the captions' inputs towards their parts' sides (and
// bores, with the bore side), scoring the validation splits every
// o.select_every epochs and after the last; keeps the head and weights that
// scored best (report.epoch, report.scores, report.weight).
void train_head(model::SizeHead& head, const at::Tensor& inputs, const at::Tensor& sides,
                const at::Tensor& bores, const std::vector<ValidationSplit>& validation,
                const SizeFitOptions& o, SizeFitReport& report) {
  head->to(at::kCPU);
  torch::optim::AdamW optimizer(head->parameters(),
                                torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  std::vector<at::Tensor> kept;
  double best = -1;
  for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    head->train();
    report.nll.push_back(train_epoch(head, optimizer, inputs, sides, bores, o));
    if (!std::isfinite(report.nll.back()))
      throw Error(format("fit-sizes: the size head's loss is {} at epoch {}; lower --lr",
                         report.nll.back(), epoch));
    const bool last = epoch == o.epochs;
    if (!last && (o.select_every == 0 || epoch % o.select_every != 0)) continue;
    head->eval();
    std::vector<SizeWeightScore> scores = score_weights(head, validation, o);
    const SizeWeightScore& top = best_score(scores);
    report.rounds.push_back({.epoch = epoch, .mean = top.mean});
    log::info("fit-sizes", "epoch {}: negative log likelihood {}, validation R@1 {}% at weight {}",
              epoch, fixed(report.nll.back(), 3), fixed(100 * top.mean, 1), top.weight);
    if (top.mean <= best) continue;
    best = top.mean;
    report.validation_mean = top.mean;
    report.epoch = epoch;
    report.weight = top.weight;
    report.bore_weight = o.bore ? top.bore_weight : top.weight;
    report.scores = std::move(scores);
    kept.clear();
    for (const at::Tensor& p : head->parameters()) kept.push_back(p.detach().clone());
  }
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor> params = head->parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(kept[i]);
  head->eval();
}

}  // namespace

SizeFitReport fit_size_head(model::BuiltModel& built, const SizeFitOptions& o) {
  o.validate();
  if (built.model->size_head)
    throw Error(
        "fit-sizes: the checkpoint has a size block already; fit one to the checkpoint it was "
        "fitted to");
  const auto start = std::chrono::steady_clock::now();
  SizeFitReport report;
  std::vector<data::PreparedData> folders;
  TrainingCaptions training;
  for (const std::string& folder : o.data) {
    folders.push_back(data::open_prepared({fs::path(folder)}));
    add_training_captions(folders.back(), folder, o.bore, training);
  }
  report.captions = static_cast<int64_t>(training.texts.size());
  for (const std::string& t : training.texts)
    report.captions_with_numbers += model::states_a_number(t);
  log::info("fit-sizes", "{} training captions ({} state a number) from {} folders",
            report.captions, report.captions_with_numbers, o.data.size());

  // The captions' embeddings are fixed: the towers do not change.
  at::Tensor inputs;
  {
    c10::InferenceMode inference;
    built.model->eval();
    const at::Tensor embedded =
        model::embed_texts(built, training.texts, {.max_rows = o.text_batch});
    inputs = at::cat({embedded, model::size_number_features(training.texts, o.bore)}, 1);
  }
  inputs = inputs.clone();  // out of inference mode, for autograd
  at::Tensor sides = at::empty({report.captions, 3}, at::kFloat);
  at::Tensor bores = at::empty({report.captions, 2}, at::kFloat);
  for (int64_t i = 0; i < report.captions; ++i) {
    const PartSize& size = training.sizes[static_cast<size_t>(i)];
    for (int64_t k = 0; k < 3; ++k) sides[i][k] = size.sides[k];
    for (int64_t k = 0; k < 2; ++k) bores[i][k] = size.bore[k];
  }
  if (o.bore)
    log::info("fit-sizes", "{} of the training captions' parts have a central bore",
              bores.select(1, 1).sum().item<int64_t>());

  // The head at weight 1, so that the parts' block columns are q itself; the
  // validation splits are embedded once, before it learns.
  torch::manual_seed(o.seed);
  built.model->add_size_head(o.bins_per_decade, 1.0, o.bore, o.pointer);
  model::SizeHead head = built.model->size_head;
  std::vector<ValidationSplit> validation;
  for (size_t f = 0; f < folders.size(); ++f)
    validation.push_back(validation_split(built, folders[f], o.data[f]));
  for (const ValidationSplit& split : validation)
    report.alone_mean += r1_at(split, {at::zeros_like(split.cosine), {}}, 0, 0);
  report.alone_mean /= static_cast<double>(validation.size());
  train_head(head, inputs, sides, bores, validation, o, report);
  head->to(built.model->brep_head->weight.device());
  for (const SizeWeightScore& s : report.scores)
    log::info("fit-sizes", "weight {}{}: validation R@1 {}% (without the block {}%)", s.weight,
              o.bore ? format(", bore weight {}", s.bore_weight) : std::string(),
              fixed(100 * s.mean, 1), fixed(100 * report.alone_mean, 1));
  built.model->set_size_weights(report.weight, report.bore_weight);
  built.config.two_tower.size_bins_per_decade = o.bins_per_decade;
  built.config.two_tower.size_weight = report.weight;
  built.config.two_tower.size_bore_weight = report.bore_weight;
  built.config.two_tower.size_bore = o.bore;
  built.config.two_tower.size_pointer = o.pointer;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log::info("fit-sizes", "kept the head of epoch {}; chose weight {}{} in {} s", report.epoch,
            report.weight, o.bore ? format(", bore weight {}", report.bore_weight) : std::string(),
            fixed(report.seconds, 0));
  return report;
}

}  // namespace cadclip::train
