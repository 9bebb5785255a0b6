// cadclip synth: makes each part from its own random streams (so threads may
// make parts in any order and the bytes never change), writes STEP or DeepCAD
// JSON files as they come, redraws duplicate programs in part order, then
// writes the captions, splits and manifest in part order.
#include "cadclip/synth/synth.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cad/occt_shape.h"
#include "cadclip/cad/standard_tables.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "synth/model.h"
#include "synth/program.h"
#include "synth/standard.h"

namespace cadclip::synth {

const std::vector<std::string>& synth_families() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> keys;
    for (const FamilyInfo& info : families()) keys.push_back(info.key);
    return keys;
  }();
  return kKeys;
}

std::string part_id(const std::string& prefix, int64_t index) {
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%08lld", static_cast<long long>(index));
  return prefix + digits;
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

namespace {

void check_options(const SynthOptions& options) {
  if (options.count < 0)
    throw Error(format("--count is {}; give a number of parts >= 0", options.count));
  if (!(options.noise >= 0 && options.noise <= 1))
    throw Error(format("--noise is {}; give a probability between 0 and 1", options.noise));
  if (options.max_attempts < 1)
    throw Error(format("--max-attempts is {}; give at least 1", options.max_attempts));
  // Throw for unknown keys; --kind standard names standard-part groups.
  for (const std::string& key : options.families)
    options.kind == "standard" ? (void)standard_group(key) : (void)family(key);
  if (options.kind != "families" && options.kind != "programs" && options.kind != "mixed" &&
      options.kind != "standard")
    throw Error(format("--kind is '{}'; give families, programs, standard or mixed", options.kind));
  if (!(options.standard_share >= 0 && options.standard_share <= 1))
    throw Error(format("--standard-share is {}; give a share between 0 and 1 (0.1 = a tenth)",
                       options.standard_share));
  if (options.kind == "mixed" && options.program_share + options.standard_share > 1)
    throw Error(
        format("--program-share {} and --standard-share {} add up to more than 1; lower one",
               options.program_share, options.standard_share));
  if (!(options.program_test_share >= 0 && options.program_test_share <= 0.9))
    throw Error(
        format("synth: --program-test-share {} is outside [0, 0.9]", options.program_test_share));
  if (!(options.program_share >= 0 && options.program_share <= 1))
    throw Error(format("--program-share is {}; give a share between 0 and 1 (0.5 = half programs)",
                       options.program_share));
  if (options.caption_units != "units" && options.caption_units != "mm")
    throw Error(format("--caption-units is '{}'; give units (Text2CAD's normalised) or mm",
                       options.caption_units));
  const bool safe_prefix =
      !options.id_prefix.empty() && options.id_prefix.size() <= 40 &&
      std::all_of(options.id_prefix.begin(), options.id_prefix.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  if (!safe_prefix)
    throw Error(
        format("--id-prefix is '{}'; give 1 to 40 letters, digits, '_' or '-' (it starts "
               "every part's id and file name, e.g. std_)",
               options.id_prefix));
  if (options.kind == "programs" && !options.families.empty())
    throw Error(
        "--family picks part families, which --kind programs does not make; use --kind "
        "families or mixed with --family");
}

// Dims under bounding-box keys take the measured extent; a disagreement with
// the parameters means the model is not what the caption would say.
double extent_for(const std::string& key, const Measured& m) {
  if (key == "length") return m.extent(0);
  if (key == "width" || key == "outer_diameter" || key == "across_flats") return m.extent(1);
  if (key == "height" || key == "thickness") return m.extent(2);
  return -1;
}

void check_against_measure(Built& built, const Measured& m) {
  for (Dim& dim : built.desc.dims) {
    const double measured = extent_for(dim.key, m);
    if (measured < 0) continue;
    if (std::abs(measured - dim.value) > 0.05)
      throw Reject(
          format("{} is {} by the parameters but {} on the solid", dim.key, dim.value, measured));
    dim.value = std::round(measured * 1000) / 1000;
  }
  int expected_total = 0;
  for (const HoleSet& set : built.holes) {
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

bool synth_part_is_program(const SynthOptions& options, int64_t index) {
  if (options.kind == "families" || options.kind == "standard") return false;
  if (options.kind == "programs") return true;
  return Rng(options.seed, static_cast<uint64_t>(index), kTagKind).uniform() <
         options.program_share;
}

// The same draw as synth_part_is_program from its other end, so that a share
// of 0 leaves every other part of a mixed set as it was.
bool synth_part_is_standard(const SynthOptions& options, int64_t index) {
  if (options.kind == "standard") return true;
  if (options.kind != "mixed" || options.standard_share <= 0) return false;
  return Rng(options.seed, static_cast<uint64_t>(index), kTagKind).uniform() >=
         1 - options.standard_share;
}

SynthPart make_synth_part(const SynthOptions& options, int64_t index, int first_attempt) {
  check_options(options);
  if (synth_part_is_program(options, index))
    return make_program_part(options, index, first_attempt);
  if (synth_part_is_standard(options, index)) return make_standard_part(options, index);
  const std::vector<std::string>& keys =
      options.families.empty() ? synth_families() : options.families;
  const FamilyInfo& info = family(keys[static_cast<size_t>(index) % keys.size()]);
  SynthPart part;
  part.id = part_id(options.id_prefix, index);
  part.family = info.key;
  for (int attempt = first_attempt; attempt < options.max_attempts; ++attempt) {
    Rng rng(options.seed, static_cast<uint64_t>(index), kTagParams, static_cast<uint64_t>(attempt));
    try {
      Built built = info.build(rng);
      const Measured measured = measure_valid_solid(built.shape);
      check_against_measure(built, measured);
      part.attempts = attempt + 1;
      part.params = built.params;
      part.measured = measured_json(measured);
      // The ingest layer's geometry hash, so that duplicates here are the
      // duplicates `cadclip prepare` sees; a part it cannot featurize is redrawn.
      Result<data::BRepGraph> graph = cad::ingest_shape(built.shape, part.id, "synthetic:mm", {});
      if (!graph) throw Reject("featurization failed: " + graph.status().reason());
      part.geometry_hash = graph->geometry_hash;
      part.step = step_text(built.shape, part.id);
      CaptionSet captions =
          write_captions(built.desc, options.seed, static_cast<uint64_t>(index), options.noise);
      for (size_t level = 0; level < captions.texts.size(); ++level)
        part.captions.push_back({kCaptionLevels[level], captions.texts[level],
                                 captions.facts[level], captions.noise[level], nullptr});
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

namespace {

// Counts behind the distribution table of docs/SYNTHETIC.md, over program parts.
struct ProgramDistribution {
  std::map<std::string, int64_t> extrudes, curves, operations, extents, planes, faces, generators,
      redraws;
  int64_t parts = 0, loops = 0, inner_loops = 0, duplicate_geometry = 0, duplicate_program = 0;

  void add(const SynthPart& part) {
    ++parts;
    const nlohmann::json& s = part.params.at("program");
    const int64_t n = s.at("extrudes").get<int64_t>();
    char bucket[24];
    std::snprintf(bucket, sizeof(bucket), "%02lld",
                  static_cast<long long>(std::min<int64_t>(n, 10)));
    ++extrudes[bucket];
    auto merge = [](std::map<std::string, int64_t>& into, const nlohmann::json& counts) {
      for (auto it = counts.begin(); it != counts.end(); ++it)
        into[it.key()] += it.value().get<int64_t>();
    };
    merge(curves, s.at("curves"));
    merge(operations, s.at("operations"));
    merge(extents, s.at("extents"));
    merge(planes, s.at("planes"));
    loops += s.at("loops").get<int64_t>();
    inner_loops += s.at("inner_loops").get<int64_t>();
    const int f = part.measured.at("faces").get<int>();
    ++faces[f <= 6    ? "01-06"
            : f <= 10 ? "07-10"
            : f <= 20 ? "11-20"
            : f <= 40 ? "21-40"
            : f <= 80 ? "41-80"
                      : "81+"];
    ++generators[part.params.at("generator").get<std::string>()];
    for (const std::string& reason : part.rejects) {
      const std::string category = reason.substr(0, reason.find(':'));
      ++redraws[category];
    }
  }
  nlohmann::json json() const {
    return {{"parts", parts},
            {"extrudes_per_model", extrudes},
            {"curves", curves},
            {"operations", operations},
            {"extents", extents},
            {"sketch_planes", planes},
            {"faces_per_solid", faces},
            {"loops", loops},
            {"inner_loops", inner_loops},
            {"generators", generators},
            {"redraws_by_reason", redraws}};
  }
};

// The folder must be new, empty or an earlier synth output (which it
// overwrites); anything else is someone's data.
void check_out_folder(const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  if (fs::exists(out) && !fs::is_directory(out))
    throw Error(
        format("--out {} is a file; give a folder for the synthetic dataset", out.string()));
  if (fs::exists(out) && !fs::is_empty(out) && !fs::exists(out / "manifest.json"))
    throw Error(format(
        "--out {} is not empty and holds no cadclip synth manifest; give a new or empty folder",
        out.string()));
}

// Writes the part's file and drops its text, which would otherwise hold every
// part's STEP in memory until the end.
void write_part(const std::filesystem::path& parts_dir, SynthPart& part) {
  write_text_atomic(parts_dir / part.file_name(), part.kind == "program" ? part.json : part.step);
  part.step.clear();
  part.step.shrink_to_fit();
  part.json.clear();
  part.json.shrink_to_fit();
}

// Makes and writes parts 0 .. count-1 on worker threads; the first error
// stops the workers and is rethrown here.
std::vector<SynthPart> make_parts(const SynthOptions& options,
                                  const std::filesystem::path& parts_dir) {
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
        write_part(parts_dir, part);
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
  return parts;
}

// A program that repeats an earlier part (same geometry, or the same program
// at another size) is redrawn from its next parameter draw; in part order, so
// the result does not depend on the thread count. Counts the program parts
// into `distribution`.
void redraw_duplicates(const SynthOptions& options, const std::filesystem::path& parts_dir,
                       std::vector<SynthPart>& parts, ProgramDistribution& distribution) {
  std::map<std::string, std::string> first_with_hash, first_with_program;
  for (SynthPart& part : parts) {
    if (part.kind == "program") {
      for (;;) {
        const auto same_geometry = first_with_hash.find(part.geometry_hash);
        const auto same_program = first_with_program.find(part.program_hash);
        if (same_geometry == first_with_hash.end() && same_program == first_with_program.end())
          break;
        const bool geometry = same_geometry != first_with_hash.end();
        const std::string reason =
            geometry
                ? "duplicate geometry: the geometry hash of " + same_geometry->second
                : "duplicate program: the program of " + same_program->second + " at another size";
        ++(geometry ? distribution.duplicate_geometry : distribution.duplicate_program);
        const int64_t index = std::stoll(part.id.substr(6));
        std::vector<std::string> rejects = part.rejects;
        rejects.push_back(reason);
        SynthPart redrawn = make_synth_part(options, index, part.attempts);
        rejects.insert(rejects.end(), redrawn.rejects.begin(), redrawn.rejects.end());
        redrawn.rejects = std::move(rejects);
        write_part(parts_dir, redrawn);
        part = std::move(redrawn);
      }
      first_with_program.emplace(part.program_hash, part.id);
      distribution.add(part);
    }
    first_with_hash.emplace(part.geometry_hash, part.id);
  }
}

// A part file of some synth run: any --id-prefix, 8 digits, .step or .json.
bool is_synth_part_file(const std::filesystem::path& file) {
  const std::string stem = file.stem().string();
  return (file.extension() == ".step" || file.extension() == ".json") && stem.size() > 8 &&
         std::all_of(stem.end() - 8, stem.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// Parts of an earlier, larger run (or one with another --id-prefix) in the same
// folder would be picked up by prepare.
void remove_stale_parts(const std::filesystem::path& parts_dir,
                        const std::vector<SynthPart>& parts) {
  std::set<std::string> ours;
  for (const SynthPart& part : parts) ours.insert(part.file_name());
  for (const auto& entry : std::filesystem::directory_iterator(parts_dir)) {
    const std::string name = entry.path().filename().string();
    if (is_synth_part_file(entry.path()) && !ours.count(name))
      std::filesystem::remove(entry.path());
  }
}

// The captions, splits and manifest tables, filled part by part in part order.
struct DatasetTables {
  std::string captions;  // captions.jsonl
  nlohmann::json noisy = nlohmann::json::array(), duplicates = nlohmann::json::array(),
                 regenerated = nlohmann::json::array(), part_list = nlohmann::json::array();
  std::map<std::string, int64_t> family_counts, noise_kinds, level_counts, kind_counts;
  std::map<std::string, std::string> first_seen, split_of_hash;
  nlohmann::json splits = {{"train", nlohmann::json::array()},
                           {"validation", nlohmann::json::array()},
                           {"test", nlohmann::json::array()}};

  void add_caption(const SynthPart& part, const SynthCaption& caption, SynthReport& report) {
    nlohmann::json line = {{"id", part.id},
                           {"level", caption.level},
                           {"text", caption.text},
                           {"facts", caption.facts},
                           {"noise", caption.noise}};
    if (caption.extra.is_object()) line.update(caption.extra);
    captions += line.dump() + "\n";
    ++report.captions;
    ++level_counts[caption.level];
    if (!caption.noise.is_null()) {
      ++report.noisy_captions;
      ++noise_kinds[caption.noise["kind"].get<std::string>()];
      nlohmann::json entry = {{"id", part.id}, {"level", caption.level}};
      entry.update(caption.noise);
      noisy.push_back(entry);
    }
  }

  // The split: the part's own random stream, except that parts with equal
  // geometry share the first one's split (not for the family-only set, whose
  // splits predate the rule).
  std::string split_of(const SynthOptions& options, size_t i, const SynthPart& part) {
    const double u = Rng(options.seed, i, kTagSplit).uniform();
    if (part.kind == "standard") {
      // Whole table rows are held out (standard_row_held_out): their parts
      // are the test split, designations never trained on; the rest 90/10.
      const bool held_out = part.params.at("heldout_row").get<bool>();
      return split_of_hash
          .emplace(part.geometry_hash, held_out  ? "test"
                                       : u < 0.9 ? "train"
                                                 : "validation")
          .first->second;
    }
    // 10% validation, and a test share of 10% (programs: --program-test-share).
    const double test = part.kind == "program" ? options.program_test_share : 0.1;
    std::string split = u < 0.9 - test ? "train" : u < 1 - test ? "validation" : "test";
    if (options.kind != "families")
      split = split_of_hash.emplace(part.geometry_hash, split).first->second;
    return split;
  }

  void add_part(const SynthOptions& options, size_t i, const SynthPart& part, SynthReport& report) {
    ++family_counts[part.family];
    ++kind_counts[part.kind];
    report.programs += part.kind == "program";
    const std::string split = split_of(options, i, part);
    splits[split].push_back(part.id);
    for (const SynthCaption& caption : part.captions) add_caption(part, caption, report);
    if (split == "test")
      for (const SynthCaption& caption : part.heldout_captions) add_caption(part, caption, report);
    if (part.attempts > 1 || !part.rejects.empty()) {
      report.regenerated += static_cast<int64_t>(part.rejects.size());
      regenerated.push_back({{"id", part.id},
                             {"family", part.family},
                             {"attempts", part.attempts},
                             {"reasons", part.rejects}});
    }
    auto [it, inserted] = first_seen.emplace(part.geometry_hash, part.id);
    if (!inserted) {
      ++report.duplicates;
      duplicates.push_back(
          {{"id", part.id}, {"same_as", it->second}, {"geometry_hash", part.geometry_hash}});
    }
    nlohmann::json entry = {{"id", part.id},
                            {"family", part.family},
                            {"params", part.params},
                            {"measured", part.measured},
                            {"geometry_hash", part.geometry_hash}};
    if (part.kind == "program") {
      entry["kind"] = "program";
      entry["file"] = part.file_name();
      entry["mm_per_unit"] = part.mm_per_unit;
      entry["program_hash"] = part.program_hash;
      entry["truth"] = part.truth;
    }
    if (part.kind == "standard") {
      entry["kind"] = "standard";
      entry["file"] = part.file_name();
      entry["designation"] = part.params.at("designation");
    }
    part_list.push_back(entry);
  }
};

nlohmann::json manifest_json(const SynthOptions& options, const SynthReport& report,
                             DatasetTables& tables, const ProgramDistribution& distribution) {
  const bool families_only = options.kind == "families";
  nlohmann::json standard;  // the tables and rules, when the set may hold standard parts
  nlohmann::json& splits = tables.splits;
  nlohmann::json option_json = {{"count", options.count},
                                {"seed", options.seed},
                                {"noise", options.noise},
                                {"max_attempts", options.max_attempts},
                                {"families", options.families}};
  nlohmann::json counts = {{"parts", report.parts},
                           {"captions", report.parts * 4},
                           {"captions_per_level", tables.level_counts},
                           {"noisy_captions", report.noisy_captions},
                           {"noisy_by_kind", tables.noise_kinds},
                           {"regenerated_draws", report.regenerated},
                           {"duplicates", report.duplicates},
                           {"splits",
                            {{"train", splits["train"].size()},
                             {"validation", splits["validation"].size()},
                             {"test", splits["test"].size()}}}};
  // Recorded only when set, so that sets made before the option keep their bytes.
  if (options.id_prefix != SynthOptions{}.id_prefix) option_json["id_prefix"] = options.id_prefix;
  if (!families_only) {
    option_json["kind"] = options.kind;
    option_json["program_share"] = options.program_share;
    option_json["program_test_share"] = options.program_test_share;
    option_json["caption_units"] = options.caption_units;
    counts["captions"] = report.captions;
    counts["kinds"] = tables.kind_counts;
    counts["duplicate_programs_redrawn"] = distribution.duplicate_program;
    counts["duplicate_geometry_redrawn"] = distribution.duplicate_geometry;
  }
  // Recorded only when standard parts can occur, so that a mixed set with
  // --standard-share 0 keeps the manifest it had before standard parts existed.
  if (options.kind == "standard" || (options.kind == "mixed" && options.standard_share > 0)) {
    option_json["standard_share"] = options.standard_share;
    nlohmann::json tables = nlohmann::json::object();
    for (const auto& [file, text] : cad::embedded_standard_files())
      tables[file] = cad::standard_table(file).notes;
    nlohmann::json catalog = nlohmann::json::object();
    for (const StandardGroup& group : standard_groups())
      catalog[group.key] = standard_catalog(group.key).size();
    standard = {{"tables", tables},
                {"catalog", catalog},
                {"heldout_rule",
                 "rows 2, 7, 12, ... (from 0) of every table are held out: all their parts are "
                 "test parts; the other rows' parts split 90/10 train/validation"},
                {"threads", "plain cylinders at the minor diameter (ISO 724)"}};
  }
  nlohmann::json manifest = {
      {"generator", "cadclip synth"},
      {"format_version", 1},
      // Options that decide the bytes (the thread count does not).
      {"options", option_json},
      {"step", {{"schema", "AP214 (AUTOMOTIVE_DESIGN)"}, {"unit", "mm"}, {"folder", "parts"}}},
      {"counts", counts},
      {"families", tables.family_counts},
      {"geometry_hash",
       "interim synth hash: sorted (surface type, area, centroid from bbox centre) per face, "
       "quantised to 0.01 mm"},
      {"noisy", tables.noisy},
      {"duplicates", tables.duplicates},
      {"regenerated", tables.regenerated},
      {"parts", tables.part_list}};
  if (!families_only) {
    manifest["programs"] = {{"format", "DeepCAD JSON"},
                            {"unit", "m"},
                            {"prepare", "cadclip prepare DIR/parts --assume-unit m ..."},
                            {"distribution", distribution.json()}};
  }
  if (!standard.is_null()) manifest["standard"] = standard;
  return manifest;
}

}  // namespace

SynthReport write_synth_dataset(const SynthOptions& options, const std::filesystem::path& out) {
  check_options(options);
  const auto start = std::chrono::steady_clock::now();
  check_out_folder(out);
  const std::filesystem::path parts_dir = out / "parts";
  std::filesystem::create_directories(parts_dir);

  std::vector<SynthPart> parts = make_parts(options, parts_dir);
  ProgramDistribution distribution;
  redraw_duplicates(options, parts_dir, parts, distribution);
  remove_stale_parts(parts_dir, parts);

  SynthReport report;
  report.parts = options.count;
  DatasetTables tables;
  for (size_t i = 0; i < parts.size(); ++i) tables.add_part(options, i, parts[i], report);
  write_text_atomic(out / "captions.jsonl", tables.captions);
  write_text_atomic(out / "splits.json", tables.splits.dump(1) + "\n");
  const nlohmann::json manifest = manifest_json(options, report, tables, distribution);
  write_text_atomic(out / "manifest.json", manifest.dump(1) + "\n");
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log::info("synth",
            "{} parts ({} programs) in {}: {} noisy captions, {} regenerated draws, {} duplicates",
            report.parts, report.programs, human_duration(report.seconds), report.noisy_captions,
            report.regenerated, report.duplicates);
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
  SynthStats stats;
  // Programs and STEP families are told apart by their captions' register, so
  // a program plate and a family plate are different families here.
  for (const auto& part : manifest.at("parts"))
    family_of[part.at("id")] = (part.value("kind", "family") == "program"    ? "program:"
                                : part.value("kind", "family") == "standard" ? "standard:"
                                                                             : "") +
                               part.at("family").get<std::string>();
  if (manifest.contains("programs"))
    stats.program_distribution = manifest["programs"]["distribution"];
  std::map<std::string, int64_t> test_per_family;
  for (const std::string& id : test) ++test_per_family[family_of.at(id)];
  double sum = 0;
  for (const std::string& id : test)
    sum += 1.0 / static_cast<double>(test_per_family[family_of.at(id)]);
  stats.test_parts = static_cast<int64_t>(test.size());
  stats.family_oracle_r1 = test.empty() ? 0 : sum / static_cast<double>(test.size());
  auto shares = [](const auto& by_text, const auto& totals) {
    // The five levels, then any others (a program set's *_heldout levels).
    std::vector<std::string> levels(std::begin(kCaptionLevels), std::end(kCaptionLevels));
    for (const auto& [level, n] : totals)
      if (std::find(levels.begin(), levels.end(), level) == levels.end()) levels.push_back(level);
    std::vector<std::pair<std::string, double>> out;
    for (const std::string& level : levels) {
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

}  // namespace cadclip::synth
