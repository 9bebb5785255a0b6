// Standard parts: the tables against the published standards, a valid solid
// of every group whose bounding box is the table's, designation captions,
// held-out table rows, and mixed sets with and without standard parts.
#include <gtest/gtest.h>
#include <BRepAdaptor_Surface.hxx>
#include <BRep_Tool.hxx>
#include <TopExp.hxx>
#include <TopExp_Explorer.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "cadclip/cad/standard_tables.h"
#include "cadclip/cad/standards.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/synth/synth.h"
#include "geometry_oracle.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace fs = std::filesystem;
using namespace cadclip;
using cad::standard_table;

namespace {

// The row of `table` whose first column is `key`.
size_t row_of(const cad::StandardTable& table, const std::string& key) {
  for (size_t row = 0; row < table.rows.size(); ++row)
    if (table.rows[row][0] == key) return row;
  ADD_FAILURE() << key << " not in " << table.file;
  return 0;
}

double cell(const std::string& file, const std::string& key, const std::string& column) {
  const cad::StandardTable& t = standard_table(file);
  return t.number(row_of(t, key), column);
}

const synth::StandardItem& item_named(const std::string& group, const std::string& designation) {
  for (const synth::StandardItem& item : synth::standard_catalog(group))
    if (item.designation == designation) return item;
  throw std::runtime_error(designation + " is not in the catalog of " + group);
}

bool contains(const std::vector<std::string>& texts, const std::string& text) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

}  // namespace

// Values written from the published tables, not read from data/standards/.
TEST(StandardTables, RowsAgreeWithThePublishedStandards) {
  // ISO 4017:2014 M8: s 13, k 5.3, e min 14.38; M12: s 18 (DIN 933: 19), k 7.5 (DIN 933: 8).
  EXPECT_EQ(cell("hex_bolts.csv", "M8", "s"), 13);
  EXPECT_EQ(cell("hex_bolts.csv", "M8", "k"), 5.3);
  EXPECT_EQ(cell("hex_bolts.csv", "M8", "e_min"), 14.38);
  EXPECT_EQ(cell("hex_bolts.csv", "M8", "P"), 1.25);
  EXPECT_EQ(cell("hex_bolts.csv", "M12", "s"), 18);
  EXPECT_EQ(cell("hex_bolts.csv", "M12", "s_din"), 19);
  EXPECT_EQ(cell("hex_bolts.csv", "M10", "s_din"), 17);
  EXPECT_EQ(cell("hex_bolts.csv", "M12", "k_din"), 8);
  // ISO 4014: b = 2d + 6 for l <= 125 (M10: 26).
  EXPECT_EQ(cell("hex_bolts.csv", "M10", "b_125"), 26);
  // ISO 4762:2004 M6: dk 10, k 6, s 5, t 3; M10: dk 16, s 8, t 5.
  EXPECT_EQ(cell("socket_head_cap_screws.csv", "M6", "dk"), 10);
  EXPECT_EQ(cell("socket_head_cap_screws.csv", "M6", "k"), 6);
  EXPECT_EQ(cell("socket_head_cap_screws.csv", "M6", "s"), 5);
  EXPECT_EQ(cell("socket_head_cap_screws.csv", "M6", "t"), 3);
  EXPECT_EQ(cell("socket_head_cap_screws.csv", "M10", "s"), 8);
  // ISO 4032:2012 M8: s 13, m 6.8; ISO 4035 M8: m 4; ISO 7040 M8: h 9.5; DIN 934 M10: s 17, m 8.
  EXPECT_EQ(cell("hex_nuts.csv", "M8", "m_4032"), 6.8);
  EXPECT_EQ(cell("hex_nuts.csv", "M8", "m_4035"), 4);
  EXPECT_EQ(cell("hex_nuts.csv", "M8", "h_7040"), 9.5);
  EXPECT_EQ(cell("hex_nuts.csv", "M10", "s_din"), 17);
  EXPECT_EQ(cell("hex_nuts.csv", "M10", "m_din"), 8);
  // ISO 7089:2000 M8: 8.4 / 16 / 1.6; ISO 7093-1 M8: 8.4 / 24 / 2; M10: 10.5 / 20 / 2.
  EXPECT_EQ(cell("plain_washers.csv", "M8", "d1"), 8.4);
  EXPECT_EQ(cell("plain_washers.csv", "M8", "d2"), 16);
  EXPECT_EQ(cell("plain_washers.csv", "M8", "h"), 1.6);
  EXPECT_EQ(cell("plain_washers.csv", "M8", "d2_large"), 24);
  EXPECT_EQ(cell("plain_washers.csv", "M10", "d2"), 20);
  // ISO 15: 608 8 x 22 x 7, 6204 20 x 47 x 14, 6305 25 x 62 x 17, 6000 10 x 26 x 8.
  EXPECT_EQ(cell("ball_bearings.csv", "608", "d"), 8);
  EXPECT_EQ(cell("ball_bearings.csv", "608", "D"), 22);
  EXPECT_EQ(cell("ball_bearings.csv", "608", "B"), 7);
  EXPECT_EQ(cell("ball_bearings.csv", "6204", "D"), 47);
  EXPECT_EQ(cell("ball_bearings.csv", "6204", "B"), 14);
  EXPECT_EQ(cell("ball_bearings.csv", "6305", "D"), 62);
  EXPECT_EQ(cell("ball_bearings.csv", "6000", "D"), 26);
  // ISO 8734:1997 d 6: c 1.2.
  EXPECT_EQ(cell("dowel_pins.csv", "6", "c"), 1.2);
}

// DIN 127:1987 form B, written from the published table.
TEST(StandardTables, SpringLockWashersAgreeWithDin127) {
  // M8: d1 min 8.1, d2 max 14.8, s 2, h min 4; M12: 12.2 / 21.1 / 2.5; M3: 3.1 / 6.2 / 0.8.
  EXPECT_EQ(cell("spring_lock_washers.csv", "M8", "d1"), 8.1);
  EXPECT_EQ(cell("spring_lock_washers.csv", "M8", "d2"), 14.8);
  EXPECT_EQ(cell("spring_lock_washers.csv", "M8", "s"), 2);
  EXPECT_EQ(cell("spring_lock_washers.csv", "M8", "h_min"), 4);
  EXPECT_EQ(cell("spring_lock_washers.csv", "M12", "d1"), 12.2);
  EXPECT_EQ(cell("spring_lock_washers.csv", "M12", "d2"), 21.1);
  EXPECT_EQ(cell("spring_lock_washers.csv", "M12", "s"), 2.5);
  EXPECT_EQ(cell("spring_lock_washers.csv", "M3", "d2"), 6.2);
  EXPECT_EQ(cell("spring_lock_washers.csv", "M3", "s"), 0.8);
}

// DIN 471:2011 and DIN 472:2011, normal type, written from the published tables.
TEST(StandardTables, RetainingRingsAgreeWithDin471And472) {
  // DIN 471 d1 20: s 1.2, d3 18.5, a 4, b 2.6, d5 2; d1 10: s 1, d3 9.3, a 3.3, d5 1.5.
  EXPECT_EQ(cell("retaining_rings_shaft.csv", "20", "s"), 1.2);
  EXPECT_EQ(cell("retaining_rings_shaft.csv", "20", "d3"), 18.5);
  EXPECT_EQ(cell("retaining_rings_shaft.csv", "20", "a"), 4);
  EXPECT_EQ(cell("retaining_rings_shaft.csv", "20", "d5"), 2);
  EXPECT_EQ(cell("retaining_rings_shaft.csv", "10", "d3"), 9.3);
  EXPECT_EQ(cell("retaining_rings_shaft.csv", "10", "d5"), 1.5);
  EXPECT_EQ(cell("retaining_rings_shaft.csv", "3", "a"), 1.9);
  // DIN 472 d1 10: s 1, d3 10.8, a 3.2, d5 1.2; d1 18: d3 19.5, a 4.1, d5 2; d1 8: s 0.8.
  EXPECT_EQ(cell("retaining_rings_bore.csv", "10", "s"), 1);
  EXPECT_EQ(cell("retaining_rings_bore.csv", "10", "d3"), 10.8);
  EXPECT_EQ(cell("retaining_rings_bore.csv", "10", "a"), 3.2);
  EXPECT_EQ(cell("retaining_rings_bore.csv", "10", "d5"), 1.2);
  EXPECT_EQ(cell("retaining_rings_bore.csv", "18", "d3"), 19.5);
  EXPECT_EQ(cell("retaining_rings_bore.csv", "18", "a"), 4.1);
  EXPECT_EQ(cell("retaining_rings_bore.csv", "8", "s"), 0.8);
}

