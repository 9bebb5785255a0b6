// Internal to program captions: the writer that turns sizes into text in the
// caption's unit and rounding while recording what the text states (facts)
// and the exact values behind them (truth), the held-out rule for sentence
// structures and synonyms, and what noise changes in a rendering.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "synth/program.h"

namespace cadclip::synth {

// Sentence structures per level; those at heldout_structure() are held out.
inline constexpr int kStructures = 15;
inline bool heldout_structure(int s) { return s == 4 || s == 9; }
// In a synonym set, every fifth entry (index 4, 9, ...) is held out.
inline bool heldout_synonym(size_t i) { return i % 5 == 4; }

// What noise changes in a rendering (nothing by default).
struct CaptionMods {
  std::vector<std::string> names;  // the names to use; empty = the program's
  std::string stated_family;       // the family the text then states; empty = the program's
  int drop_feature = -1;           // a feature left out (index into Program::features)
  int drop_step = -1;              // an expert step left out (index into Program::steps)
  std::string hide_key;            // a number left out
  std::string wrong_key;           // a number stated wrongly ...
  double wrong_factor = 1;         // ... multiplied by this
  int wrong_offset = 0;            // ... or, for a count, shifted by this
  int wrong_index = 0;             // ... the element, when the key holds a list
};

class ProgramWriter {
 public:
  ProgramWriter(Rng rng, const ProgramDescription& desc, int level, Phrasing phrasing,
                const CaptionMods& mods);
  Rng& rng() { return rng_; }
  bool heldout() const { return phrasing_ == Phrasing::kHeldOut; }
  const ProgramDescription& desc() const { return desc_; }
  const CaptionMods& mods() const { return mods_; }
  int decimals() const { return decimals_; }

  // A sentence structure in [0, kStructures): a seen one, or a held-out one.
  int structure();
  // One of `options`, keeping the held-out rule.
  std::string syn(const std::vector<std::string>& options);
  // A length with its unit ("0.75 units", "190.5 mm"), recorded under `key`;
  // "" when the key is hidden. `approx` lets it read "about 0.75 units".
  std::string length(const std::string& key, double units, bool approx = false);
  // The same without a unit (for "0.75 by 0.5 by 0.03 units").
  std::string bare(const std::string& key, double units);
  std::string unit();  // " units", " mm", ...
  // A count as digits or a word; "several" when hidden.
  std::string count(const std::string& key, int n);
  // An element of the list fact `key`: a length, or (`raw`) a plain number such as an angle.
  std::string element(const std::string& key, double value, bool raw = false);
  // A plain string fact ("operation": "join").
  void fact(const std::string& key, const std::string& value);
  bool hidden(const std::string& key) const { return key == mods_.hide_key; }

  nlohmann::json facts = nlohmann::json::object();  // what the text states, as stated
  nlohmann::json truth = nlohmann::json::object();  // the exact values behind the facts
  nlohmann::json wrong_record;                      // what wrong_number changed

 private:
  double stated(const std::string& key, double value, bool is_count, int index = -1);
  std::string format_value(double v) const;
  Rng rng_;
  const ProgramDescription& desc_;
  Phrasing phrasing_;
  const CaptionMods& mods_;
  int decimals_;
  int unit_style_;
  bool words_;
};

// Synonym sets (program_writer.cc); entries 4 and 9 of each are held out.
extern const std::vector<std::string> kApprox, kSeveral, kSketch, kCoordinateSystem, kBegin,
    kCreate, kExtrudeVerb, kLoop, kNewBody, kHoleWord, kResult;
// Count words "zero" .. "twelve".
std::string count_word(int n);

// Renders one caption of `level` (0..4, kCaptionLevels) with the given modifications.
std::string render_program(int level, ProgramWriter& w);

// How an expert caption words each kind of sentence (an index into each
// sentence's forms), one style per sentence structure.
struct ExpertStyle {
  int coordinate, loop, curve, scale, transform, extrude, operation, header;
};
ExpertStyle expert_style(int structure);
// Step k of the program as Text2CAD's expert level states it (program_expert.cc).
std::string expert_step(ProgramWriter& w, size_t k, const ExpertStyle& st);

// Helpers the levels and the noise share.
std::string cap_first(std::string s);
std::string with_article(const std::string& noun);
std::string ordinal(size_t i);  // "first", "second", ..., "tenth", "11th"

}  // namespace cadclip::synth
