#include "cadclip/eval/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/batch.h"
#include "cadclip/text/length_groups.h"
#include "cadclip/text/quantities.h"
#include "cadclip/text/text_model.h"

namespace cadclip::eval {

namespace {

constexpr int kEmbeddingsSchemaVersion = 1;

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

c10::Device module_device(const torch::nn::Module& module) {
  const std::vector<at::Tensor> params = module.parameters();
  return params.empty() ? c10::Device(c10::kCPU) : params.front().device();
}

// Known levels in their natural order (abstract .. expert), then the rest by name.
std::vector<std::string> ordered_levels(const std::set<std::string>& present) {
  std::vector<std::string> out;
  for (const char* level : data::kText2CadLevels) {
    if (present.count(level)) out.emplace_back(level);
  }
  for (const std::string& level : present) {
    if (std::find(out.begin(), out.end(), level) == out.end()) out.push_back(level);
  }
  return out;
}

nlohmann::json metrics_json(const RetrievalMetrics& m) {
  return {{"queries", m.queries},
          {"gallery", m.gallery},
          {"r1", m.r1},
          {"r5", m.r5},
          {"r10", m.r10},
          {"mrr", m.mrr},
          {"median_rank", m.median_rank},
          {"mean_rank", m.mean_rank},
          {"chance_r1", m.chance_r1}};
}

nlohmann::json diagnostics_json(const EmbeddingDiagnostics& d) {
  return {{"count", d.count},
          {"dim", d.dim},
          {"nan_count", d.nan_count},
          {"inf_count", d.inf_count},
          {"finite_rows", d.finite_rows},
          {"mean_norm", d.mean_norm},
          {"mean_dim_std", d.mean_dim_std},
          {"mean_pairwise_cosine", d.mean_pairwise_cosine},
          {"collapsed", d.collapsed},
          {"reason", d.reason}};
}

std::string percent(double share) { return fixed(100.0 * share, 1); }

}  // namespace

EvalReport evaluate(model::TwoTowerImpl& model, const text::Tokenizer& tokenizer,
                    int64_t max_text_length, const data::Dataset& dataset,
                    const std::vector<data::Caption>& captions,
                    const std::vector<std::string>& split_ids, const EvalOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.batch_size < 1) {
    throw Error(format("evaluation: batch size {} must be at least 1", options.batch_size));
  }
  const int64_t max_length = max_text_length;
  if (max_length < 2) {
    throw Error(
        format("evaluation: the maximum text length is {}; it must be at least 2 tokens "
               "([CLS] and [SEP]); set --max-text-length or the model's max_length",
               max_length));
  }

  EvalReport report;
  report.split = options.split;
  report.max_text_length = max_length;

  // The gallery: the split's unique models that the dataset holds.
  std::vector<int64_t> gallery_rows;                    // dataset index of each gallery item
  std::unordered_map<std::string, int64_t> gallery_of;  // id -> gallery position
  {
    std::unordered_set<std::string> seen;
    std::vector<std::string> missing_examples;
    for (const std::string& id : split_ids) {
      if (!seen.insert(id).second) continue;
      const std::optional<int64_t> row = dataset.find(id);
      if (!row) {
        ++report.missing;
        if (missing_examples.size() < 5) missing_examples.push_back(id);
        continue;
      }
      gallery_of.emplace(id, static_cast<int64_t>(gallery_rows.size()));
      gallery_rows.push_back(*row);
    }
    if (report.missing > 0) {
      log::warn("eval", "{} ids of split '{}' are not in the dataset (e.g. {}); they are left out",
                report.missing, options.split, join(missing_examples));
    }
  }
  const int64_t g_count = static_cast<int64_t>(gallery_rows.size());
  if (g_count == 0) {
    throw Error(
        format("evaluation: none of the {} ids of split '{}' is in the dataset ({} models); is "
               "it the split file of this prepared folder?",
               split_ids.size(), options.split, dataset.size()));
  }
  report.gallery = g_count;