// Standoffs follow the catalogues, not a standard; the table must say so.
TEST(StandardTables, StandoffsAreACatalogueConvention) {
  // Across flats M2.5 5, M3 5.5, M4 7, M5 8, M6 10; M3 male thread 6 mm; ISO 261 M3 pitch 0.5.
  EXPECT_EQ(cell("hex_standoffs.csv", "M2.5", "s"), 5);
  EXPECT_EQ(cell("hex_standoffs.csv", "M3", "s"), 5.5);
  EXPECT_EQ(cell("hex_standoffs.csv", "M4", "s"), 7);
  EXPECT_EQ(cell("hex_standoffs.csv", "M6", "s"), 10);
  EXPECT_EQ(cell("hex_standoffs.csv", "M3", "stud"), 6);
  EXPECT_EQ(cell("hex_standoffs.csv", "M3", "P"), 0.5);
  bool says = false;
  for (const std::string& note : standard_table("hex_standoffs.csv").notes)
    says |= note.find("manufacturer convention, not a standard") != std::string::npos;
  EXPECT_TRUE(says);
}

// DIN 705 form A, written from the published table.
TEST(StandardTables, ShaftCollarsAgreeWithDin705) {
  // d1 20: d2 32, b 14; d1 10: 20 x 10; d1 35: 56 x 16; d1 50: 80 x 18; d1 6: 12 x 8.
  EXPECT_EQ(cell("shaft_collars.csv", "20", "d2"), 32);
  EXPECT_EQ(cell("shaft_collars.csv", "20", "b"), 14);
  EXPECT_EQ(cell("shaft_collars.csv", "10", "d2"), 20);
  EXPECT_EQ(cell("shaft_collars.csv", "10", "b"), 10);
  EXPECT_EQ(cell("shaft_collars.csv", "35", "d2"), 56);
  EXPECT_EQ(cell("shaft_collars.csv", "50", "d2"), 80);
  EXPECT_EQ(cell("shaft_collars.csv", "50", "b"), 18);
  EXPECT_EQ(cell("shaft_collars.csv", "6", "b"), 8);
  EXPECT_EQ(standard_table("shaft_collars.csv")
                .cell(row_of(standard_table("shaft_collars.csv"), "20"), "d3"),
            "M6");
}

// ISO 10642:2004, written from the published table.
TEST(StandardTables, CountersunkScrewsAgreeWithIso10642) {
  // M6: dk 13.44, k 3.72, s 4, t 2.16; M8: 17.92 / 4.96 / 5; M3: 6.72 / 1.86 / 2;
  // M12: 26.88 / 7.44 / 8; M20: t 5.49.
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M6", "dk"), 13.44);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M6", "k"), 3.72);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M6", "s"), 4);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M6", "t"), 2.16);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M20", "t"), 5.49);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M8", "dk"), 17.92);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M8", "k"), 4.96);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M8", "s"), 5);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M3", "dk"), 6.72);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M12", "dk"), 26.88);
  EXPECT_EQ(cell("countersunk_socket_screws.csv", "M12", "s"), 8);
  // A 90 degree head: k = (dk - d) / 2 on every row.
  const auto& t = standard_table("countersunk_socket_screws.csv");
  for (size_t row = 0; row < t.rows.size(); ++row)
    EXPECT_NEAR(t.number(row, "k"), (t.number(row, "dk") - t.number(row, "d")) / 2, 1e-9)
        << t.rows[row][0];
  bool overall = false;
  for (const std::string& note : t.notes)
    overall |= note.find("OVERALL length") != std::string::npos;
  EXPECT_TRUE(overall);
}

// EN 10365:2017 and EN 10056-1:2017, written from the published tables.
TEST(StandardTables, SteelSectionsAgreeWithEn10365AndEn10056) {
  // IPE 200: h 200, b 100, tw 5.6, tf 8.5, r 12, A 28.5 cm2; IPE 80: 80 x 46, tw 3.8, tf 5.2.
  EXPECT_EQ(cell("steel_i_sections.csv", "IPE 200", "b"), 100);
  EXPECT_EQ(cell("steel_i_sections.csv", "IPE 200", "tw"), 5.6);
  EXPECT_EQ(cell("steel_i_sections.csv", "IPE 200", "tf"), 8.5);
  EXPECT_EQ(cell("steel_i_sections.csv", "IPE 200", "r"), 12);
  EXPECT_EQ(cell("steel_i_sections.csv", "IPE 200", "A"), 28.5);
  EXPECT_EQ(cell("steel_i_sections.csv", "IPE 80", "b"), 46);
  EXPECT_EQ(cell("steel_i_sections.csv", "IPE 80", "tf"), 5.2);
  // HEA 160: h 152, b 160, tw 6, tf 9, r 15; HEB 200: 200 x 200, tw 9, tf 15, r 18, A 78.1.
  EXPECT_EQ(cell("steel_i_sections.csv", "HEA 160", "h"), 152);
  EXPECT_EQ(cell("steel_i_sections.csv", "HEA 160", "tf"), 9);
  EXPECT_EQ(cell("steel_i_sections.csv", "HEA 160", "r"), 15);
  EXPECT_EQ(cell("steel_i_sections.csv", "HEB 200", "tw"), 9);
  EXPECT_EQ(cell("steel_i_sections.csv", "HEB 200", "tf"), 15);
  EXPECT_EQ(cell("steel_i_sections.csv", "HEB 200", "A"), 78.1);
  // UPN 100: h 100, b 50, tw 6, tf 8.5, r1 8.5, r2 4.5; UPN 200: b 75, tw 8.5, tf 11.5.
  EXPECT_EQ(cell("steel_channels.csv", "UPN 100", "b"), 50);
  EXPECT_EQ(cell("steel_channels.csv", "UPN 100", "tf"), 8.5);
  EXPECT_EQ(cell("steel_channels.csv", "UPN 100", "r2"), 4.5);
  EXPECT_EQ(cell("steel_channels.csv", "UPN 200", "b"), 75);
  EXPECT_EQ(cell("steel_channels.csv", "UPN 200", "tw"), 8.5);
  // L 50x5: r1 7, r2 3.5, A 4.80 cm2; L 100x10: r1 12, A 19.2.
  EXPECT_EQ(cell("steel_angles.csv", "L 50x5", "r1"), 7);
  EXPECT_EQ(cell("steel_angles.csv", "L 50x5", "A"), 4.8);
  EXPECT_EQ(cell("steel_angles.csv", "L 100x10", "r1"), 12);
  EXPECT_EQ(cell("steel_angles.csv", "L 100x10", "A"), 19.2);
}

