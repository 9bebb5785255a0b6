// The facts a text query states, as filter conditions (index/filter.h).
// Search ranks the parts that meet more of them first (the embedding orders
// parts that meet as many), and `--strict-numbers` makes them hard
// conditions. The rules, with examples, are in docs/HTTP_API.md, "Facts a
// query states".
#pragma once

#include <string_view>
#include <vector>

#include "cadclip/index/filter.h"

namespace cadclip::index {

// "under 100 mm" -> size<100; "100 x 50 x 20 mm" -> dims within ±2% (at least
// 0.5 mm); "0.75 x 0.47 x 0.03 units" or "0.75 units long, 0.47 wide" ->
// proportions; "six bolt holes", "four mounting holes" -> equal_holes=6, 4 (a
// set of that many equal holes), "six holes", "a pair of holes" ->
// hole_count=6, 2 (that, or that many in all); "24 teeth", "five spokes",
// "three T-slots" -> repeats=24, 5, 3; "three steps" -> steps=3; "M8 nut", "M8 bolt" ->
// thread=M8, "M8x40", "M8 bolt 40 mm long" -> thread=M8x40, "washer M10" ->
// clearance=M10, "M8 holes" -> a hole of 6.4 to 10 mm (tapped to clearance);
// "608ZZ", "bearing 6204-2RS", "bearing 8x22x7" -> the bore and the outside
// of the ISO 15 table; "8 mm holes", "30 inside" -> a hole of 8 ±2%; any
// other length "120 mm" -> some extent within ±2% (±10% after "about",
// "roughly", ...; at least 0.5 mm). Lengths next to words that name no extent
// ("apart", "pitch", "fillet", "radius", ...) are left alone. Each condition's
// `because` holds the words.
std::vector<Condition> conditions_stated_in(std::string_view text);

}  // namespace cadclip::index
