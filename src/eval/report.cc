#include "cadclip/eval/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>

#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/safetensors.h"

namespace cadclip::eval {

namespace {

constexpr int kEmbeddingsSchemaVersion = 1;

std::string percent(double share) { return fixed(100.0 * share, 1); }

}  // namespace

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
                      {"text_to_cad", level.text_to_cad},
                      {"cad_to_text", level.cad_to_text},
                      {"ceiling", level.ceiling},
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
          {"cad_to_cad", report.cad_to_cad},
          {"cad_to_cad_ok", report.cad_to_cad_ok},
          {"embeddings", {{"brep", report.brep}, {"text", report.text}}},
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
