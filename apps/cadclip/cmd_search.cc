// cadclip search INDEX "text" ... | --like PART_FILE | --like-id ID: the best
// parts of an index for texts or a part, with scores, names and paths.
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
#include "cadclip/index/searcher.h"
#include "command.h"

namespace cadclip::app {
namespace {

struct SearchCommandOptions {
  std::string index;               // the index folder
  std::vector<std::string> texts;  // text queries (each answered in turn)
  std::string like;                // a CAD file to find similar parts to; empty = none
  std::string like_id;             // an indexed part's id to find similar parts to; empty = none
  int64_t k = 10;                  // results per query
  bool json = false;               // JSON on stdout instead of a table
  std::string checkpoint;          // empty = the one the index records (another is refused)
  int threads = 0;                 // intra-op threads; 0 = LibTorch's default (the cores)
};

nlohmann::json hits_json(const std::vector<index::Hit>& hits) {
  nlohmann::json out = nlohmann::json::array();
  for (const index::Hit& h : hits) {
    const index::Item& item = *h.item;
    out.push_back({{"rank", h.rank},
                   {"score", h.score},
                   {"id", item.id},
                   {"name", item.name},
                   {"size_mm", {item.size_mm[0], item.size_mm[1], item.size_mm[2]}},
                   {"faces", item.faces},
                   {"caption", item.caption},
                   {"source", item.source},
                   {"thumbnail", item.thumbnail}});
  }
  return out;
}

// At most `width` characters of `text` (UTF-8 aware enough for a table: it
// never cuts inside a multi-byte character), with "..." when cut.
std::string clip(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  size_t end = width - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// One line per part with what a person judges it by: score, name, size,
// faces, and its caption (or, without one, the file it came from).
void print_table(const std::string& query, const std::vector<index::Hit>& hits) {
  std::printf("query: %s\n", query.c_str());
  std::printf("%4s  %6s  %-28s %-22s %5s  %s\n", "rank", "score", "name", "size (mm)", "faces",
              "caption, else source");
  for (const index::Hit& h : hits) {
    const index::Item& item = *h.item;
    char size[64];
    std::snprintf(size, sizeof size, "%.1f x %.1f x %.1f", item.size_mm[0], item.size_mm[1],
                  item.size_mm[2]);
    const std::string about = item.caption.empty()
                                  ? std::filesystem::path(item.source).filename().string()
                                  : "\"" + clip(item.caption, 60) + "\"";
    std::printf("%4lld  %6.3f  %-28s %-22s %5lld  %s\n", static_cast<long long>(h.rank), h.score,
                clip(item.name, 28).c_str(), size, static_cast<long long>(item.faces),
                about.c_str());
  }
}

int run_search(const SearchCommandOptions& o) {
  if (o.threads > 0) at::set_num_threads(o.threads);
  const int kinds = (!o.texts.empty()) + (!o.like.empty()) + (!o.like_id.empty());
  if (kinds != 1)
    throw Error(
        "cadclip search needs exactly one kind of query: texts, --like "
        "FILE or --like-id ID");
  index::SearcherOptions options;
  options.checkpoint = o.checkpoint;
  const index::Searcher searcher = index::Searcher::open(o.index, options);
  std::vector<std::pair<std::string, std::vector<index::Hit>>> answers;
  for (const std::string& text : o.texts)
    answers.emplace_back(text, searcher.search_text(text, o.k));
  if (!o.like.empty())
    answers.emplace_back("like " + o.like, searcher.search_like_file(o.like, o.k));
  if (!o.like_id.empty())
    answers.emplace_back("like " + o.like_id, searcher.search_like_item(o.like_id, o.k));
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [query, hits] : answers)
      out.push_back({{"query", query}, {"results", hits_json(hits)}});
    std::printf("%s\n", (answers.size() == 1 ? out[0] : out).dump(2).c_str());
  } else {
    for (size_t i = 0; i < answers.size(); ++i) {
      if (i) std::printf("\n");
      print_table(answers[i].first, answers[i].second);
    }
  }
  return kExitOk;
}

}  // namespace

void define_search(CLI::App& command, Runner& run) {
  auto o = std::make_shared<SearchCommandOptions>();
  command.add_option("index", o->index, "Index folder made by cadclip index")
      ->required()
      ->check(CLI::ExistingDirectory);
  command.add_option("texts", o->texts, "Text queries");
  command.add_option("--like", o->like, "A CAD file: find parts like it")->check(CLI::ExistingFile);
  command.add_option("--like-id", o->like_id, "An indexed part's id: find parts like it");
  command.add_option("-k", o->k, "Results per query")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_flag("--json", o->json, "Print JSON instead of a table");
  command.add_option("--checkpoint", o->checkpoint,
                     "Checkpoint to search with; it must hold the index's weights");
  command.add_option("--threads", o->threads, "Intra-op threads; 0 = one per core")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.footer(
      "Exit status: 0 answered, 2 bad input (no index, another "
      "checkpoint, bad part).");
  run = [o] { return run_search(*o); };
}

}  // namespace cadclip::app
