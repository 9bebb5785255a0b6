// Captions at the four Text2CAD levels and the name level from a part's
// description, with the facts each one states, and the annotator-noise mode. Every random choice of
// wording comes from the caption's own stream (seed, part, level), never from
// the part's parameter stream, so wording carries no hint of the parameters.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/model.h"
#include "synth/part_names.h"

namespace cadclip::synth {

std::string num_text(double value) {
  if (std::abs(value - std::round(value)) < 1e-9) return std::to_string(std::lround(value));
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  std::string out = text;
  if (out.size() > 2 && out.ends_with(".0")) out.resize(out.size() - 2);
  return out;
}

std::string join_and(const std::vector<std::string>& items, const std::string& last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size()) ? last : ", ";
    out += items[i];
  }
  return out;
}

namespace {

nlohmann::json number_json(double v) {
  if (std::abs(v - std::round(v)) < 1e-9) return std::lround(v);
  return std::round(v * 10) / 10;
}

const char* kWords[] = {"zero",  "one",   "two",  "three", "four",   "five",  "six",
                        "seven", "eight", "nine", "ten",   "eleven", "twelve"};

std::string cap(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string article(const std::string& word) {
  if (word.empty()) return "a";
  const char c = word[0];
  const bool vowel = std::string("aeiouAEIOU").find(c) != std::string::npos;
  // Letter names that sound like vowels ("an L-bracket", "a U-bracket").
  if (word.size() > 1 && word[1] == '-')
    return std::string("AEFHILMNORSX").find(c) != std::string::npos ? "an" : "a";
  return vowel ? "an" : "a";
}

std::vector<std::string> non_empty(std::vector<std::string> items) {
  items.erase(std::remove(items.begin(), items.end(), std::string()), items.end());
  return items;
}

}  // namespace

// ---------------------------------------------------------------- writer

double CaptionWriter::stated(const std::string& key, double value, bool is_count) {
  double v = value;
  if (key == wrong_key_) {
    v = is_count ? std::max(1.0, value + wrong_offset_) : std::round(value * wrong_factor_ * 2) / 2;
    if (v == value) v = is_count ? value + 1 : value + 1;
    wrong_record = {{"key", key}, {"true", number_json(value)}, {"stated", number_json(v)}};
  }
  return v;
}

std::string CaptionWriter::mm(const std::string& key, double value) {
  if (hidden(key)) return "";
  double v = stated(key, value, false);
  std::string text;
  if (approximate_ && v >= 5 && std::abs(v - std::round(v)) > 1e-9) {
    v = std::round(v);
    text = rng_.pick({"about ", "roughly ", "approximately ", "around "}) + num_text(v);
  } else {
    text = num_text(v);
  }
  facts[key] = number_json(v);
  return text + unit();
}

std::string CaptionWriter::opt(const std::string& pre, const std::string& key, double value,
                               const std::string& post) {
  if (hidden(key)) return "";
  return pre + mm(key, value) + post;
}

std::string CaptionWriter::bare(const std::string& key, double value) {
  const double v = stated(key, value, false);
  facts[key] = number_json(v);
  return num_text(v);
}

std::string CaptionWriter::unit() {
  switch (unit_style_) {
    case 0:
      return " mm";
    case 1:
      return "mm";
    case 2:
      return " millimetres";
    case 3:
      return " millimeters";
    default:
      return "";
  }
}

std::string CaptionWriter::count(const std::string& key, int value) {
  if (hidden(key)) return rng_.pick({"several", "some", "a number of"});
  const int v = static_cast<int>(stated(key, value, true));
  facts[key] = v;
  if (number_words_ && v >= 0 && v <= 12) return kWords[v];
  return std::to_string(v);
}

std::string CaptionWriter::deg(const std::string& key, double value) {
  const double v = stated(key, value, false);
  facts[key] = number_json(v);
  return num_text(v) + (unit_style_ % 2 == 0 ? "°" : " degree");
}

std::string CaptionWriter::value(const std::string& key, double value) {
  const double v = stated(key, value, false);
  facts[key] = number_json(v);
  return num_text(v);
}

// ---------------------------------------------------------------- templates

namespace {

struct Mods {
  std::vector<std::string> names;  // names to use (another family's for other_name noise)
  std::string stated_family;
  int drop_feature = -1;           // index into features, or -1
  int drop_step = -1;              // index into steps, or -1
  const PartName* name = nullptr;  // what an engineer calls the part (the name level)
  bool own_names = true;           // false for other_name noise: the name level uses `names`
};

bool dims_are_box(const std::vector<Dim>& dims) {
  for (const Dim& d : dims)
    if (d.key != "length" && d.key != "width" && d.key != "height" && d.key != "thickness")
      return false;
  return dims.size() >= 2;
}

std::vector<std::string> dim_phrases(CaptionWriter& w, const std::vector<Dim>& dims, int form) {
  std::vector<std::string> out;
  for (const Dim& d : dims) {
    if (w.hidden(d.key)) continue;
    switch (form) {
      case 0:
        out.push_back(w.mm(d.key, d.value) + " " + d.adj);
        break;
      case 1:
        out.push_back(article(d.noun) + " " + d.noun + " of " + w.mm(d.key, d.value));
        break;
      default:
        out.push_back(d.noun + " " + w.mm(d.key, d.value));
        break;
    }
  }
  return out;
}

// "120 x 80 x 6 mm" for box-like parts, else "120 mm long and 40 mm in diameter".
std::string dims_compact(CaptionWriter& w, const std::vector<Dim>& dims) {
  bool any_hidden = false;
  for (const Dim& d : dims) any_hidden |= w.hidden(d.key);
  if (!dims_are_box(dims) || any_hidden) return join_and(dim_phrases(w, dims, 0));
  const std::string sep = w.pick({" x ", " by ", " × "});
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? sep : "") + w.bare(dims[i].key, dims[i].value);
  return out + w.unit();
}

std::string size_word(CaptionWriter& w, double extent) {
  const char* word = extent < 30 ? "small" : extent < 150 ? "medium-sized" : "large";
  w.facts["size_class"] = word;
  return word;
}

// What every level's template needs: the stated name, the features left after
// noise, and the drawn wording (form of the dimension phrases, template).
struct Wording {
  std::string name, a_name;  // "bracket", "a bracket"
  std::vector<const Feature*> features;
  int form = 0;  // dim_phrases form
  int tmpl = 0;  // template, 0..5
};

// Abstract: one line saying what the part is.
std::string render_abstract(const Description& desc, const Wording& wd, CaptionWriter& w) {
  Rng& rng = w.rng();
  const std::string& name = wd.name;
  const std::string& a_name = wd.a_name;
  std::vector<const Feature*> chosen = wd.features;
  // A random subset of at most two features, in a random order.
  rng.shuffle(chosen);
  chosen.resize(std::min<size_t>(chosen.size(), static_cast<size_t>(rng.integer(0, 2))));
  std::vector<std::string> briefs;
  for (const Feature* f : chosen) briefs.push_back(f->brief(w));
  const std::string F = join_and(briefs);
  switch (wd.tmpl) {
    case 0:
      return cap(a_name) + (F.empty() ? "" : " with " + F) + ".";
    case 1:
      return cap(name) + (F.empty() ? "" : " featuring " + F) + ".";
    case 2:
      return "This is " + a_name + (F.empty() ? "" : " with " + F) + ".";
    case 3:
      return F.empty() ? "A simple " + name + "." : cap(F) + " on " + a_name + ".";
    case 4:
      return "The part is " + a_name + (F.empty() ? "" : " that has " + F) + ".";
    default: {
      const std::string size = size_word(w, desc.max_extent);
      return cap(article(size)) + " " + size + " " + name + (F.empty() ? "" : " with " + F) + ".";
    }
  }
}

// Beginner: shape and main sizes in plain words.
std::string render_beginner(const Description& desc, const Wording& wd, CaptionWriter& w) {
  Rng& rng = w.rng();
  const std::string& name = wd.name;
  const std::string& a_name = wd.a_name;
  const std::vector<const Feature*>& features = wd.features;
  const int form = wd.form;
  const std::string brief =
      features.empty()
          ? ""
          : features[static_cast<size_t>(rng.integer(0, static_cast<int>(features.size()) - 1))]
                ->brief(w);
  switch (wd.tmpl) {
    case 0:
      return cap(a_name) + " that is " + join_and(dim_phrases(w, desc.dims, 0)) + ".";
    case 1:
      return "Make " + a_name + " measuring " + dims_compact(w, desc.dims) + ".";
    case 2:
      return "The " + name + " is " + join_and(dim_phrases(w, desc.dims, 0)) + ". " +
             (brief.empty() ? "It is one plain solid piece." : "It has " + brief + ".");
    case 3:
      return "Overall, this " + name + " has " + join_and(dim_phrases(w, desc.dims, 1)) + ".";
    case 4:
      return cap(join_and(dim_phrases(w, desc.dims, 2), ", ")) + ": " + a_name +
             (brief.empty() ? "" : " with " + brief) + ".";
    default:
      return "Picture " + a_name + ", " +
             join_and(dim_phrases(w, desc.dims, form == 1 ? 0 : form)) +
             (brief.empty() ? "" : ", with " + brief) + ".";
  }
}

// Intermediate: features and their dimensions.
std::string render_intermediate(const Description& desc, const Wording& wd, CaptionWriter& w) {
  const std::string& name = wd.name;
  const std::string& a_name = wd.a_name;
  const int form = wd.form;
  std::vector<std::string> full;
  for (const Feature* f : wd.features) full.push_back(f->full(w));
  const std::string FF = full.empty() ? "no other features" : join_and(full);
  switch (wd.tmpl) {
    case 0:
      return cap(a_name) + ", " + join_and(dim_phrases(w, desc.dims, 0)) + ", with " + FF + ".";
    case 1:
      return "The " + name + " measures " + dims_compact(w, desc.dims) + ". It has " + FF + ".";
    case 2:
      return "Features: " + (full.empty() ? std::string("none") : join_and(full, "; ")) +
             ". Base shape: " + name + ", " + join_and(dim_phrases(w, desc.dims, 2), ", ") + ".";
    case 3:
      return full.empty() ? cap(a_name) + " that is " + join_and(dim_phrases(w, desc.dims, 0)) +
                                ", with nothing cut into it."
                          : cap(FF) + (full.size() == 1 ? " is" : " are") + " found on " + a_name +
                                " that is " + join_and(dim_phrases(w, desc.dims, 0)) + ".";
    case 4: {
      std::string text = "This " + name + " (" + dims_compact(w, desc.dims) + ") has " +
                         (full.empty() ? "no further features" : full[0]) + ".";
      for (size_t i = 1; i < full.size(); ++i) text += " It also has " + full[i] + ".";
      return text;
    }
    default:
      return "Main body: " + name + ", " + join_and(dim_phrases(w, desc.dims, form)) +
             ". Details: " + FF + ".";
  }
}

// Expert: construction steps with numbers.
std::string render_expert(const Description& desc, const Mods& mods, const Wording& wd,
                          CaptionWriter& w) {
  const std::string& a_name = wd.a_name;
  std::vector<std::string> steps;
  for (size_t i = 0; i < desc.steps.size(); ++i)
    if (static_cast<int>(i) != mods.drop_step) steps.push_back(desc.steps[i](w));
  steps = non_empty(steps);
  std::string text;
  switch (wd.tmpl) {
    case 0:
      for (size_t i = 0; i < steps.size(); ++i)
        text += (i ? " " : "") + format("{}. ", i + 1) + cap(steps[i]) + ".";
      return text;
    case 1:
      for (size_t i = 0; i < steps.size(); ++i) {
        const char* lead =
            i == 0 ? "First, "
                   : (i + 1 == steps.size() ? "Finally, " : (i == 1 ? "Then " : "Next, "));
        text += (i ? " " : "") + std::string(lead) + steps[i] + ".";
      }
      return text;
    case 2:
      for (size_t i = 0; i < steps.size(); ++i)
        text += (i ? "; step " : "Step ") + format("{}: ", i + 1) + steps[i];
      return text + ".";
    case 3:
      text = "To build the part, " + steps[0];
      for (size_t i = 1; i < steps.size(); ++i)
        text += (i + 1 == steps.size() ? ", and finally " : ", then ") + steps[i];
      return text + ".";
    case 4:
      text = "Create a new part.";
      for (const std::string& s : steps) text += " " + cap(s) + ".";
      return text + " The result is " + a_name + ", " + join_and(dim_phrases(w, desc.dims, 0)) +
             ".";
    default:
      return cap(join_and(steps, "; ")) + ". This gives " + a_name + ".";
  }
}

// Name: a few words, as a file name or a catalog title ("flange 6 holes").
// Families have no held-out split, so only the seen templates and synonyms.
std::string render_name_level(const Mods& mods, CaptionWriter& w) {
  w.facts["family"] = mods.stated_family;
  NameWriter nw;
  nw.structure = [&w] {
    static const std::vector<int> kSeen = {0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 14};
    return w.rng().pick(kSeen);
  };
  nw.syn = [&w](const std::vector<std::string>& options) {
    std::vector<std::string> seen;
    for (size_t i = 0; i < options.size(); ++i)
      if (i % 5 != 4) seen.push_back(options[i]);
    return w.rng().pick(seen);
  };
  nw.hidden = [&w](const std::string& key) { return w.hidden(key); };
  nw.bare = [&w](const std::string& key, double v) { return w.bare(key, v); };
  nw.unit = [&w] { return w.unit(); };
  nw.count = [&w](const std::string& key, int n) { return w.count(key, n); };
  nw.plain = [&w](const std::string& key, double v) { return w.value(key, v); };
  return render_name(*mods.name, mods.own_names ? mods.name->nouns : mods.names, nw);
}

std::string render(const Description& desc, int level, const Mods& mods, CaptionWriter& w) {
  if (level == 4) return render_name_level(mods, w);
  Rng& rng = w.rng();
  Wording wd;
  wd.name = rng.pick(mods.names);
  w.facts["family"] = mods.stated_family;
  wd.a_name = article(wd.name) + " " + wd.name;
  for (size_t i = 0; i < desc.features.size(); ++i)
    if (static_cast<int>(i) != mods.drop_feature) wd.features.push_back(&desc.features[i]);
  wd.form = rng.integer(0, 2);
  wd.tmpl = rng.integer(0, 5);
  if (level == 0) return render_abstract(desc, wd, w);
  if (level == 1) return render_beginner(desc, wd, w);
  if (level == 2) return render_intermediate(desc, wd, w);
  return render_expert(desc, mods, wd, w);
}

struct Style {
  int unit_style;
  bool approximate;
  bool words;
};

Style draw_style(Rng& rng) {
  Style s;
  s.unit_style = rng.integer(0, 4);
  s.approximate = rng.chance(0.3);
  s.words = rng.chance(0.5);
  return s;
}

struct Rendered {
  std::string text;
  nlohmann::json facts;
  nlohmann::json wrong;
};

Rendered render_with(const Description& desc, int level, uint64_t seed, uint64_t index,
                     const Mods& mods, const std::string& hide_key = "",
                     const std::string& wrong_key = "", double factor = 1, int offset = 0) {
  Rng stream(seed, index, kTagCaption, static_cast<uint64_t>(level));
  const Style style = draw_style(stream);
  CaptionWriter w(stream, style.unit_style, style.approximate, style.words);
  w.hide_key_ = hide_key;
  w.wrong_key_ = wrong_key;
  w.wrong_factor_ = factor;
  w.wrong_offset_ = offset;
  Rendered r;
  r.text = render(desc, level, mods, w);
  r.facts = std::move(w.facts);
  r.wrong = std::move(w.wrong_record);
  return r;
}

std::vector<std::string> numeric_keys(const nlohmann::json& facts) {
  std::vector<std::string> keys;
  for (auto it = facts.begin(); it != facts.end(); ++it)
    if (it.value().is_number()) keys.push_back(it.key());
  return keys;
}

// One caption to write: the part, its level, and the clean wording's mods.
struct CaptionJob {
  const Description& desc;
  const FamilyInfo& info;
  const Mods& clean;
  int level;
  uint64_t seed, index;
};

// A caption as noise left it, and the noise record saying what changed.
struct Noisy {
  Rendered caption;
  nlohmann::json record;
};

// A vague caption: the part's kind word, no numbers.
Noisy vague_caption(const Description& desc, Rng& nrng) {
  const std::string material = nrng.pick({"metal", "steel", "aluminium", "machined", "plain"});
  const std::string feature = desc.vague_feature.empty() ? "" : " with " + desc.vague_feature;
  std::string text;
  switch (nrng.integer(0, 4)) {
    case 0:
      text = cap(article(material)) + " " + material + " " + desc.kind_word + feature + ".";
      break;
    case 1:
      text = "Some kind of " + desc.kind_word + ".";
      break;
    case 2:
      text = "A " + desc.kind_word + feature + ", nothing special.";
      break;
    case 3:
      text = cap(desc.kind_word) + feature + ".";
      break;
    default:
      text = "Just " + article(desc.kind_word) + " " + desc.kind_word + " shape.";
      break;
  }
  return {{text, nlohmann::json::object(), nullptr}, {{"kind", "vague"}}};
}

// A caption from a small fixed pool per family: many parts share each of these texts.
Noisy reused_caption(const CaptionJob& job, Rng& nrng) {
  const int i = nrng.integer(0, 2);
  const std::string& n0 = job.info.names[0];
  const std::string& n1 = job.info.names.size() > 1 ? job.info.names[1] : job.info.names[0];
  const std::string text = i == 0   ? cap(article(n0)) + " " + n0 + "."
                           : i == 1 ? cap(n1) + "."
                                    : "A simple " + n0 + " part.";
  return {{text, {{"family", job.desc.family}}, nullptr}, {{"kind", "reused"}, {"pool_index", i}}};
}

// One number of `clean` left out or stated wrongly; nullopt when the caption
// states no number or the change does not show in its text.
std::optional<Noisy> number_noise(const CaptionJob& job, const std::string& kind,
                                  const Rendered& clean, const std::vector<std::string>& keys,
                                  Rng& nrng) {
  if (keys.empty()) return std::nullopt;
  const std::string key = nrng.pick(keys);
  if (kind == "missing_number") {
    Rendered changed = render_with(job.desc, job.level, job.seed, job.index, job.clean, key);
    if (changed.text == clean.text) return std::nullopt;
    return Noisy{changed, {{"kind", kind}, {"key", key}}};
  }
  const bool is_count = key.ends_with("_count");
  static const std::vector<double> kFactors = {0.5, 0.75, 1.25, 1.5, 2};
  static const std::vector<int> kOffsets = {-2, -1, 1, 2, 3};
  Rendered changed = render_with(job.desc, job.level, job.seed, job.index, job.clean, "", key,
                                 nrng.pick(kFactors), is_count ? nrng.pick(kOffsets) : 0);
  if (changed.wrong.is_null() || changed.text == clean.text) return std::nullopt;
  nlohmann::json record = {{"kind", kind}};
  record.update(changed.wrong);
  return Noisy{changed, record};
}

// The caption under the name of the family this one is confused with.
Noisy other_name_caption(const CaptionJob& job) {
  const FamilyInfo& other = family(job.info.confused_with);
  Mods mods{other.names, other.key, -1, -1, job.clean.name, /*own_names=*/false};
  return {render_with(job.desc, job.level, job.seed, job.index, mods),
          {{"kind", "other_name"}, {"stated_family", other.key}}};
}

// A feature (an expert caption: a step after the first) left out; nullopt
// when there is none to leave out or leaving it out does not show.
std::optional<Noisy> dropped_feature(const CaptionJob& job, const Rendered& clean, Rng& nrng) {
  Mods mods = job.clean;
  std::string what;
  if (job.level == 3) {
    if (job.desc.steps.size() < 2) return std::nullopt;
    mods.drop_step = nrng.integer(1, static_cast<int>(job.desc.steps.size()) - 1);
    what = format("step {}", mods.drop_step + 1);
  } else {
    if (job.desc.features.empty()) return std::nullopt;
    mods.drop_feature = nrng.integer(0, static_cast<int>(job.desc.features.size()) - 1);
    what = job.desc.features[static_cast<size_t>(mods.drop_feature)].kind;
  }
  Rendered changed = render_with(job.desc, job.level, job.seed, job.index, mods);
  if (changed.text == clean.text) return std::nullopt;
  return Noisy{changed, {{"kind", "dropped_feature"}, {"dropped", what}}};
}

// The kinds of noise in a random order; the first that applies changes the
// caption. Vague, reused and other_name always apply, so a caption drawn for
// noise always ends noisy.
Noisy noisy_caption(const CaptionJob& job, const Rendered& clean, Rng& nrng) {
  std::vector<std::string> order = {"vague",          "reused",     "wrong_number",
                                    "missing_number", "other_name", "dropped_feature"};
  nrng.shuffle(order);
  const std::vector<std::string> keys = numeric_keys(clean.facts);
  for (const std::string& kind : order) {
    std::optional<Noisy> noisy;
    if (kind == "vague")
      noisy = vague_caption(job.desc, nrng);
    else if (kind == "reused")
      noisy = reused_caption(job, nrng);
    else if (kind == "wrong_number" || kind == "missing_number")
      noisy = number_noise(job, kind, clean, keys, nrng);
    else if (kind == "other_name")
      noisy = other_name_caption(job);
    else
      noisy = dropped_feature(job, clean, nrng);
    if (noisy) return *std::move(noisy);
  }
  CADCLIP_CHECK(false, "a noise kind that always applies was not tried");
}

}  // namespace

CaptionSet write_captions(const Description& desc, uint64_t seed, uint64_t index, double noise) {
  const FamilyInfo& info = family(desc.family);
  // The family's names and an engineer's names for this very part, as synonyms.
  const PartName part_name = family_part_name(desc);
  std::vector<std::string> names = desc.names;
  for (const std::string& n : part_name.nouns)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  const Mods clean{names, desc.family, -1, -1, &part_name};
  CaptionSet out;
  for (int level = 0; level < 5; ++level) {
    const CaptionJob job{desc, info, clean, level, seed, index};
    Rendered r = render_with(desc, level, seed, index, clean);
    nlohmann::json record;  // null = clean
    Rng nrng(seed, index, kTagNoise, static_cast<uint64_t>(level));
    if (nrng.chance(noise)) {
      Noisy noisy = noisy_caption(job, r, nrng);
      r = std::move(noisy.caption);
      record = std::move(noisy.record);
    }
    out.texts.push_back(r.text);
    out.facts.push_back(r.facts);
    out.noise.push_back(record);
  }
  return out;
}

}  // namespace cadclip::synth
