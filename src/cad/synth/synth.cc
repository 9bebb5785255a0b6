// cadclip synth: makes each part from its own random streams (so threads may
// make parts in any order and the bytes never change), writes STEP files as
// they come, then the captions, splits and manifest in part order.
#include "cadclip/cad/synth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cad/occt_shape.h"
#include "cad/synth/model.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"

namespace cadclip::cad {

using synth::Built;
using synth::Measured;
using synth::Reject;
using synth::Rng;

const std::vector<std::string>& synth_families() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> keys;
    for (const synth::FamilyInfo& info : synth::families()) keys.push_back(info.key);
    return keys;
  }();
  return kKeys;
}

namespace {

void check_options(const SynthOptions& options) {
  if (options.count < 0)
    throw Error(format("--count is {}; give a number of parts >= 0", options.count));
  if (!(options.noise >= 0 && options.noise <= 1))
    throw Error(format("--noise is {}; give a probability between 0 and 1", options.noise));
  if (options.max_attempts < 1)
    throw Error(format("--max-attempts is {}; give at least 1", options.max_attempts));
  for (const std::string& key : options.families) synth::family(key);  // throws for unknown keys
}

std::string part_id(int64_t index) {
  char text[32];
  std::snprintf(text, sizeof(text), "synth_%08lld", static_cast<long long>(index));
  return text;
}

// Dims under bounding-box keys take the measured extent; a disagreement with
// the parameters means the model is not what the caption would say.
double extent_for(const std::string& key, const Measured& m) {
  if (key == "length") return m.extent(0);
  if (key == "width" || key == "outer_diameter" || key == "across_flats") return m.extent(1);
  if (key == "height" || key == "thickness") return m.extent(2);
  return -1;
}

nlohmann::json measured_json(const Measured& m) {
  auto r3 = [](double v) { return std::round(v * 1000) / 1000; };
  nlohmann::json holes = nlohmann::json::array();
  for (const auto& [d, n] : m.holes) holes.push_back({{"diameter", r3(d)}, {"count", n}});
  return {
      {"bbox",
       {r3(m.bbox[0]), r3(m.bbox[1]), r3(m.bbox[2]), r3(m.bbox[3]), r3(m.bbox[4]), r3(m.bbox[5])}},
      {"volume_mm3", std::round(m.volume * 10) / 10},
      {"area_mm2", std::round(m.area * 10) / 10},
      {"faces", m.faces},
      {"holes", holes}};
}

void check_against_measure(Built& built, const Measured& m) {
  for (synth::Dim& dim : built.desc.dims) {
    const double measured = extent_for(dim.key, m);
    if (measured < 0) continue;
    if (std::abs(measured - dim.value) > 0.05)
      throw Reject(
          format("{} is {} by the parameters but {} on the solid", dim.key, dim.value, measured));
    dim.value = std::round(measured * 1000) / 1000;
  }
  int expected_total = 0;
  for (const synth::HoleSet& set : built.holes) {
    expected_total += set.count;
    int found = 0;
    for (const auto& [d, n] : m.holes)
      if (std::abs(d - set.diameter) < 0.002) found += n;
    if (found != set.count)
      throw Reject(format("{} holes of {} mm cut but {} measured", set.count, set.diameter, found));
  }
  int measured_total = 0;
  for (const auto& hole : m.holes) measured_total += hole.second;
  if (measured_total != expected_total)
    throw Reject(format("{} round holes measured, {} cut", measured_total, expected_total));
  built.desc.max_extent = std::max({m.extent(0), m.extent(1), m.extent(2)});
}

}  // namespace

SynthPart make_synth_part(const SynthOptions& options, int64_t index) {
  check_options(options);
  const std::vector<std::string>& keys =
      options.families.empty() ? synth_families() : options.families;
  const synth::FamilyInfo& info = synth::family(keys[static_cast<size_t>(index) % keys.size()]);
  SynthPart part;
  part.id = part_id(index);
  part.family = info.key;
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    Rng rng(options.seed, static_cast<uint64_t>(index), synth::kTagParams,
            static_cast<uint64_t>(attempt));
    try {
      Built built = info.build(rng);
      const Measured measured = synth::measure_valid_solid(built.shape);
      check_against_measure(built, measured);
      part.attempts = attempt + 1;
      part.params = built.params;
      part.measured = measured_json(measured);
      // The ingest layer's geometry hash, so that duplicates here are the
      // duplicates `cadclip prepare` sees; a part it cannot featurize is redrawn.
      Result<data::BRepGraph> graph = ingest_shape(built.shape, part.id, "synthetic:mm", {});
      if (!graph) throw Reject("featurization failed: " + graph.status().reason());
      part.geometry_hash = graph->geometry_hash;
      part.step = synth::step_text(built.shape, part.id);
      synth::CaptionSet captions = synth::write_captions(
          built.desc, options.seed, static_cast<uint64_t>(index), options.noise);
      for (size_t level = 0; level < 4; ++level)
        part.captions.push_back({kCaptionLevels[level], captions.texts[level],
                                 captions.facts[level], captions.noise[level]});
      return part;
    } catch (const Reject& e) {
      part.rejects.push_back(e.what());
    }
  }
  throw Error(
      format("synthetic part {} ({}) failed {} parameter draws in a row; last reason: {}. "
             "This is a bug in the family's parameter ranges; report it with --seed {}",
             part.id, info.key, options.max_attempts, part.rejects.back(), options.seed));
}

