// Internal to the synthetic-data generator: random streams, the description of
// a built part that captions are written from, and the Open CASCADE helpers
// that the part families share.
#pragma once

#include <TopoDS_Shape.hxx>
#include <gp_Ax1.hxx>
#include <gp_Dir.hxx>
#include <gp_Pnt.hxx>
#include <gp_Vec.hxx>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cadclip::synth {

// xoshiro256** seeded through splitmix64: the same numbers on every platform
// (std distributions are implementation-defined, so none are used).
class Rng {
 public:
  // A stream named by the set's seed, the part index, a purpose tag and a counter,
  // so that e.g. the caption stream never depends on the parameter stream.
  Rng(uint64_t seed, uint64_t index, uint64_t tag, uint64_t counter = 0);
  uint64_t next();
  double uniform();                                // [0, 1)
  double uniform(double lo, double hi);            // [lo, hi)
  int integer(int lo, int hi);                     // [lo, hi], inclusive
  double step(double lo, double hi, double step);  // lo + k * step <= hi
  bool chance(double p);
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(integer(0, static_cast<int>(items.size()) - 1))];
  }
  std::string pick(std::initializer_list<const char*> items);
  // Shuffles `items` in place, front to back: item i swaps with one of i..end.
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = 0; i + 1 < items.size(); ++i)
      std::swap(items[i],
                items[i + static_cast<size_t>(integer(0, static_cast<int>(items.size() - 1 - i)))]);
  }

 private:
  uint64_t s_[4];
};

inline constexpr uint64_t kTagParams = 1;
inline constexpr uint64_t kTagCaption = 2;
inline constexpr uint64_t kTagNoise = 3;
inline constexpr uint64_t kTagSplit = 4;
inline constexpr uint64_t kTagFamily = 5;    // which program family part i is
inline constexpr uint64_t kTagKind = 6;      // in a mixed set: whether part i is a program
inline constexpr uint64_t kTagStandard = 7;  // the order of a standard-part group's catalog

// A draw that cannot become a valid part (does not fit, an OCCT operation
// failed, the solid is invalid): the next draw replaces it.
class Reject : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CaptionWriter;
using Phrase = std::function<std::string(CaptionWriter&)>;

// An overall size. Keys length, width, height, thickness, outer_diameter and
// across_flats are bounding-box extents (length = x, width = y, height and
// thickness = z, outer_diameter and across_flats = y) and are replaced by the
// values measured on the solid; other keys come from the parameters.
struct Dim {
  std::string key;
  double value = 0;
  std::string noun;  // "length", "outer diameter"
  std::string adj;   // "long", "in diameter"
};

// A detail of the part (a hole pattern, a hub, a keyway): a full noun phrase
// with its numbers, and a brief one for one-line captions.
struct Feature {
  std::string kind;
  Phrase full;
  Phrase brief;
};

// Holes the builder cut: `count` round through or blind holes of `diameter`,
// stated under the given fact keys. The solid is measured and must agree.
struct HoleSet {
  std::string count_key;  // "" when the caption states no count (a single bore)
  std::string diameter_key;
  int count = 0;
  double diameter = 0;
};

struct Description {
  std::string family;
  std::vector<std::string> names;  // what the part is called ("flat plate", ...)
  std::vector<Dim> dims;
  std::vector<Feature> features;
  std::vector<Phrase> steps;  // construction steps, imperative clauses
  std::string kind_word;      // vague noun for noisy captions ("plate", "round part")
  std::string vague_feature;  // "some holes"; "" when none
  double max_extent = 0;      // longest bounding-box side, mm (set after measuring)
};

struct Built {
  TopoDS_Shape shape;
  nlohmann::json params;
  Description desc;
  std::vector<HoleSet> holes;
};

struct FamilyInfo {
  std::string key;
  std::string confused_with;  // the family whose name a noisy caption may use instead
  Built (*build)(Rng& rng);
  std::vector<std::string> names;  // what a caption calls this family
};
const std::vector<FamilyInfo>& families();
const FamilyInfo& family(const std::string& key);

// ---- Modelling helpers (shapes.cc); they throw Reject on failure.
struct P2 {
  double x = 0, y = 0;
  double chamfer = 0;  // cut this corner by a 45° chamfer of this leg length
  double fillet = 0;   // round this corner (a right angle) with this radius
};
// A planar face from a closed polygon given in 2-D coordinates of the plane
// through `origin` spanned by `xdir` and `ydir`.
TopoDS_Shape profile_face(const std::vector<P2>& points, const gp_Pnt& origin, const gp_Dir& xdir,
                          const gp_Dir& ydir);
