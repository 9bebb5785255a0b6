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

// The metric fasteners of a nominal thread diameter d (mm) as the tables give
// them, mm; nullopt for a d the table does not hold. A size a standard does not
// make is 0.

// Hexagon head bolts and screws: ISO 4014 / ISO 4017, and the withdrawn DIN 931 /
// DIN 933 (their heads differ at M10, M12, M14 and M22).
struct HexHeadSize {
  double s = 0, k = 0;          // across flats, head height (ISO)
  double s_din = 0, k_din = 0;  // the same by DIN
};
std::optional<HexHeadSize> hex_head_size(double d);

// Hexagon socket head cap screws (ISO 4762, DIN 912): the round head.
struct SocketHeadSize {
  double dk = 0, k = 0;  // head diameter and height
};
std::optional<SocketHeadSize> socket_head_size(double d);

// Hexagon socket countersunk head screws (ISO 10642): the head's diameter.
std::optional<double> countersunk_head_diameter(double d);

// Hexagon nuts: ISO 4032 (regular), ISO 4035 (thin), ISO 7040 (nylon insert) and
// the withdrawn DIN 934.
struct HexNutSize {
  double s = 0, m = 0;          // ISO 4032: across flats, height
  double m_thin = 0;            // ISO 4035's height
  double h_nyloc = 0;           // ISO 7040's overall height
  double s_din = 0, m_din = 0;  // DIN 934
};
std::optional<HexNutSize> hex_nut_size(double d);

// Plain washers: normal series (ISO 7089, ISO 7090) and large series (ISO 7093).
struct PlainWasherSize {
  double d2 = 0, h = 0;              // normal series: outside diameter, thickness
  double d2_large = 0, h_large = 0;  // large series
};
std::optional<PlainWasherSize> plain_washer_size(double d);

// Spring lock washers, form B (DIN 127): the flat ring d1 x d2 x s; h_min is
// the free height of the split ring's helix.
struct SpringWasherSize {
  double d2 = 0, s = 0, h_min = 0;
};
std::optional<SpringWasherSize> spring_washer_size(double d);

// Retaining rings of the normal type for a shaft (DIN 471) or a bore (DIN 472)
// of diameter d1: the thickness, the free ring's inside (shaft) or outside
// (bore) diameter d3, and the lugs' radial width a.
struct RetainingRingSize {
  double s = 0, d3 = 0, a = 0;
};
std::optional<RetainingRingSize> retaining_ring_size(bool shaft, double d1);

// Hexagon standoffs (a catalogue convention): the hexagon and a male end's stud.
struct HexStandoffSize {
  double s = 0;     // across flats
  double stud = 0;  // the male thread's length (male-female standoffs)
};
std::optional<HexStandoffSize> hex_standoff_size(double d);

// An aluminium T-slot profile's section (a manufacturer convention, no standard), mm.
struct TslotProfileSize {
  std::string designation;  // "20x20 slot 6"
  std::string catalogue;    // the convention the row follows: "B-type slot 6 (Misumi HFS5; ...)"
  std::string misumi;       // Misumi's part number stem ("HFS5-2020"); "" where none
  double a = 0;             // outer size (square)
  double slot = 0;          // slot opening width
  double bore = 0;          // centre bore
};

// By series (the outer size: 20, 30, 40, 45) and slot (5, 6, 8, 10); with slot 0 the first
// row of the series (20: slot 5, 40: slot 8); nullopt for a size the table does not hold.
std::optional<TslotProfileSize> tslot_profile_size(int series, double slot);

// A GT2 (2 mm pitch) timing pulley's diameters, mm, by formula: PD = teeth x 2 / pi, OD =
// PD - 2 x 0.254 (the belt's pitch line differential).
struct PulleySize {
  int teeth = 0;
  double pitch = 0;       // pitch diameter PD
  double outside = 0;     // outside diameter OD
  bool in_table = false;  // whether gt2_pulleys.csv (the pulleys synth makes) holds this count
};

// nullopt for fewer than 10 or more than 250 teeth, beyond the GT2 pulleys sold.
std::optional<PulleySize> gt2_pulley_size(int teeth);

// A spur gear's diameters, mm, by formula for a 20 degree involute with the ISO 53
// basic rack and no profile shift.
struct GearSize {
  double module = 0;
  int teeth = 0;
  double pitch = 0;  // d = m z
  double tip = 0;    // da = m (z + 2)
  double root = 0;   // df = m (z - 2.5)
  double base = 0;   // db = m z cos 20
};

// nullopt for a module that is not positive or fewer than 6 teeth.
std::optional<GearSize> spur_gear_size(double module, int teeth);

}  // namespace cadclip::cad
