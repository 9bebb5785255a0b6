// Internal to the part families of `cadclip synth`: the axes, sizes and
// caption phrases their builders share (family_common.cc), and each group's
// builders (family_<group>.cc), which families.cc registers.
#pragma once

#include <gp_Dir.hxx>
#include <gp_Pnt.hxx>

#include <string>
#include <vector>

#include "synth/model.h"

namespace cadclip::synth {

inline const gp_Pnt kO(0, 0, 0);
inline const gp_Dir kX(1, 0, 0), kY(0, 1, 0), kZ(0, 0, 1);
inline constexpr double kPi = 3.14159265358979323846;

// The overall sizes, under the keys and words captions state them with.
Dim dim_length(double v);
Dim dim_width(double v);
Dim dim_height(double v);
Dim dim_thickness(double v);
Dim dim_od(double v);

// An ISO metric clearance-hole or common drill diameter in [lo, hi], mm; a
// Reject when there is none.
double pick_hole(Rng& rng, double lo, double hi);

// "six 8 mm holes in the base", "4 countersunk holes of 6.6 mm diameter", ...
std::string holes_text(CaptionWriter& w, const std::string& count_key, int n,
                       const std::string& diameter_key, double d, const std::string& adjective,
                       const std::string& where);
// "6 holes", "one hole": the count alone.
std::string brief_holes(CaptionWriter& w, const std::string& key, int n);
// A central bore of diameter `d`, stated under `key`.
Feature bore_feature(const std::string& key, double d);
// `one` after a count text of one ("one", "1"), else `many`.
std::string plural(const std::string& count_text, const std::string& one, const std::string& many);

// A profile in the xz plane (x = radius, y = height) turned a full turn about z.
TopoDS_Shape turned_about_z(const std::vector<P2>& profile);
// A profile in the xy plane (x = axial position, y = radius) turned about x.
TopoDS_Shape turned_about_x(const std::vector<P2>& profile);

// Plates and brackets (family_plates.cc).
Built plate(Rng& rng);
Built l_bracket(Rng& rng);
Built u_bracket(Rng& rng);
// Round parts (family_round.cc).
Built flange(Rng& rng);
Built washer(Rng& rng);
Built hex_nut(Rng& rng);
Built stepped_shaft(Rng& rng);
Built pipe(Rng& rng);
Built elbow(Rng& rng);
// Blocks and enclosures (family_blocks.cc).
Built block(Rng& rng);
Built enclosure(Rng& rng);
// Gears and pulleys (family_drives.cc).
Built spur_gear(Rng& rng);
Built pulley(Rng& rng);
// Small round parts (family_small_round.cc).
Built spacer(Rng& rng);
Built standoff(Rng& rng);
// Long profiles (family_profiles.cc).
Built tslot_profile(Rng& rng);
Built keyway_shaft(Rng& rng);
Built angle_bar(Rng& rng);

}  // namespace cadclip::synth
