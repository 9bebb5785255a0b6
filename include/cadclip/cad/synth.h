// Synthetic parts with captions: parametric part families modelled with Open
// CASCADE, written as STEP files with captions at the four Text2CAD levels and
// an optional annotator-noise mode (docs/SYNTHETIC.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cadclip::cad {

struct SynthOptions {
  int64_t count = 1000;               // parts to make
  uint64_t seed = 1;                  // same seed and options, same bytes
  double noise = 0;                   // probability in [0, 1] that a caption is made noisy
  int workers = 0;                    // modelling threads; 0 = one per core
  int max_attempts = 50;              // parameter draws per part before the job gives up
  std::vector<std::string> families;  // make only these families; empty = all, in turn
};

// The four Text2CAD caption levels, in file order.
inline constexpr const char* kCaptionLevels[] = {"abstract", "beginner", "intermediate", "expert"};

struct SynthCaption {
  std::string level;     // one of kCaptionLevels
  std::string text;      // the caption
  nlohmann::json facts;  // what the text states: {"family": ..., "<key>": value, ...}
  nlohmann::json noise;  // null when clean; else {"kind": ..., and what was changed}
};

struct SynthPart {
  std::string id;           // "synth_00000042"
  std::string family;       // family key, one of synth_families()
  nlohmann::json params;    // construction parameters (mm, degrees, counts)
  nlohmann::json measured;  // measured on the built solid: bbox, volume, holes
  std::string step;         // the STEP file (AP214, millimetres, fixed header)
  std::string geometry_hash;
  int attempts = 1;                    // parameter draws used (1 = first draw was valid)
  std::vector<std::string> rejects;    // why each earlier draw was rejected
  std::vector<SynthCaption> captions;  // one per level, in kCaptionLevels order
};

// Family keys, in the order parts cycle through them.
const std::vector<std::string>& synth_families();

// Part `index` of the set that `options` describes, independent of every other
// part (so workers may make parts in any order). Throws cadclip::Error when no
// valid solid came out of options.max_attempts draws, or for bad options.
SynthPart make_synth_part(const SynthOptions& options, int64_t index);

struct SynthReport {
  int64_t parts = 0;
  int64_t regenerated = 0;  // draws rejected (invalid solid, fit) and drawn again
  int64_t noisy_captions = 0;
  int64_t duplicates = 0;  // parts whose geometry hash an earlier part already had
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
};
SynthStats synth_stats(const std::filesystem::path& dir);

}  // namespace cadclip::cad
