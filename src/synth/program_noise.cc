// A program caption, clean or written the way inconsistent annotators write
// (docs/SYNTHETIC.md, "Noise"): vague, reused, a wrong or a missing number,
// a confusable name, a feature or a step left out, loose synonyms. Each
// caption has its own wording stream (seed, part, level, phrasing) and its own
// noise stream, so wording and noise say nothing about the parameters.
#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/program_caption.h"

namespace cadclip::synth {
namespace {

struct Rendered {
  std::string text;
  nlohmann::json facts, truth, wrong;
  int decimals = 0;
};

Rendered render(const ProgramDescription& desc, int level, Phrasing phrasing, uint64_t seed,
                uint64_t index, const CaptionMods& mods) {
  const uint64_t stream = static_cast<uint64_t>(level) + (phrasing == Phrasing::kHeldOut ? 8 : 0);
  ProgramWriter w(Rng(seed, index, kTagCaption, stream), desc, level, phrasing, mods);
  Rendered r;
  r.text = render_program(level, w);
  r.facts = std::move(w.facts);
  r.truth = std::move(w.truth);
  r.wrong = std::move(w.wrong_record);
  r.decimals = w.decimals();
  return r;
}

// The family a noisy caption may call the part instead, with its names.
std::pair<std::string, std::vector<std::string>> confusion(const std::string& family) {
  static const std::vector<std::pair<std::string, std::pair<std::string, std::vector<std::string>>>>
      kTable = {
          {"square_plate", {"plate", {"rectangular plate", "flat plate"}}},
          {"plate", {"pocket_block", {"rectangular block", "block"}}},
          {"disc", {"cylinder", {"cylinder", "round block"}}},
          {"cylinder", {"disc", {"disc", "round plate"}}},
          {"rod", {"tube", {"tube", "pipe"}}},
          {"ring", {"disc", {"disc", "round plate"}}},
          {"tube", {"rod", {"rod", "round bar"}}},
          {"cylindrical_ring", {"ring", {"washer", "ring"}}},
          {"stepped_cylinder", {"cylinder", {"cylinder", "solid cylinder"}}},
          {"l_", {"t_profile", {"T-shaped block", "T-shaped part"}}},
          {"t_", {"l_profile", {"L-shaped block", "L-shaped part"}}},
          {"u_", {"l_profile", {"L-shaped block", "angle bracket"}}},
          {"gusset_bracket", {"l_bracket", {"L-shaped bracket", "angle bracket"}}},
          {"boss_plate", {"ribbed_plate", {"ribbed plate", "plate with ribs"}}},
          {"ribbed_plate", {"boss_plate", {"plate with bosses", "plate with posts"}}},
          {"tray", {"pocket_block", {"block with a pocket", "pocketed block"}}},
          {"pocket_block", {"tray", {"tray", "open box"}}},
          {"round_pocket_block", {"pocket_block", {"block with a pocket", "pocketed block"}}},
          {"hex_nut", {"hexagonal_prism", {"hexagonal prism", "hex bar"}}},
          {"hexagonal_prism", {"cylinder", {"cylinder", "round block"}}},
          {"triangular_prism", {"pentagonal_prism", {"pentagonal prism", "pentagonal block"}}},
          {"pentagonal_prism", {"hexagonal_prism", {"hexagonal prism", "hexagonal block"}}},
          {"octagonal_prism", {"cylinder", {"cylinder", "round block"}}},
          {"link", {"plate", {"flat plate", "rectangular plate"}}},
          {"rectangular_frame", {"pocket_block", {"block with a pocket", "pocketed block"}}},
          {"rectangular_tube", {"u_beam", {"U-channel", "channel beam"}}},
          {"rounded_block", {"cylinder", {"cylinder", "round bar"}}},
          {"flatted_disc", {"disc", {"disc", "round plate"}}},
      };
  for (const auto& [prefix, other] : kTable)
    if (family.starts_with(prefix)) return other;
  // Free programs: the base word swapped for a neighbour's.
  if (family.find("plate") != std::string::npos) return {"block", {"block", "rectangular block"}};
  if (family.find("disc") != std::string::npos || family.find("cylinder") != std::string::npos)
    return {"ring", {"ring", "washer"}};
  return {"plate", {"plate", "flat plate"}};
}

// Whole-word replacement of `from` by `to` (first occurrence); false when absent.
bool replace_word(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) {
    const bool left = at == 0 || !std::isalpha(static_cast<unsigned char>(text[at - 1]));
    const size_t end = at + from.size();
    const bool right = end >= text.size() || !std::isalpha(static_cast<unsigned char>(text[end]));
    if (left && right) {
      text.replace(at, from.size(), to);
      return true;
    }
  }
  return false;
}

void numeric_keys(const nlohmann::json& facts, std::vector<std::pair<std::string, int>>& scalars,
                  std::vector<std::pair<std::string, int>>& elements) {
  for (auto it = facts.begin(); it != facts.end(); ++it) {
    if (it.value().is_number()) scalars.push_back({it.key(), -1});
    if (it.value().is_array())
      for (int i = 0; i < static_cast<int>(it.value().size()); ++i)
        elements.push_back({it.key(), i});
  }
}

// One caption to write: the program, its level and phrasing, and the streams' names.
struct CaptionJob {
  const ProgramDescription& desc;
  int level;
  Phrasing phrasing;
  uint64_t seed, index;
  const Program& program() const { return *desc.program; }
  Rendered render(const CaptionMods& mods) const {
    return synth::render(desc, level, phrasing, seed, index, mods);
  }
};

// A caption as noise left it, and the noise record saying what changed.
struct Noisy {
  Rendered caption;
  nlohmann::json record;
};

// A vague caption: the program's kind word, no numbers.
Noisy vague_caption(const CaptionJob& job, const Rendered& clean, Rng& nrng) {
  const std::string& word = job.program().kind_word;
  static const std::vector<std::string> kForms = {
      "A mechanical part.", "Some kind of {w}.", "A {w} with a few features.",
      "{W}, nothing special.", "A simple CAD shape, a {w} of sorts."};
  std::string text = nrng.pick(kForms);
  if (auto at = text.find("{w}"); at != std::string::npos) text.replace(at, 3, word);
  if (auto at = text.find("{W}"); at != std::string::npos) text.replace(at, 3, cap_first(word));
  return {{text, nlohmann::json::object(), {}, nullptr, clean.decimals}, {{"kind", "vague"}}};
}

// A caption from a small fixed pool per family: many parts share each of these texts.
Noisy reused_caption(const CaptionJob& job, const Rendered& clean, Rng& nrng) {
  const Program& program = job.program();
  const int i = nrng.integer(0, 2);
  const std::string& n0 = program.names[0];
  const std::string& n1 = program.names.size() > 1 ? program.names[1] : n0;
  const std::string text = i == 0   ? cap_first(n0) + "."
                           : i == 1 ? cap_first(with_article(n1)) + "."
                                    : "A simple " + n0 + ".";
  return {{text, {{"family", program.family}}, {}, nullptr, clean.decimals},
          {{"kind", "reused"}, {"pool_index", i}}};
}

// The numbers a caption states: scalar facts, and elements of list facts.
struct NumberKeys {
  std::vector<std::pair<std::string, int>> scalars, elements;
};

// One number (a scalar or a list element) stated wrongly; nullopt when the
// caption states none or the change does not show in its text.
std::optional<Noisy> wrong_number(const CaptionJob& job, const Rendered& clean,
                                  const NumberKeys& keys, Rng& nrng) {
  if (keys.scalars.empty() && keys.elements.empty()) return std::nullopt;
  const bool use_list = keys.scalars.empty() || (!keys.elements.empty() && nrng.chance(0.5));
  const auto [key, element] = use_list ? nrng.pick(keys.elements) : nrng.pick(keys.scalars);
  CaptionMods mods;
  mods.wrong_key = key;
  mods.wrong_index = element;
  static const std::vector<double> kFactors = {0.5, 0.75, 1.25, 1.5, 2};
  static const std::vector<int> kOffsets = {-2, -1, 1, 2, 3};
  mods.wrong_factor = nrng.pick(kFactors);
  mods.wrong_offset = nrng.pick(kOffsets);
  Rendered changed = job.render(mods);
  if (changed.wrong.is_null() || changed.text == clean.text) return std::nullopt;
  nlohmann::json record = {{"kind", "wrong_number"}};
  record.update(changed.wrong);
  return Noisy{changed, record};
}

// One scalar number left out; nullopt when there is none or it does not show.
std::optional<Noisy> missing_number(const CaptionJob& job, const Rendered& clean,
                                    const NumberKeys& keys, Rng& nrng) {
  if (keys.scalars.empty()) return std::nullopt;
  CaptionMods mods;
  mods.hide_key = nrng.pick(keys.scalars).first;
  Rendered changed = job.render(mods);
  if (changed.text == clean.text) return std::nullopt;
  return Noisy{changed, {{"kind", "missing_number"}, {"key", mods.hide_key}}};
}

// The caption under the name of a family this one is confused with.
Noisy other_name_caption(const CaptionJob& job) {
  const auto [stated, names] = confusion(job.program().family);
  CaptionMods mods;
  mods.names = names;
  mods.stated_family = stated;
  return {job.render(mods), {{"kind", "other_name"}, {"stated_family", stated}}};
}

// A feature (an expert caption: a step after the first) left out; nullopt
// when there is none to leave out or leaving it out does not show.
std::optional<Noisy> dropped_feature(const CaptionJob& job, const Rendered& clean, Rng& nrng) {
  const Program& program = job.program();
  CaptionMods mods;
  std::string what;
  if (job.level == 3 && program.steps.size() >= 2) {
    mods.drop_step = nrng.integer(1, static_cast<int>(program.steps.size()) - 1);
    what = format("step {}", mods.drop_step + 1);
  } else {
    if (program.features.empty()) return std::nullopt;
    mods.drop_feature = nrng.integer(0, static_cast<int>(program.features.size()) - 1);
    what = program.features[static_cast<size_t>(mods.drop_feature)].kind;
  }
  Rendered changed = job.render(mods);
  if (changed.text == clean.text) return std::nullopt;
  return Noisy{changed, {{"kind", "dropped_feature"}, {"dropped", what}}};
}

// Loose everyday words for one to three technical ones; the facts stay as
// they are. Nullopt when the text has none of the words.
std::optional<Noisy> loose_synonyms(const Rendered& clean, Rng& nrng) {
  static const std::vector<std::pair<std::string, std::string>> kLoose = {
      {"holes", "perforations"}, {"hole", "perforation"},   {"Extrude", "Pull"},
      {"extruded", "pulled"},    {"circle", "round shape"}, {"rectangle", "box shape"},
      {"plate", "sheet"},        {"block", "chunk"},        {"cylinder", "round post"},
      {"arc", "curve"},          {"line", "edge"},          {"diameter", "width"},
      {"sketch", "drawing"},     {"bosses", "bumps"},       {"pocket", "dip"}};
  std::string text = clean.text;
  nlohmann::json replaced = nlohmann::json::array();
  const int wanted = nrng.integer(1, 3);
  std::vector<size_t> picks(kLoose.size());
  for (size_t i = 0; i < picks.size(); ++i) picks[i] = i;
  nrng.shuffle(picks);
  for (size_t i : picks) {
    if (static_cast<int>(replaced.size()) == wanted) break;
    if (replace_word(text, kLoose[i].first, kLoose[i].second))
      replaced.push_back({kLoose[i].first, kLoose[i].second});
  }
  if (replaced.empty()) return std::nullopt;
  Rendered changed = clean;
  changed.text = text;
  return Noisy{changed, {{"kind", "synonyms"}, {"replaced", replaced}}};
}

// The kinds of noise in a random order; the first that applies changes the
// caption. Vague, reused and other_name always apply.
Noisy noisy_caption(const CaptionJob& job, const Rendered& clean, Rng& nrng) {
  std::vector<std::string> order = {"vague",          "reused",     "wrong_number",
                                    "missing_number", "other_name", "dropped_feature",
                                    "synonyms"};
  nrng.shuffle(order);
  NumberKeys keys;
  numeric_keys(clean.facts, keys.scalars, keys.elements);
  for (const std::string& kind : order) {
    std::optional<Noisy> noisy;
    if (kind == "vague")
      noisy = vague_caption(job, clean, nrng);
    else if (kind == "reused")
      noisy = reused_caption(job, clean, nrng);
    else if (kind == "wrong_number")
      noisy = wrong_number(job, clean, keys, nrng);
    else if (kind == "missing_number")
      noisy = missing_number(job, clean, keys, nrng);
    else if (kind == "other_name")
      noisy = other_name_caption(job);
    else if (kind == "dropped_feature")
      noisy = dropped_feature(job, clean, nrng);
    else
      noisy = loose_synonyms(clean, nrng);
    if (noisy) return *std::move(noisy);
  }
  CADCLIP_CHECK(false, "a noise kind that always applies was not tried");
}

}  // namespace

ProgramCaption write_program_caption(const ProgramDescription& desc, int level, Phrasing phrasing,
                                     uint64_t seed, uint64_t index, double noise) {
  const CaptionJob job{desc, level, phrasing, seed, index};
  Rendered r = job.render(CaptionMods{});
  ProgramCaption out;
  out.truth = r.truth;
  out.decimals = r.decimals;
  nlohmann::json record;
  const uint64_t stream = static_cast<uint64_t>(level) + (phrasing == Phrasing::kHeldOut ? 8 : 0);
  Rng nrng(seed, index, kTagNoise, stream);
  if (nrng.chance(noise)) {
    Noisy noisy = noisy_caption(job, r, nrng);
    r = std::move(noisy.caption);
    record = std::move(noisy.record);
  }
  out.text = r.text;
  out.facts = r.facts;
  out.noise = record;
  return out;
}

}  // namespace cadclip::synth
