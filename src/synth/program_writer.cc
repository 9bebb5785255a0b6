// The program caption writer: numbers in the caption's unit and rounding,
// recorded as facts with the exact values behind them; the held-out rule for
// sentence structures and synonyms; the synonym sets and the held-out
// markers that tests look for (program_caption.h).
#include <cmath>
#include <cstdio>

#include "cadclip/core/format.h"
#include "synth/part_names.h"
#include "synth/program_caption.h"

namespace cadclip::synth {

namespace {
using Strings = std::vector<std::string>;
const char* kWords[] = {"zero",  "one",   "two",  "three", "four",   "five",  "six",
                        "seven", "eight", "nine", "ten",   "eleven", "twelve"};
const char* kOrdinals[] = {"first", "second",  "third",  "fourth", "fifth",
                           "sixth", "seventh", "eighth", "ninth",  "tenth"};
}  // namespace

std::string count_word(int n) { return n >= 0 && n <= 12 ? kWords[n] : std::to_string(n); }

std::string ordinal(size_t i) { return i < 10 ? kOrdinals[i] : format("{}th", i + 1); }

// Synonym sets; entries 4 and 9 of each are held out.
const std::vector<std::string> kApprox = {"about",        "approximately",   "roughly", "around",
                                          "close to",     "nearly",          "approx.", "circa",
                                          "more or less", "in the region of"};
const std::vector<std::string> kSeveral = {"several",      "some",       "a number of", "multiple",
                                           "a handful of", "various",    "a few",       "a set of",
                                           "a group of",   "an array of"};
const std::vector<std::string> kSketch = {"sketch",         "two-dimensional sketch",
                                          "2D sketch",      "profile sketch",
                                          "planar drawing", "drawing",
                                          "2D profile",     "planar sketch",
                                          "layout",         "flat layout drawing"};
const std::vector<std::string> kCoordinateSystem = {"new coordinate system",
                                                    "local coordinate system",
                                                    "coordinate frame",
                                                    "new reference frame",
                                                    "fresh datum frame",
                                                    "coordinate system",
                                                    "working coordinate system",
                                                    "local frame",
                                                    "reference coordinate system",
                                                    "auxiliary datum system"};
const std::vector<std::string> kBegin = {
    "Begin by",    "Start by",     "First, begin by",     "To start, begin by", "Kick off by",
    "Commence by", "Start off by", "Initially, start by", "Begin the model by", "Lead off by"};
const std::vector<std::string> kCreate = {"Create", "Construct", "Build",   "Make",     "Fashion",
                                          "Model",  "Design",    "Produce", "Generate", "Craft"};
const std::vector<std::string> kExtrudeVerb = {
    "extrude it",           "pull it up", "give it thickness", "raise it",
    "stretch it out",       "pad it",     "thicken it",        "extrude it upward",
    "lift it into a solid", "push it out"};
const std::vector<std::string> kLoop = {
    "loop",    "closed loop",    "boundary loop", "contour",   "closed chain",
    "outline", "closed profile", "boundary",      "wire loop", "perimeter ring"};
const std::vector<std::string> kNewBody = {
    "a new solid body", "a new body",      "a separate solid body", "a new part body",
    "a fresh solid",    "a new solid",     "a standalone body",     "an independent body",
    "a new solid part", "a brand-new body"};
const std::vector<std::string> kHoleWord = {
    "hole",         "opening",      "hole",       "circular hole", "bored opening",
    "through hole", "drilled hole", "round hole", "hole",          "punched aperture"};
const std::vector<std::string> kResult = {
    "The result is",         "This gives",       "You end up with",   "The outcome is",
    "What remains is",       "This yields",      "The final part is", "In the end you get",
    "The finished piece is", "All this produces"};

std::string cap_first(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string with_article(const std::string& noun) {
  if (noun.empty()) return noun;
  const char c = noun[0];
  bool vowel = std::string("aeiouAEIOU").find(c) != std::string::npos;
  if (noun.size() > 1 && noun[1] == '-')
    vowel = std::string("AEFHILMNORSX").find(c) != std::string::npos;
  if (noun.starts_with("one") || noun.starts_with("U-") || noun.starts_with("uni")) vowel = false;
  return (vowel ? "an " : "a ") + noun;
}

// ---------------------------------------------------------------- the writer

ProgramWriter::ProgramWriter(Rng rng, const ProgramDescription& desc, int level, Phrasing phrasing,
                             const CaptionMods& mods)
    : rng_(rng), desc_(desc), phrasing_(phrasing), mods_(mods) {
  // abstract, beginner, intermediate, expert, name
  static const int kUnitsDecimals[5] = {2, 2, 3, 4, 2};
  static const int kMmDecimals[5] = {1, 1, 1, 2, 1};
  decimals_ = desc.units == CaptionUnits::kUnits ? kUnitsDecimals[level] : kMmDecimals[level];
  unit_style_ = rng_.integer(0, 3);
  words_ = rng_.chance(0.5);
}

int ProgramWriter::structure() {
  static const std::vector<int> kSeen = {0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 14},
                                kHeld = {4, 9};
  return rng_.pick(heldout() ? kHeld : kSeen);
}

std::string ProgramWriter::syn(const std::vector<std::string>& options) {
  std::vector<size_t> candidates;
  for (size_t i = 0; i < options.size(); ++i)
    if (heldout_synonym(i) == heldout()) candidates.push_back(i);
  if (candidates.empty())
    for (size_t i = 0; i < options.size(); ++i)
      if (!heldout_synonym(i)) candidates.push_back(i);
  return options[rng_.pick(candidates)];
}

double ProgramWriter::stated(const std::string& key, double value, bool is_count, int index) {
  if (key != mods_.wrong_key || (index >= 0 && index != mods_.wrong_index)) return value;
  double v = is_count ? std::max(1.0, value + mods_.wrong_offset) : value * mods_.wrong_factor;
  if (v == value) v = is_count ? value + 1 : value * 1.5 + (value == 0 ? 0.1 : 0);
  wrong_record = {{"key", key}, {"true", value}, {"stated", v}};
  if (index >= 0) wrong_record["index"] = index;
  return v;
}

std::string ProgramWriter::format_value(double v) const {
  const double scale = std::pow(10.0, decimals_);
  double r = std::round(v * scale) / scale;
  if (r == 0) r = 0;  // no "-0.0"
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals_, r);
  std::string out = text;
  while (out.size() > 3 && out.back() == '0' && out[out.size() - 2] != '.') out.pop_back();
  return out;
}

std::string ProgramWriter::bare(const std::string& key, double units) {
  const double in_unit = desc_.units == CaptionUnits::kUnits ? units : units * desc_.mm_per_unit;
  const double v = stated(key, in_unit, false);
  const std::string text = format_value(v);
  facts[key] = std::stod(text);
  truth[key] = in_unit;
  return text;
}

std::string ProgramWriter::length(const std::string& key, double units, bool approx) {
  if (hidden(key)) return "";
  const std::string prefix = approx && rng_.chance(0.3) ? syn(kApprox) + " " : "";
  return prefix + bare(key, units) + unit();
}

std::string ProgramWriter::unit() {
  if (desc_.units == CaptionUnits::kUnits) return " units";
  static const char* kStyles[] = {" mm", "mm", " millimetres", " millimeters"};
  return kStyles[unit_style_];
}

std::string ProgramWriter::count(const std::string& key, int n) {
  if (hidden(key)) return syn(kSeveral);
  const int v = static_cast<int>(stated(key, n, true));
  facts[key] = v;
  truth[key] = n;
  if (words_ && v >= 0 && v <= 12) return kWords[v];
  return std::to_string(v);
}

std::string ProgramWriter::element(const std::string& key, double value, bool raw) {
  if (!facts.contains(key)) facts[key] = nlohmann::json::array();
  if (!truth.contains(key)) truth[key] = nlohmann::json::array();
  const int index = static_cast<int>(facts[key].size());
  const double in_unit =
      raw || desc_.units == CaptionUnits::kUnits ? value : value * desc_.mm_per_unit;
  const double v = stated(key, in_unit, false, index);
  std::string text;
  if (raw) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f",
                  std::round(v * 10) / 10 == 0 ? 0.0 : std::round(v * 10) / 10);
    text = buf;
  } else {
    text = format_value(v);
  }
  facts[key].push_back(std::stod(text));
  truth[key].push_back(in_unit);
  return text;
}