// T-slot profiles follow the catalogues, not a standard; the table must say so.
TEST(StandardTables, TslotProfilesAreACatalogueConvention) {
  // Misumi HFS5-2020: 20 x 20, slot 6; HFS6-3030: 30, slot 8; HFS8-4040: 40, slot 8;
  // Bosch Rexroth 45x45 N10: 45, slot 10; item Line 5 20x20: slot 5.
  EXPECT_EQ(cell("tslot_profiles.csv", "20x20 slot 6", "a"), 20);
  EXPECT_EQ(cell("tslot_profiles.csv", "20x20 slot 6", "slot"), 6);
  EXPECT_EQ(cell("tslot_profiles.csv", "20x20 slot 5", "slot"), 5);
  EXPECT_EQ(cell("tslot_profiles.csv", "30x30 slot 8", "slot"), 8);
  EXPECT_EQ(cell("tslot_profiles.csv", "40x40 slot 8", "a"), 40);
  EXPECT_EQ(cell("tslot_profiles.csv", "45x45 slot 10", "slot"), 10);
  const auto& t = standard_table("tslot_profiles.csv");
  EXPECT_EQ(t.cell(row_of(t, "20x20 slot 6"), "misumi"), "HFS5-2020");
  bool says = false;
  for (const std::string& note : t.notes)
    says |= note.find("manufacturer convention, not a standard") != std::string::npos;
  EXPECT_TRUE(says);
}

// Gates GT2 2MR: PD = 2 z / pi, OD = PD - 0.508 (20 teeth: 12.73 / 12.22; 40: 25.46).
TEST(StandardTables, Gt2PulleysHaveTheGatesPitchAndOutsideDiameters) {
  EXPECT_EQ(cell("gt2_pulleys.csv", "20", "PD"), 12.73);
  EXPECT_EQ(cell("gt2_pulleys.csv", "20", "OD"), 12.22);
  EXPECT_EQ(cell("gt2_pulleys.csv", "40", "PD"), 25.46);
  EXPECT_EQ(cell("gt2_pulleys.csv", "16", "OD"), 9.68);
  const auto& t = standard_table("gt2_pulleys.csv");
  for (size_t row = 0; row < t.rows.size(); ++row) {
    const double z = t.number(row, "teeth"), pd = 2 * z / 3.14159265358979;
    EXPECT_NEAR(t.number(row, "PD"), pd, 0.005) << z;
    EXPECT_NEAR(t.number(row, "OD"), pd - 0.508, 0.005) << z;
  }
}

TEST(StandardLookup, TslotProfilesBySeriesAndSlot) {
  const auto p = cad::tslot_profile_size(20, 6);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->designation, "20x20 slot 6");
  EXPECT_EQ(p->misumi, "HFS5-2020");
  EXPECT_EQ(p->a, 20);
  EXPECT_EQ(p->slot, 6);
  EXPECT_EQ(cad::tslot_profile_size(40, 0)->slot, 8);  // the series' first row
  EXPECT_EQ(cad::tslot_profile_size(45, 10)->a, 45);
  EXPECT_FALSE(cad::tslot_profile_size(30, 10).has_value());
  EXPECT_FALSE(cad::tslot_profile_size(25, 0).has_value());
}

TEST(StandardLookup, Gt2PulleysByTeeth) {
  const auto twenty = cad::gt2_pulley_size(20);
  ASSERT_TRUE(twenty.has_value());
  EXPECT_NEAR(twenty->pitch, 12.732, 0.001);
  EXPECT_NEAR(twenty->outside, 12.224, 0.001);
  EXPECT_TRUE(twenty->in_table);
  const auto odd = cad::gt2_pulley_size(25);  // sold, not in the table: the formula still holds
  ASSERT_TRUE(odd.has_value());
  EXPECT_NEAR(odd->pitch, 15.915, 0.001);
  EXPECT_FALSE(odd->in_table);
  EXPECT_FALSE(cad::gt2_pulley_size(5).has_value());
  EXPECT_FALSE(cad::gt2_pulley_size(1000).has_value());
}

TEST(StandardLookup, SpurGearsByModuleAndTeeth) {
  // m 2, z 20: d 40, da 44, df 35, db 40 cos 20 = 37.588.
  const auto g = cad::spur_gear_size(2, 20);
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(g->pitch, 40, 1e-9);
  EXPECT_NEAR(g->tip, 44, 1e-9);
  EXPECT_NEAR(g->root, 35, 1e-9);
  EXPECT_NEAR(g->base, 37.5877, 1e-4);
  EXPECT_NEAR(cad::spur_gear_size(0.5, 60)->tip, 31, 1e-9);
  EXPECT_FALSE(cad::spur_gear_size(0, 20).has_value());
  EXPECT_FALSE(cad::spur_gear_size(1, 3).has_value());
}

TEST(StandardLookup, SteelProfilesByDesignation) {
  const auto ipe = cad::steel_profile_size("IPE", "200");
  ASSERT_TRUE(ipe.has_value());
  EXPECT_EQ(ipe->designation, "IPE 200");
  EXPECT_EQ(ipe->table, "steel_i_sections.csv");
  EXPECT_EQ(ipe->h, 200);
  EXPECT_EQ(ipe->b, 100);
  EXPECT_EQ(ipe->tf, 8.5);
  EXPECT_NEAR(ipe->area, 2850, 1e-9);
  const auto hea = cad::steel_profile_size("hea", "160");
  ASSERT_TRUE(hea.has_value());
  EXPECT_EQ(hea->h, 152);
  EXPECT_EQ(cad::steel_profile_size("UPN", "100")->table, "steel_channels.csv");
  const auto angle = cad::steel_profile_size("L", "50x5");
  ASSERT_TRUE(angle.has_value());
  EXPECT_EQ(angle->h, 50);
  EXPECT_EQ(angle->tw, 5);
  EXPECT_EQ(angle->table, "steel_angles.csv");
  EXPECT_FALSE(cad::steel_profile_size("IPE", "210").has_value());
  EXPECT_FALSE(cad::steel_profile_size("XYZ", "200").has_value());
  const auto bearing = cad::ball_bearing_size("6204");
  ASSERT_TRUE(bearing.has_value());
  EXPECT_EQ(bearing->outside, 47);
}

TEST(StandardTables, EveryTableNamesItsSourceAndBadTablesAreClearErrors) {
  for (const auto& [file, text] : cad::embedded_standard_files()) {
    const cad::StandardTable& t = standard_table(file);
    bool source = false;
    for (const std::string& note : t.notes) source |= note.starts_with("source: ");
    EXPECT_TRUE(source) << file;
  }
  EXPECT_THROW(cad::parse_standard_table("x.csv", "a,b\n1,2,3\n"), Error);
  EXPECT_THROW(cad::parse_standard_table("x.csv", "# only a note\n"), Error);
  EXPECT_THROW(standard_table("no_such.csv"), Error);
  const auto t = cad::parse_standard_table("x.csv", "size,d\nM8,\n");
  EXPECT_THROW(t.number(0, "d"), Error);
  EXPECT_THROW(t.number(0, "nope"), Error);
}

