// Synthetic parts with captions: parametric part families modelled with Open
// CASCADE and written as STEP, and sketch-and-extrude programs written as
// DeepCAD JSON, with captions at the four Text2CAD levels and a name level, and an
// optional annotator-noise mode (docs/SYNTHETIC.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cadclip::synth {

struct SynthOptions {
  int64_t count = 1000;                 // parts to make
  uint64_t seed = 1;                    // same seed and options, same bytes
  double noise = 0;                     // probability in [0, 1] that a caption is made noisy
  int workers = 0;                      // modelling threads; 0 = one per core
  int max_attempts = 50;                // parameter draws per part before the job gives up
  std::vector<std::string> families;    // make only these families (kind "standard": these
                                        // standard-part groups); empty = all, in turn
  std::string kind = "families";        // "families" (STEP), "programs" (DeepCAD JSON),
                                        // "standard" (standard parts, STEP) or "mixed"
  double program_share = 0.5;           // kind "mixed": the share of parts that are programs
  double standard_share = 0;            // kind "mixed": the share that are standard parts
                                        // (0 = the mixed set made before they existed)
  double program_test_share = 0.1;      // programs' share in the test split (validation stays
                                        // 10%; families always split 80/10/10)
  std::string caption_units = "units";  // programs' captions: "units" (Text2CAD's normalised
                                        // units, largest side about 0.75) or "mm"
  std::string id_prefix = "synth_";     // part ids and file names: prefix + 8 digits; another
                                        // prefix keeps two sets' ids apart when trained together
};

// The four Text2CAD caption levels and the name level (a few words, as a file
// name or a catalog title: "flange 6 holes"), in file order.
inline constexpr const char* kCaptionLevels[] = {"abstract", "beginner", "intermediate", "expert",
                                                 "name"};

struct SynthCaption {
  std::string level;     // one of kCaptionLevels
  std::string text;      // the caption
  nlohmann::json facts;  // what the text states: {"family": ..., "<key>": value, ...}
  nlohmann::json noise;  // null when clean; else {"kind": ..., and what was changed}
  nlohmann::json extra;  // more keys for the caption line (programs: kind, units, decimals)
};

struct SynthPart {
  std::string id;               // "synth_00000042"
  std::string kind = "family";  // "family" (a STEP part), "program" (a DeepCAD JSON program)
                                // or "standard" (a standard part from its table, STEP)
  std::string family;           // family key: one of synth_families(), a program family or a
                                // standard-part group
  nlohmann::json params;    // construction parameters (mm, degrees, counts; a program's summary;
                            // a standard part's standard, designation and table row)
  nlohmann::json measured;  // measured on the built solid: bbox, volume, holes
  std::string step;         // kind "family": the STEP file (AP214, millimetres, fixed header)
  std::string json;         // kind "program": the DeepCAD JSON file (metres)
  std::string geometry_hash;
  std::string program_hash;  // kind "program": hash of the program in normalised units
  double mm_per_unit = 0;    // kind "program": real millimetres per normalised unit
  nlohmann::json truth;      // kind "program": exact values of every fact its captions state
  int attempts = 1;          // parameter draws used (1 = first draw was valid)
  std::vector<std::string> rejects;    // why each earlier draw was rejected
  std::vector<SynthCaption> captions;  // one per level, in kCaptionLevels order
  // kind "program": one more per level in held-out phrasings (written for test parts only).
  std::vector<SynthCaption> heldout_captions;
  std::string file_name() const { return id + (kind == "program" ? ".json" : ".step"); }
};

// Family keys, in the order parts cycle through them.
const std::vector<std::string>& synth_families();

// Whether part `index` is a program, or a standard part: fixed functions of (seed, index).
bool synth_part_is_program(const SynthOptions& options, int64_t index);
bool synth_part_is_standard(const SynthOptions& options, int64_t index);

// Part `index` of the set that `options` describes, independent of every other
// part (so workers may make parts in any order), from parameter draw
// `first_attempt` on (the writer redraws duplicate programs from the next one).
// Throws cadclip::Error when no valid solid came out of options.max_attempts
// draws, or for bad options.
SynthPart make_synth_part(const SynthOptions& options, int64_t index, int first_attempt = 0);

struct SynthReport {
  int64_t parts = 0;
  int64_t programs = 0;     // parts of kind "program"
  int64_t regenerated = 0;  // draws rejected (invalid solid, fit, duplicate program) and redrawn
  int64_t noisy_captions = 0;
  int64_t duplicates = 0;  // parts whose geometry hash an earlier part already had (kept)
  int64_t captions = 0;    // caption lines written, held-out ones included
  double seconds = 0;
};

// Writes DIR/parts/<id>.step, DIR/captions.jsonl, DIR/splits.json and
// DIR/manifest.json (formats in docs/SYNTHETIC.md). Throws cadclip::Error.
SynthReport write_synth_dataset(const SynthOptions& options, const std::filesystem::path& out);

// How hard retrieval on a synthetic set is, from its files alone.
struct SynthStats {
  int64_t test_parts = 0;
  double family_oracle_r1 = 0;  // mean over test queries of 1 / (test parts of its family)
  // Per level: share of test captions whose exact text belongs to two or more parts.
  std::vector<std::pair<std::string, double>> shared_caption_share;
  // The same over every split, for reference.
  std::vector<std::pair<std::string, double>> shared_caption_share_all;
  // Sets with programs: the distribution table of docs/SYNTHETIC.md (manifest
  // programs.distribution); null otherwise.
  nlohmann::json program_distribution;
};
SynthStats synth_stats(const std::filesystem::path& dir);

}  // namespace cadclip::synth
