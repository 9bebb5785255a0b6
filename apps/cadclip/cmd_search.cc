// cadclip search INDEX "text" ... | --like PART_FILE | --like-id ID: the best
// parts of an index for texts or a part, under filters, as a table, JSON or CSV.
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/index/filter.h"
#include "cadclip/index/result_export.h"
#include "cadclip/index/searcher.h"
#include "command.h"
#include "ingest_flags.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct SearchCommandOptions {
  std::string index;               // the index folder
  std::vector<std::string> texts;  // text queries (each answered in turn)
  std::string like;                // a CAD file to find similar parts to; empty = none
  std::string like_id;             // an indexed part's id to find similar parts to; empty = none
  std::string filter;              // conditions in the filter language (index/filter.h)
  double min_score = -2;           // leave out results scoring below; -2 = keep all
  bool strict_numbers = false;     // the facts a text states become hard conditions
  bool no_facts = false;           // rank by the embedding alone, not by the facts a text states
  double same_size_percent = 0;    // part queries: same size as the part ± this %; 0 = off
  bool ignore_mirrored = false;    // part queries: leave out the part's mirror images
  int64_t k = 10;                  // results per query
  bool json = false;               // JSON on stdout instead of a table
  std::string format = "table";    // table, json or csv
  std::string out;                 // write the answer to this file instead of stdout
  std::string checkpoint;          // empty = the one the index records (another is refused)
  int threads = 0;                 // intra-op threads; 0 = LibTorch's default (the cores)
  data::IngestLimits limits;       // what the --like part may cost to ingest
  // Query encoding's matmuls: fp32, bf16 or auto (bf16 where the CPU has it).
  std::string text_matmul = "auto";
};

CADCLIP_OPTION_FIELDS(
    SearchCommandOptions, (index, "Index folder made by cadclip index"), (texts, "Text queries"),
    (like, "A CAD file: find parts like it"), (like_id, "An indexed part's id: find parts like it"),
    (filter,
     "Conditions every result must meet, e.g. \"size<100 holes>=6 material=steel\" "
     "(docs/HTTP_API.md, Filters)"),
    (min_score, "Leave out results scoring below this"),
    (strict_numbers,
     "Make the facts a text states (\"under 100 mm\", \"six holes\", \"M8 nut\") hard conditions "
     "instead of ranking by them"),
    (no_facts,
     "Rank by the embedding alone; by default parts that meet more of the facts a text states "
     "come first"),
    (same_size_percent,
     "With --like/--like-id: only parts whose extents are within this percent of the part's"),
    (ignore_mirrored, "With --like/--like-id: leave out mirror images of the part"),
    (k, "Results per query"), (json, "Print JSON instead of a table (as --format json)"),
    (format, "table, json, or csv (a catalog export)"),
    (out, "Write to this file instead of stdout"),
    (checkpoint, "Checkpoint to search with; it must hold the index's weights"),
    (threads, "Intra-op threads; 0 = one per core"),
    (text_matmul,
     "Query encoding's matmuls: fp32, bf16, or auto (bf16 where the CPU has AMX or AVX512-BF16)"),
    (limits, "What the --like part may cost to ingest"))

