// The prepare job's dataset, written from the journal once every input has
// its outcome: shards in id order (so that the bytes do not depend on which
// worker was faster), drawings, captions, splits, failures, warnings, the
// options used and the manifest (docs/FORMATS.md).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "cad/prepare_job.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"
#include "cadclip/data/graph_codec.h"
#include "cadclip/data/shard.h"

namespace cadclip::cad::prepare_detail {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr size_t kExamples = 10;  // ids quoted in the manifest for each kind of mismatch

std::string shard_name(int64_t n) {
  char name[64];
  std::snprintf(name, sizeof name, "shard-%05lld.safetensors", static_cast<long long>(n));
  return name;
}

template <class Container>
ordered_json examples(const Container& ids) {
  ordered_json list = ordered_json::array();
  for (const auto& id : ids) {
    if (list.size() >= kExamples) break;
    list.push_back(id);
  }
  return list;
}

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

ordered_json options_json(const PrepareOptions& o) {
  return {{"inputs", o.inputs},
          {"inputs_from", o.inputs_from},
          {"extensions", o.extensions},
          {"out", o.out},
          {"captions", o.captions},
          {"caption_format", o.caption.format},
          {"caption_id_column", o.caption.id_column},
          {"caption_text_column", o.caption.text_column},
          {"caption_level_column", o.caption.level_column},
          {"caption_level", o.caption.level},
          {"splits", o.splits},
          {"validation_ratio", o.validation_ratio},
          {"test_ratio", o.test_ratio},
          {"ingest", ingest_json(o.ingest)},
          {"workers", o.workers},
          {"file_timeout_s", o.ingest.limits.file_timeout_s},
          {"max_file_mb", o.ingest.limits.max_file_mb},
          {"shard_models", o.shard_models},
          {"shard_mb", o.shard_mb},
          {"overwrite", o.overwrite},
          {"keep_work", o.keep_work},
          {"worker_binary", o.worker_binary},
          {"thumbnails", o.thumbnails},
          {"thumbnail_px", o.thumbnail_px},
          {"shard_index", o.shard_index},
          {"num_shards", o.num_shards}};
}

// What writing the models left for the rest of the dataset and the manifest.
struct Models {
  ordered_json shard_list = ordered_json::array();
  std::vector<std::string> prepared_ids;
  std::set<std::string> failed_ids;
  int64_t faces = 0, edges = 0;
  double ingest_seconds = 0;
  // Drawings: one thumbnails.jsonl line per prepared model saying which file, or why none.
  std::string thumbnail_lines;
  std::map<std::string, int64_t> thumbnail_failed_by_kind;
  int64_t drawn = 0;
  // What ingest skipped without failing the model (an extrude with no
  // profiles): one warnings.jsonl line each, counted in the manifest.
  std::string warning_lines;
  int64_t warning_count = 0;
  std::vector<std::string> warned_ids;
};

// The thumbnails.jsonl line of a prepared model; its SVG goes to
// thumbnails/<hash of the id>.svg (ids may hold '/').
void add_drawing(const fs::path& out, const Input& in, const JournalEntry& e,
                 const std::string& svg, Models& m) {
  ordered_json line = {{"id", in.id}, {"path", in.path.string()}};
  if (e.drawn) {
    const std::string file = "thumbnails/" + sha256_hex(in.id).substr(0, 24) + ".svg";
    write_text_atomic(out / file, svg);
    line["svg"] = file;
    ++m.drawn;
  } else {
    const std::string kind(
        data::failure_kind_name(e.no_drawing ? e.no_drawing->kind : data::FailureKind::kDraw));
    line["svg"] = nullptr;
    line["kind"] = kind;
    line["reason"] = !e.no_drawing || e.no_drawing->reason.empty() ? "no drawing was made"
                                                                   : e.no_drawing->reason;
    ++m.thumbnail_failed_by_kind[kind];
  }
  m.thumbnail_lines += dump(line) + "\n";
}

// Shards, drawings and warnings of the prepared models; the failed ones join `failures`.
Models write_models(const PrepareOptions& o, const Journal& journal, const FinishedRun& run,
                    std::vector<Failure>& failures) {
  const fs::path out = o.out;
  fs::remove_all(out / "shards");
  fs::create_directories(out / "shards");
  fs::remove_all(out / "thumbnails");
  if (o.thumbnails) fs::create_directories(out / "thumbnails");
  Models m;
  data::ShardWriter writer;
  auto flush = [&] {
    const std::string name = shard_name(static_cast<int64_t>(m.shard_list.size()));
    const int64_t models = writer.size(), faces = writer.num_faces(), edges = writer.num_edges();
    writer.write(out / "shards" / name);
    m.shard_list.push_back({{"file", "shards/" + name},
                            {"models", models},
                            {"faces", faces},
                            {"edges", edges},
                            {"bytes", fs::file_size(out / "shards" / name)}});
  };
  const double shard_bytes = o.shard_mb * 1024 * 1024;
  for (size_t i = 0; i < run.inputs.size(); ++i) {
    const Input& in = run.inputs[i];
    const JournalEntry& e = journal.entries()[run.entry_of[i]];
    m.ingest_seconds += e.seconds;
    if (e.failure) {
      failures.push_back({in.path.string(), in.id, *e.failure});
      m.failed_ids.insert(in.id);
      continue;
    }
    for (const std::string& warning : e.warnings) {
      m.warning_lines +=
          dump(ordered_json{{"id", in.id}, {"path", in.path.string()}, {"warning", warning}}) +
          "\n";
      ++m.warning_count;
    }
    if (!e.warnings.empty()) m.warned_ids.push_back(in.id);
    std::string bytes = journal.payload(e);
    if (e.svg_size > bytes.size())
      throw Error(
          format("the journal record of {} is inconsistent (a drawing of {} bytes in {}); "
                 "delete {} and run again",
                 e.path, e.svg_size, bytes.size(), (out / "work").string()));
    const std::string svg = bytes.substr(bytes.size() - e.svg_size);
    bytes.resize(bytes.size() - e.svg_size);
    if (o.thumbnails) add_drawing(out, in, e, svg, m);
    data::BRepGraph graph = data::decode_graph(std::as_bytes(std::span(bytes.data(), bytes.size())),
                                               format("the journal record of {}", e.path));
    graph.id = in.id;
    if (writer.size() > 0 && (writer.size() >= o.shard_models ||
                              static_cast<double>(writer.byte_size() + bytes.size()) > shard_bytes))
      flush();
    writer.add(graph);
    m.prepared_ids.push_back(graph.id);
    m.faces += graph.num_faces();
    m.edges += graph.num_edges();
  }
  if (writer.size() > 0) flush();
  return m;
}

// captions.jsonl: the captions of prepared models; the rest counted, never
// dropped silently. Returns the manifest's "captions".
ordered_json write_captions(const PrepareOptions& o, const FinishedRun& run, const Models& m) {
  const std::set<std::string> model_ids(m.prepared_ids.begin(), m.prepared_ids.end());
  std::vector<data::Caption> captions;
  std::set<std::string> captioned, orphan_ids;
  int64_t orphans = 0, orphans_of_failed = 0, of_other_parts = 0;
  std::map<std::string, int64_t> by_level;
  ordered_json caption_reports = ordered_json::array();
  for (const data::CaptionFile& file : run.caption_files) {
    ordered_json problems = ordered_json::array();
    for (const auto& p : file.problems)
      problems.push_back({{"line", p.line}, {"reason", p.reason}});
    caption_reports.push_back({{"path", file.path.string()},
                               {"format", file.format},
                               {"rows", file.rows},
                               {"captions", file.captions.size()},
                               {"empty", file.empty},
                               {"problem_rows", file.problems.size()},
                               {"problems", problems}});
    for (const data::Caption& c : file.captions) {
      if (model_ids.count(c.id)) {
        captions.push_back(c);
        captioned.insert(c.id);
        ++by_level[c.level];
      } else if (run.other_part_ids.count(c.id)) {
        ++of_other_parts;  // another part of the job array keeps it
      } else {
        ++orphans;
        if (m.failed_ids.count(c.id)) ++orphans_of_failed;
        orphan_ids.insert(c.id);
      }
    }
  }
  std::stable_sort(captions.begin(), captions.end(),
                   [](const data::Caption& a, const data::Caption& b) { return a.id < b.id; });
  std::vector<std::string> uncaptioned;
  for (const std::string& id : m.prepared_ids)
    if (!captioned.count(id)) uncaptioned.push_back(id);
  data::write_captions_jsonl(fs::path(o.out) / "captions.jsonl", captions);
  if (!run.caption_files.empty()) {
    if (orphans > 0)
      log::warn("prepare",
                "{} captions ({} ids, e.g. '{}') name no prepared model; {} of them "
                "belong to inputs that failed",
                with_commas(orphans), with_commas(orphan_ids.size()), *orphan_ids.begin(),
                with_commas(orphans_of_failed));
    if (!uncaptioned.empty())
      log::warn("prepare", "{} prepared models (e.g. '{}') have no caption",
                with_commas(uncaptioned.size()), uncaptioned.front());
  }
  ordered_json report = {{"files", caption_reports},
                         {"kept", captions.size()},
                         {"by_level", by_level},
                         {"without_model", orphans},
                         {"without_model_of_failed_inputs", orphans_of_failed},
                         {"without_model_ids", orphan_ids.size()},
                         {"without_model_examples", examples(orphan_ids)},
                         {"models_without_caption", uncaptioned.size()},
                         {"models_without_caption_examples", examples(uncaptioned)}};
  if (!run.shard.is_null()) report["of_other_parts"] = of_other_parts;
  return report;
}

// splits.json: the given file restricted to prepared models, or a hash split.
// Returns the manifest's "splits".
ordered_json write_splits(const PrepareOptions& o, const FinishedRun& run, const Models& m) {
  const std::set<std::string> model_ids(m.prepared_ids.begin(), m.prepared_ids.end());
  data::Splits splits;
  ordered_json split_report;
  if (run.split_file) {
    std::set<std::string> listed;
    int64_t missing = 0, of_other_parts = 0;
    std::set<std::string> missing_examples;
    auto keep = [&](const std::vector<std::string>& from, std::vector<std::string>& into) {
      for (const std::string& id : from) {
        listed.insert(id);
        if (model_ids.count(id)) {
          into.push_back(id);
        } else if (run.other_part_ids.count(id)) {
          ++of_other_parts;  // another part of the job array keeps it
        } else {
          ++missing;
          if (missing_examples.size() < kExamples) missing_examples.insert(id);
        }
      }
    };
    keep(run.split_file->train, splits.train);
    keep(run.split_file->validation, splits.validation);
    keep(run.split_file->test, splits.test);
    std::vector<std::string> unlisted;
    for (const std::string& id : m.prepared_ids)
      if (!listed.count(id)) unlisted.push_back(id);
    if (!unlisted.empty())
      log::warn("prepare",
                "{} prepared models (e.g. '{}') are in no split of {}; they are in no "
                "split of splits.json either",
                with_commas(unlisted.size()), unlisted.front(), o.splits);
    split_report = {{"source", "file"},
                    {"file", o.splits},
                    {"ids_without_model", missing},
                    {"ids_without_model_examples", examples(missing_examples)},
                    {"models_in_no_split", unlisted.size()},
                    {"models_in_no_split_examples", examples(unlisted)}};
    if (!run.shard.is_null()) split_report["ids_of_other_parts"] = of_other_parts;
  } else {
    splits = data::split_by_hash(m.prepared_ids, {o.validation_ratio, o.test_ratio});
    split_report = {
        {"source", "hash"}, {"validation_ratio", o.validation_ratio}, {"test_ratio", o.test_ratio}};
  }
  split_report["train"] = splits.train.size();
  split_report["validation"] = splits.validation.size();
  split_report["test"] = splits.test.size();
  data::write_splits(fs::path(o.out) / "splits.json", splits);
  return split_report;
}

// failures.jsonl, sorted by path. Returns the count of each kind, by name.
std::map<std::string, int64_t> write_failures(const fs::path& file, std::vector<Failure> failures) {
  std::sort(failures.begin(), failures.end(),
            [](const Failure& a, const Failure& b) { return a.path < b.path; });
  std::string lines;
  std::map<std::string, int64_t> by_kind;
  for (const Failure& f : failures) {
    const std::string kind(data::failure_kind_name(f.failure.kind));
    ++by_kind[kind];
    lines += dump({{"path", f.path}, {"id", f.id}, {"kind", kind}, {"reason", f.failure.reason}});
    lines += '\n';
  }
  write_text_atomic(file, lines);
  return by_kind;
}

void log_summary(const PrepareSummary& summary, const std::map<std::string, int64_t>& by_kind,
                 const Models& m, const fs::path& out, double wall) {
  std::string kinds;
  for (const auto& [kind, count] : by_kind)
    kinds += format("{}{} {}", kinds.empty() ? "" : ", ", kind, count);
  log::info("prepare", "{} inputs: {} prepared in {} shards, {} failed{} ({}); wrote {}",
            with_commas(summary.inputs), with_commas(summary.prepared), summary.shards,
            with_commas(summary.failed), kinds.empty() ? "" : " (" + kinds + ")",
            human_duration(wall), out.string());
  if (m.warning_count > 0)
    log::warn("prepare",
              "{} prepared models were built with warnings (an extrude with no "
              "profiles skipped, ...); {} lists them",
              with_commas(static_cast<int64_t>(m.warned_ids.size())),
              (out / "warnings.jsonl").string());
  if (summary.thumbnail_failures > 0)
    log::warn("prepare", "{} prepared models have no thumbnail; {} says why",
              with_commas(summary.thumbnail_failures), (out / "thumbnails.jsonl").string());
}

}  // namespace