SynthReport write_synth_dataset(const SynthOptions& options, const std::filesystem::path& out) {
  check_options(options);
  namespace fs = std::filesystem;
  const auto start = std::chrono::steady_clock::now();
  if (fs::exists(out) && !fs::is_directory(out))
    throw Error(
        format("--out {} is a file; give a folder for the synthetic dataset", out.string()));
  if (fs::exists(out) && !fs::is_empty(out) && !fs::exists(out / "manifest.json"))
    throw Error(format(
        "--out {} is not empty and holds no cadclip synth manifest; give a new or empty folder",
        out.string()));
  const fs::path parts_dir = out / "parts";
  fs::create_directories(parts_dir);

  const int workers = options.workers > 0
                          ? options.workers
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<SynthPart> parts(static_cast<size_t>(options.count));
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  Progress progress("synth", {.total = options.count, .unit = "parts"});
  auto work = [&] {
    while (!failed) {
      const int64_t i = next++;
      if (i >= options.count) return;
      try {
        SynthPart part = make_synth_part(options, i);
        write_text_atomic(parts_dir / (part.id + ".step"), part.step);
        part.step.clear();
        part.step.shrink_to_fit();
        parts[static_cast<size_t>(i)] = std::move(part);
        progress.advance(1, {{"family", parts[static_cast<size_t>(i)].family}});
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::min<int64_t>(workers, std::max<int64_t>(1, options.count)); ++t)
    threads.emplace_back(work);
  for (std::thread& thread : threads) thread.join();
  progress.finish();
  if (error) std::rethrow_exception(error);

  // Parts of an earlier, larger run in the same folder would be picked up by prepare.
  std::set<std::string> ours;
  for (const SynthPart& part : parts) ours.insert(part.id + ".step");
  for (const auto& entry : fs::directory_iterator(parts_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("synth_") && name.ends_with(".step") && !ours.count(name))
      fs::remove(entry.path());
  }

  SynthReport report;
  report.parts = options.count;
  std::string captions;
  nlohmann::json noisy = nlohmann::json::array(), duplicates = nlohmann::json::array(),
                 regenerated = nlohmann::json::array(), part_list = nlohmann::json::array();
  std::map<std::string, int64_t> family_counts, noise_kinds, level_counts;
  std::map<std::string, std::string> first_with_hash;
  nlohmann::json splits = {{"train", nlohmann::json::array()},
                           {"validation", nlohmann::json::array()},
                           {"test", nlohmann::json::array()}};
  for (size_t i = 0; i < parts.size(); ++i) {
    const SynthPart& part = parts[i];
    ++family_counts[part.family];
    for (const SynthCaption& caption : part.captions) {
      nlohmann::json line = {{"id", part.id},
                             {"level", caption.level},
                             {"text", caption.text},
                             {"facts", caption.facts},
                             {"noise", caption.noise}};
      captions += line.dump() + "\n";
      ++level_counts[caption.level];
      if (!caption.noise.is_null()) {
        ++report.noisy_captions;
        ++noise_kinds[caption.noise["kind"].get<std::string>()];
        nlohmann::json entry = {{"id", part.id}, {"level", caption.level}};
        entry.update(caption.noise);
        noisy.push_back(entry);
      }
    }
    if (part.attempts > 1) {
      report.regenerated += part.attempts - 1;
      regenerated.push_back({{"id", part.id},
                             {"family", part.family},
                             {"attempts", part.attempts},
                             {"reasons", part.rejects}});
    }
    auto [it, inserted] = first_with_hash.emplace(part.geometry_hash, part.id);
    if (!inserted) {
      ++report.duplicates;
      duplicates.push_back(
          {{"id", part.id}, {"same_as", it->second}, {"geometry_hash", part.geometry_hash}});
    }
    const double u = Rng(options.seed, i, synth::kTagSplit).uniform();
    splits[u < 0.8 ? "train" : u < 0.9 ? "validation" : "test"].push_back(part.id);
    part_list.push_back({{"id", part.id},
                         {"family", part.family},
                         {"params", part.params},
                         {"measured", part.measured},
                         {"geometry_hash", part.geometry_hash}});
  }
  write_text_atomic(out / "captions.jsonl", captions);
  write_text_atomic(out / "splits.json", splits.dump(1) + "\n");
  nlohmann::json manifest = {
      {"generator", "cadclip synth"},
      {"format_version", 1},
      // Options that decide the bytes (the thread count does not).
      {"options",
       {{"count", options.count},
        {"seed", options.seed},
        {"noise", options.noise},
        {"max_attempts", options.max_attempts},
        {"families", options.families}}},
      {"step", {{"schema", "AP214 (AUTOMOTIVE_DESIGN)"}, {"unit", "mm"}, {"folder", "parts"}}},
      {"counts",
       {{"parts", report.parts},
        {"captions", report.parts * 4},
        {"captions_per_level", level_counts},
        {"noisy_captions", report.noisy_captions},
        {"noisy_by_kind", noise_kinds},
        {"regenerated_draws", report.regenerated},
        {"duplicates", report.duplicates},
        {"splits",
         {{"train", splits["train"].size()},
          {"validation", splits["validation"].size()},
          {"test", splits["test"].size()}}}}},
      {"families", family_counts},
      {"geometry_hash",
       "interim synth hash: sorted (surface type, area, centroid from bbox centre) per face, "
       "quantised to 0.01 mm"},
      {"noisy", noisy},
      {"duplicates", duplicates},
      {"regenerated", regenerated},
      {"parts", part_list}};
  write_text_atomic(out / "manifest.json", manifest.dump(1) + "\n");
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log::info("synth", "{} parts in {}: {} noisy captions, {} regenerated draws, {} duplicates",
            report.parts, human_duration(report.seconds), report.noisy_captions, report.regenerated,
            report.duplicates);
  return report;
}

SynthStats synth_stats(const std::filesystem::path& dir) {
  const nlohmann::json splits = [&] {
    try {
      return nlohmann::json::parse(read_text_file(dir / "splits.json"));
    } catch (const nlohmann::json::exception& e) {
      throw Error(format("{}: not valid JSON ({}); run cadclip synth again",
                         (dir / "splits.json").string(), e.what()));
    }
  }();
  std::set<std::string> test;
  for (const auto& id : splits.at("test")) test.insert(id.get<std::string>());
  std::map<std::string, std::string> family_of;
  std::map<std::string, std::map<std::string, std::set<std::string>>> ids_by_text_test,
      ids_by_text_all;
  std::map<std::string, int64_t> captions_test, captions_all;
  std::ifstream in(dir / "captions.jsonl");
  if (!in)
    throw Error(format("cannot read {}; run cadclip synth --out {} first",
                       (dir / "captions.jsonl").string(), dir.string()));
  std::string line;
  int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw Error(format("{} line {}: not valid JSON ({})", (dir / "captions.jsonl").string(),
                         line_number, e.what()));
    }
    const std::string id = row.at("id"), level = row.at("level"), text = row.at("text");
    if (row.contains("facts") && row["facts"].contains("family") && row["noise"].is_null())
      family_of.emplace(id, row["facts"]["family"].get<std::string>());
    ids_by_text_all[level][text].insert(id);
    ++captions_all[level];
    if (test.count(id)) {
      ids_by_text_test[level][text].insert(id);
      ++captions_test[level];
    }
  }
  // The family of a part is what its clean captions state; the manifest has it for every part.
  const nlohmann::json manifest = nlohmann::json::parse(read_text_file(dir / "manifest.json"));
  for (const auto& part : manifest.at("parts")) family_of[part.at("id")] = part.at("family");
  SynthStats stats;
  std::map<std::string, int64_t> test_per_family;
  for (const std::string& id : test) ++test_per_family[family_of.at(id)];
  double sum = 0;
  for (const std::string& id : test)
    sum += 1.0 / static_cast<double>(test_per_family[family_of.at(id)]);
  stats.test_parts = static_cast<int64_t>(test.size());
  stats.family_oracle_r1 = test.empty() ? 0 : sum / static_cast<double>(test.size());
  auto shares = [](const auto& by_text, const auto& totals) {
    std::vector<std::pair<std::string, double>> out;
    for (const char* level : kCaptionLevels) {
      int64_t shared = 0;
      auto it = by_text.find(level);
      if (it != by_text.end())
        for (const auto& [text, ids] : it->second)
          if (ids.size() >= 2) shared += static_cast<int64_t>(ids.size());
      auto total = totals.find(level);
      const int64_t n = total == totals.end() ? 0 : total->second;
      out.emplace_back(level, n ? static_cast<double>(shared) / static_cast<double>(n) : 0.0);
    }
    return out;
  };
  stats.shared_caption_share = shares(ids_by_text_test, captions_test);
  stats.shared_caption_share_all = shares(ids_by_text_all, captions_all);
  return stats;
}

}  // namespace cadclip::cad