// The table's bounding box, computed here from the row the part records.
std::array<double, 3> table_box(const synth::SynthPart& part) {
  const nlohmann::json& p = part.params;
  const nlohmann::json& row = p.at("row");
  const std::string standard = p.at("standard");
  auto at = [&](const char* key) { return row.at(key).get<double>(); };
  const double hex = 2 / std::sqrt(3.0), l = p.value("length", 0.0);
  if (part.family == "hex_bolt") {
    const bool din = standard.starts_with("DIN");
    const double s = at(din ? "s_din" : "s"), k = at(din ? "k_din" : "k");
    return {hex * s, s, l + k};
  }
  if (part.family == "socket_head_cap_screw") return {at("dk"), at("dk"), l + at("k")};
  // ISO 10642's l is the overall length.
  if (part.family == "countersunk_socket_screw") return {at("dk"), at("dk"), l};
  if (part.family == "tslot_profile") return {at("a"), at("a"), l};
  if (part.family == "spur_gear") {
    const double da = at("module") * (at("teeth") + 2);
    return {da, da, at("b")};
  }
  if (part.family == "gt2_pulley") {
    const double belt = std::stod(p.at("variant").get<std::string>());
    return {at("flange_d"), at("flange_d"), at("hub_l") + 2 + belt + 1};
  }
  if (part.family == "steel_profile") {
    if (row.contains("a")) return {at("a"), at("a"), l};
    return {at("b"), at("h"), l};
  }
  if (part.family == "hex_nut") {
    const bool din = standard == "DIN 934";
    const double s = at(din ? "s_din" : "s");
    const double h = standard == "ISO 7040"   ? at("h_7040")
                     : din                    ? at("m_din")
                     : standard == "ISO 4035" ? at("m_4035")
                                              : at("m_4032");
    return {hex * s, s, h};
  }
  if (part.family == "plain_washer") {
    const bool large = standard == "ISO 7093";
    return {at(large ? "d2_large" : "d2"), at(large ? "d2_large" : "d2"),
            at(large ? "h_large" : "h")};
  }
  if (part.family == "ball_bearing") return {at("D"), at("D"), at("B")};
  if (part.family == "spring_lock_washer") return {at("d2"), at("d2"), at("s")};
  if (part.family == "shaft_collar") return {at("d2"), at("d2"), at("b")};
  if (part.family == "hex_standoff") {
    const double stud = p.at("variant") == "MF" ? at("stud") : 0;
    return {hex * at("s"), at("s"), l + stud};
  }
  if (part.family == "retaining_ring") {
    // The ring b wide on d3 with lugs a high beside the b-wide gap at +y.
    const double r = at("d3") / 2, b = at("b");
    if (standard == "DIN 471") return {2 * (r + b), r + b + r + at("a"), at("s")};
    return {2 * r, r + std::sqrt(r * r - b * b / 4), at("s")};
  }
  return {at("d"), at("d"), l};
}

TEST(StandardParts, EveryGroupBuildsValidSolidsWithTheTablesBoundingBox) {
  for (const synth::StandardGroup& group : synth::standard_groups()) {
    synth::SynthOptions options;
    options.kind = "standard";
    options.families = {group.key};
    std::set<std::string> standards;
    for (int64_t i = 0; i < 6; ++i) {
      const synth::SynthPart part = synth::make_synth_part(options, i);
      ASSERT_EQ(part.kind, "standard");
      ASSERT_EQ(part.family, group.key);
      ASSERT_EQ(part.captions.size(), 5u);
      standards.insert(part.params.at("standard").get<std::string>());
      const std::string what = part.params.at("designation").get<std::string>();
      const test::OracleMeasure m = test::oracle_measure(part.step);
      EXPECT_TRUE(m.valid) << what;
      EXPECT_EQ(m.solids, 1) << what;
      EXPECT_GT(m.volume, 0) << what;
      const std::array<double, 3> box = table_box(part);
      for (int axis = 0; axis < 3; ++axis)
        EXPECT_NEAR(m.extent[axis], box[static_cast<size_t>(axis)], 0.01)
            << what << " axis " << axis;
    }
    EXPECT_GE(standards.size(), 1u) << group.key;
  }
}

TEST(StandardParts, BearingVariantsAreDifferentSolidsAndNutsHaveTheirHole) {
  const synth::StandardGroup& bearings = synth::standard_group("ball_bearing");
  double volume[3];
  int i = 0;
  for (const char* name : {"608", "608ZZ", "608-2RS"}) {
    const synth::StandardBuilt built = bearings.build(item_named("ball_bearing", name));
    volume[i++] = test::oracle_measure_shape(built.shape).volume;
  }
  EXPECT_LT(volume[0], volume[1]);  // shields add material
  EXPECT_LT(volume[1], volume[2]);  // seals are thicker and reach the inner ring
  const test::OracleMeasure nut =
      test::oracle_measure_shape(synth::build_hex_nut(item_named("hex_nut", "ISO 4032 M8")).shape);
  ASSERT_EQ(nut.holes.size(), 1u);
  // The minor diameter D1 = D - 1.0825 P (ISO 724): 8 - 1.0825 * 1.25.
  EXPECT_NEAR(nut.holes[0].first, 8 - 1.0825 * 1.25, 0.01);
}

// Small catalogs are built whole: every row makes one valid solid of the table's box.
TEST(StandardParts, EveryEntryOfTheSmallCatalogsBuilds) {
  for (const char* group : {"spring_lock_washer", "retaining_ring", "hex_standoff", "shaft_collar",
                            "countersunk_socket_screw", "tslot_profile"}) {
    const auto& catalog = synth::standard_catalog(group);
    EXPECT_FALSE(catalog.empty()) << group;
    for (const synth::StandardItem& item : catalog) {
      const synth::StandardBuilt built = synth::standard_group(group).build(item);
      const synth::Measured m = synth::measure_valid_solid(built.shape);
      for (int axis = 0; axis < 3; ++axis)
        EXPECT_NEAR(m.extent(axis), built.extent[axis], 1e-3) << item.designation << " " << axis;
    }
  }
}

TEST(StandardParts, SpringLockWashersAreSplitRingsOfTheTable) {
  const synth::StandardItem& item = item_named("spring_lock_washer", "DIN 127 B M8");
  const synth::StandardBuilt built = synth::build_spring_washer(item);
  const test::OracleMeasure m = test::oracle_measure_shape(built.shape);
  EXPECT_TRUE(m.valid);
  EXPECT_NEAR(m.extent[0], 14.8, 0.01);
  EXPECT_NEAR(m.extent[1], 14.8, 0.01);
  EXPECT_NEAR(m.extent[2], 2, 0.01);
  // The ring 8.1 x 14.8 x 2 less a radial cut s/2 = 1 mm wide across its 3.35 mm section.
  const double ring = 3.14159265358979 / 4 * (14.8 * 14.8 - 8.1 * 8.1) * 2;
  const double slot = 1.0 * (14.8 - 8.1) / 2 * 2;
  EXPECT_NEAR(m.volume, ring - slot, 0.05 * slot);
  // Cut through: no round hole is closed all the way round.
  EXPECT_TRUE(m.holes.empty());
}

TEST(StandardParts, RetainingRingsHaveTheirPlierHolesAndLugs) {
  for (const char* name : {"DIN 471 20x1.2", "DIN 472 20x1"}) {
    const synth::StandardItem& item = item_named("retaining_ring", name);
    const synth::StandardBuilt built = synth::build_retaining_ring(item);
    const test::OracleMeasure m = test::oracle_measure_shape(built.shape);
    EXPECT_TRUE(m.valid) << name;
    EXPECT_NEAR(m.extent[2], item.standard == "DIN 471" ? 1.2 : 1.0, 0.01) << name;
    // The two plier holes of d5 = 2 mm; the ring itself is open, so d3 is no closed hole.
    ASSERT_EQ(m.holes.size(), 1u) << name;
    EXPECT_NEAR(m.holes[0].first, 2, 0.01) << name;
    EXPECT_EQ(m.holes[0].second, 2) << name;
  }
  // A shaft ring's lugs stand out a = 4 mm beyond d3 = 18.5 at the opening:
  // 9.25 + 2.6 below the axis, 9.25 + 4 above it.
  const test::OracleMeasure shaft = test::oracle_measure_shape(
      synth::build_retaining_ring(item_named("retaining_ring", "DIN 471 20x1.2")).shape);
  EXPECT_NEAR(shaft.extent[0], 18.5 + 2 * 2.6, 0.01);
  EXPECT_NEAR(shaft.extent[1], 9.25 + 2.6 + 9.25 + 4, 0.01);
  // A bore ring is d3 = 21.5 across.
  const test::OracleMeasure bore = test::oracle_measure_shape(
      synth::build_retaining_ring(item_named("retaining_ring", "DIN 472 20x1")).shape);
  EXPECT_NEAR(bore.extent[0], 21.5, 0.01);
}