std::string dump(const ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The manifest's "ingest" object in the key order manifests have always had
// (IngestOptions's serializer, whose plain json sorts keys, gives the values).
ordered_json ingest_json(const IngestOptions& o) {
  const nlohmann::json fields = o;
  ordered_json out;
  for (const char* key : {"assume_unit", "max_faces", "max_edges", "deepcad_symmetric_full"})
    out[key] = fields.at(key);
  for (const auto& [key, value] : fields.items())
    if (!out.contains(key)) out[key] = value;
  return out;
}

PrepareSummary write_dataset(const PrepareOptions& o, const Journal& journal, FinishedRun run) {
  const fs::path out = o.out;
  const size_t failed_before_opening = run.failures.size();
  std::vector<Failure> failures = std::move(run.failures);
  const Models m = write_models(o, journal, run, failures);
  const ordered_json caption_report = write_captions(o, run, m);
  const ordered_json split_report = write_splits(o, run, m);
  PrepareSummary summary;
  summary.inputs = static_cast<int64_t>(run.inputs.size() + failed_before_opening);
  summary.prepared = static_cast<int64_t>(m.prepared_ids.size());
  summary.failed = static_cast<int64_t>(failures.size());
  const std::map<std::string, int64_t> by_kind = write_failures(out / "failures.jsonl", failures);
  write_text_atomic(out / "warnings.jsonl", m.warning_lines);
  if (o.thumbnails) {
    write_text_atomic(out / "thumbnails.jsonl", m.thumbnail_lines);
  } else {
    fs::remove(out / "thumbnails.jsonl");
  }
  write_text_atomic(out / "options.json", dump(options_json(o), 1) + "\n");

  summary.from_journal = run.from_journal;
  summary.shards = static_cast<int64_t>(m.shard_list.size());
  summary.thumbnails = m.drawn;
  summary.warned = static_cast<int64_t>(m.warned_ids.size());
  for (const auto& [kind, count] : m.thumbnail_failed_by_kind) summary.thumbnail_failures += count;
  CADCLIP_CHECK(summary.prepared + summary.failed == summary.inputs,
                "counts do not add up: {} prepared + {} failed != {} inputs", summary.prepared,
                summary.failed, summary.inputs);

  const double wall = seconds_between(run.start, Clock::now());
  ordered_json manifest = {
      {"format", "cadclip.prepared"},
      {"manifest_version", kManifestVersion},
      {"shard_schema_version", data::kShardSchemaVersion},
      {"counts",
       {{"inputs", summary.inputs}, {"prepared", summary.prepared}, {"failed", summary.failed}}},
      {"failed_by_kind", by_kind},
      {"warnings",
       {{"count", m.warning_count},
        {"models", m.warned_ids.size()},
        {"models_examples", examples(m.warned_ids)},
        {"file", "warnings.jsonl"}}},
      {"faces", m.faces},
      {"edges", m.edges},
      {"shards", m.shard_list},
      {"captions", caption_report},
      {"splits", split_report},
      {"thumbnails", o.thumbnails ? ordered_json{{"drawn", summary.thumbnails},
                                                 {"missing", summary.thumbnail_failures},
                                                 {"missing_by_kind", m.thumbnail_failed_by_kind}}
                                  : ordered_json()},
      {"run",
       {{"from_journal", run.from_journal},
        {"ingested_now", run.ingested_now},
        {"ingest_seconds", m.ingest_seconds},
        {"setup_wall_seconds", seconds_between(run.start, run.ingest_start)},
        {"ingest_wall_seconds", seconds_between(run.ingest_start, run.ingest_end)},
        {"assemble_wall_seconds", seconds_between(run.ingest_end, Clock::now())},
        {"wall_seconds", wall}}}};
  if (!run.shard.is_null()) manifest["shard"] = run.shard;
  write_text_atomic(out / "manifest.json", dump(manifest, 1) + "\n");
  if (!o.keep_work) fs::remove_all(out / "work");
  log_summary(summary, by_kind, m, out, wall);
  return summary;
}

}  // namespace cadclip::cad::prepare_detail
