// The words engineers use for parts: rules from a part's family, features and
// measured sizes to the names a design engineer gives a file or types into a
// search box, and the templates of the "name" caption level. A name never
// states a feature the part lacks: counts and bolt sizes come from the part's
// own facts, and a noun that implies holes ("mounting plate", "flange") is
// only chosen when the part has them.
#include "synth/part_names.h"

#include <algorithm>
#include <cmath>

#include "synth/program_caption.h"

namespace cadclip::synth {
namespace {

using Strings = std::vector<std::string>;

double num(const nlohmann::json& facts, const std::string& key, double otherwise = 0) {
  const auto it = facts.find(key);
  return it != facts.end() && it->is_number() ? it->get<double>() : otherwise;
}

bool has(const nlohmann::json& facts, const std::string& key) {
  const auto it = facts.find(key);
  return it != facts.end() && it->is_number();
}

// Every fact a clean caption of `desc` can state: its sizes and what its
// features' and steps' phrases record, rendered once each with exact numbers.
nlohmann::json family_facts(const Description& desc) {
  CaptionWriter w(Rng(0, 0, kTagCaption), /*unit_style=*/0, /*approximate=*/false,
                  /*number_words=*/false);
  for (const Dim& d : desc.dims) w.mm(d.key, d.value);
  for (const Feature& f : desc.features) f.full(w), f.brief(w);
  for (const Phrase& step : desc.steps) step(w);
  return w.facts;
}

void set_count(PartName& n, const std::string& key, int count, const char* one, const char* many) {
  if (count <= 0) return;
  n.count_key = key;
  n.count = count;
  n.count_one = one;
  n.count_noun = many;
}

void set_bolt(PartName& n, const std::string& key, double size) {
  if (size <= 0) return;
  n.bolt_key = key;
  n.bolt = size;
}

// The metric thread a nut's or standoff's bore is cut for (the bore here is
// the nominal size itself, or the tap drill of about 0.8 of it).
double thread_size(double d) {
  static const double kSizes[] = {2, 2.5, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 30, 36};
  for (double m : kSizes)
    if (d >= 0.8 * m - 1e-6 && d <= m + 0.2) return m;
  return 0;
}

}  // namespace

double clearance_bolt(double d) {
  static const double kSizes[] = {36, 30, 24, 20, 16, 14, 12, 10, 8, 6, 5, 4, 3, 2.5, 2};
  for (double m : kSizes)
    if (d >= m - 1e-6 && d <= 1.1 * m + 0.5 + 1e-6) return m;
  return 0;
}

// ------------------------------------------------------------------ families

namespace {

// Names of the prismatic families (plates, brackets, blocks, enclosures,
// profiles) into `n` from the facts `f` their clean captions can state;
// false for a family that is not one of them.
bool name_prismatic_family(const Description& desc, const nlohmann::json& f, PartName& n) {
  const std::string& fam = desc.family;
  auto feature = [&](const char* kind) {
    return std::any_of(desc.features.begin(), desc.features.end(),
                       [&](const Feature& x) { return x.kind == kind; });
  };
  if (fam == "plate") {
    const bool circle = has(f, "pattern_diameter");
    n.nouns = circle ? Strings{"adapter plate", "mounting plate", "flange plate", "bolt plate",
                               "bolt-circle plate"}
              : num(f, "thickness") <= 3 ? Strings{"cover plate", "mounting plate", "thin plate",
                                                   "panel", "blanking plate"}
                                         : Strings{"mounting plate", "base plate", "drilled plate",
                                                   "adapter plate", "fixing plate"};
    set_count(n, "hole_count", static_cast<int>(num(f, "hole_count")), "hole", "holes");
    set_bolt(n, "bolt_size", clearance_bolt(num(f, "hole_diameter")));
    n.sizes = {{"length", num(f, "length")}, {"width", num(f, "width")}};
  } else if (fam == "l_bracket") {
    n.nouns = num(f, "leg_hole_count") > 0 ? Strings{"mounting bracket", "angle bracket",
                                                     "L bracket", "wall bracket", "fixing bracket"}
                                           : Strings{"L bracket", "angle bracket", "corner bracket",
                                                     "base bracket", "knee bracket"};
    set_count(n, "hole_count", static_cast<int>(num(f, "hole_count")), "hole", "holes");
    n.sizes = {
        {"length", num(f, "length")}, {"width", num(f, "width")}, {"height", num(f, "height")}};
  } else if (fam == "u_bracket") {
    n.nouns = {"U bracket", "channel bracket", "U channel", "U mount", "saddle bracket"};
    set_count(n, "hole_count", static_cast<int>(num(f, "hole_count")), "hole", "holes");
    n.sizes = {
        {"length", num(f, "length")}, {"width", num(f, "width")}, {"height", num(f, "height")}};
  } else if (fam == "block") {
    const int holes = static_cast<int>(num(f, "hole_count"));
    n.nouns = feature("pocket") ? Strings{"pocketed block", "housing block", "machined block",
                                          "fixture block", "recessed block"}
              : holes > 0       ? Strings{"mounting block", "drilled block", "machined block",
                                    "base block", "fixing block"}
                          : Strings{"slotted block", "machined block", "block", "fixture block",
                                    "guide block"};
    set_count(n, "hole_count", holes, "hole", "holes");
    n.sizes = {
        {"length", num(f, "length")}, {"width", num(f, "width")}, {"height", num(f, "height")}};
  } else if (fam == "enclosure") {
    n.nouns = has(f, "boss_hole_diameter")
                  ? Strings{"electronics enclosure", "project box", "enclosure", "housing",
                            "instrument case"}
                  : Strings{"enclosure", "housing", "box", "case", "open-top case"};
    n.sizes = {
        {"length", num(f, "length")}, {"width", num(f, "width")}, {"height", num(f, "height")}};
  } else if (fam == "tslot_profile") {
    n.nouns = {"aluminium profile", "T-slot profile", "extrusion", "profile", "slot profile"};
    n.sizes = {{"width", num(f, "width")}, {"height", num(f, "height")}};
  } else if (fam == "angle_bar") {
    n.nouns =
        num(f, "width") == num(f, "height")
            ? Strings{"equal angle", "angle", "angle profile", "L profile", "angle section"}
            : Strings{"unequal angle", "angle", "angle profile", "L profile", "angle section"};
    n.sizes = {{"width", num(f, "width")}, {"height", num(f, "height")}};
  } else {
    return false;
  }
  return true;
}

// Names of the turned families (flanges, washers, nuts, shafts, pipes, gears,
// pulleys, spacers, standoffs); false for a family that is not one of them.
bool name_round_family(const std::string& fam, const nlohmann::json& f, PartName& n) {
  if (fam == "flange") {
    n.nouns = {"flange", "hub flange", "bolted flange", "pipe flange", "slip-on flange"};
    set_count(n, "bolt_hole_count", static_cast<int>(num(f, "bolt_hole_count")), "hole", "holes");
    n.sizes = {{"outer_diameter", num(f, "outer_diameter")}};
  } else if (fam == "washer") {
    const double od = num(f, "outer_diameter"), id = num(f, "inner_diameter");
    n.nouns =
        id > 0 && od / id >= 2.5
            ? Strings{"fender washer", "washer", "large washer", "flat washer", "penny washer"}
            : Strings{"washer", "flat washer", "plain washer", "spacer washer", "shim washer"};
    set_bolt(n, "bolt_size", clearance_bolt(id));
    n.sizes = {{"outer_diameter", od}};
  } else if (fam == "hex_nut") {
    const double t = num(f, "thread");
    n.nouns = t > 0 && num(f, "thickness") < 0.65 * t
                  ? Strings{"jam nut", "thin nut", "hex nut", "nut", "thin hexagon nut"}
                  : Strings{"hex nut", "nut", "hexagon nut", "full nut", "regular hexagon nut"};
    set_bolt(n, "thread", t);
  } else if (fam == "stepped_shaft") {
    const double len = num(f, "length"), od = num(f, "outer_diameter");
    n.nouns = len >= 3 * od ? Strings{"shaft", "stepped shaft", "spindle", "axle", "turned spindle"}
                            : Strings{"stepped pin", "shoulder pin", "stub shaft", "short shaft",
                                      "shouldered stud"};
    set_count(n, "step_count", static_cast<int>(num(f, "step_count")), "step", "steps");
    n.sizes = {{"outer_diameter", od}, {"length", len}};
  } else if (fam == "pipe") {
    const double len = num(f, "length"), od = num(f, "outer_diameter");
    n.nouns = len <= 1.5 * od
                  ? Strings{"bushing", "sleeve", "pipe section", "short tube", "tube stub"}
                  : Strings{"pipe", "tube", "pipe section", "round tube", "tubing length"};
    n.sizes = {{"outer_diameter", od}, {"length", len}};
  } else if (fam == "elbow") {
    n.nouns = {"elbow", "pipe elbow", "pipe bend", "bend", "elbow fitting"};
    n.sizes = {{"pipe_outer_diameter", num(f, "pipe_outer_diameter")}};
  } else if (fam == "spur_gear") {
    const int z = static_cast<int>(num(f, "tooth_count"));
    n.nouns = z <= 20
                  ? Strings{"pinion", "spur gear", "gear", "pinion gear", "small spur gear"}
                  : Strings{"spur gear", "gear", "gear wheel", "straight-cut gear", "spur wheel"};
    set_count(n, "tooth_count", z, "tooth", "teeth");
    n.sizes = {{"tip_diameter", num(f, "tip_diameter")}};
  } else if (fam == "pulley") {
    const int g = static_cast<int>(num(f, "groove_count"));
    n.nouns = g <= 1
                  ? Strings{"V-pulley", "pulley", "V-belt pulley", "sheave", "single-groove pulley"}
                  : Strings{"multi-groove pulley", "V-belt pulley", "pulley", "sheave",
                            "multi-groove sheave"};
    set_count(n, "groove_count", g, "groove", "grooves");
    n.sizes = {{"outer_diameter", num(f, "outer_diameter")}};
  } else if (fam == "spacer") {
    const double len = num(f, "length"), od = num(f, "outer_diameter"),
                 id = num(f, "inner_diameter");
    n.nouns = id <= 0.5 * od
                  ? Strings{"bushing", "collar", "spacer", "round spacer", "bush"}
                  : Strings{"spacer", "sleeve", "spacer sleeve", "round spacer", "distance sleeve"};
    set_bolt(n, "bolt_size", clearance_bolt(id));
    n.sizes = {{"length", len}};
  } else if (fam == "standoff") {
    n.nouns = has(f, "stud_length") ? Strings{"male-female standoff", "standoff", "PCB standoff",
                                              "threaded standoff", "male-female spacer"}
                                    : Strings{"female standoff", "standoff", "PCB standoff",
                                              "threaded spacer", "female-female spacer"};
    set_bolt(n, "thread", num(f, "thread"));
    n.sizes = {{"height", num(f, "height")}};
  } else if (fam == "keyway_shaft") {
    n.nouns = {"keyed shaft", "shaft", "drive shaft", "keyway shaft", "keyed spindle"};
    n.sizes = {{"outer_diameter", num(f, "outer_diameter")}, {"length", num(f, "length")}};
  } else {
    return false;
  }
  return true;
}

}  // namespace

PartName family_part_name(const Description& desc) {
  const nlohmann::json f = family_facts(desc);
  PartName n;
  if (!name_prismatic_family(desc, f, n) && !name_round_family(desc.family, f, n))
    n.nouns = desc.names;
  // A size a caption of this part never states is no fact of it: drop it.
  n.sizes.erase(std::remove_if(n.sizes.begin(), n.sizes.end(),
                               [&](const auto& s) { return !has(f, s.first); }),
                n.sizes.end());
  return n;
}

// ------------------------------------------------------------------ programs

namespace {

const ProgramFeature* find_feature(const Program& p, const std::string& kind) {
  for (const ProgramFeature& f : p.features)
    if (f.kind == kind) return &f;
  return nullptr;
}

double size_of(const Program& p, const std::string& key) {
  for (const auto& [k, v] : p.sizes)
    if (k == key) return v;
  for (const ProgramFeature& f : p.features)
    for (const auto& [k, v] : f.sizes)
      if (k == key) return v;
  return 0;
}

// The two or three largest sides of the measured box, largest first, under
// their own keys (length, width, height are the x, y, z extents).
std::vector<std::pair<std::string, double>> box_sizes(const ProgramDescription& d, int sides) {
  std::vector<std::pair<std::string, double>> out = {
      {"length", d.extent[0]}, {"width", d.extent[1]}, {"height", d.extent[2]}};
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  out.resize(static_cast<size_t>(sides));
  return out;
}

void set_hole_count(const ProgramFeature* holes, PartName& n) {
  if (holes) set_count(n, "hole_count", holes->count, "hole", "holes");
}

// A flanged bushing: a bored pair of cylinders whose wide one is a thin collar at an end.
bool flanged_bushing(const Program& p, const ProgramFeature* bore, const ProgramFeature* steps) {
  if (!bore || !steps || steps->count != 2 || p.steps.size() < 2) return false;
  const auto [l0, h0] = p.steps[0].range();
  const auto [l1, h1] = p.steps[1].range();
  const double r0 = p.steps[0].profiles[0].loops[0].curves[0].radius;
  const double r1 = p.steps[1].profiles[0].loops[0].curves[0].radius;
  return (r0 > r1 && h0 - l0 < 0.5 * (h1 - l1)) || (r1 > r0 && h1 - l1 < 0.5 * (h0 - l0));
}

// Free programs and the rarer prisms: the shape word with shop-floor adjectives.
void name_free_program(const Program& p, const ProgramDescription& d, const ProgramFeature* holes,
                       PartName& n) {
  const std::string word = p.kind_word == "round part" ? "round part" : p.kind_word;
  n.nouns = holes ? Strings{"drilled " + word, "machined " + word, "custom " + word,
                            word + " with holes", "bored " + word}
                  : Strings{"machined " + word, "custom " + word, "milled " + word, word + " part",
                            "fabricated " + word};
  set_hole_count(holes, n);
  n.sizes = box_sizes(d, 2);
}

// Plates and flat parts cut from plate: plain, bossed, ribbed, links, frames.
// False for a family that is not one of them.
bool name_flat_program(const Program& p, const ProgramDescription& d, const ProgramFeature* holes,
                       const ProgramFeature* slots, PartName& n) {
  const std::string& fam = p.family;
  const double mm = d.mm_per_unit;
  if (fam == "link") {
    n.nouns =
        slots ? Strings{"slotted link", "adjustment link", "slotted lever", "slotted arm",
                        "slotted strap"}
              : Strings{"linkage bar", "link plate", "connecting rod", "strap", "two-hole strap"};
    set_hole_count(holes, n);
    n.sizes = box_sizes(d, 1);
  } else if (fam == "plate" || fam == "square_plate") {
    const double t = size_of(p, "thickness"), largest = box_sizes(d, 1)[0].second;
    if (holes && holes->where == "near the corners")
      n.nouns = {"cover plate", "mounting plate", "base plate", "access plate", "lid plate"};
    else if (holes)
      n.nouns = {"mounting plate", "base plate", "drilled plate", "adapter plate", "fixing plate"};
    else if (slots)
      n.nouns = {"slotted plate", "adjustment plate", "slotted base plate", "guide plate",
                 "slide plate"};
    else if (t <= 0.04 * largest)
      n.nouns = {"shim", "shim plate", "blank plate", "spacer plate", "packing shim"};
    else
      n.nouns = {"blank plate", "base plate", "flat bar", "plate blank", "stock plate"};
    set_hole_count(holes, n);
    if (!holes && slots) set_count(n, "slot_count", slots->count, "slot", "slots");
    if (holes) set_bolt(n, "bolt_size", clearance_bolt(size_of(p, "hole_diameter") * mm));
    n.sizes = box_sizes(d, 2);
  } else if (fam == "boss_plate") {
    n.nouns =
        holes ? Strings{"boss plate", "mounting plate", "standoff plate", "bossed plate",
                        "pillar plate"}
              : Strings{"boss plate", "base plate", "bossed plate", "stud plate", "pillar plate"};
    const ProgramFeature* bosses = find_feature(p, "bosses");
    if (bosses) set_count(n, "boss_count", bosses->count, "boss", "bosses");
    n.sizes = box_sizes(d, 2);
  } else if (fam == "ribbed_plate") {
    const ProgramFeature* ribs = find_feature(p, "ribs");
    n.nouns = ribs && ribs->count >= 3 ? Strings{"finned plate", "heat sink", "ribbed panel",
                                                 "stiffened panel", "cooling plate"}
                                       : Strings{"ribbed panel", "stiffened panel", "rib plate",
                                                 "reinforced plate", "stiffener plate"};
    if (ribs) set_count(n, "rib_count", ribs->count, "rib", "ribs");
    n.sizes = box_sizes(d, 2);
  } else if (fam == "rectangular_frame") {
    n.nouns = {"frame", "bezel", "mounting frame", "window frame", "bezel surround"};
    n.sizes = box_sizes(d, 2);
  } else {
    return false;
  }
  return true;
}

// Turned parts and bar stock: discs, rods, rings, tubes, stepped cylinders,
// hexagons. False for a family that is not one of them.
bool name_round_program(const Program& p, const ProgramFeature* bore, double mm, PartName& n) {
  const std::string& fam = p.family;
  if (fam == "disc") {
    n.nouns = {"blank", "round cover", "cover disc", "round blank", "blanking disc"};
    n.sizes = {{"diameter", size_of(p, "diameter")}};
  } else if (fam == "rod") {
    const bool long_rod = size_of(p, "depth") >= 5 * size_of(p, "diameter");
    n.nouns = long_rod ? Strings{"shaft", "round bar", "axle", "rod stock", "plain shaft"}
                       : Strings{"pin", "dowel pin", "stub shaft", "short rod", "plain pin"};
    n.sizes = {{"diameter", size_of(p, "diameter")}, {"depth", size_of(p, "depth")}};
  } else if (fam == "cylinder") {
    n.nouns = {"puck", "round block", "plug", "slug", "round billet"};
    n.sizes = {{"diameter", size_of(p, "diameter")}};
  } else if (fam == "ring") {
    const double od = size_of(p, "diameter"), id = size_of(p, "inner_diameter");
    n.nouns =
        id > 0 && od / id >= 2.5
            ? Strings{"fender washer", "flat washer", "large washer", "shim ring", "penny washer"}
            : Strings{"flat washer", "plain washer", "shim ring", "spacer ring", "thin spacer"};
    set_bolt(n, "bolt_size", clearance_bolt(id * mm));
    n.sizes = {{"diameter", od}};
  } else if (fam == "cylindrical_ring") {
    const double od = size_of(p, "diameter"), id = size_of(p, "inner_diameter");
    n.nouns = id <= 0.5 * od
                  ? Strings{"collar", "spacer", "shaft collar", "bush", "stop collar"}
                  : Strings{"spacer", "spacer bushing", "round spacer", "bush", "distance piece"};
    set_bolt(n, "bolt_size", clearance_bolt(id * mm));
    n.sizes = {{"depth", size_of(p, "depth")}};
  } else if (fam == "tube") {
    n.nouns = {"spacer tube", "distance tube", "hollow shaft", "round tube", "tube spacer"};
    set_bolt(n, "bolt_size", clearance_bolt(size_of(p, "inner_diameter") * mm));
    n.sizes = {{"diameter", size_of(p, "diameter")}, {"depth", size_of(p, "depth")}};
  } else if (fam == "stepped_cylinder") {
    const ProgramFeature* steps = find_feature(p, "steps");
    const double total = size_of(p, "total_height"), largest = size_of(p, "largest_diameter");
    if (flanged_bushing(p, bore, steps))
      n.nouns = {"flanged bushing", "flanged sleeve", "collar bushing", "shoulder bushing",
                 "flange bush"};
    else if (bore)
      n.nouns = {"stepped bushing", "stepped sleeve", "shouldered sleeve", "stepped spacer",
                 "step bush"};
    else if (total >= 2 * largest)
      n.nouns = {"stepped shaft", "shaft", "shouldered shaft", "spindle", "turned spindle"};
    else
      n.nouns = {"stepped pin", "shoulder pin", "stepped plug", "stub shaft", "shouldered stud"};
    if (steps) set_count(n, "step_count", steps->count, "step", "steps");
    if (bore) set_bolt(n, "bolt_size", clearance_bolt(size_of(p, "bore_diameter") * mm));
    n.sizes = {{"largest_diameter", largest}, {"total_height", total}};
  } else if (fam == "hexagonal_prism") {
    n.nouns = {"hex stock", "hexagon bar", "hex block", "hex slug", "hexagon stock"};
    n.sizes = {{"depth", size_of(p, "depth")}};
  } else if (fam == "flatted_disc") {
    n.nouns = {"flatted disc", "double-D plate", "disc with flats", "flatted blank",
               "two-flat disc"};
    n.sizes = {{"diameter", size_of(p, "diameter")}};
  } else if (fam == "hex_nut") {
    n.nouns = {"nut", "hexagon nut", "hex nut blank", "nut blank", "hexagon nut blank"};
    set_bolt(n, "thread", bore ? thread_size(size_of(p, "bore_diameter") * mm) : 0);
  } else {
    return false;
  }
  return true;
}

// Beams, profiles, brackets and blocks. False for a family that is not one of them.
bool name_profile_program(const Program& p, const ProgramDescription& d,
                          const ProgramFeature* holes, PartName& n) {
  const std::string& fam = p.family;
  const double mm = d.mm_per_unit;
  auto starts = [&](const char* s) { return fam.starts_with(s); };
  if (fam == "l_profile" && p.generator == "profile") {
    n.nouns = {"L block", "angle block", "corner block", "angle piece", "knee block"};
    n.sizes = box_sizes(d, 3);
  } else if (fam == "t_profile") {
    n.nouns = {"T block", "tee block", "T piece", "T section", "tee slug"};
    n.sizes = box_sizes(d, 3);
  } else if (fam == "u_profile") {
    n.nouns = {"U block", "channel block", "U piece", "saddle", "clevis block"};
    n.sizes = box_sizes(d, 3);
  } else if (fam == "l_bracket" || fam == "gusset_bracket") {
    const bool both = holes && holes->where == "through both legs";
    if (fam == "gusset_bracket")
      n.nouns = {"gusseted bracket", "reinforced L bracket", "gusset bracket", "braced bracket",
                 "stiffened angle bracket"};
    else if (both)
      n.nouns = {"mounting bracket", "L bracket", "angle bracket", "wall bracket",
                 "fixing bracket"};
    else if (holes)
      n.nouns = {"L bracket", "angle bracket", "mounting bracket", "base bracket", "knee bracket"};
    else
      n.nouns = {"L bracket", "angle", "L profile", "angle piece", "plain angle"};
    set_hole_count(holes, n);
    if (holes) set_bolt(n, "bolt_size", clearance_bolt(size_of(p, "hole_diameter") * mm));
    n.sizes = box_sizes(d, 3);
  } else if (fam == "tray") {
    n.nouns = {"tray", "housing", "open box", "pan", "shallow housing"};
    n.sizes = box_sizes(d, 3);
  } else if (fam == "pocket_block") {
    n.nouns = {"pocketed block", "housing block", "machined block", "recessed block",
               "cavity block"};
    n.sizes = box_sizes(d, 3);
  } else if (fam == "round_pocket_block") {
    n.nouns = {"bearing seat", "bearing block", "bearing housing", "seat block", "bearing pocket"};
    n.sizes = {{"pocket_diameter", size_of(p, "pocket_diameter")}};
  } else if (fam == "rectangular_tube") {
    n.nouns = {"box section", "RHS", "rectangular hollow section", "hollow section", "box tube"};
    n.sizes = box_sizes(d, 2);
  } else if (fam == "rounded_block") {
    n.nouns = {"radius block", "rounded block", "saddle block", "arched bar", "domed block"};
    n.sizes = box_sizes(d, 3);
  } else if (starts("l_beam") || starts("t_beam") || starts("u_beam")) {
    n.nouns = fam[0] == 'l'
                  ? Strings{"angle profile", "angle", "L profile", "angle section", "rolled angle"}
              : fam[0] == 't'
                  ? Strings{"T profile", "tee section", "T bar", "T section", "structural tee"}
                  : Strings{"U channel", "channel", "C channel", "channel section", "channel iron"};
    n.sizes = {{"depth", size_of(p, "depth")}};
  } else {
    return false;
  }
  return true;
}

}  // namespace

PartName program_part_name(const Program& p, const ProgramDescription& d) {
  const ProgramFeature* holes = find_feature(p, "holes");
  PartName n;
  if (!name_flat_program(p, d, holes, find_feature(p, "slots"), n) &&
      !name_round_program(p, find_feature(p, "bore"), d.mm_per_unit, n) &&
      !name_profile_program(p, d, holes, n))
    name_free_program(p, d, holes, n);
  // A size this program does not have (0) is no fact of it.
  n.sizes.erase(
      std::remove_if(n.sizes.begin(), n.sizes.end(), [](const auto& s) { return !(s.second > 0); }),
      n.sizes.end());
  return n;
}

// ------------------------------------------------------------------ templates

namespace {

std::string join_words(const Strings& items, const std::string& sep = " ") {
  std::string out;
  for (const std::string& s : items)
    if (!s.empty()) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string bolt_text(const PartName& n, NameWriter& w) {
  if (n.bolt_key.empty() || w.hidden(n.bolt_key)) return "";
  return "M" + w.plain(n.bolt_key, n.bolt);
}

// "6 holes" (or "six holes"; "several holes" when noise hides the count).
std::string count_text(const PartName& n, NameWriter& w, bool adjective) {
  if (n.count_key.empty()) return "";
  const std::string c = w.count(n.count_key, n.count);
  const bool one = c == "1" || c == "one";
  if (adjective && !w.hidden(n.count_key)) return c + "-" + n.count_one;  // "6-hole"
  return c + " " + (one ? n.count_one : n.count_noun);
}

// "120x80 mm", "200 mm", "Ø60": the stated sizes, largest first as given.
std::string size_text(const PartName& n, NameWriter& w) {
  Strings values;
  std::string first_key;
  for (const auto& [key, value] : n.sizes) {
    if (w.hidden(key)) continue;
    if (first_key.empty()) first_key = key;
    values.push_back(w.bare(key, value));
  }
  if (values.empty()) return "";
  if (values.size() == 1 && first_key.find("diameter") != std::string::npos) {
    const std::string mark = w.syn({"Ø", "", "dia ", "D", "diameter "});
    return mark + values[0] + w.unit();
  }
  return join_words(values, w.syn({"x", " x ", "×", " by ", " times "})) + w.unit();
}

}  // namespace

std::string render_name(const PartName& name, const Strings& nouns, NameWriter& w) {
  const std::string N = w.syn(nouns);
  const int s = w.structure();
  // Which of bolt (M), sizes (S) and count (C) each template states: only
  // those are rendered, so the facts are exactly what the text says.
  static const char* kUses[kStructures] = {"MC",  "MS",  "SC",  "MSC", "MSC", "MS", "MC", "MSC",
                                           "MSC", "MSC", "MSC", "MS",  "MS",  "SC", "MSC"};
  const std::string uses = kUses[s];
  const std::string M = uses.find('M') != std::string::npos ? bolt_text(name, w) : "";
  const std::string S = uses.find('S') != std::string::npos ? size_text(name, w) : "";
  const std::string C =
      uses.find('C') != std::string::npos ? count_text(name, w, /*adjective=*/s == 8) : "";
  switch (s) {
    case 0:
      return join_words({M, N, C});
    case 1:
      return join_words({M, N, S});
    case 2:
      return join_words({N, S, C});
    case 3:
      return join_words({N, C, S, M}, ", ");
    case 4:
      return "Item: " + join_words({M, N, S, C}, ", ");
    case 5:
      return join_words({S, M, N});
    case 6:
      return N + (C.empty() ? "" : " with " + C) + (M.empty() ? "" : " for " + M + " bolts");
    case 7:
      return join_words({M, N}) + (S.empty() ? "" : " (" + S + ")") + (C.empty() ? "" : ", " + C);
    case 8:
      return join_words({C, M, N, S});
    case 9:
      return "Catalog title: " + cap_first(join_words({N, M, S, C}, " / "));
    case 10:
      return join_words({N, M, C, S});
    case 11:
      return join_words({M, N}) + (S.empty() ? "" : ", " + S);
    case 12:
      return join_words({N, S, M});
    case 13:
      return N + (C.empty() ? "" : " (" + C + ")") + (S.empty() ? "" : " " + S);
    default:
      return join_words({N, C}, ", ") + (M.empty() ? "" : ", " + M) + (S.empty() ? "" : ", " + S);
  }
}

std::vector<std::string> name_heldout_markers() { return {"Item: ", "Catalog title: "}; }

}  // namespace cadclip::synth