  // The queries: the gallery's captions at the chosen levels.
  std::set<std::string> present;
  for (const data::Caption& c : captions) {
    if (gallery_of.count(c.id)) present.insert(c.level);
  }
  std::vector<std::string> levels;
  if (options.levels.empty()) {
    levels = ordered_levels(present);
    if (levels.empty()) {
      throw Error(
          format("evaluation: none of the {} models of split '{}' has a caption; the captions file "
                 "holds {} captions of other models",
                 g_count, options.split, captions.size()));
    }
  } else {
    for (const std::string& level : options.levels) {
      if (!present.count(level)) {
        throw Error(
            format("evaluation: level '{}' has no caption among the {} models of split '{}'; "
                   "levels there: {}",
                   level, g_count, options.split,
                   present.empty() ? std::string("none") : join(ordered_levels(present))));
      }
      if (std::find(levels.begin(), levels.end(), level) == levels.end()) levels.push_back(level);
    }
  }

  EvalEmbeddings& emb = report.embeddings;
  std::vector<int64_t> query_gallery;  // [Q] gallery position of each query's model
  std::vector<int64_t> query_row;      // [Q] row in the distinct texts
  std::vector<std::string> texts;      // distinct caption texts
  std::vector<std::vector<int64_t>> level_queries(levels.size());
  {
    std::unordered_map<std::string, int64_t> text_row;
    std::unordered_map<std::string, size_t> level_slot;
    for (size_t l = 0; l < levels.size(); ++l) level_slot.emplace(levels[l], l);
    for (const data::Caption& c : captions) {
      const auto g = gallery_of.find(c.id);
      const auto l = level_slot.find(c.level);
      if (g == gallery_of.end() || l == level_slot.end()) continue;
      const auto [it, inserted] = text_row.emplace(c.text, static_cast<int64_t>(texts.size()));
      if (inserted) texts.push_back(c.text);
      level_queries[l->second].push_back(static_cast<int64_t>(query_gallery.size()));
      query_gallery.push_back(g->second);
      query_row.push_back(it->second);
      emb.query_ids.push_back(c.id);
      emb.query_levels.push_back(c.level);
    }
  }
  {
    std::vector<char> captioned(g_count, 0);
    for (int64_t g : query_gallery) captioned[g] = 1;
    report.uncaptioned = g_count - std::accumulate(captioned.begin(), captioned.end(), int64_t{0});
  }

  // Each text tokenized once: the rows, and the lengths that tell which
  // captions the limit cuts.
  const text::TokenRows token_rows = text::tokenize_rows(tokenizer, texts, max_length);
  const std::vector<int64_t>& full_length = token_rows.full_lengths;

  torch::NoGradGuard no_grad;
  EvalModeGuard eval_mode(model);
  const c10::Device device = module_device(model);
  Progress progress("eval",
                    {.total = g_count + static_cast<int64_t>(texts.size()), .unit = "items"});

  // The B-Rep tower over the gallery.
  std::vector<at::Tensor> brep_parts;
  emb.gallery_ids.reserve(g_count);
  emb.gallery_hashes.reserve(g_count);
  for (int64_t begin = 0; begin < g_count; begin += options.batch_size) {
    const int64_t end = std::min(g_count, begin + options.batch_size);
    std::vector<data::BRepGraph> graphs;
    graphs.reserve(end - begin);
    for (int64_t g = begin; g < end; ++g) {
      graphs.push_back(dataset.graph(gallery_rows[g]));
      emb.gallery_ids.push_back(graphs.back().id);
      emb.gallery_hashes.push_back(graphs.back().geometry_hash);
    }
    brep_parts.push_back(model.encode_brep(graphs).to(at::kCPU, at::kFloat));
    progress.advance(end - begin, {{"tower", "brep"}});
  }
  emb.brep = at::cat(brep_parts).contiguous();
  const auto brep_done = std::chrono::steady_clock::now();

