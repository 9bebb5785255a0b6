// Standard parts of `cadclip synth --kind standard`: the catalog of each group
// (every designation its tables allow), the solid of one catalog entry, and
// captions written the way engineers write designations.
#pragma once

#include <TopoDS_Shape.hxx>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cadclip/synth/synth.h"

namespace cadclip::synth {

// One catalog entry: a standard, a row of its table and what the row leaves open.
struct StandardItem {
  std::string group;        // group key ("hex_bolt")
  std::string standard;     // "ISO 4017", "DIN 933", "ISO 15"; "catalogue" where none exists
  std::string table;        // table file ("hex_bolts.csv")
  size_t row = 0;           // row of the table, from 0
  double length = 0;        // nominal length, mm; 0 when the part has none
  std::string variant;      // bearings: "" (open), "ZZ" or "2RS"; spring washers and
                            // collars: the form ("B", "A"); standoffs: "FF" (female-female)
                            // or "MF" (male-female); pulleys: the belt width ("6")
  std::string designation;  // short designation: "ISO 4017 M8x40", "608-2RS"
  double bore = 0;          // pulleys and gears: the bore, mm; 0 for other parts
};

// The solid and what was built from the table.
struct StandardBuilt {
  TopoDS_Shape shape;
  double extent[3] = {0, 0, 0};  // bounding box the table gives (x, y, z), mm
  nlohmann::json dims;           // the dimensions used, named as in the standard (s, k, dk, ...)
};

struct StandardGroup {
  std::string key;                         // "hex_bolt"
  std::vector<StandardItem> (*catalog)();  // every entry, in a fixed order
  StandardBuilt (*build)(const StandardItem& item);
};

// The groups, in the order their catalogs are joined.
const std::vector<StandardGroup>& standard_groups();
// Throws cadclip::Error listing the keys for an unknown one.
const StandardGroup& standard_group(const std::string& key);
// The catalog of a group, made once.
const std::vector<StandardItem>& standard_catalog(const std::string& group);

// The held-out rule: every fifth row of each table, from the third (rows 2,
// 7, 12, ...); every part made from such a row goes to the test split.
bool standard_row_held_out(size_t row);

// The groups' catalogs and solids (standard_fasteners.cc, standard_nuts_washers.cc,
// standard_bearings.cc, standard_rings.cc, standard_standoffs_collars.cc,
// standard_steel_profiles.cc, standard_tslot_profiles.cc, standard_drives.cc).
std::vector<StandardItem> hex_bolt_catalog();
StandardBuilt build_hex_bolt(const StandardItem& item);
std::vector<StandardItem> socket_screw_catalog();
StandardBuilt build_socket_screw(const StandardItem& item);
std::vector<StandardItem> countersunk_screw_catalog();
StandardBuilt build_countersunk_screw(const StandardItem& item);
std::vector<StandardItem> dowel_pin_catalog();
StandardBuilt build_dowel_pin(const StandardItem& item);
std::vector<StandardItem> hex_nut_catalog();
StandardBuilt build_hex_nut(const StandardItem& item);
std::vector<StandardItem> plain_washer_catalog();
StandardBuilt build_plain_washer(const StandardItem& item);
std::vector<StandardItem> ball_bearing_catalog();
StandardBuilt build_ball_bearing(const StandardItem& item);
std::vector<StandardItem> spring_washer_catalog();
StandardBuilt build_spring_washer(const StandardItem& item);
std::vector<StandardItem> retaining_ring_catalog();
StandardBuilt build_retaining_ring(const StandardItem& item);
std::vector<StandardItem> hex_standoff_catalog();
StandardBuilt build_hex_standoff(const StandardItem& item);
std::vector<StandardItem> shaft_collar_catalog();
StandardBuilt build_shaft_collar(const StandardItem& item);
std::vector<StandardItem> steel_profile_catalog();
StandardBuilt build_steel_profile(const StandardItem& item);
std::vector<StandardItem> tslot_profile_catalog();
StandardBuilt build_tslot_profile(const StandardItem& item);
std::vector<StandardItem> gt2_pulley_catalog();
StandardBuilt build_gt2_pulley(const StandardItem& item);
std::vector<StandardItem> spur_gear_catalog();
StandardBuilt build_spur_gear(const StandardItem& item);

// Shared by the builders: a solid of revolution about z from a closed profile
// in the xz plane (x = radius >= 0, y = z), corners chamfered as P2 says.
struct P2;
TopoDS_Shape turned_z(const std::vector<P2>& profile);
// A hexagonal prism about z, across flats `s` along y (corners on x), from z0 to z1.
TopoDS_Shape hex_prism(double s, double z0, double z1);
// A table dimension as the tables write it, to 0.01 mm without trailing zeros ("6.35",
// "1.25", "12"); num_text's one decimal would turn M8's pitch 1.25 into 1.2.
std::string dim_text(double value);
// The standard length series of screws and pins (mm) from lo to hi.
std::vector<double> standard_lengths(double lo, double hi);

// Captions of one part at each level of kCaptionLevels (standard_captions.cc):
// one text per level, chosen by the caption stream of (seed, index).
struct StandardCaption {
  std::string text;
  nlohmann::json facts;  // {"family": group, what the text states}
};
std::vector<StandardCaption> standard_captions(const StandardItem& item, const StandardBuilt& built,
                                               uint64_t seed, uint64_t index);
// Every text the captions could give a part, per level: for tests and for the docs' examples.
std::vector<std::vector<std::string>> standard_caption_choices(const StandardItem& item,
                                                               const StandardBuilt& built);

// Part `index` of a set: entry `index` (mod their size) of a fixed shuffle of the catalogs.
SynthPart make_standard_part(const SynthOptions& options, int64_t index);

}  // namespace cadclip::synth