TEST(StandardParts, StandoffsHaveTheirThreadsAndStud) {
  const double hex = 2 / std::sqrt(3.0);
  // Female-female M3x10: 5.5 across flats, 10 long, tapped through at D1 = 3 - 1.0825 * 0.5.
  const auto ff = synth::build_hex_standoff(item_named("hex_standoff", "standoff M3x10 F-F"));
  const test::OracleMeasure f = test::oracle_measure_shape(ff.shape);
  EXPECT_TRUE(f.valid);
  EXPECT_NEAR(f.extent[0], 5.5 * hex, 0.01);
  EXPECT_NEAR(f.extent[1], 5.5, 0.01);
  EXPECT_NEAR(f.extent[2], 10, 0.01);
  ASSERT_EQ(f.holes.size(), 1u);
  EXPECT_NEAR(f.holes[0].first, 3 - 1.0825 * 0.5, 0.01);
  // Male-female M3x10+6: 16 long in all, less material than the body alone would hold.
  const auto mf = synth::build_hex_standoff(item_named("hex_standoff", "standoff M3x10 M-F"));
  const test::OracleMeasure m = test::oracle_measure_shape(mf.shape);
  EXPECT_TRUE(m.valid);
  EXPECT_NEAR(m.extent[2], 16, 0.01);
  EXPECT_GT(m.volume, f.volume);  // a blind hole and a stud against a through hole
}

TEST(StandardParts, ShaftCollarsHaveTheirBoreAndSetScrewHole) {
  const auto& item = item_named("shaft_collar", "DIN 705 A 20");
  const synth::StandardBuilt built = synth::build_shaft_collar(item);
  const test::OracleMeasure m = test::oracle_measure_shape(built.shape);
  EXPECT_TRUE(m.valid);
  EXPECT_NEAR(m.extent[0], 32, 0.01);
  EXPECT_NEAR(m.extent[1], 32, 0.01);
  EXPECT_NEAR(m.extent[2], 14, 0.01);
  // The ring 20 x 32 x 14 less the M6 set screw's hole (D1 = 6 - 1.0825) through its 6 mm wall.
  const double pi = 3.14159265358979, D1 = 6 - 1.0825;
  const double ring = pi / 4 * (32 * 32 - 20 * 20) * 14, hole = pi / 4 * D1 * D1 * 6;
  EXPECT_NEAR(m.volume, ring - hole, 0.1 * hole);
}

TEST(StandardParts, CountersunkScrewsAreAsLongAsTheirNominalLengthHeadIncluded) {
  const auto& item = item_named("countersunk_socket_screw", "ISO 10642 M6x20");
  const test::OracleMeasure m =
      test::oracle_measure_shape(synth::build_countersunk_screw(item).shape);
  EXPECT_TRUE(m.valid);
  EXPECT_NEAR(m.extent[0], 13.44, 0.01);
  EXPECT_NEAR(m.extent[1], 13.44, 0.01);
  EXPECT_NEAR(m.extent[2], 20, 0.01);  // tip to head top, where ISO 4762 M6x20 is 26
  const test::OracleMeasure cap = test::oracle_measure_shape(
      synth::build_socket_screw(item_named("socket_head_cap_screw", "ISO 4762 M6x20")).shape);
  EXPECT_NEAR(cap.extent[2], 26, 0.01);
  // The cone between d at l - k and dk at the top, less the socket s = 4 x 2.16 deep, and
  // a shank no thicker than d: the volume lies between these bounds.
  const double pi = 3.14159265358979, k = 3.72, R = 6.72, r = 3;
  const double cone = pi * k / 3 * (R * R + R * r + r * r);
  const double socket = 3 * std::sqrt(3.0) / 2 * (4 / std::sqrt(3.0)) * (4 / std::sqrt(3.0)) * 2.16;
  EXPECT_GT(m.volume, cone - socket + pi * 2.3 * 2.3 * (20 - k - 1));
  EXPECT_LT(m.volume, cone - socket + pi * r * r * (20 - k));
}

// The sections' areas: the true root and toe arcs give the published A (EN 10365 computes
// it from the same r), UPN's parallel flanges a little more.
TEST(StandardParts, SteelSectionsHaveTheTablesAreaAndRootArcs) {
  const double pi = 3.14159265358979;
  struct Case {
    const char* designation;
    double width, depth, area, tolerance;  // mm, mm, mm^2, relative
  };
  for (const Case& c :
       {Case{"IPE 200 x 1000", 100, 200, 2850, 0.005}, Case{"HEA 160 x 500", 160, 152, 3880, 0.005},
        Case{"HEB 200 x 2000", 200, 200, 7810, 0.005}, Case{"L 50x5 x 1000", 50, 50, 480, 0.005},
        Case{"UPN 100 x 500", 50, 100, 1350 * 1.015, 0.01}}) {
    const auto& item = item_named("steel_profile", c.designation);
    const test::OracleMeasure m =
        test::oracle_measure_shape(synth::build_steel_profile(item).shape);
    EXPECT_TRUE(m.valid) << c.designation;
    EXPECT_NEAR(m.extent[0], c.width, 0.01) << c.designation;
    EXPECT_NEAR(m.extent[1], c.depth, 0.01) << c.designation;
    EXPECT_NEAR(m.extent[2], item.length, 0.01) << c.designation;
    EXPECT_NEAR(m.volume / item.length, c.area, c.tolerance * c.area) << c.designation;
  }
  // IPE 200 exactly: the flanges, the web and four root arcs of r = 12 (a chamfer
  // would add 0.5 r^2 per corner instead of (1 - pi/4) r^2).
  const auto& ipe = item_named("steel_profile", "IPE 200 x 1000");
  const double exact = 2 * 100 * 8.5 + (200 - 2 * 8.5) * 5.6 + (4 - pi) * 12 * 12;
  const test::OracleMeasure m = test::oracle_measure_shape(synth::build_steel_profile(ipe).shape);
  EXPECT_NEAR(m.volume / 1000, exact, 1e-3 * exact);
}

// The section: the square less four slots (the opening through the lip, then the
// trapezoid chamber), the rounded corners and the centre bore.
TEST(StandardParts, TslotProfilesHaveTheirSlotsAndBore) {
  const double pi = 3.14159265358979;
  for (const char* name : {"T-slot 20x20 slot 6 x 500", "T-slot 40x40 slot 8 x 1000"}) {
    const auto& item = item_named("tslot_profile", name);
    const auto built = synth::build_tslot_profile(item);
    const test::OracleMeasure m = test::oracle_measure_shape(built.shape);
    auto dim = [&](const char* key) { return built.dims.at(key).get<double>(); };
    EXPECT_TRUE(m.valid) << name;
    EXPECT_NEAR(m.extent[0], dim("a"), 0.01) << name;
    EXPECT_NEAR(m.extent[1], dim("a"), 0.01) << name;
    EXPECT_NEAR(m.extent[2], item.length, 0.01) << name;
    const double lip = dim("lip"), c = dim("chamber"), depth = dim("depth");
    const double bottom = c - 2 * (depth - lip);
    const double slot = dim("slot") * lip + (c + bottom) / 2 * (depth - lip);
    const double area = dim("a") * dim("a") - 4 * slot - pi / 4 * dim("bore") * dim("bore") -
                        (4 - pi) * dim("corner") * dim("corner");
    EXPECT_NEAR(m.volume / item.length, area, 1e-3 * area) << name;
    ASSERT_EQ(m.holes.size(), 1u) << name;
    EXPECT_NEAR(m.holes[0].first, dim("bore"), 0.01) << name;
  }
  // The rows' slot openings are the catalogues' (checked against them above).
  EXPECT_EQ(synth::build_tslot_profile(item_named("tslot_profile", "T-slot 20x20 slot 6 x 500"))
                .dims.at("slot"),
            6);
}