  // The text tower over the distinct texts, shortest first. A pass's pooled
  // features come from the cache when it holds every text of the pass, else
  // from the tower. A cached row comes from the pass its text was first
  // pooled in: bitwise what the tower gives now when the texts are the same at
  // every call (the trainer's validation); for other texts (eval's subsets)
  // it may differ in the last bits, as another batching of the same texts
  // would.
  at::Tensor distinct_text = at::empty({0, emb.brep.size(1)}, at::kFloat);  // [T, d]
  if (!texts.empty()) {
    PooledTextCache* cache = options.pooled_text_cache;
    distinct_text = text::forward_in_length_groups(
        token_rows, tokenizer.pad_id(), {.max_rows = options.batch_size}, device,
        [&](const at::Tensor& ids, const at::Tensor& mask, std::span<const int64_t> pass) {
          std::vector<std::string> chunk;
          chunk.reserve(pass.size());
          for (const int64_t i : pass) chunk.push_back(texts[static_cast<size_t>(i)]);
          at::Tensor pooled;
          if (cache && std::all_of(chunk.begin(), chunk.end(), [&](const std::string& t) {
                return cache->pooled.contains(t);
              })) {
            std::vector<at::Tensor> rows;
            rows.reserve(chunk.size());
            for (const std::string& t : chunk) rows.push_back(cache->pooled.at(t));
            pooled = at::stack(rows).to(device);
          } else {
            pooled = model.pool_text(ids, mask);
            if (cache)
              for (size_t i = 0; i < chunk.size(); ++i) cache->pooled[chunk[i]] = pooled[i].cpu();
          }
          const text::QuantityBatch quantities = model.reads_quantities()
                                                     ? text::quantity_batch(chunk).to(device)
                                                     : text::QuantityBatch{};
          progress.advance(static_cast<int64_t>(pass.size()), {{"tower", "text"}});
          return model.project_text(pooled, quantities);
        });
  }
  progress.finish();
  const auto text_done = std::chrono::steady_clock::now();
  emb.text = distinct_text.index_select(0, at::tensor(query_row, at::kLong)).contiguous();

  // Geometry groups: gallery items with equal (non-empty) hashes are the same part.
  std::vector<int64_t> group(g_count);
  std::vector<std::vector<int64_t>> members;
  {
    std::unordered_map<std::string, int64_t> group_of;
    for (int64_t g = 0; g < g_count; ++g) {
      const std::string& hash = emb.gallery_hashes[g];
      int64_t id = static_cast<int64_t>(members.size());
      if (!hash.empty()) id = group_of.emplace(hash, id).first->second;
      if (id == static_cast<int64_t>(members.size())) members.emplace_back();
      members[id].push_back(g);
      group[g] = id;
    }
  }
  report.distinct_geometry = static_cast<int64_t>(members.size());

  // Per level: text->CAD, CAD->text, the ceiling and the truncated captions.
  for (size_t l = 0; l < levels.size(); ++l) {
    const std::vector<int64_t>& qs = level_queries[l];
    LevelReport level;
    level.level = levels[l];
    const at::Tensor q_index = at::tensor(qs, at::kLong);
    const at::Tensor text = emb.text.index_select(0, q_index);  // [Ql, d]

    Positives to_cad(qs.size());
    std::vector<std::string> query_texts(qs.size());
    std::vector<std::vector<int64_t>> group_captions(members.size());  // group -> local queries
    std::vector<int64_t> models;  // gallery items with a caption at this level, gallery order
    {
      std::vector<char> has(g_count, 0);
      for (size_t j = 0; j < qs.size(); ++j) {
        const int64_t g = query_gallery[qs[j]];
        to_cad[j] = members[group[g]];
        query_texts[j] = texts[query_row[qs[j]]];
        group_captions[group[g]].push_back(static_cast<int64_t>(j));
        has[g] = 1;
        level.truncated += full_length[query_row[qs[j]]] > max_length;
      }
      for (int64_t g = 0; g < g_count; ++g) {
        if (has[g]) models.push_back(g);
      }
    }
    level.text_to_cad = retrieval_metrics(at::matmul(text, emb.brep.t()), to_cad);
    level.ceiling = caption_ceiling(query_texts, to_cad);

    Positives to_text;
    to_text.reserve(models.size());
    for (int64_t g : models) to_text.push_back(group_captions[group[g]]);
    const at::Tensor brep = emb.brep.index_select(0, at::tensor(models, at::kLong));
    level.cad_to_text = retrieval_metrics(at::matmul(brep, text.t()), to_text);
    if (level.truncated > 0) {
      log::info("eval", "level '{}': {} of {} captions are longer than {} tokens and were cut",
                level.level, level.truncated, qs.size(), max_length);
    }
    report.levels.push_back(std::move(level));
  }