// At most `width` characters of `text` (UTF-8 aware enough for a table: it
// never cuts inside a multi-byte character), with "..." when cut.
std::string clip(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  size_t end = width - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// What the table says about a part besides its caption: holes and the
// imported fields.
std::string about(const index::Item& item) {
  std::string text;
  if (!item.metadata.empty()) {
    std::vector<std::string> fields;
    for (const auto& [key, value] : item.metadata) fields.push_back(key + "=" + value);
    text = join(fields, " ");
  }
  const std::string described = item.caption.empty()
                                    ? std::filesystem::path(item.source).filename().string()
                                    : "\"" + clip(item.caption, 60) + "\"";
  return text.empty() ? described : text + "  " + described;
}

// One line per part with what a person judges it by: score, name, size,
// faces, round holes, and its imported fields and caption (or, without a
// caption, the file it came from); above them the filters applied.
void print_table(std::FILE* out, const std::string& query, const index::SearchResult& r) {
  std::fprintf(out, "query: %s\n", query.c_str());
  if (!r.applied.empty()) {
    std::vector<std::string> clauses;
    for (const index::Condition& c : r.applied.conditions)
      clauses.push_back(c.because.empty() ? c.to_string()
                                          : c.to_string() + " (\"" + c.because + "\")");
    if (r.applied.min_score) {
      index::Filter score;
      score.min_score = r.applied.min_score;
      clauses.push_back(score.to_string());
    }
    std::fprintf(out, "filters: %s; %s parts pass\n", join(clauses, ", ").c_str(),
                 with_commas(r.candidates).c_str());
  }
  std::string meets_header;
  if (!r.stated.empty()) {
    std::vector<std::string> facts;
    for (size_t f = 0; f < r.stated.size(); ++f)
      facts.push_back(
          format("[{}] {} (\"{}\")", f + 1, r.stated[f].to_string(), r.stated[f].because));
    std::fprintf(out, "facts: %s; %s parts meet all\n", join(facts, ", ").c_str(),
                 with_commas(r.meeting_all).c_str());
  }
  if (r.mirrored_left_out > 0)
    std::fprintf(out, "left out %lld mirror image(s) of the query part\n",
                 static_cast<long long>(r.mirrored_left_out));
  std::fprintf(out, "%4s  %6s  %-28s %-22s %5s %5s%s  %s\n", "rank", "score", "name", "size (mm)",
               "faces", "holes", r.stated.empty() ? "" : "  meets", "fields, caption, else source");
  for (const index::Hit& h : r.hits) {
    const index::Item& item = *h.item;
    char size[64];
    std::snprintf(size, sizeof size, "%.1f x %.1f x %.1f", item.size_mm[0], item.size_mm[1],
                  item.size_mm[2]);
    const std::string holes = item.holes >= 0 ? std::to_string(item.holes) : "?";
    std::string meets;  // "1 3" of facts [1] [2] [3]: the ones this part meets
    for (size_t f = 0; f < h.meets.size(); ++f)
      if (h.meets[f]) meets += (meets.empty() ? "" : ",") + std::to_string(f + 1);
    if (!r.stated.empty()) {
      if (meets.empty()) meets = "-";
      meets = "  " + std::string(meets.size() < 5 ? 5 - meets.size() : 0, ' ') + meets;
    }
    std::fprintf(out, "%4lld  %6.3f  %-28s %-22s %5lld %5s%s  %s\n", static_cast<long long>(h.rank),
                 h.score, clip(item.name, 28).c_str(), size, static_cast<long long>(item.faces),
                 holes.c_str(), meets.c_str(), about(item).c_str());
  }
}

int run_search(SearchCommandOptions o) {
  if (o.threads > 0) at::set_num_threads(o.threads);
  if (o.json) o.format = "json";
  const int kinds = (!o.texts.empty()) + (!o.like.empty()) + (!o.like_id.empty());
  if (kinds != 1)
    throw Error(
        "cadclip search needs exactly one kind of query: texts, --like "
        "FILE or --like-id ID");
  index::SearchOptions search;
  search.k = o.k;
  search.filter = index::parse_filter(o.filter);
  if (o.min_score > -2) search.filter.min_score = o.min_score;
  search.strict_numbers = o.strict_numbers;
  search.rank_by_facts = !o.no_facts;
  search.same_size = o.same_size_percent / 100;
  search.ignore_mirrored = o.ignore_mirrored;
  if (!o.texts.empty() && (search.same_size > 0 || search.ignore_mirrored))
    throw Error(
        "--same-size and --ignore-mirrored compare with a part: use them with --like or "
        "--like-id");
  index::SearcherOptions options;
  options.checkpoint = o.checkpoint;
  options.limits = o.limits;
  options.text_matmul = o.text_matmul;
  const index::Searcher searcher = index::Searcher::open(o.index, options);
  std::vector<std::pair<std::string, index::SearchResult>> answers;
  for (const std::string& text : o.texts)
    answers.emplace_back(text, searcher.query_text(text, search));
  if (!o.like.empty()) answers.emplace_back("like " + o.like, searcher.query_file(o.like, search));
  if (!o.like_id.empty())
    answers.emplace_back("like " + o.like_id, searcher.query_item(o.like_id, search));
  std::string text;
  if (o.format == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& [query, result] : answers)
      all.push_back(index::result_json(query, result,
                                       [](const index::Item& item) { return item.thumbnail; }));
    text = (answers.size() == 1 ? all[0] : all)
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
  } else if (o.format == "csv") {
    text = index::results_csv(answers);
  }
  std::FILE* out = stdout;
  if (!o.out.empty()) {
    out = std::fopen(o.out.c_str(), "w");
    if (!out) throw Error(format("--out {}: cannot write the file; check the folder", o.out));
  }
  if (o.format == "table") {
    // Which weights answered: the same index copied elsewhere says the same.
    const index::ModelInfo& model = searcher.model();
    std::fprintf(out, "index: %s (%s parts), model %s (sha256 %s)\n\n",
                 searcher.folder().string().c_str(), with_commas(searcher.size()).c_str(),
                 model.name.c_str(), model.sha256.substr(0, 16).c_str());
    for (size_t i = 0; i < answers.size(); ++i) {
      if (i) std::fprintf(out, "\n");
      print_table(out, answers[i].first, answers[i].second);
    }
  } else {
    std::fwrite(text.data(), 1, text.size(), out);
  }
  if (out != stdout && std::fclose(out) != 0)
    throw Error(format("--out {}: writing failed (disk full?)", o.out));
  return kExitOk;
}

}  // namespace

void define_search(CLI::App& command, Runner& run) {
  auto o = std::make_shared<SearchCommandOptions>();
  const ConfigFlags config(command, o);
  add_field(command, "index", *o, o->index)->required()->check(CLI::ExistingDirectory);
  add_field(command, "texts", *o, o->texts);
  add_field(command, "--like", *o, o->like)->check(CLI::ExistingFile);
  add_field(command, "--like-id", *o, o->like_id);
  add_field(command, "-k", *o, o->k)->capture_default_str()->check(CLI::PositiveNumber);
  add_field(command, "--filter", *o, o->filter);
  add_field(command, "--min-score", *o, o->min_score)->check(CLI::Range(-1.0, 1.0));
  add_switch(command, "--strict-numbers", *o, o->strict_numbers);
  add_switch(command, "--no-facts", *o, o->no_facts);
  add_field(command, "--same-size", *o, o->same_size_percent)->check(CLI::Range(0.0, 99.0));
  add_switch(command, "--ignore-mirrored", *o, o->ignore_mirrored);
  add_switch(command, "--json", *o, o->json);
  add_field(command, "--format", *o, o->format)
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "csv"}));
  add_field(command, "--out", *o, o->out);
  add_field(command, "--checkpoint", *o, o->checkpoint);
  add_field(command, "--threads", *o, o->threads)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_field(command, "--text-matmul", *o, o->text_matmul)
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}));
  add_ingest_limit_flags(command, o->limits, "the --like part");
  command.footer(
      "Exit status: 0 answered, 2 bad input (no index, another "
      "checkpoint, bad part, a filter that cannot be read).");
  run = config.or_print([o] { return run_search(*o); });
}

}  // namespace cadclip::app
