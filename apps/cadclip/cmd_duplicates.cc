// cadclip duplicates INDEX: the index's duplicate parts as clusters (exact:
// same geometry; mirrored: mirror images; near: embedding and size), as a
// table, JSON or CSV.
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/index/duplicates.h"
#include "cadclip/index/result_export.h"
#include "cadclip/index/searcher.h"
#include "command.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct DuplicatesCommandOptions {
  std::string index;                          // the index folder
  std::string kinds = "exact,mirrored,near";  // which clusters to find
  double min_score = 0.97;                    // near: cosine at least this
  double size_percent = 2;                    // near: extents within ± this percent
  int64_t neighbours = 10;                    // near: candidates per part from the vector index
  std::string filter;                         // compare only the parts that pass (filter language)
  std::string format = "table";               // table, json or csv
  std::string out;                            // write here instead of stdout
  int threads = 0;                            // intra-op threads; 0 = LibTorch's default
};

CADCLIP_OPTION_FIELDS(DuplicatesCommandOptions, (index, "Index folder made by cadclip index"),
                      (kinds, "Which clusters: exact, mirrored, near (comma list)"),
                      (min_score, "Near duplicates: cosine similarity at least"),
                      (size_percent, "Near duplicates: extents within this percent of each other"),
                      (neighbours,
                       "Near duplicates: candidates per part taken from the vector index"),
                      (filter, "Compare only the parts that pass, e.g. \"type=step size<200\""),
                      (format, "table, json or csv"), (out, "Write to this file instead of stdout"),
                      (threads, "Intra-op threads; 0 = one per core"))

nlohmann::json report_json(const index::DuplicateReport& r) {
  nlohmann::json clusters = nlohmann::json::array();
  for (const index::DuplicateCluster& c : r.clusters) {
    nlohmann::json members = nlohmann::json::array();
    for (const index::DuplicateMember& m : c.members) {
      nlohmann::json j = index::item_json(*m.item, m.item->thumbnail);
      j["score"] = m.score;
      j["geometry_hash"] = m.item->geometry_hash;
      members.push_back(std::move(j));
    }
    clusters.push_back({{"kind", c.kind}, {"min_score", c.min_score}, {"members", members}});
  }
  return {{"parts", r.parts},
          {"parts_in_clusters",
           {{"exact", r.exact_parts}, {"mirrored", r.mirrored_parts}, {"near", r.near_parts}}},
          {"seconds", r.seconds},
          {"clusters", clusters}};
}

void print_table(std::FILE* out, const index::DuplicateReport& r) {
  std::fprintf(out,
               "%s parts compared in %.2f s: %s in exact, %s in mirrored, %s in near-duplicate "
               "clusters\n",
               with_commas(r.parts).c_str(), r.seconds, with_commas(r.exact_parts).c_str(),
               with_commas(r.mirrored_parts).c_str(), with_commas(r.near_parts).c_str());
  for (size_t c = 0; c < r.clusters.size(); ++c) {
    const index::DuplicateCluster& cluster = r.clusters[c];
    std::fprintf(out, "\ncluster %zu: %s, %zu parts, lowest score %.3f\n", c + 1,
                 cluster.kind.c_str(), cluster.members.size(), cluster.min_score);
    for (const index::DuplicateMember& m : cluster.members) {
      char size[64];
      std::snprintf(size, sizeof size, "%.1f x %.1f x %.1f", m.item->size_mm[0], m.item->size_mm[1],
                    m.item->size_mm[2]);
      std::fprintf(out, "  %6.3f  %-32s %-22s %5lld faces  %s\n", m.score, m.item->name.c_str(),
                   size, static_cast<long long>(m.item->faces), m.item->source.c_str());
    }
  }
}

int run_duplicates(const DuplicatesCommandOptions& o) {
  if (o.threads > 0) at::set_num_threads(o.threads);
  index::DuplicateOptions options;
  options.exact = options.mirrored = options.near = false;
  for (size_t at = 0; at <= o.kinds.size();) {
    const size_t comma = std::min(o.kinds.find(',', at), o.kinds.size());
    const std::string kind = o.kinds.substr(at, comma - at);
    at = comma + 1;
    if (kind == "exact") {
      options.exact = true;
    } else if (kind == "mirrored") {
      options.mirrored = true;
    } else if (kind == "near") {
      options.near = true;
    } else {
      throw Error(format("--kinds: '{}' is no kind of duplicate; use exact, mirrored, near", kind));
    }
  }
  options.min_score = o.min_score;
  options.size_tolerance = o.size_percent / 100;
  options.neighbours = o.neighbours;
  options.filter = index::parse_filter(o.filter);
  // Duplicates compare stored embeddings: the model is not needed.
  index::SearcherOptions without_model;
  without_model.load_model = false;
  const index::Searcher searcher = index::Searcher::open(o.index, without_model);
  const index::DuplicateReport report = index::find_duplicates(searcher, options);
  std::FILE* out = stdout;
  if (!o.out.empty()) {
    out = std::fopen(o.out.c_str(), "w");
    if (!out) throw Error(format("--out {}: cannot write the file; check the folder", o.out));
  }
  if (o.format == "json") {
    const std::string text =
        report_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), out);
  } else if (o.format == "csv") {
    const std::string text = index::duplicates_csv(report);
    std::fwrite(text.data(), 1, text.size(), out);
  } else {
    print_table(out, report);
  }
  if (out != stdout && std::fclose(out) != 0)
    throw Error(format("--out {}: writing failed (disk full?)", o.out));
  return report.clusters.empty() ? kExitOk : kExitFindings;
}

}  // namespace

void define_duplicates(CLI::App& command, Runner& run) {
  auto o = std::make_shared<DuplicatesCommandOptions>();
  const ConfigFlags config(command, o);
  add_field(command, "index", *o, o->index)->required()->check(CLI::ExistingDirectory);
  add_field(command, "--kinds", *o, o->kinds)->capture_default_str();
  add_field(command, "--min-score", *o, o->min_score)
      ->capture_default_str()
      ->check(CLI::Range(-1.0, 1.0));
  add_field(command, "--size-tolerance", *o, o->size_percent)
      ->capture_default_str()
      ->check(CLI::Range(0.0, 99.0));
  add_field(command, "--neighbours", *o, o->neighbours)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--filter", *o, o->filter);
  add_field(command, "--format", *o, o->format)
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "csv"}));
  add_field(command, "--out", *o, o->out);
  add_field(command, "--threads", *o, o->threads)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.footer("Exit status: 0 no duplicates, 1 clusters found, 2 bad input.");
  run = config.or_print([o] { return run_duplicates(*o); });
}

}  // namespace cadclip::app
