// The filter language of part search: hard constraints on a part's size,
// face count, round holes, source file type and imported catalog fields, and
// a minimum score, written the same way on the command line (`cadclip search
// --filter`), in the HTTP API (`filter=`) and on the page. The clauses and
// their forms are in docs/HTTP_API.md, "Filters". A Searcher applies a Filter
// inside the vector search: only parts that pass are ranked, so k results
// come back whenever k parts pass.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip::index {

// An interval of numbers; an open side is unbounded.
struct NumberRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;  // min < v instead of min <= v
  bool max_open = false;  // v < max instead of v <= max
  // Inline: filters call it once per part and condition.
  bool contains(double value) const {
    if (min_open ? !(value > min) : !(value >= min)) return false;
    return max_open ? value < max : value <= max;
  }
  bool operator==(const NumberRange&) const = default;
};

enum class FilterKey {
  kSizeX,         // bounding-box extent along x, mm ("x")
  kSizeY,         // ... along y ("y")
  kSizeZ,         // ... along z ("z")
  kLargest,       // the largest extent, mm ("size")
  kMiddle,        // the middle one ("middle")
  kSmallest,      // the smallest one ("smallest")
  kAnyExtent,     // some extent ("extent")
  kDims,          // the sorted extents together, largest first ("dims=100x50x20±1"); or
                  // any of up to four such shapes ("dims=15x8x7|23x8x7", three extents each)
  kFaces,         // face count ("faces")
  kHoles,         // round-hole count ("holes")
  kEqualHoles,    // a set of holes of one diameter (±1%) has this count ("equal_holes")
  kHoleCount,     // equal_holes, or the part's holes in all have this count ("hole_count")
  kHoleDiameter,  // some round hole's diameter, mm ("hole")
  kThread,        // a metric thread: a hole or shaft at its diameters, and with a length, a
                  // threaded shaft that long or a threaded part that long ("thread=M8x40")
  kClearance,     // a hole a bolt of this size passes through, fine to medium ("clearance=M8")
  kProportions,   // the extents, largest first, in proportion to the largest
                  // ("proportions=1:0.5:0.1")
  kRepeats,       // a set of congruent faces spaced about the part's centre has this count:
                  // teeth, spokes, slots (data/part_facts.h; "repeats")
  kSteps,         // the round pieces of one shaft axis, of more than one diameter ("steps")
  kFileType,      // the source file's format: step, iges, brep, deepcad ("type")
  kField,         // a catalog field imported with `cadclip index --metadata`
};

// Where a condition came from, for the answer that lists what was applied.
enum class FilterOrigin {
  kGiven,      // written by the user
  kQueryText,  // a number the text query states (--strict-numbers)
  kSameSize,   // "same size as the query part"
};

struct Condition {
  FilterKey key = FilterKey::kLargest;
  std::vector<NumberRange> ranges;  // numeric keys: one; kDims: one per extent, largest first
                                    // (several shapes: three each, one after the other);
                                    // kField: one when compared as a number; kThread and
                                    // kClearance: the nominal diameter as a point, and for
                                    // kThread a length range; kProportions: three points
  std::vector<std::string> values;  // kFileType, kField: any of these (case-insensitive, '*'
                                    // matches any run of characters)
  bool contains = false;            // kField "~": the value holds one of `values`
  bool negate = false;              // "!=": the part must match none of `values` / not the range
  std::string field;                // kField: its name (lower case, '_' for spaces)
  FilterOrigin origin = FilterOrigin::kGiven;
  std::string because;  // kQueryText: the words it was read from ("under 100 mm")
  // The clause in the query-string form ("size<100", "holes>=6", "material=steel").
  std::string to_string() const;
  bool operator==(const Condition&) const = default;
};

// The most shapes a dims condition may allow ("dims=AxBxC|DxExF").
inline constexpr size_t kMaxDimsShapes = 4;

struct Filter {
  std::vector<Condition> conditions;  // every one must hold
  std::optional<double> min_score;    // parts scoring below are left out ("score>=0.4")
  bool empty() const { return conditions.empty() && !min_score; }
  // The query-string form; parse_filter() reads it back to an equal Filter
  // (origins and `because` aside).
  std::string to_string() const;
  bool operator==(const Filter&) const = default;
};

// Reads the query-string form: clauses separated by spaces, ';' or ", ",
// each KEY OP VALUE (`size<100`, `x=20..40`, `dims=100x50x20±1`,
// `hole=M8`, `type=step,iges`, `material="stainless steel"`,
// `part_number=AB-12*`, `score>=0.4`). Throws cadclip::Error naming the
// clause it cannot read and how to write it.
Filter parse_filter(std::string_view text);

// How far a thread's length or a proportion may be from the stated one and
// still hold (filter evaluation and the docs share them).
inline constexpr double kThreadLengthTolerance = 0.04;  // ±4%, at least 1 mm
inline constexpr double kProportionTolerance = 0.03;    // ±0.03 of the largest extent, plus 4%

// The names `type=` accepts, and the one a file extension gives ("" = none):
// .step/.stp -> step, .iges/.igs -> iges, .brep -> brep, .json -> deepcad.
const std::vector<std::string>& file_type_names();
std::string file_type_of_extension(std::string_view extension);

}  // namespace cadclip::index
