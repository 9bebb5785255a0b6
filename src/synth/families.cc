// The part families of `cadclip synth`: each draws its parameters from the
// part's parameter stream, models the solid with Open CASCADE, and describes
// it (names, sizes, features, construction steps) for the caption writer.
// Coordinates: prismatic parts span x (length), y (width), z (height) from the
// origin; round parts turn about z (flat ones) or x (long ones). The builders
// are in family_<group>.cc.
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/family.h"

namespace cadclip::synth {

const std::vector<FamilyInfo>& families() {
  static const std::vector<FamilyInfo> kFamilies = {
      {"plate", "block", plate, {"rectangular plate", "flat plate", "mounting plate"}},
      {"l_bracket", "angle_bar", l_bracket, {"L-bracket", "angle bracket"}},
      {"u_bracket", "l_bracket", u_bracket, {"U-bracket", "channel bracket"}},
      {"flange", "pulley", flange, {"flange", "hub flange"}},
      {"washer", "spacer", washer, {"washer", "flat washer"}},
      {"hex_nut", "standoff", hex_nut, {"hex nut", "hexagon nut"}},
      {"stepped_shaft", "keyway_shaft", stepped_shaft, {"stepped shaft", "shouldered shaft"}},
      {"pipe", "spacer", pipe, {"pipe", "tube"}},
      {"elbow", "pipe", elbow, {"pipe elbow", "pipe bend"}},
      {"block", "plate", block, {"block", "machined block"}},
      {"spur_gear", "pulley", spur_gear, {"spur gear", "gear wheel"}},
      {"pulley", "flange", pulley, {"pulley", "belt pulley"}},
      {"enclosure", "block", enclosure, {"enclosure", "housing"}},
      {"spacer", "washer", spacer, {"spacer", "bushing"}},
      {"standoff", "hex_nut", standoff, {"standoff", "PCB standoff"}},
      {"tslot_profile", "angle_bar", tslot_profile, {"T-slot profile", "aluminium extrusion"}},
      {"keyway_shaft", "stepped_shaft", keyway_shaft, {"keyed shaft", "drive shaft"}},
      {"angle_bar", "l_bracket", angle_bar, {"angle bar", "angle iron"}},
  };
  return kFamilies;
}

const FamilyInfo& family(const std::string& key) {
  for (const FamilyInfo& info : families())
    if (info.key == key) return info;
  std::string known;
  for (const FamilyInfo& info : families()) known += (known.empty() ? "" : ", ") + info.key;
  throw Error(format("unknown synthetic part family '{}'; known families: {}", key, known));
}

}  // namespace cadclip::synth