  // CAD->CAD self-retrieval: each gallery embedding finds itself (or a part
  // with the same geometry) first, unless embeddings coincide across parts.
  {
    Positives self(g_count);
    for (int64_t g = 0; g < g_count; ++g) self[g] = members[group[g]];
    report.cad_to_cad = retrieval_metrics(at::matmul(emb.brep, emb.brep.t()), self);
    report.cad_to_cad_ok = report.cad_to_cad.r1 == 1.0;
    if (!report.cad_to_cad_ok) {
      log::warn("eval",
                "CAD->CAD SELF-RETRIEVAL FAILED: R@1 = {}% (must be 100%): {} of {} gallery parts "
                "do not find themselves first, so different parts share embeddings (collapse, "
                "NaN, or a broken B-Rep tower)",
                percent(report.cad_to_cad.r1),
                static_cast<int64_t>(std::llround((1.0 - report.cad_to_cad.r1) * g_count)),
                g_count);
    }
  }

  report.brep = diagnose_embeddings(emb.brep);
  report.text = diagnose_embeddings(distinct_text);
  if (report.brep.collapsed) {
    log::warn("eval", "B-REP EMBEDDINGS COLLAPSED: {}", report.brep.summary());
  }
  if (report.text.collapsed) {
    log::warn("eval", "TEXT EMBEDDINGS COLLAPSED: {}", report.text.summary());
  }
  const auto end = std::chrono::steady_clock::now();
  const auto seconds = [](auto from, auto to) {
    return fixed(std::chrono::duration<double>(to - from).count(), 2);
  };
  report.seconds = std::chrono::duration<double>(end - start).count();
  log::info("eval",
            "split '{}': {} parts read and embedded in {}s, {} distinct captions in {}s, scored "
            "in {}s",
            options.split, g_count, seconds(start, brep_done), texts.size(),
            seconds(brep_done, text_done), seconds(text_done, end));
  return report;
}

double mean_text_to_cad_r1(const EvalReport& report) {
  if (report.levels.empty()) return 0;
  double sum = 0;
  for (const LevelReport& level : report.levels) sum += level.text_to_cad.r1;
  return sum / static_cast<double>(report.levels.size());
}

std::string format_table(const EvalReport& report) {
  std::string out = format(
      "split {}: gallery {} parts ({} distinct geometries), {} missing, {} without captions; "
      "captions cut at {} tokens\n",
      report.split, with_commas(report.gallery), with_commas(report.distinct_geometry),
      with_commas(report.missing), with_commas(report.uncaptioned), report.max_text_length);
  char line[256];
  const auto metrics_row = [](const std::string& name, const RetrievalMetrics& m) {
    char row[256];
    std::snprintf(row, sizeof row, "%-14s %8lld %8lld %6s %6s %6s %6.3f %7.1f %8.1f %7s",
                  name.c_str(), static_cast<long long>(m.queries),
                  static_cast<long long>(m.gallery), percent(m.r1).c_str(), percent(m.r5).c_str(),
                  percent(m.r10).c_str(), m.mrr, m.median_rank, m.mean_rank,
                  percent(m.chance_r1).c_str());
    return std::string(row);
  };
  const auto header = [&](const char* title, const char* extra) {
    std::snprintf(line, sizeof line, "%-14s %8s %8s %6s %6s %6s %6s %7s %8s %7s%s\n", title,
                  "queries", "gallery", "R@1", "R@5", "R@10", "MRR", "MedR", "MeanR", "chance",
                  extra);
    return std::string(line);
  };
  out += "\n" + header("text->CAD", "  ceiling  shared  truncated");
  for (const LevelReport& level : report.levels) {
    out += metrics_row(level.level, level.text_to_cad);
    std::snprintf(
        line, sizeof line, "  %7s %7s %10lld\n", percent(level.ceiling.r1_ceiling).c_str(),
        percent(level.ceiling.shared_share).c_str(), static_cast<long long>(level.truncated));
    out += line;
  }
  if (report.levels.size() > 1) {
    out += format("{} mean R@1 over levels: {}%\n", std::string(14, ' '),
                  percent(mean_text_to_cad_r1(report)));
  }
  out += "\n" + header("CAD->text", "");
  for (const LevelReport& level : report.levels) {
    out += metrics_row(level.level, level.cad_to_text) + "\n";
  }
  out += "\n" + header("CAD->CAD", "");
  out += metrics_row("self", report.cad_to_cad) +
         (report.cad_to_cad_ok ? "  ok\n" : "  FAILED: must be 100%\n");
  out += "\nembeddings\n";
  out += "  brep  " + report.brep.summary() + "\n";
  out += "  text  " + report.text.summary() + "\n";
  if (!report.cad_to_cad_ok || report.brep.collapsed || report.text.collapsed) {
    out += "\nWARNING: this model's numbers are not trustworthy:";
    if (!report.cad_to_cad_ok) out += " CAD->CAD self-retrieval below 100%;";
    if (report.brep.collapsed) out += " B-Rep embeddings collapsed;";
    if (report.text.collapsed) out += " text embeddings collapsed;";
    out.back() = '\n';
  }
  out +=
      "R@k, chance, ceiling and shared in percent; ranks pessimistic about ties; parts with "
      "equal geometry hashes count as hits\n";
  return out;
}