TopoDS_Shape extrude(const TopoDS_Shape& face, const gp_Vec& direction);
TopoDS_Shape revolve(const TopoDS_Shape& face, const gp_Ax1& axis, double angle_rad);
TopoDS_Shape box(double x0, double y0, double z0, double dx, double dy, double dz);
TopoDS_Shape cylinder(const gp_Pnt& base, const gp_Dir& dir, double radius, double height);
TopoDS_Shape cone(const gp_Pnt& base, const gp_Dir& dir, double r_base, double r_top,
                  double height);
TopoDS_Shape cut(const TopoDS_Shape& shape, const std::vector<TopoDS_Shape>& tools);
TopoDS_Shape fuse(const TopoDS_Shape& shape, const std::vector<TopoDS_Shape>& tools);
TopoDS_Shape common(const TopoDS_Shape& a, const TopoDS_Shape& b);
// Rounds the edges of `shape` parallel to `dir` whose midpoint satisfies `select`.
TopoDS_Shape fillet_edges(const TopoDS_Shape& shape, double radius,
                          const std::function<bool(const gp_Pnt& mid, bool straight)>& select);

// ---- Measuring and writing (shapes.cc).
struct Measured {
  double bbox[6] = {0, 0, 0, 0, 0, 0};  // xmin, ymin, zmin, xmax, ymax, zmax, mm
  double volume = 0;                    // mm^3
  double area = 0;                      // mm^2
  int faces = 0;
  int solids = 0;
  // Round holes: full internal cylinders grouped by axis; diameter -> count.
  std::vector<std::pair<double, int>> holes;
  double extent(int axis) const { return bbox[axis + 3] - bbox[axis]; }
};
// Throws Reject when the shape is not one valid, closed solid of positive volume.
Measured measure_valid_solid(const TopoDS_Shape& shape);
// The manifest's "measured" entry (synth.cc).
nlohmann::json measured_json(const Measured& m);
// "synth_00000042": the prefix (--id-prefix) and the index in 8 digits (synth.cc).
std::string part_id(const std::string& prefix, int64_t index);
// The part as an AP214 STEP file in millimetres, with a fixed header (name,
// time stamp, author) so that the same part gives the same bytes.
std::string step_text(const TopoDS_Shape& shape, const std::string& name);

// ---- Captions (captions.cc).
struct CaptionSet {
  std::vector<std::string> texts;     // per level
  std::vector<nlohmann::json> facts;  // per level
  std::vector<nlohmann::json> noise;  // per level, null when clean
};
CaptionSet write_captions(const Description& desc, uint64_t seed, uint64_t index, double noise);

// Number formatting shared by the families' phrases.
std::string num_text(double value);  // 120 -> "120", 6.6 -> "6.6", 23.094 -> "23.1"
// "a, b and c" (with `last` between the last two).
std::string join_and(const std::vector<std::string>& items, const std::string& last = " and ");

class CaptionWriter {
 public:
  CaptionWriter(Rng rng, int unit_style, bool approximate, bool number_words)
      : rng_(rng),
        unit_style_(unit_style),
        approximate_(approximate),
        number_words_(number_words) {}
  Rng& rng() { return rng_; }
  std::string pick(std::initializer_list<const char*> items) { return rng_.pick(items); }
  // A length with its unit, recorded as a fact; "" when noise hides it, so
  // phrases use opt() around it.
  std::string mm(const std::string& key, double value);
  // pre + mm(key, value) + post, or "" when the number is hidden.
  std::string opt(const std::string& pre, const std::string& key, double value,
                  const std::string& post = "");
  // A length without unit (for "120 x 80 x 6 mm"); pair with unit().
  std::string bare(const std::string& key, double value);
  std::string unit();
  // A count, as digits or a word; "several" when hidden.
  std::string count(const std::string& key, int value);
  // An angle in degrees.
  std::string deg(const std::string& key, double value);
  // A plain value such as a gear module, recorded as a fact.
  std::string value(const std::string& key, double value);
  bool hidden(const std::string& key) const { return key == hide_key_; }

  nlohmann::json facts = nlohmann::json::object();
  std::string hide_key_;        // noise: this number is left out
  std::string wrong_key_;       // noise: this number is stated wrongly
  double wrong_factor_ = 1;     // ... multiplied by this
  int wrong_offset_ = 0;        // ... or, for counts, shifted by this
  nlohmann::json wrong_record;  // what was changed: key, true, stated

 private:
  double stated(const std::string& key, double value, bool is_count);
  Rng rng_;
  int unit_style_;
  bool approximate_;
  bool number_words_;
};

}  // namespace cadclip::synth