// Distinct axes of the cylindrical faces of `radius` parallel to z: the teeth of a pulley.
int round_grooves(const TopoDS_Shape& shape, double radius) {
  std::vector<gp_Pnt> axes;
  for (TopExp_Explorer it(shape, TopAbs_FACE); it.More(); it.Next()) {
    const BRepAdaptor_Surface surface(TopoDS::Face(it.Current()));
    if (surface.GetType() != GeomAbs_Cylinder) continue;
    const gp_Cylinder cylinder = surface.Cylinder();
    if (std::abs(cylinder.Radius() - radius) > 1e-6) continue;
    gp_Pnt p = cylinder.Location();
    p.SetZ(0);
    bool seen = false;
    for (const gp_Pnt& q : axes) seen |= q.Distance(p) < 1e-4;
    if (!seen) axes.push_back(p);
  }
  return static_cast<int>(axes.size());
}

TEST(StandardParts, Gt2PulleysHaveTheirTeethBoreAndFlanges) {
  for (const char* name :
       {"GT2 20T bore 5 belt 6", "GT2 60T bore 8 belt 10", "GT2 16T bore 5 belt 6"}) {
    const auto& item = item_named("gt2_pulley", name);
    const auto built = synth::build_gt2_pulley(item);
    const test::OracleMeasure m = test::oracle_measure_shape(built.shape);
    EXPECT_TRUE(m.valid) << name;
    const int teeth = built.dims.at("teeth");
    // One groove per tooth, on the circle 0.75 - 0.555 mm inside OD = 2 z / pi - 0.508.
    EXPECT_EQ(round_grooves(built.shape, 0.555), teeth) << name;
    // Two flat flanks per groove; the flat faces across z (hub end, four flange faces,
    // top) are whole, not split along the grooves.
    int flanks = 0, across = 0;
    for (TopExp_Explorer it(built.shape, TopAbs_FACE); it.More(); it.Next()) {
      const BRepAdaptor_Surface surface(TopoDS::Face(it.Current()));
      if (surface.GetType() != GeomAbs_Plane) continue;
      const double nz = std::abs(surface.Plane().Axis().Direction().Z());
      flanks += nz < 1e-9;
      across += nz > 1 - 1e-9;
    }
    EXPECT_EQ(flanks, 2 * teeth) << name;
    EXPECT_LE(across, 6) << name;
    const double od = 2 * teeth / 3.14159265358979 - 0.508;
    EXPECT_NEAR(built.dims.at("OD").get<double>(), od, 1e-6) << name;
    const double belt = built.dims.at("belt_width");
    EXPECT_NEAR(m.extent[2], built.dims.at("hub_l").get<double>() + 2 + belt + 1, 0.01) << name;
    EXPECT_NEAR(m.extent[0], built.dims.at("flange_d").get<double>(), 0.01) << name;
    // The bore and the M3 set screw's hole.
    std::set<double> holes;
    for (const auto& [d, count] : m.holes) holes.insert(std::round(d * 100) / 100);
    EXPECT_EQ(holes.count(std::round(item.bore * 100) / 100), 1u) << name;
  }
  // Every bore of the catalog leaves the wall to the roots: 16 teeth take 5 mm only.
  for (const auto& item : synth::standard_catalog("gt2_pulley"))
    if (item.designation.starts_with("GT2 16T")) EXPECT_EQ(item.bore, 5) << item.designation;
}

// Polar radius and angle of every vertex of the gear's face at z = 0, each once.
std::vector<std::pair<double, double>> gear_vertices(const TopoDS_Shape& shape) {
  TopTools_IndexedMapOfShape vertices;
  TopExp::MapShapes(shape, TopAbs_VERTEX, vertices);
  std::vector<std::pair<double, double>> out;
  for (int i = 1; i <= vertices.Extent(); ++i) {
    const gp_Pnt p = BRep_Tool::Pnt(TopoDS::Vertex(vertices(i)));
    if (std::abs(p.Z()) < 1e-6) out.push_back({std::hypot(p.X(), p.Y()), std::atan2(p.Y(), p.X())});
  }
  return out;
}

TEST(StandardParts, SpurGearsHaveTheirTeethOnTheInvolute) {
  const double pi = 3.14159265358979;
  auto inv = [](double phi) { return std::tan(phi) - phi; };
  for (const char* name : {"spur gear m2 z20 b20 bore 20", "spur gear m1 z60 b10 bore 30",
                           "spur gear m0.5 z12 b3 bore 2"}) {
    const auto& item = item_named("spur_gear", name);
    const auto built = synth::build_spur_gear(item);
    const test::OracleMeasure m = test::oracle_measure_shape(built.shape);
    const double mod = built.dims.at("module"), b = built.dims.at("b");
    const int z = built.dims.at("teeth");
    EXPECT_TRUE(m.valid) << name;
    EXPECT_NEAR(m.extent[0], mod * (z + 2), 0.01) << name;  // da = m (z + 2)
    EXPECT_NEAR(m.extent[1], mod * (z + 2), 0.01) << name;
    EXPECT_NEAR(m.extent[2], b, 0.01) << name;
    ASSERT_EQ(m.holes.size(), 1u) << name;
    EXPECT_NEAR(m.holes[0].first, item.bore, 0.01) << name;
    // One tip point per tooth on the tip circle at the tooth's centre, 360/z degrees apart;
    // every other point above the base circle lies on the involute: its angle from the
    // tooth centre is a quarter pitch + inv 20 - inv phi, cos phi = rb / r.
    const double ra = mod * (z + 2) / 2, rb = mod * z * std::cos(20 * pi / 180) / 2;
    const double pitch = 2 * pi / z;
    int tips = 0, flank = 0, on_involute = 0;
    for (const auto& [r, a] : gear_vertices(built.shape)) {
      if (r < rb + 1e-6 || r > ra + 1e-6) continue;
      const double off = a - pitch * std::round(a / pitch);
      if (std::abs(off) < 1e-9) {
        tips += std::abs(r - ra) < 1e-6;
        continue;
      }
      // The root point mid-space, on the root circle, which lies above the base circle
      // from 42 teeth up.
      if (std::abs(std::abs(off) - pitch / 2) < 1e-9) continue;
      ++flank;
      const double phi = std::acos(std::min(1.0, rb / r));
      on_involute +=
          std::abs(std::abs(off) - (pi / (2 * z) + inv(20 * pi / 180) - inv(phi))) < 1e-6;
    }
    EXPECT_EQ(tips, z) << name;
    EXPECT_GE(flank, 10 * z) << name;  // five or more involute points per flank
    EXPECT_EQ(on_involute, flank) << name;
    // The disc lies between the root and the tip circles, less the bore.
    const double df = mod * (z - 2.5), bore = item.bore;
    EXPECT_GT(m.volume, pi / 4 * (df * df - bore * bore) * b) << name;
    EXPECT_LT(m.volume, pi / 4 * (4 * ra * ra - bore * bore) * b) << name;
  }
}

