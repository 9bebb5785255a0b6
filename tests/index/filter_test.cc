// The filter language (index/filter.h): every clause form reads to the
// condition it names and back to text that reads the same; bad clauses are
// refused naming the clause; the numbers a text query states become the
// conditions --strict-numbers promises.
#include "cadclip/index/filter.h"
#include "cadclip/index/query_facts.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cadclip/core/error.h"

namespace cadclip::index {
namespace {

Condition only(const std::string& text) {
  const Filter f = parse_filter(text);
  EXPECT_EQ(f.conditions.size(), 1u) << text;
  return f.conditions.empty() ? Condition{} : f.conditions.front();
}

TEST(FilterLanguage, SizeClausesReadAsRangesInMillimetres) {
  Condition c = only("size<100");
  EXPECT_EQ(c.key, FilterKey::kLargest);
  EXPECT_TRUE(c.ranges[0].contains(99.9));
  EXPECT_FALSE(c.ranges[0].contains(100));
  c = only("size<=10cm");
  EXPECT_TRUE(c.ranges[0].contains(100));
  EXPECT_FALSE(c.ranges[0].contains(100.01));
  c = only("x=20..40");
  EXPECT_EQ(c.key, FilterKey::kSizeX);
  EXPECT_EQ(c.ranges[0].min, 20);
  EXPECT_EQ(c.ranges[0].max, 40);
  c = only("y=50±2");
  EXPECT_EQ(c.key, FilterKey::kSizeY);
  EXPECT_EQ(c.ranges[0].min, 48);
  EXPECT_EQ(c.ranges[0].max, 52);
  c = only("z=50+-10%");
  EXPECT_EQ(c.ranges[0].min, 45);
  EXPECT_EQ(c.ranges[0].max, 55);
  c = only("smallest>=2in");
  EXPECT_EQ(c.key, FilterKey::kSmallest);
  EXPECT_DOUBLE_EQ(c.ranges[0].min, 50.8);
  c = only("size<100 mm");  // a unit on its own after the number
  EXPECT_EQ(c.ranges[0].max, 100);
  c = only("middle=..30");
  EXPECT_EQ(c.key, FilterKey::kMiddle);
  EXPECT_EQ(c.ranges[0].max, 30);
  EXPECT_FALSE(std::isfinite(c.ranges[0].min));
  // A bare length matches to 0.5 % (at least 0.1 mm).
  c = only("extent=200");
  EXPECT_EQ(c.key, FilterKey::kAnyExtent);
  EXPECT_EQ(c.ranges[0].min, 199);
  EXPECT_EQ(c.ranges[0].max, 201);
  c = only("x=10±1cm");  // both in the tolerance's unit
  EXPECT_EQ(c.ranges[0].min, 90);
  EXPECT_EQ(c.ranges[0].max, 110);
}

TEST(FilterLanguage, DimsTakeOneToleranceForEachExtent) {
  const Condition c = only("dims=100x50x20±1");
  EXPECT_EQ(c.key, FilterKey::kDims);
  ASSERT_EQ(c.ranges.size(), 3u);
  EXPECT_EQ(c.ranges[0], (NumberRange{99, 101, false, false}));
  EXPECT_EQ(c.ranges[1], (NumberRange{49, 51, false, false}));
  EXPECT_EQ(c.ranges[2], (NumberRange{19, 21, false, false}));
  const Condition p = only("dims=200x100±10%");
  ASSERT_EQ(p.ranges.size(), 2u);
  EXPECT_EQ(p.ranges[0], (NumberRange{180, 220, false, false}));
  EXPECT_EQ(p.ranges[1], (NumberRange{90, 110, false, false}));
}

// A shape the words leave open between two (a standoff whose ends are not
// said): any of them, three extents each, a tolerance for the shape it
// ends, written back as it was read.
TEST(FilterLanguage, DimsMayAllowSeveralShapes) {
  const Condition c = only("dims=15x8x7|23x8x7±1");
  ASSERT_EQ(c.ranges.size(), 6u);
  EXPECT_EQ(c.ranges[0], only("dims=15x8x7").ranges[0]);
  EXPECT_EQ(c.ranges[3], (NumberRange{22, 24, false, false}));
  EXPECT_EQ(c.ranges[5], (NumberRange{6, 8, false, false}));
  EXPECT_EQ(c.to_string(), "dims=14.9..15.1x7.9..8.1x6.9..7.1|22..24x7..9x6..8");
  EXPECT_EQ(only(c.to_string()), c);
  auto refused = [](const std::string& text) {
    try {
      parse_filter(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused("dims=15x8|23x8x7").find("each of several shapes gives all three"),
            std::string::npos);
  EXPECT_NE(refused("dims=1x1x1|2x2x2|3x3x3|4x4x4|5x5x5").find("at most 4 shapes"),
            std::string::npos);
}

TEST(FilterLanguage, CountsHolesTypesFieldsAndScore) {
  Condition c = only("faces>=6");
  EXPECT_EQ(c.key, FilterKey::kFaces);
  EXPECT_EQ(c.ranges[0].min, 6);
  c = only("holes=4");
  EXPECT_EQ(c.key, FilterKey::kHoles);
  EXPECT_EQ(c.ranges[0], (NumberRange{4, 4, false, false}));  // counts are exact
  c = only("hole=M8");
  EXPECT_EQ(c.key, FilterKey::kHoleDiameter);
  EXPECT_DOUBLE_EQ(c.ranges[0].min, 6.4);
  EXPECT_DOUBLE_EQ(c.ranges[0].max, 10);
  c = only("type=stp,IGES");
  EXPECT_EQ(c.key, FilterKey::kFileType);
  EXPECT_EQ(c.values, (std::vector<std::string>{"step", "iges"}));
  c = only("Material=\"stainless steel\"");
  EXPECT_EQ(c.key, FilterKey::kField);
  EXPECT_EQ(c.field, "material");
  EXPECT_EQ(c.values, (std::vector<std::string>{"stainless steel"}));
  c = only("part-number!=AB-1*");
  EXPECT_EQ(c.field, "part_number");
  EXPECT_TRUE(c.negate);
  c = only("project~apol");
  EXPECT_TRUE(c.contains);
  c = only("weight<2.5");  // a field compared as a number
  EXPECT_EQ(c.ranges[0].max, 2.5);
  c = only("revision=\"A..C\"");  // quoted: text, not a range
  EXPECT_EQ(c.values, (std::vector<std::string>{"A..C"}));
  EXPECT_TRUE(c.ranges.empty());
  c = only("field.type=casting");  // a field whose name is a key
  EXPECT_EQ(c.field, "type");
  const Filter s = parse_filter("score>=0.45 holes>=2");
  ASSERT_TRUE(s.min_score.has_value());
  EXPECT_DOUBLE_EQ(*s.min_score, 0.45);
  EXPECT_EQ(s.conditions.size(), 1u);
  EXPECT_EQ(parse_filter("size<100, faces>10; holes=2 and type=step").conditions.size(), 4u);
  EXPECT_TRUE(parse_filter("  ").empty());
}

TEST(FilterLanguage, TextReadsBackToTheSameFilter) {
  for (const std::string text : {"size<100",
                                 "size<=100 x=20..40 y=48..52 z>5",
                                 "dims=99..101x49..51x19..21",
                                 "faces>=6 holes=4 hole=6.4..10",
                                 "type=step,iges",
                                 "material=\"stainless steel\"",
                                 "part_number!=AB-1*",
                                 "project~apol",
                                 "weight<2.5 density=7..8",
                                 "field.type=casting score>=0.4",
                                 "extent=199..201",
                                 "holes!=0",
                                 "middle=..30",
                                 "revision=\"A..C\"",
                                 "material=\"steel,cast iron\"",
                                 "note=\"say \\\"hi\\\"\"",
                                 "size<100000000000000000000000",
                                 "hole=0.00000001..0.5",
                                 "field.field.x=3",
                                 "hole!=M8"}) {
    const Filter once = parse_filter(text);
    const Filter twice = parse_filter(once.to_string());
    EXPECT_EQ(once, twice) << text << " -> " << once.to_string();
  }
  EXPECT_EQ(parse_filter("size<100 holes>=6").to_string(), "size<100 holes>=6");
  // Numbers are written without an exponent, which the reader would not take.
  EXPECT_EQ(parse_filter("size<1000000000000000000000").to_string(), "size<1000000000000000000000");
  EXPECT_TRUE(only("hole!=M8").negate);
}

TEST(FilterLanguage, BadClausesAreRefusedNamingThem) {
  for (const std::string& text : std::vector<std::string>{
           "size", "size<", "size<abc", "size<10 parsecs", "type=dwg", "faces>=6mm", "dims<10",
           "score=0.4", "x=40..20", "material=\"open", "size=10±-1", "material=\",\"", "hole<M8",
           "size<" + std::string(306, '9') + "ft"}) {
    try {
      parse_filter(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("filter clause"), std::string::npos) << e.what();
    }
  }
}

TEST(StrictNumbers, TheNumbersOfAQueryBecomeConditions) {
  auto clauses = [](const std::string& text) {
    std::vector<std::string> out;
    for (const Condition& c : conditions_stated_in(text)) {
      EXPECT_EQ(c.origin, FilterOrigin::kQueryText);
      EXPECT_FALSE(c.because.empty());
      out.push_back(c.to_string());
    }
    return out;
  };
  EXPECT_EQ(clauses("flange with six holes, under 100 mm"),
            (std::vector<std::string>{"size<100", "hole_count=6"}));
  EXPECT_EQ(clauses("an M8 bracket"), (std::vector<std::string>{"hole=6.4..10"}));
  EXPECT_EQ(clauses("a plate 250 by 200 by 5 mm"),
            (std::vector<std::string>{"dims=245..255x196..204x4.5..5.5"}));
  EXPECT_EQ(clauses("at least 2 inch long"), (std::vector<std::string>{"size>=50.8"}));
  const std::vector<Condition> flange = conditions_stated_in("a 120 mm flange with 8 mm holes");
  ASSERT_EQ(flange.size(), 2u);
  EXPECT_EQ(flange[0].key, FilterKey::kAnyExtent);  // ±2 %, at least 0.5 mm
  EXPECT_NEAR(flange[0].ranges[0].min, 117.6, 1e-9);
  EXPECT_NEAR(flange[0].ranges[0].max, 122.4, 1e-9);
  EXPECT_EQ(flange[1].key, FilterKey::kHoleDiameter);  // ±2 %, at least 0.1 mm
  EXPECT_NEAR(flange[1].ranges[0].min, 7.84, 1e-9);
  EXPECT_NEAR(flange[1].ranges[0].max, 8.16, 1e-9);
  EXPECT_EQ(flange[1].because, "8 mm");
  // Lengths that name no extent of the part, counts of nothing countable,
  // and "in" as a word are left alone.
  EXPECT_TRUE(clauses("holes 20 mm apart with a 2 mm fillet").empty());
  EXPECT_TRUE(clauses("a bracket with 3 bends").empty());
  EXPECT_TRUE(clauses("4 in the base").empty());
  const std::vector<Condition> c = conditions_stated_in("under 100 mm");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].because, "under 100 mm");
}

std::vector<std::string> clauses_of(const std::string& text) {
  std::vector<std::string> out;
  for (const Condition& c : conditions_stated_in(text)) out.push_back(c.to_string());
  return out;
}

TEST(QueryFacts, HoleCountsInDigitsAndWords) {
  using V = std::vector<std::string>;
  EXPECT_EQ(clauses_of("flange with six bolt holes"), V{"equal_holes=6"});
  EXPECT_EQ(clauses_of("flange with 6 bolt holes"), V{"equal_holes=6"});
  EXPECT_EQ(clauses_of("bracket with four mounting holes"), V{"equal_holes=4"});
  EXPECT_EQ(clauses_of("a plate with a pair of holes"), V{"hole_count=2"});
  EXPECT_EQ(clauses_of("a panel; two bored openings"), V{"hole_count=2"});
  EXPECT_EQ(clauses_of("flange with six holes"), V{"hole_count=6"});
  EXPECT_EQ(conditions_stated_in("flange with six bolt holes")[0].because, "six bolt holes");
}

TEST(QueryFacts, CountsOfTeethSpokesSlotsAndSteps) {
  using V = std::vector<std::string>;
  EXPECT_EQ(clauses_of("spur gear with 24 teeth"), V{"repeats=24"});
  EXPECT_EQ(clauses_of("a gear, twenty-four teeth"), V{"repeats=24"});
  EXPECT_EQ(clauses_of("a 36-tooth pulley"), V{"repeats=36"});
  EXPECT_EQ(clauses_of("a wheel with five spokes"), V{"repeats=5"});
  EXPECT_EQ(clauses_of("profile with three T-slots"), V{"repeats=3"});
  EXPECT_EQ(conditions_stated_in("profile with three T-slots")[0].because, "three T-slots");
  // Two of a kind are everywhere (any symmetric part): no fact.
  EXPECT_TRUE(clauses_of("a bar with two slots").empty());
  EXPECT_EQ(clauses_of("stepped shaft with three steps"), V{"steps=3"});
  EXPECT_EQ(clauses_of("a shaft of four diameter sections"), V{"steps=4"});
  EXPECT_TRUE(clauses_of("four sections").empty());
}

TEST(QueryFacts, DesignationsOfThreadsWashersAndBearings) {
  using V = std::vector<std::string>;
  // A fastener named with its M-size: the thread, and the extents its
  // standard's table gives (ISO 4032 M8: e 15.01, s 13, m 6.8; DIN 934: m 6.5).
  EXPECT_EQ(clauses_of("M8 nut"), (V{"thread=M8", "dims=14.26..15.17x12.87..13.13x6.43..6.87"}));
  EXPECT_EQ(clauses_of("ISO 4032 M8"),
            (V{"thread=M8", "dims=14.26..15.17x12.87..13.13x6.73..6.87"}));
  EXPECT_EQ(clauses_of("hex nut M10"),
            (V{"thread=M10", "dims=17.55..19.83x15.84..17.17x7.92..8.49"}));
  // ISO 4017 M8x40: l + k = 45.3 (DIN 933: 45.5), e 15.01, s 13.
  EXPECT_EQ(clauses_of("M8x40 hex bolt"),
            (V{"thread=M8x40", "dims=44.84..45.96x14.26..15.17x12.87..13.13"}));
  EXPECT_EQ(clauses_of("M8 bolt 40 mm long"), clauses_of("M8x40 hex bolt"));
  // DIN 933 M10 has 17 across flats where ISO 4017 has 16; both are
  // threaded up to the head (one round piece), ISO 4014 part of the way
  // (the shank at d, then the thread).
  EXPECT_EQ(clauses_of("DIN 933 M10x40"),
            (V{"thread=M10x40", "steps=0..1", "dims=46.53..47.47x18.64..19.83x16.83..17.17"}));
  EXPECT_EQ(clauses_of("ISO 4017 M10x40"),
            (V{"thread=M10x40", "steps=0..1", "dims=45.93..46.87x17.55..18.66x15.84..16.16"}));
  EXPECT_EQ(clauses_of("ISO 4014 M10x40"),
            (V{"thread=M10x40", "steps>=2", "dims=45.93..46.87x17.55..18.66x15.84..16.16"}));
  EXPECT_EQ(clauses_of("partly threaded hex bolt M10x40"),
            (V{"thread=M10x40", "steps>=2", "dims=45.93..47.47x17.55..19.83x15.84..17.17"}));
  // ISO 4762 M6: a round head 10 across and 6 high.
  EXPECT_EQ(clauses_of("DIN 912 M6 x 20"),
            (V{"thread=M6x20", "dims=25.74..26.26x9.9..10.1x9.9..10.1"}));
  EXPECT_EQ(clauses_of("M6x20 allen bolt"), clauses_of("DIN 912 M6 x 20"));
  EXPECT_EQ(clauses_of("SHCS M6x20"), clauses_of("DIN 912 M6 x 20"));
  // Without a length, a screw's head alone.
  EXPECT_EQ(clauses_of("M8 bolt"),
            (V{"thread=M8", "middle=14.26..15.17", "smallest=12.87..13.13"}));
  // ISO 7089 M10: 20 across, 2 thick; the large series (ISO 7093) 30 x 2.5.
  EXPECT_EQ(clauses_of("washer M10"),
            (V{"clearance=M10", "dims=19.8..20.2x19.8..20.2x1.98..2.02"}));
  EXPECT_EQ(clauses_of("M10 penny washer"),
            (V{"clearance=M10", "dims=29.7..30.3x29.7..30.3x2.47..2.53"}));
  // DIN 127 B M8: 14.8 across, 2 thick, its helix up to 4 high; a bolt
  // with its nut: no one table shape.
  // Its bore (8.1) hugs the bolt: the shape alone, not a clearance.
  EXPECT_EQ(clauses_of("spring washer M8"), V{"dims=14.65..14.95x14.65..14.95x1.98..4.04"});
  EXPECT_EQ(clauses_of("Spring lock washer DIN 127 - B 8 - FSt"), clauses_of("spring washer M8"));
  EXPECT_EQ(clauses_of("Washer ISO 7089 - 8 - 200 HV"),
            (V{"clearance=M8", "dims=15.84..16.16x15.84..16.16x1.58..1.62"}));
  EXPECT_EQ(clauses_of("M8 bolt and nut"), V{"thread=M8"});
  // Retaining rings: DIN 471 5 is 0.6 thick, its lugs 2.5 wide; DIN 472 15
  // 1 thick, 16.2 across when free.
  EXPECT_EQ(clauses_of("DIN 471 5x0.6"), (V{"smallest=0.588..0.612", "size=4.95..10.1"}));
  EXPECT_EQ(clauses_of("an external circlip for a 5 mm shaft"), clauses_of("DIN 471 5x0.6"));
  EXPECT_EQ(clauses_of("bore circlip 15 mm"), (V{"smallest=0.98..1.02", "size=16.038..16.362"}));
  // Neither shaft nor bore said: the one table with the size (DIN 472 starts at 8 mm).
  EXPECT_EQ(clauses_of("5 mm circlip"), clauses_of("DIN 471 5x0.6"));
  // A belt's width is no extent of the pulley.
  EXPECT_EQ(clauses_of("GT2 30 teeth pulley for 10mm belt"), V{"repeats=30"});
  // Gears and pulleys by their short forms: m (z + 2) and the teeth.
  EXPECT_EQ(clauses_of("spur gear m = 1.5, z = 32"), (V{"size=50.49..51.51", "repeats=32"}));
  EXPECT_EQ(clauses_of("M1.5-32T gear"), clauses_of("spur gear m = 1.5, z = 32"));
  EXPECT_EQ(clauses_of("gear 32T mod 1.5"), clauses_of("spur gear m = 1.5, z = 32"));
  EXPECT_EQ(clauses_of("GT2 pulley 30T"), V{"repeats=30"});
  EXPECT_EQ(clauses_of("pulley, 30 teeth, bore 5 mm"), (V{"repeats=30", "hole=4.9..5.1"}));
  // A thread on a part that is no fastener names its holes.
  EXPECT_EQ(clauses_of("an M8 bracket"), V{"hole=6.4..10"});
  EXPECT_EQ(clauses_of("M8 holes"), V{"hole=6.4..10"});
  // Bearings by number (ISO 15: 608 is 8 x 22 x 7) and by sizes.
  EXPECT_EQ(clauses_of("608ZZ"), (V{"hole=7.92..8.08", "dims=21.78..22.22x21.78..22.22x6.9..7.1"}));
  EXPECT_EQ(clauses_of("bearing 6204-2RS"),
            (V{"hole=19.8..20.2", "dims=46.53..47.47x46.53..47.47x13.86..14.14"}));
  EXPECT_EQ(clauses_of("bearing 8x22x7"), clauses_of("608 bearing"));
  // Steel sections (EN 10365: IPE 200 is 200 x 100; EN 10056-1: L 50x5 has
  // legs of 50) by their sides, and gears by module and teeth (tip m (z + 2)).
  EXPECT_EQ(clauses_of("IPE 200 beam"), (V{"middle=198..202", "smallest=99..101"}));
  EXPECT_EQ(clauses_of("angle L 50x5"), (V{"middle=49.5..50.5", "smallest=49.5..50.5"}));
  EXPECT_TRUE(clauses_of("IPE 210").empty());  // no such section
  EXPECT_EQ(clauses_of("spur gear module 2, 24 teeth"), (V{"size=51.48..52.52", "repeats=24"}));
  // A number that only looks like a bearing is none without the word or a suffix.
  EXPECT_EQ(clauses_of("a gear with 608 teeth"), V{"repeats=608"});
}

TEST(QueryFacts, DowelsProfilesCountersunkScrewsAndLengthsAfterTheName) {
  using V = std::vector<std::string>;
  // Dowels by diameter x length (ISO 8734): extents length x diameter x diameter.
  EXPECT_EQ(clauses_of("10x24 dowel"), V{"dims=23.76..24.24x9.9..10.1x9.9..10.1"});
  EXPECT_EQ(clauses_of("ISO 8734 3x30"), V{"dims=29.7..30.3x2.9..3.1x2.9..3.1"});
  // T-slot profiles by section, the slot width part of the designation,
  // never a count of 3030 of anything.
  EXPECT_EQ(clauses_of("2020 profile"),
            (V{"middle=19.8..20.2", "smallest=19.8..20.2", "repeats=8"}));
  EXPECT_EQ(clauses_of("3030 profile slot 8, 1000 mm long"),
            (V{"middle=29.7..30.3", "smallest=29.7..30.3", "repeats=8", "extent=980..1020"}));
  EXPECT_EQ(clauses_of("a 45x45 T-slot extrusion"),
            (V{"middle=44.55..45.45", "smallest=44.55..45.45", "repeats=8"}));
  // A section's cut length right after its designation, as part names write it.
  EXPECT_EQ(clauses_of("L 25x4, 500 mm"),
            (V{"middle=24.75..25.25", "smallest=24.75..25.25", "size=495..505"}));
  EXPECT_EQ(clauses_of("IPE 200, 2 m"),
            (V{"middle=198..202", "smallest=99..101", "extent=1960..2040"}));
  EXPECT_EQ(clauses_of("HEB140_1000"),
            (V{"middle=138.6..141.4", "smallest=138.6..141.4", "size=990..1010"}));
  EXPECT_EQ(clauses_of("L25x4 L500"),
            (V{"middle=24.75..25.25", "smallest=24.75..25.25", "size=495..505"}));
  EXPECT_EQ(clauses_of("T-slot 3030_500"),
            (V{"middle=29.7..30.3", "smallest=29.7..30.3", "repeats=8", "size=495..505"}));
  // A file's name needs no word: the section joined to its length by "_".
  EXPECT_EQ(clauses_of("3030_500"), clauses_of("T-slot 3030_500"));
  EXPECT_EQ(clauses_of("4040-500"), V{});  // no T-slot word, no underscore: a number
  // A number no longer than the section is no length of it.
  EXPECT_EQ(clauses_of("IPE 200 4"), (V{"middle=198..202", "smallest=99..101"}));
  // A washer's standard glued to its number, as file names write it.
  EXPECT_EQ(clauses_of("ISO7090_M14"), clauses_of("washer M14"));
  // Shaft collars by their bore, and bore x outside x width.
  EXPECT_EQ(clauses_of("25 mm shaft collar"), V{"hole=24.75..25.25"});
  EXPECT_EQ(clauses_of("set collar 14"), V{"hole=13.86..14.14"});
  // A length that ends the query: nothing read past its unit.
  EXPECT_EQ(clauses_of("shaft collar 14mm"), V{"hole=13.86..14.14"});
  EXPECT_EQ(clauses_of("shaft collar 14 x 25 x 12"),
            (V{"hole=13.86..14.14", "dims=24.75..25.25x24.75..25.25x11.88..12.12"}));
  // A collar that is part of another part is no collar's bore.
  EXPECT_EQ(clauses_of("a bushing with a 30 mm collar"), V{"extent=29.4..30.6"});
  // A countersunk screw's length is its whole length, the head's included.
  // ISO 10642 M5: a head 11.2 across.
  EXPECT_EQ(clauses_of("M5x12 countersunk screw"),
            (V{"thread=M5", "dims=11.76..12.24x11.08..11.32x11.08..11.32"}));
  EXPECT_EQ(clauses_of("M5 flat head screw 45 mm long"),
            (V{"thread=M5", "dims=44.1..45.9x11.08..11.32x11.08..11.32"}));
  // Shorter than its head is wide: the length alone.
  EXPECT_EQ(clauses_of("M5x10 countersunk screw"), (V{"thread=M5", "size=9.8..10.2"}));
  // A length right after the part's name is its thread's.
  EXPECT_EQ(clauses_of("M16 cap screw, 110 mm"),
            (V{"thread=M16x110", "dims=124.74..127.26x23.76..24.24x23.76..24.24"}));
  // A standoff's body 25 long, 7 across flats; its male end's stud (8) may
  // add to it, so the shape says the length, not the thread.
  // Its ends not said: 25 long female-female, or 33 long male-female.
  EXPECT_EQ(clauses_of("M4 hex spacer 25mm"),
            (V{"thread=M4",
               "dims=24.75..25.25x7.67..8.17x6.93..7.07|32.67..33.33x7.67..8.17x6.93..7.07"}));
  EXPECT_EQ(clauses_of("M4x25 female-female standoff"),
            (V{"thread=M4", "dims=24.75..25.25x7.67..8.17x6.93..7.07"}));
  // Shorter than its hexagon is wide: the sides in another order.
  EXPECT_EQ(clauses_of("standoff_M4x6_FF"),
            (V{"thread=M4", "dims=7.67..8.17x6.93..7.07x5.94..6.06"}));
  // Either end that short: each shape with its own order of sides.
  EXPECT_EQ(
      clauses_of("M4x6 standoff"),
      (V{"thread=M4", "dims=7.67..8.17x6.93..7.07x5.94..6.06|13.86..14.14x7.67..8.17x6.93..7.07"}));
  // A shaft's fit (ISO 286) is no length in metres.
  EXPECT_EQ(clauses_of("DIN 6325 10x75 m6"), V{"dims=74.25..75.75x9.9..10.1x9.9..10.1"});
  EXPECT_EQ(clauses_of("Parallel pin ISO 8734 - 10 m6 x 50 - A - St"),
            V{"dims=49.5..50.5x9.9..10.1x9.9..10.1"});
}

TEST(QueryFacts, ThreadsBoresAndPinsSaidInWords) {
  using V = std::vector<std::string>;
  EXPECT_EQ(clauses_of("a hex head bolt, 14 mm thread, 100 mm long"),
            (V{"thread=M14x100", "dims=107.71..110.09x23.03..25.66x20.79..22.22"}));
  EXPECT_EQ(clauses_of("a hexagon nut for an 5 mm bolt"),
            (V{"thread=M5", "dims=8.77..9.33x7.92..8.08x3.96..4.75"}));
  EXPECT_EQ(clauses_of("a 40 mm long hexagon bolt for 5 mm holes"),
            (V{"thread=M5x40", "dims=43.06..43.94x8.77..9.33x7.92..8.08"}));
  EXPECT_EQ(clauses_of("a spring washer for an 8 mm bolt"), clauses_of("spring washer M8"));
  // Holes for a bolt on a part that is no fastener.
  EXPECT_EQ(clauses_of("a plate with holes for 8 mm bolts"), V{"hole=6.4..10"});
  EXPECT_EQ(clauses_of("a shaft collar for a 14 mm shaft"), V{"hole=13.86..14.14"});
  EXPECT_EQ(clauses_of("a hardened steel pin 10 mm thick, 55 mm long"),
            V{"dims=54.45..55.55x9.9..10.1x9.9..10.1"});
  EXPECT_EQ(clauses_of("3 mm dowel pin 22 mm long"), V{"dims=21.78..22.22x2.9..3.1x2.9..3.1"});
  EXPECT_EQ(clauses_of("a ball bearing, 25 mm bore, 52 mm outside, 15 mm wide"),
            (V{"hole=24.75..25.25", "dims=51.48..52.52x51.48..52.52x14.85..15.15"}));
  // A dimension word after a length decides, not an inner word before it.
  EXPECT_EQ(clauses_of("a tube, 25 mm bore, 52 mm outside"),
            (V{"hole=24.5..25.5", "extent=50.96..53.04"}));
}

TEST(QueryFacts, UnitlessSizesGiveProportionsAndUnitsCarryOver) {
  using V = std::vector<std::string>;
  EXPECT_EQ(clauses_of("about 0.75 x 0.5 x 0.25 units"),
            V{"proportions=1:0.6666666666666666:0.3333333333333333"});
  EXPECT_EQ(
      clauses_of("a length of 0.75 units, a width of 0.375 units and a height of 0.075 units"),
      V{"proportions=1:0.5:0.09999999999999999"});
  EXPECT_EQ(clauses_of("it is 0.6 units long, 0.3 units wide and 0.15 units thick"),
            V{"proportions=1:0.5:0.25"});
  // "30 inside" takes the unit of "40 mm outside".
  EXPECT_EQ(clauses_of("tube 40 mm outside, 30 inside"),
            (V{"extent=39.2..40.8", "hole=29.4..30.6"}));
  // "about" widens a length to ±10%.
  EXPECT_EQ(clauses_of("about 100 mm"), V{"extent=90..110"});
}

TEST(QueryFacts, AcrossIsTheLargestExtentAndACommaEndsAPhrase) {
  using V = std::vector<std::string>;
  EXPECT_EQ(clauses_of("a thin flat ring, about 20 mm across"), V{"size=18..22"});
  EXPECT_EQ(conditions_stated_in("a cover 320 mm across")[0].because, "320 mm across");
  // A larger length stated: "across" is some extent, as any other length.
  EXPECT_EQ(clauses_of("a pipe 20 mm across and 300 mm long"),
            (V{"extent=19.5..20.5", "extent=294..306"}));
  EXPECT_EQ(clauses_of("a hexagon 13 mm across the flats"), V{"extent=12.5..13.5"});
  // "thread" names no extent, but not past the comma that ends its phrase.
  EXPECT_TRUE(clauses_of("a thread 65 mm").empty());
  EXPECT_EQ(clauses_of("like a bolt without a thread, 65 mm tall"), V{"extent=63.7..66.3"});
  EXPECT_EQ(clauses_of("a plate with a bore; 40 mm wide"), V{"extent=39.2..40.8"});
}

TEST(QueryFacts, NewClausesReadBackToTheSameFilter) {
  for (const std::string& text :
       {"equal_holes=6", "hole_count=2", "thread=M8", "thread=M8x40", "thread=M2.5x6",
        "clearance=M10", "proportions=1:0.5:0.25", "proportions=4:2", "repeats=24", "steps=3"}) {
    const Filter once = parse_filter(text);
    EXPECT_EQ(once, parse_filter(once.to_string())) << text << " -> " << once.to_string();
  }
  EXPECT_EQ(parse_filter("proportions=4:2:1").to_string(), "proportions=1:0.5:0.25");
  for (const std::string& text : {"thread=8", "thread<M8", "thread=Mx40", "clearance=M8x40",
                                  "proportions=1", "proportions=1:0:2", "proportions=1:a"}) {
    EXPECT_THROW(parse_filter(text), Error) << text;
  }
}

}  // namespace
}  // namespace cadclip::index
