// Lookups in the standards' dimension tables that `cadclip synth --kind
// standard` builds its parts from (data/standards/*.csv, built into the
// binary), for readers of designations such as search queries.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cadclip::cad {

// A deep groove ball bearing's boundary dimensions (ISO 15), mm.
struct BearingSize {
  std::string designation;  // the basic number: "608", "6204"
  double d = 0;             // bore
  double outside = 0;       // D
  double width = 0;         // B
};

// By the basic number ("608", "6204"; suffixes such as ZZ or 2RS left off);
// nullopt for a number the table does not hold.
std::optional<BearingSize> ball_bearing_size(std::string_view number);

}  // namespace cadclip::cad
