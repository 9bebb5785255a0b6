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

// A hot rolled steel section's nominal dimensions (EN 10365, EN 10056-1), mm.
struct SteelProfileSize {
  std::string designation;  // "IPE 200", "L 50x5"
  std::string table;        // the table it came from: "steel_i_sections.csv"
  double h = 0;             // depth; an angle's leg a
  double b = 0;             // flange width; an angle's leg a
  double tw = 0;            // web thickness; an angle's t
  double tf = 0;            // flange thickness (UPN: at half the flange width); an angle's t
  double area = 0;          // sectional area A, mm^2
};

// By series ("IPE", "HEA", "HEB", "UPN", "L"; any case) and size ("200"; an angle's "50x5");
// nullopt for a section the tables do not hold.
std::optional<SteelProfileSize> steel_profile_size(std::string_view series, std::string_view size);

}  // namespace cadclip::cad