nlohmann::json to_json(const EvalReport& report) {
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelReport& level : report.levels) {
    levels.push_back({{"level", level.level},
                      {"text_to_cad", metrics_json(level.text_to_cad)},
                      {"cad_to_text", metrics_json(level.cad_to_text)},
                      {"ceiling",
                       {{"queries", level.ceiling.queries},
                        {"shared_queries", level.ceiling.shared_queries},
                        {"shared_share", level.ceiling.shared_share},
                        {"r1_ceiling", level.ceiling.r1_ceiling}}},
                      {"truncated", level.truncated}});
  }
  return {{"split", report.split},
          {"gallery", report.gallery},
          {"distinct_geometry", report.distinct_geometry},
          {"missing", report.missing},
          {"uncaptioned", report.uncaptioned},
          {"max_text_length", report.max_text_length},
          {"levels", std::move(levels)},
          {"mean_text_to_cad_r1", mean_text_to_cad_r1(report)},
          {"cad_to_cad", metrics_json(report.cad_to_cad)},
          {"cad_to_cad_ok", report.cad_to_cad_ok},
          {"embeddings",
           {{"brep", diagnostics_json(report.brep)}, {"text", diagnostics_json(report.text)}}},
          {"seconds", report.seconds}};
}

void save_embeddings(const std::filesystem::path& path, const EvalEmbeddings& embeddings) {
  const auto check = [&](const at::Tensor& t, size_t rows, const char* name) {
    if (!t.defined() || t.dim() != 2 || t.size(0) != static_cast<int64_t>(rows)) {
      throw Error(format("save_embeddings {}: '{}' must be [{}, d] to match its ids, not {}",
                         path.string(), name, rows,
                         t.defined() ? format("{}", t.sizes()) : std::string("undefined")));
    }
  };
  check(embeddings.brep, embeddings.gallery_ids.size(), "brep");
  check(embeddings.text, embeddings.query_ids.size(), "text");
  if (embeddings.gallery_hashes.size() != embeddings.gallery_ids.size() ||
      embeddings.query_levels.size() != embeddings.query_ids.size()) {
    throw Error(format("save_embeddings {}: hashes or levels do not match the ids in count",
                       path.string()));
  }
  SafetensorsWriter writer;
  for (const auto& [name, tensor] :
       {std::pair<const char*, const at::Tensor&>{"brep", embeddings.brep},
        {"text", embeddings.text}}) {
    const at::Tensor values = tensor.to(at::kCPU, at::kFloat).contiguous();
    writer.add_f32(name, {values.size(0), values.size(1)},
                   std::span<const float>(values.data_ptr<float>(), values.numel()));
  }
  writer.set_metadata("format", "cadclip.embeddings");
  writer.set_metadata("schema_version", std::to_string(kEmbeddingsSchemaVersion));
  writer.set_metadata("brep_ids", nlohmann::json(embeddings.gallery_ids).dump());
  writer.set_metadata("brep_hashes", nlohmann::json(embeddings.gallery_hashes).dump());
  writer.set_metadata("text_ids", nlohmann::json(embeddings.query_ids).dump());
  writer.set_metadata("text_levels", nlohmann::json(embeddings.query_levels).dump());
  writer.write(path);
}

}  // namespace cadclip::eval
