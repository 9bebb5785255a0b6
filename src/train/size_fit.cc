#include "cadclip/train/size_fit.h"

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
  if (!(weight_decay >= 0)) throw Error(format("--weight-decay {} is invalid", weight_decay));
}

void to_json(nlohmann::json& json, const SizeFitReport& report) {
  nlohmann::json scores = nlohmann::json::array();
  for (const SizeWeightScore& s : report.scores)
    scores.push_back(
        {{"weight", s.weight}, {"bore_weight", s.bore_weight}, {"r1", s.r1}, {"mean", s.mean}});
  json = {{"captions", report.captions},
          {"captions_with_numbers", report.captions_with_numbers},
          {"nll", report.nll},
          {"validation_r1_alone", report.alone_mean},
          {"validation_r1_by_weight", scores},
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

// One validation split's scores of every caption against every part: the
// cosine and the size block's box and bore terms at weight 1, and which
// parts each caption counts as its own.
struct ValidationRows {
  at::Tensor cosine, box, bore;  // [Q, G]; bore undefined without the bore side
  at::Tensor own;                // [Q, G] bool: its part or a twin
};

ValidationRows validation_rows(model::BuiltModel& built, const data::PreparedData& prepared,
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
  // The head was added at weight 1 for both sides, so the block's columns
  // are p and q themselves.
  const int64_t d = built.model->options().embed_dim;
  const int64_t box = built.model->size_head->box_width();
  const int64_t bore = built.model->search_dim() - d - box;
  ValidationRows rows;
  rows.cosine = at::matmul(e.text.narrow(1, 0, d), e.brep.narrow(1, 0, d).t());
  rows.box = at::matmul(e.text.narrow(1, d, box), e.brep.narrow(1, d, box).t());
  if (bore > 0)
    rows.bore = at::matmul(e.text.narrow(1, d + box, bore), e.brep.narrow(1, d + box, bore).t());
  const auto q = static_cast<int64_t>(e.query_ids.size());
  const auto g = static_cast<int64_t>(e.gallery_ids.size());
  std::unordered_map<std::string, int64_t> part_row;
  for (int64_t j = 0; j < g; ++j) part_row.emplace(e.gallery_ids[static_cast<size_t>(j)], j);
  rows.own = at::zeros({q, g}, at::kBool);
  auto own = rows.own.accessor<bool, 2>();
  for (int64_t i = 0; i < q; ++i) {
    const int64_t part = part_row.at(e.query_ids[static_cast<size_t>(i)]);
    const std::string& hash = e.gallery_hashes[static_cast<size_t>(part)];
    for (int64_t j = 0; j < g; ++j)
      own[i][j] = j == part || (!hash.empty() && e.gallery_hashes[static_cast<size_t>(j)] == hash);
  }
  return rows;
}

// Text->CAD R@1 at the box's `weight` and the bore's `bore_weight`, counted
// as `cadclip eval` counts: a part of equal geometry is the part, and a tie
// with another part counts against it.
double r1_at(const ValidationRows& rows, double weight, double bore_weight) {
  at::Tensor score = rows.cosine + weight * rows.box;
  if (rows.bore.defined()) score = score + bore_weight * rows.bore;
  const at::Tensor best_own = std::get<0>(score.masked_fill(~rows.own, -INFINITY).max(1));
  const at::Tensor beaten = (score >= best_own.unsqueeze(1)).logical_and(~rows.own).any(1);
  return 1.0 - beaten.to(at::kDouble).mean().item<double>();
}

// Trains `head` on the captions' inputs towards their parts' sides (and
// bores, with the bore side); the mean loss per epoch goes to report.nll.
void train_head(model::SizeHead& head, const at::Tensor& inputs, const at::Tensor& sides,
                const at::Tensor& bores, const SizeFitOptions& o, SizeFitReport& report) {
  head->to(at::kCPU);
  head->train();
  torch::optim::AdamW optimizer(head->parameters(),
                                torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  const int64_t n = inputs.size(0);
  for (int64_t epoch = 0; epoch < o.epochs; ++epoch) {
    const at::Tensor order = at::randperm(n, at::kLong);
    double total = 0;
    for (int64_t begin = 0; begin < n; begin += o.batch_size) {
      const at::Tensor batch = order.narrow(0, begin, std::min(o.batch_size, n - begin));
      const at::Tensor loss = head->nll(inputs.index_select(0, batch), sides.index_select(0, batch),
                                        o.bore ? bores.index_select(0, batch) : at::Tensor());
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      total += loss.item<double>() * static_cast<double>(batch.size(0));
    }
    report.nll.push_back(total / static_cast<double>(n));
    if (!std::isfinite(report.nll.back()))
      throw Error(format("fit-sizes: the size head's loss is {} at epoch {}; lower --lr",
                         report.nll.back(), epoch + 1));
    if ((epoch + 1) % 10 == 0 || epoch + 1 == o.epochs)
      log::info("fit-sizes", "epoch {}: negative log likelihood {}", epoch + 1,
                fixed(report.nll.back(), 3));
  }
  head->eval();
}

// Scores every candidate weight (with the bore side, every pair: the bore
// may deserve less, or more, than the box) on the validation splits, and
// keeps the best in report.weight and report.bore_weight.
void choose_weights(const std::vector<ValidationRows>& validation, const SizeFitOptions& o,
                    SizeFitReport& report) {
  auto mean_r1 = [&](double weight, double bore_weight, std::vector<double>* each) {
    double sum = 0;
    for (const ValidationRows& rows : validation) {
      const double r1 = r1_at(rows, weight, bore_weight);
      if (each) each->push_back(r1);
      sum += r1;
    }
    return sum / static_cast<double>(validation.size());
  };
  report.alone_mean = mean_r1(0.0, 0.0, nullptr);
  const std::vector<double> bore_weights = o.bore ? o.weights : std::vector<double>{0.0};
  double best = -1;
  for (const double w : o.weights) {
    SizeWeightScore best_here;
    best_here.mean = -1;
    for (const double wb : bore_weights) {
      SizeWeightScore& s = report.scores.emplace_back();
      s.weight = w;
      s.bore_weight = wb;
      s.mean = mean_r1(w, wb, &s.r1);
      if (s.mean > best_here.mean) best_here = s;
      if (s.mean > best) {
        best = s.mean;
        report.weight = w;
        report.bore_weight = wb;
      }
    }
    log::info("fit-sizes", "weight {}{}: validation R@1 {}% (without the block {}%)", w,
              o.bore ? format(", bore weight {}", best_here.bore_weight) : std::string(),
              fixed(100 * best_here.mean, 1), fixed(100 * report.alone_mean, 1));
  }
  if (!o.bore) report.bore_weight = report.weight;
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

  torch::manual_seed(o.seed);
  built.model->add_size_head(o.bins_per_decade, 1.0, o.bore);
  model::SizeHead head = built.model->size_head;
  train_head(head, inputs, sides, bores, o, report);
  head->to(built.model->brep_head->weight.device());

  std::vector<ValidationRows> validation;
  for (size_t f = 0; f < folders.size(); ++f)
    validation.push_back(validation_rows(built, folders[f], o.data[f]));
  choose_weights(validation, o, report);
  built.model->set_size_weights(report.weight, report.bore_weight);
  built.config.two_tower.size_bins_per_decade = o.bins_per_decade;
  built.config.two_tower.size_weight = report.weight;
  built.config.two_tower.size_bore_weight = report.bore_weight;
  built.config.two_tower.size_bore = o.bore;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log::info("fit-sizes", "chose weight {}{} in {} s", report.weight,
            o.bore ? format(", bore weight {}", report.bore_weight) : std::string(),
            fixed(report.seconds, 0));
  return report;
}

}  // namespace cadclip::train