TEST(StandardCaptions, DesignationsAreWrittenTheWayEngineersWriteThem) {
  const auto& bolt = item_named("hex_bolt", "ISO 4017 M8x40");
  const auto bolt_texts =
      synth::standard_caption_choices(bolt, synth::standard_group("hex_bolt").build(bolt));
  ASSERT_EQ(bolt_texts.size(), 5u);
  EXPECT_TRUE(contains(bolt_texts[0], "a hex head bolt, 8 mm thread, 40 mm long"));
  EXPECT_TRUE(contains(bolt_texts[1], "M8x40 hex bolt"));
  EXPECT_TRUE(contains(bolt_texts[1], "M8 bolt 40 mm long"));
  EXPECT_TRUE(contains(bolt_texts[2], "ISO 4017 M8x40"));
  EXPECT_TRUE(contains(bolt_texts[3], "Hexagon head screw ISO 4017 - M8 x 40 - 8.8"));
  EXPECT_TRUE(contains(bolt_texts[4], "ISO4017_M8x40"));
  // M6 has the same head in DIN 933, so its ISO part carries the old number too.
  const auto& m6 = item_named("hex_bolt", "ISO 4017 M6x20");
  const auto m6_texts =
      synth::standard_caption_choices(m6, synth::standard_group("hex_bolt").build(m6));
  EXPECT_TRUE(contains(m6_texts[2], "DIN 933 M6x20"));
  // M10's DIN 933 head is 17 mm across flats: its own part, and its captions say so.
  const auto& din = item_named("hex_bolt", "DIN 933 M10x40");
  const auto din_built = synth::standard_group("hex_bolt").build(din);
  EXPECT_EQ(din_built.dims.at("s"), 17);
  const auto din_texts = synth::standard_caption_choices(din, din_built);
  EXPECT_NE(din_texts[3][1].find("replaced by ISO 4017"), std::string::npos) << din_texts[3][1];

  const auto& spring = item_named("spring_lock_washer", "DIN 127 B M8");
  const auto spring_texts = synth::standard_caption_choices(
      spring, synth::standard_group("spring_lock_washer").build(spring));
  EXPECT_TRUE(contains(spring_texts[1], "M8 spring washer"));
  EXPECT_TRUE(contains(spring_texts[2], "DIN 127 B M8"));
  EXPECT_TRUE(contains(spring_texts[3], "Spring lock washer DIN 127 - B 8 - FSt"));
  EXPECT_TRUE(contains(spring_texts[4], "DIN127B_M8"));

  const auto& ring = item_named("retaining_ring", "DIN 471 20x1.2");
  const auto ring_texts =
      synth::standard_caption_choices(ring, synth::standard_group("retaining_ring").build(ring));
  EXPECT_TRUE(contains(ring_texts[1], "20 mm circlip"));
  EXPECT_TRUE(contains(ring_texts[2], "DIN 471 20x1.2"));
  EXPECT_TRUE(contains(ring_texts[3], "Retaining ring DIN 471 - 20 x 1.2"));
  EXPECT_TRUE(contains(ring_texts[4], "DIN471_20x1.2"));

  const auto& standoff = item_named("hex_standoff", "standoff M3x10 M-F");
  const auto standoff_texts = synth::standard_caption_choices(
      standoff, synth::standard_group("hex_standoff").build(standoff));
  EXPECT_TRUE(contains(standoff_texts[1], "M3x10 standoff"));
  EXPECT_TRUE(contains(standoff_texts[1], "M3x10+6 male-female standoff"));
  EXPECT_TRUE(contains(standoff_texts[4], "standoff_M3x10_MF"));

  const auto& collar = item_named("shaft_collar", "DIN 705 A 20");
  const auto collar_texts =
      synth::standard_caption_choices(collar, synth::standard_group("shaft_collar").build(collar));
  EXPECT_TRUE(contains(collar_texts[1], "20 mm shaft collar"));
  EXPECT_TRUE(contains(collar_texts[2], "DIN 705 A 20"));
  EXPECT_TRUE(contains(collar_texts[3], "Adjusting ring DIN 705 - A 20 - St"));
  EXPECT_TRUE(contains(collar_texts[4], "DIN705A_20"));

  const auto& csk = item_named("countersunk_socket_screw", "ISO 10642 M8x30");
  const auto csk_texts = synth::standard_caption_choices(
      csk, synth::standard_group("countersunk_socket_screw").build(csk));
  EXPECT_TRUE(contains(csk_texts[1], "M8x30 countersunk screw"));
  EXPECT_TRUE(contains(csk_texts[2], "ISO 10642 M8x30"));
  EXPECT_TRUE(
      contains(csk_texts[3], "Hexagon socket countersunk head screw ISO 10642 - M8 x 30 - 8.8"));
  EXPECT_NE(csk_texts[3][1].find("replaces DIN 7991"), std::string::npos) << csk_texts[3][1];
  EXPECT_NE(csk_texts[3][1].find("30 mm overall"), std::string::npos) << csk_texts[3][1];
  EXPECT_TRUE(contains(csk_texts[4], "ISO10642_M8x30"));

  const auto& beam = item_named("steel_profile", "HEA 160 x 1000");
  const auto beam_texts =
      synth::standard_caption_choices(beam, synth::standard_group("steel_profile").build(beam));
  EXPECT_TRUE(contains(beam_texts[1], "HEA 160, 1000 mm"));
  EXPECT_TRUE(contains(beam_texts[2], "HEA 160 x 1000"));
  EXPECT_TRUE(contains(beam_texts[2], "IPBl 160 (HEA 160), 1000 mm long"));
  EXPECT_NE(beam_texts[3][1].find("replaces DIN 1025-3"), std::string::npos) << beam_texts[3][1];
  EXPECT_NE(beam_texts[3][1].find("h = 152 mm, b = 160 mm"), std::string::npos);
  EXPECT_TRUE(contains(beam_texts[4], "HEA160_1000"));
  const auto& angle = item_named("steel_profile", "L 50x5 x 500");
  const auto angle_texts =
      synth::standard_caption_choices(angle, synth::standard_group("steel_profile").build(angle));
  EXPECT_TRUE(contains(angle_texts[2], "L 50x5 x 500"));
  EXPECT_NE(angle_texts[3][1].find("EN 10056-1"), std::string::npos) << angle_texts[3][1];

  const auto& tslot = item_named("tslot_profile", "T-slot 20x20 slot 6 x 500");
  const auto tslot_texts =
      synth::standard_caption_choices(tslot, synth::standard_group("tslot_profile").build(tslot));
  EXPECT_TRUE(contains(tslot_texts[1], "2020 aluminium extrusion 500 mm"));
  EXPECT_TRUE(contains(tslot_texts[2], "HFS5-2020-500 aluminium extrusion"));
  EXPECT_NE(tslot_texts[3][1].find("manufacturer convention"), std::string::npos);
  EXPECT_TRUE(contains(tslot_texts[4], "2020_500"));

  const auto& pulley = item_named("gt2_pulley", "GT2 20T bore 5 belt 6");
  const auto pulley_texts =
      synth::standard_caption_choices(pulley, synth::standard_group("gt2_pulley").build(pulley));
  EXPECT_TRUE(contains(pulley_texts[1], "GT2 pulley 20T 5mm bore"));
  EXPECT_TRUE(contains(pulley_texts[2], "2GT 20T pulley, pitch diameter 12.73 mm, 5 mm bore"));
  EXPECT_NE(pulley_texts[3][1].find("outside diameter 12.22 mm"), std::string::npos)
      << pulley_texts[3][1];
  EXPECT_TRUE(contains(pulley_texts[4], "GT2-20T-B5-W6"));

  const auto& gear = item_named("spur_gear", "spur gear m2 z20 b20 bore 20");
  const auto gear_texts =
      synth::standard_caption_choices(gear, synth::standard_group("spur_gear").build(gear));
  EXPECT_TRUE(contains(gear_texts[1], "module 2 gear 20 teeth"));
  EXPECT_TRUE(contains(gear_texts[2], "spur gear m2 z20"));
  EXPECT_NE(gear_texts[3][1].find("d = 40 mm, da = 44 mm, df = 35 mm"), std::string::npos)
      << gear_texts[3][1];
  EXPECT_TRUE(contains(gear_texts[4], "gear_m2_z20"));

  const auto& bearing = item_named("ball_bearing", "608ZZ");
  const auto bearing_texts = synth::standard_caption_choices(
      bearing, synth::standard_group("ball_bearing").build(bearing));
  EXPECT_TRUE(contains(bearing_texts[1], "bearing 8x22x7"));
  EXPECT_TRUE(contains(bearing_texts[4], "608ZZ"));
  EXPECT_TRUE(contains(bearing_texts[1], "608ZZ bearing"));
}