void ProgramWriter::fact(const std::string& key, const std::string& value) {
  facts[key] = value;
  truth[key] = value;
}

std::vector<std::string> heldout_markers(int level) {
  std::vector<std::string> out;
  auto held = [&](const Strings& set) {
    for (size_t i = 0; i < set.size(); ++i)
      if (heldout_synonym(i)) out.push_back(set[i]);
  };
  switch (level) {
    case 0:
      out = {"Shape summary:", "What you see here is", " carrying "};
      break;
    case 1:
      out = {"In plain terms:", "its bounding box is", "it carries"};
      held(kExtrudeVerb);
      break;
    case 2:
      out = {"Geometry overview —", "Envelope:", "Breaking it down piece by piece",
             "Piece 1 —",           "All told,", "pushed "};
      held(kApprox);
      break;
    case 4:
      out = name_heldout_markers();
      break;
    default:
      out = {"Datum: Euler angles",
             "origin shifted to",
             "as a straight run",
             "a curved run",
             "a ring outline about",
             "Resize by the factor",
             "Carry the drawing into space",
             "Sweep it ",
             "Result: ",
             "Envelope of the finished solid",
             "Loop 1.1 traces",
             "Its extent is"};
      held(kSketch);
      held(kCoordinateSystem);
      held(kLoop);
      held(kNewBody);
      held(kCreate);
      held(kBegin);
      held(kResult);
      break;
  }
  // Held-out size phrases and operation phrases may appear at any level.
  for (const char* m :
       {"opened up to", "drawn out", "pitched at", "pinched to", "from rim to rim", "rounded to",
        " proud", "going down", "stretching", "spanning", "from face to face", "lays down the body",
        "is welded on", "is carved out", "leaves only the shared volume", " times "})
    out.push_back(m);
  held(kSeveral);
  held(kHoleWord);
  return out;
}

}  // namespace cadclip::synth
