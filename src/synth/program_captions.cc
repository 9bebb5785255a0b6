// Captions of program parts at the four Text2CAD levels, in Text2CAD's
// registers: abstract names the shape in one line; beginner says it in plain
// words with its size; intermediate describes each extrude's shape with
// approximate sizes; expert is the construction program nearly literally
// (coordinate systems with Euler angles and translation vectors, every loop's
// lines, arcs and circles, the sketch scale, extrusion depths towards and
// opposite the normal, the operation); and the name level, a few words
// (part_names.cc). Fifteen sentence structures per level, of which two are
// held out, and synonym sets of which every fifth entry is held out
// (program_caption.h); every number is recorded as a fact.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cadclip/core/format.h"
#include "synth/part_names.h"
#include "synth/program_caption.h"

namespace cadclip::synth {

namespace {

using Strings = std::vector<std::string>;

std::string sub(const std::string& pattern, const std::string& v) {
  std::string out = pattern;
  const size_t at = out.find("{v}");
  if (at != std::string::npos) out.replace(at, 3, v);
  return out;
}

Strings non_empty(Strings items) {
  items.erase(std::remove(items.begin(), items.end(), std::string()), items.end());
  return items;
}

std::string plane_name(const Frame& f) {
  const V3& n = f.z;
  const double offset = f.origin.x * n.x + f.origin.y * n.y + f.origin.z * n.z;
  const char* name = std::abs(std::abs(n.z) - 1) < 1e-9   ? "XY"
                     : std::abs(std::abs(n.y) - 1) < 1e-9 ? "XZ"
                     : std::abs(std::abs(n.x) - 1) < 1e-9 ? "YZ"
                                                          : nullptr;
  if (!name) return "an inclined plane";
  if (std::abs(offset) > 1e-9) return format("a plane parallel to {}", name);
  return format("the {} plane", name);
}

std::string outline_word(const std::string& shape) {
  if (shape == "L-shape" || shape == "T-shape" || shape == "U-shape")
    return shape.substr(0, 1) + "-shaped outline";
  if (shape == "curved outline") return "outline of lines and arcs";
  return shape;
}

// Sizes: the phrase for a fact key, from its suffix.
Strings size_patterns(const std::string& key) {
  auto ends = [&](const char* s) { return key.size() >= std::strlen(s) && key.ends_with(s); };
  if (key == "inner_diameter")
    return {"with an inner diameter of {v}", "with a bore of {v}", "hollow to {v} inside",
            "with a {v} hole through it", "opened up to {v} inside"};
  if (key == "depth")
    return {"extruded {v}", "with an extrusion depth of {v}", "extruded by {v}", "{v} in extrusion",
            "drawn out {v}"};
  if (key == "centre_distance")
    return {"with {v} between the hole centres", "{v} centre to centre",
            "with hole centres {v} apart", "holes {v} apart", "pitched at {v}"};
  if (key == "flat_distance")
    return {"{v} across the flats", "with flats {v} apart", "measuring {v} between flats",
            "with {v} between its flat sides", "pinched to {v}"};
  if (key == "total_height") return {"{v} tall overall", "{v} high in all", "{v} tall"};
  if (ends("diameter"))
    return {"{v} in diameter", "of diameter {v}", "{v} across", "with a diameter of {v}",
            "{v} from rim to rim"};
  if (ends("radius"))
    return {"of radius {v}", "with a radius of {v}", "{v} in radius", "of {v} radius",
            "rounded to {v}"};
  if (ends("height"))
    return {"{v} high", "{v} tall", "with a height of {v}", "rising {v}", "standing {v} proud"};
  if (ends("depth"))
    return {"{v} deep", "to a depth of {v}", "with a depth of {v}", "sunk {v}", "going down {v}"};
  if (ends("length"))
    return {"{v} long", "with a length of {v}", "of length {v}", "{v} in length", "stretching {v}"};
  if (ends("width"))
    return {"{v} wide", "with a width of {v}", "of width {v}", "{v} in width", "spanning {v}"};
  if (ends("thickness"))
    return {"{v} thick", "with a thickness of {v}", "of thickness {v}", "{v} in thickness",
            "{v} from face to face"};
  return {"of {v}"};
}

std::string size_text(ProgramWriter& w, const std::string& key, double value, bool approx,
                      bool predicate = false) {
  if (w.hidden(key)) return "";
  Strings patterns = size_patterns(key);
  if (predicate) {  // after "is": "0.05 units thick", never "is with a thickness of"
    for (std::string& p : patterns)
      if (p.starts_with("with ") || p.starts_with("of ")) p = patterns[0];
  }
  return sub(w.syn(patterns), w.length(key, value, approx));
}

const Program& prog(ProgramWriter& w) { return *w.desc().program; }

std::vector<const ProgramFeature*> features(ProgramWriter& w) {
  std::vector<const ProgramFeature*> out;
  const auto& all = prog(w).features;
  for (size_t i = 0; i < all.size(); ++i)
    if (static_cast<int>(i) != w.mods().drop_feature) out.push_back(&all[i]);
  return out;
}

std::string name(ProgramWriter& w) {
  const Strings& names = w.mods().names.empty() ? prog(w).names : w.mods().names;
  w.fact("family", w.mods().stated_family.empty() ? prog(w).family : w.mods().stated_family);
  return w.syn(names);
}

std::string brief(ProgramWriter& w, const ProgramFeature& f) {
  std::string noun = f.noun, plural = f.plural;
  if (f.kind == "holes") noun = w.syn(kHoleWord), plural = noun + "s";
  if (f.count_key.empty()) return f.count == 1 ? with_article(noun) : plural;
  const std::string c = w.count(f.count_key, f.count);
  return c + " " + (c == "one" || c == "1" ? noun : plural);
}

std::string full(ProgramWriter& w, const ProgramFeature& f, bool approx) {
  Strings sizes;
  if (f.kind == "steps") {
    const std::string hi = w.length("largest_diameter", f.sizes[0].second, approx);
    const std::string lo = w.length("smallest_diameter", f.sizes[1].second, approx);
    if (!hi.empty() && !lo.empty()) sizes.push_back("with diameters from " + hi + " to " + lo);
  } else {
    for (const auto& [key, value] : f.sizes) sizes.push_back(size_text(w, key, value, approx));
  }
  sizes = non_empty(sizes);
  std::string text = brief(w, f);
  if (!sizes.empty()) text += " " + join_and(sizes);
  if (!f.where.empty()) text += " " + f.where;
  return text;
}

// The bounding box: x, y, z extents under length, width, height.
std::string dims(ProgramWriter& w, int form, bool approx) {
  const ProgramDescription& d = w.desc();
  const bool any_hidden = w.hidden("length") || w.hidden("width") || w.hidden("height");
  if (form == 1 && !any_hidden) {
    const std::string sep = w.syn({" by ", " x ", " by ", " × ", " times "});
    const std::string about = approx ? w.syn(kApprox) + " " : "";
    const std::string x = w.bare("length", d.extent[0]);
    const std::string y = w.bare("width", d.extent[1]);
    const std::string z = w.bare("height", d.extent[2]);
    return about + x + sep + y + sep + z + w.unit();
  }
  Strings parts;
  const char* keys[] = {"length", "width", "height"};
  for (int i = 0; i < 3; ++i) {
    if (w.hidden(keys[i])) continue;
    const std::string v = w.length(keys[i], d.extent[i], approx);
    if (form == 2 || form == 1) {
      parts.push_back(format("a {} of {}", keys[i], v));
    } else if (form == 3) {
      parts.push_back(v + " along " + std::string(1, static_cast<char>('x' + i)));
    } else {
      static const char* kAdj[] = {"long", "wide", "high"};
      parts.push_back(v + " " + kAdj[i]);
    }
  }
  return join_and(parts);
}

std::string named_sizes(ProgramWriter& w, bool approx) {
  Strings parts;
  for (const auto& [key, value] : prog(w).sizes) parts.push_back(size_text(w, key, value, approx));
  return join_and(non_empty(parts));
}

// " with " before features, or " and " after a name that has its own "with"
// ("a plate with bosses and two holes").
std::string connector(const std::string& name) {
  return name.find(" with ") == std::string::npos ? " with " : " and ";
}

// Features the name does not already say, as "with ..." phrases.
Strings feature_texts(ProgramWriter& w, bool with_sizes, size_t at_most, bool approx) {
  std::vector<const ProgramFeature*> fs;
  for (const ProgramFeature* f : features(w))
    if (!f->named) fs.push_back(f);
  w.rng().shuffle(fs);
  fs.resize(std::min(fs.size(), at_most));
  Strings out;
  for (const ProgramFeature* f : fs) out.push_back(with_sizes ? full(w, *f, approx) : brief(w, *f));
  return out;
}

// Features the name already says, with their sizes in sentences of their own:
// "The two bosses are 0.1 units in diameter and 0.05 units high."
std::string named_sentences(ProgramWriter& w, bool approx) {
  std::string out;
  for (const ProgramFeature* f : features(w)) {
    if (!f->named) continue;
    Strings sizes;
    for (const auto& [key, value] : f->sizes)
      sizes.push_back(size_text(w, key, value, approx, /*predicate=*/true));
    sizes = non_empty(sizes);
    // "The rib is", "The three ribs are": a count of one goes unsaid.
    std::string c = f->count_key.empty() || f->count == 1 ? "" : w.count(f->count_key, f->count);
    const bool one = f->count == 1 || c == "one" || c == "1";
    std::string sentence;
    if (sizes.empty()) {
      if (c.empty()) continue;
      sentence = "It has " + c + " " + (one ? f->noun : f->plural) + ".";
    } else {
      sentence = "The " + (c.empty() ? "" : c + " ") + (one ? f->noun : f->plural) +
                 (one ? " is " : " are ") + join_and(sizes) +
                 (f->where.empty() ? "" : " " + f->where) + ".";
    }
    out += (out.empty() ? "" : " ") + sentence;
  }
  return out;
}

// ------------------------------------------------------------------ abstract

std::string abstract(ProgramWriter& w) {
  const std::string n = name(w);
  const std::string an = with_article(n);
  const Strings fs = feature_texts(w, false, static_cast<size_t>(w.rng().integer(0, 2)), false);
  const std::string F = join_and(fs);
  const std::string with = F.empty() ? "" : connector(n) + F;
  switch (w.structure()) {
    case 0:
      return cap_first(an) + with + ".";
    case 1:
      return cap_first(n) + (F.empty() ? "" : " featuring " + F) + ".";
    case 2:
      return "The model is " + an + with + ".";
    case 3:
      return cap_first(an) + (F.empty() ? "" : " that has " + F) + ".";
    case 4:
      return "Shape summary: " + n + (F.empty() ? "" : "; " + F) + ".";
    case 5:
      return "This is " + an + with + ".";
    case 6:
      return "A CAD model of " + an + with + ".";
    case 7:
      return F.empty() ? "Just " + an + "." : cap_first(F) + " on " + an + ".";
    case 8:
      return "The part is " + an + with + ".";
    case 9:
      return "What you see here is " + an + (F.empty() ? "" : " carrying " + F) + ".";
    case 10:
      return "Here we have " + an + with + ".";
    case 11:
      return "It is " + an + with + ".";
    case 12:
      return F.empty() ? "Simply " + an + "." : cap_first(an) + ", featuring " + F + ".";
    case 13:
      return "Model of " + an + with + ".";
    default:
      return "A design for " + an + with + ".";
  }
}

// ------------------------------------------------------------------ beginner

std::string plain_steps(ProgramWriter& w) {
  Strings out;
  const auto& steps = prog(w).steps;
  for (size_t i = 1; i < steps.size(); ++i) {
    const std::string shape = outline_word(steps[i].profiles[0].loops[0].shape);
    switch (steps[i].operation) {
      case Operation::kCut:
        out.push_back("cut " + with_article(shape) + " out of it");
        break;
      case Operation::kIntersect:
        out.push_back("trim it to " + with_article(shape));
        break;
      default:
        out.push_back("add " + with_article(shape) + " to it");
        break;
    }
  }
  return join_and(out, ", then ");
}

std::string beginner_text(ProgramWriter& w, int s, const std::string& n, const std::string& an,
                          const std::string& outline, const std::string& F);

std::string beginner(ProgramWriter& w) {
  const std::string n = name(w);
  const std::string an = with_article(n);
  const std::string outline = outline_word(prog(w).steps[0].profiles[0].loops[0].shape);
  const int s = w.structure();
  const Strings fs = feature_texts(w, w.rng().chance(0.5), 2, true);
  const std::string F = join_and(fs);
  const std::string named = w.rng().chance(0.5) ? named_sentences(w, true) : "";
  return beginner_text(w, s, n, an, outline, F) + (named.empty() ? "" : " " + named);
}

std::string beginner_text(ProgramWriter& w, int s, const std::string& n, const std::string& an,
                          const std::string& outline, const std::string& F) {
  switch (s) {
    case 0:
      return "Make " + an + " that is " + dims(w, 0, true) + (F.empty() ? "" : ", with " + F) + ".";
    case 1:
      return "Draw " + with_article(outline) + " and " + w.syn(kExtrudeVerb) + " to make " + an +
             " measuring " + dims(w, 1, false) + ".";
    case 2:
      return cap_first(an) + ", " + dims(w, 1, true) + (F.empty() ? "" : ", with " + F) + ".";
    case 3: {
      const std::string later = plain_steps(w);
      return "Start with " + with_article(outline) + " and " + w.syn(kExtrudeVerb) +
             (later.empty() ? "" : ", then " + later) + ". You get " + an + " about " +
             dims(w, 1, false) + ".";
    }
    case 4:
      return "In plain terms: " + an + " that spans " + dims(w, 1, true) +
             (F.empty() ? "" : ", and it has " + F) + ".";
    case 5:
      return "The " + n + " is " + dims(w, 0, true) + "." +
             (!F.empty()                 ? " It has " + F + "."
              : prog(w).features.empty() ? " It is one plain piece."
                                         : "");
    case 6:
      return "Picture " + an + ", " + dims(w, 0, true) + (F.empty() ? "" : ", with " + F) + ".";
    case 7: {
      const std::string sizes = named_sizes(w, true);
      return "You need " + an + (sizes.empty() ? "" : " " + sizes) + ": it has " +
             dims(w, 2, true) + (F.empty() ? "" : "; it also has " + F) + ".";
    }
    case 8:
      return "Build " + an + " with an overall size of " + dims(w, 1, true) +
             (F.empty() ? "" : ", plus " + F) + ".";
    case 9:
      return "Think of " + an + "; its bounding box is " + dims(w, 1, true) +
             (F.empty() ? "" : ", and it carries " + F) + ".";
    case 10:
      return "To make " + an + ", draw " + with_article(outline) + " and " + w.syn(kExtrudeVerb) +
             "; it ends up " + dims(w, 1, true) + (F.empty() ? "" : ", with " + F) + ".";
    case 11:
      return "This " + n + " measures " + dims(w, 1, true) + (F.empty() ? "" : " and has " + F) +
             ".";
    case 12:
      return cap_first(dims(w, 0, true)) + ": that is the size of " + an +
             (F.empty() ? "" : ", which has " + F) + ".";
    case 13:
      return "Sketch " + with_article(outline) + ", " + w.syn(kExtrudeVerb) + " and you have " +
             an + " with " + dims(w, 2, true) + (F.empty() ? "" : "; it also has " + F) + ".";
    default:
      return "Overall " + an + " of " + dims(w, 1, true) + (F.empty() ? "" : "; features: " + F) +
             ".";
  }
}

// -------------------------------------------------------------- intermediate

std::string op_phrase(ProgramWriter& w, Operation op) {
  switch (op) {
    case Operation::kNewBody:
      return w.syn({"forms the base", "creates a new body", "makes the main body",
                    "starts the solid", "lays down the body"});
    case Operation::kJoin:
      return w.syn({"is joined to the body", "adds material", "is merged with the body",
                    "is added on", "is welded on"});
    case Operation::kCut:
      return w.syn({"cuts into the body", "removes material", "is cut away",
                    "subtracts from the body", "is carved out"});
    default:
      return w.syn({"keeps only the overlap", "trims the body", "is intersected with the body",
                    "keeps the common volume", "leaves only the shared volume"});
  }
}

// One extrude's outline in words with its sizes (list fact stepK_outline).
std::string outline_text(ProgramWriter& w, const ProgramStep& step, size_t k, bool approx) {
  const std::string key = format("step{}_outline", k + 1);
  const SketchLoop& outer = step.profiles[0].loops[0];
  const auto [lo, hi] = profile_box(step.profiles[0]);
  const std::string a = approx ? w.syn(kApprox) + " " : "";
  std::string text;
  const size_t n = step.profiles.size();
  const std::string many =
      n > 1 ? w.count(format("step{}_profiles", k + 1), static_cast<int>(n)) + " " : "";
  const std::string shape = outline_word(outer.shape);
  const std::string noun = n > 1 ? shape + "s" : with_article(shape);
  // One element per statement: the list fact follows the text's order.
  if (outer.shape == "circle") {
    const std::string d = w.element(key, 2 * outer.curves[0].radius);
    text = many + noun + " " + a + d + w.unit() + " in diameter";
  } else {
    const std::string x = w.element(key, hi.x - lo.x);
    const std::string y = w.element(key, hi.y - lo.y);
    text = many + noun + " " + a + x + " by " + y + w.unit();
  }
  int inner = 0;
  for (const SketchProfile& p : step.profiles) inner += static_cast<int>(p.loops.size()) - 1;
  if (inner > 0) {
    const std::string c = w.count(format("step{}_inner_loops", k + 1), inner);
    text += " with " + c + " inner " + (c == "one" || c == "1" ? "loop" : "loops");
  }
  return text;
}

std::string part_sentence(ProgramWriter& w, size_t k, int frame, bool approx) {
  const ProgramStep& step = prog(w).steps[k];
  const auto [low, high] = step.range();
  const std::string depth = w.length(format("step{}_depth", k + 1), high - low, approx);
  const std::string outline = outline_text(w, step, k, approx);
  const std::string plane = plane_name(step.frame);
  const std::string op = op_phrase(w, step.operation);
  const std::string by = depth.empty() ? "" : ", extruded " + depth;
  switch (frame) {
    case 0:
      return "The " + ordinal(k) + " part is " + outline + " on " + plane + by + "; it " + op + ".";
    case 1:
      return format("Part {}: ", k + 1) + outline + by + ", " + op + ".";
    case 2:
      return cap_first(ordinal(k)) + ", " + outline + " is sketched on " + plane +
             (depth.empty() ? "" : " and extruded " + depth) + "; it " + op + ".";
    default:
      return format("Piece {} — ", k + 1) + outline + ", drawn on " + plane +
             (depth.empty() ? "" : ", pushed " + depth) + ", which " + op + ".";
  }
}

std::string intermediate(ProgramWriter& w) {
  const std::string n = name(w);
  const std::string an = with_article(n);
  const int s = w.structure();
  const bool held = heldout_structure(s);
  const bool approx = true;
  const Strings fs = feature_texts(w, true, 3, approx);
  const std::string F = join_and(fs);
  const std::string named = named_sentences(w, approx);
  Strings parts;
  if (!named.empty()) parts.push_back(named);
  const int frame = held ? 3 : w.rng().integer(0, 2);
  for (size_t k = 0; k < prog(w).steps.size(); ++k)
    parts.push_back(part_sentence(w, k, frame, approx));
  std::string P;
  for (const std::string& p : parts) P += (P.empty() ? "" : " ") + p;
  const std::string size = dims(w, w.rng().integer(0, 2), approx);
  const std::string with = F.empty() ? "" : connector(n) + F;
  const size_t steps = prog(w).steps.size();
  switch (s) {
    case 0:
      return cap_first(an) + with + ". " + P + " Overall it is " + size + ".";
    case 1:
      return "The design is " + an + ". " + P + " Overall it measures " + size + ".";
    case 2:
      return cap_first(an) + with + ". " + P + " The finished part is " + size + ".";
    case 3:
      return "This " + n + " is made in " + w.count("extrude_count", static_cast<int>(steps)) +
             (steps == 1 ? " step. " : " steps. ") + P + " Its overall size is " + size + ".";
    case 4: {
      std::string text = "Geometry overview — " + n + with + ". " + P;
      return text + " Envelope: " + size + ".";
    }
    case 5:
      return "Overall size " + size + ": " + an + with + ". " + P;
    case 6:
      return P + " Together they form " + an + with + " of " + size + ".";
    case 7:
      return "Construct " + an + with + ". " + P + " The final dimensions are " + size + ".";
    case 8:
      return cap_first(an) + ", " + size + ". It is built as follows. " + P;
    case 9:
      return "Breaking it down piece by piece: " + P + " All told, " + an + with + " spanning " +
             size + ".";
    case 10:
      return "Description of " + an + with + ". " + P + " Bounding size: " + size + ".";
    case 11:
      return "The part, " + an + with + ", measures " + size + ". " + P;
    case 12:
      return P + " The outcome is " + an + with + ", " + size + ".";
    case 13:
      return cap_first(an) + with + " (" + size + "). " + P;
    default:
      return "Consider " + an + with + ". " + P + " In total it is " + size + ".";
  }
}

// -------------------------------------------------------------------- expert

std::string expert(ProgramWriter& w) {
  const std::string n = name(w);
  const int s = w.structure();
  const ExpertStyle st = expert_style(s);
  const Strings fs = feature_texts(w, false, 2, false);
  std::string text = w.syn(kCreate) + " " + with_article(n) +
                     (fs.empty() ? "" : connector(n) + join_and(fs)) + ".";
  for (size_t k = 0; k < prog(w).steps.size(); ++k)
    if (static_cast<int>(k) != w.mods().drop_step) text += " " + expert_step(w, k, st);
  const std::string size = dims(w, st.header == 3 ? 3 : 2, false);
  if (!size.empty()) {
    switch (st.operation) {
      case 0:
        text += " The final shape is " + with_article(n) + " with " + size + ".";
        break;
      case 1:
        text += " The final dimensions are " + size + ".";
        break;
      case 2:
        text += " " + w.syn(kResult) + " " + with_article(n) + " with " + size + ".";
        break;
      default:
        text += " Envelope of the finished solid: " + size + ".";
        break;
    }
  }
  return text;
}

// ---------------------------------------------------------------------- name

// What an engineer would call the file: "mounting plate 0.75x0.5 units", "M8 spacer".
std::string name_level(ProgramWriter& w) {
  const PartName part = program_part_name(prog(w), w.desc());
  w.fact("family", w.mods().stated_family.empty() ? prog(w).family : w.mods().stated_family);
  NameWriter nw;
  nw.structure = [&w] { return w.structure(); };
  nw.syn = [&w](const Strings& options) { return w.syn(options); };
  nw.hidden = [&w](const std::string& key) { return w.hidden(key); };
  nw.bare = [&w](const std::string& key, double units) { return w.bare(key, units); };
  nw.unit = [&w] { return w.unit(); };
  nw.count = [&w](const std::string& key, int n) { return w.count(key, n); };
  nw.plain = [&w](const std::string& key, double v) {
    w.facts[key] = v;
    w.truth[key] = v;
    return num_text(v);
  };
  return render_name(part, w.mods().names.empty() ? part.nouns : w.mods().names, nw);
}

}  // namespace

std::string render_program(int level, ProgramWriter& w) {
  switch (level) {
    case 4:
      return name_level(w);
    case 0:
      return abstract(w);
    case 1:
      return beginner(w);
    case 2:
      return intermediate(w);
    default:
      return expert(w);
  }
}

}  // namespace cadclip::synth