TEST(StandardCaptions, FactsStateWhatTheTextSays) {
  synth::SynthOptions options;
  options.kind = "standard";
  for (int64_t i = 0; i < 12; ++i) {
    const synth::SynthPart part = synth::make_synth_part(options, i);
    for (const synth::SynthCaption& caption : part.captions) {
      EXPECT_EQ(caption.facts.at("family"), part.family);
      if (caption.facts.contains("l"))
        EXPECT_NE(caption.text.find(synth::num_text(caption.facts.at("l").get<double>())),
                  std::string::npos)
            << caption.text;
      if (caption.facts.contains("designation"))
        EXPECT_NE(
            caption.text.find(caption.facts.at("designation").get<std::string>().substr(0, 3)),
            std::string::npos)
            << caption.text;
    }
  }
}

TEST(StandardParts, HeldOutRowsAreTheTestSplitAndNeverTrained) {
  synth::SynthOptions options;
  options.kind = "standard";
  options.count = 60;
  options.seed = 2;
  options.families = {"plain_washer", "hex_nut", "dowel_pin"};  // quick to model
  const fs::path dir = fs::temp_directory_path() / "cadclip_standard_test_split";
  fs::remove_all(dir);
  const synth::SynthReport report = synth::write_synth_dataset(options, dir);
  EXPECT_EQ(report.parts, 60);
  const auto splits = nlohmann::json::parse(read_text_file(dir / "splits.json"));
  const auto manifest = nlohmann::json::parse(read_text_file(dir / "manifest.json"));
  std::map<std::string, std::string> split_of;
  for (const char* split : {"train", "validation", "test"})
    for (const auto& id : splits.at(split)) split_of[id.get<std::string>()] = split;
  std::set<std::string> trained_rows, test_rows;
  for (const auto& part : manifest.at("parts")) {
    EXPECT_EQ(part.at("kind"), "standard");
    const nlohmann::json& p = part.at("params");
    const bool held = p.at("heldout_row").get<bool>();
    EXPECT_EQ(held, synth::standard_row_held_out(p.at("row_index").get<size_t>()));
    const std::string split = split_of.at(part.at("id").get<std::string>());
    EXPECT_EQ(split == "test", held) << part.at("designation");
    const std::string row =
        p.at("table").get<std::string>() + ":" + p.at("row").at("size").get<std::string>();
    if (split != "validation") (split == "train" ? trained_rows : test_rows).insert(row);
  }
  EXPECT_FALSE(test_rows.empty());
  for (const std::string& row : test_rows) EXPECT_EQ(trained_rows.count(row), 0u) << row;
  EXPECT_TRUE(manifest.at("standard").at("tables").contains("hex_bolts.csv"));
  // A set smaller than the catalog repeats no designation.
  EXPECT_EQ(manifest.at("counts").at("duplicates"), 0);
  fs::remove_all(dir);
}

TEST(StandardParts, NewGroupsCarryTheirDesignationAndRowInTheManifest) {
  synth::SynthOptions options;
  options.kind = "standard";
  options.count = 12;
  options.seed = 4;
  options.families = {"spring_lock_washer", "retaining_ring", "hex_standoff", "shaft_collar"};
  const fs::path dir = fs::temp_directory_path() / "cadclip_standard_test_new_groups";
  fs::remove_all(dir);
  synth::write_synth_dataset(options, dir);
  const auto manifest = nlohmann::json::parse(read_text_file(dir / "manifest.json"));
  std::set<std::string> families;
  for (const auto& part : manifest.at("parts")) {
    const nlohmann::json& p = part.at("params");
    families.insert(part.at("family").get<std::string>());
    EXPECT_EQ(part.at("designation"), p.at("designation"));
    // The recorded row is the table's row, cell for cell.
    const auto& table = standard_table(p.at("table").get<std::string>());
    EXPECT_EQ(p.at("row"), table.row_json(p.at("row_index").get<size_t>())) << part.at("id");
    EXPECT_EQ(p.at("row").at("size").get<std::string>(),
              table.cell(p.at("row_index").get<size_t>(), "size"));
  }
  EXPECT_GE(families.size(), 3u);
  for (const std::string& group : options.families)
    EXPECT_GT(manifest.at("standard").at("catalog").at(group).get<int>(), 0) << group;
  for (const char* file : {"spring_lock_washers.csv", "retaining_rings_shaft.csv",
                           "retaining_rings_bore.csv", "hex_standoffs.csv", "shaft_collars.csv"})
    EXPECT_TRUE(manifest.at("standard").at("tables").contains(file)) << file;
  fs::remove_all(dir);
}

// A mixed set's standard parts are drawn from the same joined catalog as --kind standard,
// every group in it (the new ones too), whatever --family says about families.
TEST(StandardParts, AMixedSetDrawsFromEveryStandardGroup) {
  std::set<std::string> keys;
  for (const synth::StandardGroup& group : synth::standard_groups()) keys.insert(group.key);
  for (const char* group :
       {"spring_lock_washer", "retaining_ring", "hex_standoff", "shaft_collar",
        "countersunk_socket_screw", "steel_profile", "tslot_profile", "gt2_pulley", "spur_gear"})
    EXPECT_EQ(keys.count(group), 1u) << group;
  synth::SynthOptions mixed;
  mixed.kind = "mixed";
  mixed.seed = 5;
  mixed.families = {"washer"};
  mixed.program_share = 0;
  mixed.standard_share = 1;
  synth::SynthOptions standard = mixed;
  standard.kind = "standard";
  standard.families = {};
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(synth::make_synth_part(mixed, i).params.at("designation"),
              synth::make_synth_part(standard, i).params.at("designation"))
        << i;
}

TEST(StandardParts, AZeroShareLeavesAMixedSetAsItWasAndAShareAddsThem) {
  synth::SynthOptions options;
  options.kind = "mixed";
  options.count = 16;
  options.seed = 9;
  options.families = {"washer", "spacer", "plate"};
  options.standard_share = 0;
  int standard = 0;
  for (int64_t i = 0; i < 400; ++i) standard += synth::synth_part_is_standard(options, i);
  EXPECT_EQ(standard, 0);
  options.standard_share = 0.25;
  int programs_before = 0, programs_after = 0;
  for (int64_t i = 0; i < 400; ++i) {
    standard += synth::synth_part_is_standard(options, i);
    programs_after += synth::synth_part_is_program(options, i);
    // Nothing that was a program stops being one, and no part is both.
    EXPECT_FALSE(synth::synth_part_is_program(options, i) &&
                 synth::synth_part_is_standard(options, i));
  }
  options.standard_share = 0;
  for (int64_t i = 0; i < 400; ++i) programs_before += synth::synth_part_is_program(options, i);
  EXPECT_EQ(programs_before, programs_after);
  EXPECT_NEAR(standard, 100, 30);
  // A non-standard part is the same part whatever the standard share.
  for (int64_t i = 0; i < 16; ++i) {
    options.standard_share = 0.25;
    if (synth::synth_part_is_standard(options, i) || synth::synth_part_is_program(options, i))
      continue;
    const synth::SynthPart with = synth::make_synth_part(options, i);
    options.standard_share = 0;
    const synth::SynthPart without = synth::make_synth_part(options, i);
    EXPECT_EQ(with.step, without.step) << i;
    EXPECT_EQ(with.captions[0].text, without.captions[0].text) << i;
  }
}

TEST(StandardParts, BadOptionsAreClearErrors) {
  synth::SynthOptions options;
  options.kind = "standard";
  options.families = {"flange"};
  try {
    synth::make_synth_part(options, 0);
    ADD_FAILURE() << "an unknown group was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hex_bolt"), std::string::npos) << e.what();
  }
  options.families = {};
  options.kind = "mixed";
  options.program_share = 0.8;
  options.standard_share = 0.3;
  EXPECT_THROW(synth::make_synth_part(options, 0), Error);
  options.standard_share = -0.1;
  EXPECT_THROW(synth::make_synth_part(options, 0), Error);
}
