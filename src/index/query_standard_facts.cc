// The passes of a query's reading that read standard parts: bearings,
// steel sections, gears, T-slot profiles, threads, pins (query_reading.h;
// the rules in docs/HTTP_API.md, "Facts a query states").
#include <algorithm>
#include <cmath>
#include <limits>

#include "cadclip/core/format.h"
#include "filter_words.h"
#include "query_reading.h"
#include "thread_sizes.h"
#ifdef CADCLIP_WITH_OCCT
#include "cadclip/cad/standards.h"
#endif

namespace cadclip::index::detail {

// Deep groove ball bearings by number: the bore and the outside of the table.
void QueryReading::read_bearing_numbers() {
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i]) continue;
    const auto number = bearing_number(t, i, bearing);
    if (!number) continue;
    const std::string because = words_between(text, t, i, number->second);
#ifdef CADCLIP_WITH_OCCT
    const std::optional<cad::BearingSize> size = cad::ball_bearing_size(number->first);
    if (!size) continue;
    add_bearing(out, size->d, size->outside, size->width, because);
    mark(i, number->second);
#else
    (void)because;
#endif
  }
}

#ifdef CADCLIP_WITH_OCCT  // the tables live in the cad layer
// Steel sections by designation: "IPE 200", "HEB 160", "UPN 100", "L 50x5"
// (EN 10365, EN 10056-1): cut to a length longer than the section, the
// part's middle and smallest extents are the section's sides, ±1%.
void QueryReading::read_steel_sections() {
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (used[i] || !t[i + 1].number) continue;
    const std::string series = t[i].low;
    if (!one_of(series, {"ipe", "hea", "heb", "upn", "l"})) continue;
    std::string size = t[i + 1].text;
    size_t end = i + 2;
    if (series == "l") {  // "L 50x5": legs x thickness
      if (end + 1 >= t.size() || t[end].low != "x" || !t[end + 1].number) continue;
      size += "x" + t[end + 1].text;
      end += 2;
    }
    const std::optional<cad::SteelProfileSize> section = cad::steel_profile_size(series, size);
    if (!section) continue;
    const std::string because = words_between(text, t, i, end);
    out.push_back(
        stated(FilterKey::kMiddle, around(std::max(section->h, section->b), 0.01, 0.1), because));
    out.push_back(
        stated(FilterKey::kSmallest, around(std::min(section->h, section->b), 0.01, 0.1), because));
    mark(i, end);
    read_cut_length(end, std::max(section->h, section->b));
  }
}

// The length a section is cut to, right after its designation, as part
// names write it: "HEB140_1000", "L25x4 L500", "IPE 200 x 6000", "T-slot 3030_500":
// a bare number (or one in mm) longer than the section is wide, after an
// optional "L", "x" or "length", is the part's largest extent, ±1%.
void QueryReading::read_cut_length(size_t at, double section) {
  if (at < t.size() && one_of(t[at].low, {"l", "x", "length"})) ++at;
  if (at >= t.size() || used[at] || !t[at].number) return;
  const auto length = length_at(t, at);
  // length_at ends past its unit: "IPE 200, 2 m" is left to the other lengths' reading.
  if (length && t[length->second - 1].low != "mm") return;
  const double value = t[at].value;
  if (!(value > section)) return;
  const size_t end = length ? length->second : at + 1;
  out.push_back(
      stated(FilterKey::kLargest, around(value, 0.01, 0.5), words_between(text, t, at, end)));
  mark(at, end);
}

// Spur gears and toothed pulleys by module and teeth: "module 2, 24
// teeth", "spur gear m = 1.5, z = 32", "m0.5 48T gear", "gear 48T mod 0.5",
// "GT2 pulley 30T": the count of teeth as `repeats`, and with a module the
// tip diameter m (z + 2) as the part's largest extent, ±1%. The short forms
// (m, z, T) are read only where a gear, pinion, pulley or sprocket is named.
void QueryReading::read_gears() {
  bool toothed = false;
  for (const Token& token : t)
    toothed = toothed || one_of(token.low, {"gear", "gears", "pinion", "pulley", "pulleys",
                                            "sprocket", "gt2", "gt"});
  std::optional<std::pair<double, std::pair<size_t, size_t>>> module, teeth;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (used[i]) continue;
    const Token& next = t[i + 1];
    if (!module && next.number &&
        (one_of(t[i].low, {"module", "mod"}) || (toothed && t[i].low == "m")))
      module = {next.value, {i, i + 2}};
    else if (!teeth && toothed && t[i].low == "z" && next.number)
      teeth = {next.value, {i, i + 2}};
    else if (!teeth && t[i].number &&
             (one_of(next.low, {"teeth", "tooth"}) ||
              (toothed && t[i].glued_to_next && next.low == "t")))
      teeth = {t[i].value, {i, i + 2}};
  }
  if (!teeth || teeth->first < 3 || teeth->first >= 1000 ||
      teeth->first != std::floor(teeth->first))
    return;
  const int z = static_cast<int>(teeth->first);
  if (module) {
    if (const std::optional<cad::GearSize> gear = cad::spur_gear_size(module->first, z)) {
      out.push_back(stated(FilterKey::kLargest, around(gear->tip, 0.01, 0.1),
                           words_between(text, t, module->second.first, module->second.second)));
      mark(module->second.first, module->second.second);
    }
  }
  out.push_back(stated(FilterKey::kRepeats, {teeth->first, teeth->first, false, false},
                       words_between(text, t, teeth->second.first, teeth->second.second)));
  mark(teeth->second.first, teeth->second.second);
}

// T-slot profiles by section: "2020 profile", "a 30x30 T-slot extrusion",
// "4545 strut, slot 10": cut to a length longer than the section, the
// part's middle and smallest extents are the section's side, ±1%, and
// its four slots' eight lips a set of 8 congruent faces about its axis
// (`repeats=8`, which tells it from a square bar or an angle of that
// side). A slot width said with it ("slot 8") belongs to the designation.
// A part file's name needs no word: "3030_500", the section joined to its
// cut length by an underscore, is a T-slot profile.
void QueryReading::read_tslot_profiles() {
  bool tslot = profile;
  for (size_t k = 0; k + 1 < t.size(); ++k)  // "T-slot" is two tokens, "T" and "slot"
    tslot = tslot || (t[k].low == "t" && one_of(t[k + 1].low, {"slot", "slots"}));
  auto joined_to_length = [&](size_t i) {
    return i + 1 < t.size() && t[i + 1].number && t[i + 1].begin == t[i].end + 1 &&
           text[t[i].end] == '_';
  };
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i] || !t[i].number || t[i].text.find('.') != std::string::npos) continue;
    int series = 0;
    size_t end = i + 1;
    const std::string& n = t[i].text;
    if (n.size() == 4 && n.substr(0, 2) == n.substr(2) &&
        (tslot || joined_to_length(i))) {  // "2020", "4545", "3030_500"
      series = std::stoi(n.substr(0, 2));
    } else if (tslot && i + 2 < t.size() && t[i + 1].low == "x" && t[i + 2].number &&
               t[i + 2].value == t[i].value) {  // "30x30", "30 x 30"
      series = static_cast<int>(t[i].value);
      end = i + 3;
      if (end < t.size() && t[end].low == "mm") ++end;
    }
    if (series == 0) continue;
    const std::optional<cad::TslotProfileSize> size = cad::tslot_profile_size(series, 0);
    if (!size) continue;
    const std::string because = words_between(text, t, i, end);
    out.push_back(stated(FilterKey::kMiddle, around(size->a, 0.01, 0.1), because));
    out.push_back(stated(FilterKey::kSmallest, around(size->a, 0.01, 0.1), because));
    out.push_back(stated(FilterKey::kRepeats, {8, 8, false, false}, because));
    mark(i, end);
    for (size_t k = 0; k + 1 < t.size(); ++k)
      if (!used[k] && t[k].low == "slot" && t[k + 1].number) mark(k, k + 2);
    read_cut_length(end, size->a);
    return;
  }
}

namespace {

// A fastener a query names by its words or its standard's number, and what
// those say of its form.
enum class FastenerKind { kNone, kHexBolt, kSocketScrew, kNut, kWasher, kSpringWasher, kStandoff };

struct NamedFastener {
  FastenerKind kind = FastenerKind::kNone;
  bool iso = false, din = false;       // a hex head's or nut's standard, old (DIN) or new (ISO)
  bool full = false, partial = false;  // a hex bolt threaded up to its head, or part of the way
  bool thin = false, nyloc = false, large = false, spring = false;
  bool male = false, female = false;  // a standoff's ends, when said
};

NamedFastener named_fastener(const std::vector<Token>& t) {
  NamedFastener f;
  bool hex = false, socket = false, cap = false, bolt = false, screw = false, nut = false,
       washer = false, standoff = false, other = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string& w = t[i].low;
    const std::string number = standard_number(t, i);
    if (!number.empty()) {
      const bool din = t[i - 1].low == "din";
      if (one_of(number, {"4014", "4017", "931", "933"})) {
        bolt = true;
        (din ? f.din : f.iso) = true;
        (one_of(number, {"4017", "933"}) ? f.full : f.partial) = true;
      } else if (one_of(number, {"4762", "912"})) {
        socket = true;
      } else if (one_of(number, {"4032", "934"})) {
        nut = true;
        (din ? f.din : f.iso) = true;
      } else if (one_of(number, {"4035", "439"})) {
        nut = f.thin = true;
      } else if (one_of(number, {"7040", "982", "985"})) {
        nut = f.nyloc = true;
      } else if (one_of(number, {"7089", "7090", "125"})) {
        washer = true;
      } else if (one_of(number, {"7093", "9021"})) {
        washer = f.large = true;
      } else if (number == "127") {
        washer = f.spring = true;
      } else if (one_of(number, {"7980", "10642", "7991", "471", "472", "6799"})) {
        other = true;  // countersunk screws, retaining rings, ISO 7980's washers
      }
      continue;
    }
    // "a nut for an 8 mm bolt", "a washer for M8 screws": what the part goes on.
    bool goes_on = false;
    for (size_t k = i >= 4 ? i - 4 : 0; k < i; ++k) goes_on = goes_on || t[k].low == "for";
    if (goes_on && one_of(w, {"bolt", "bolts", "screw", "screws"})) continue;
    // "fully threaded", "threaded up to the head", "partly threaded",
    // "threaded part of the way".
    f.full = f.full || w == "fully" ||
             (w == "full" && i + 1 < t.size() && one_of(t[i + 1].low, {"thread", "threaded"})) ||
             (w == "head" && i >= 2 && t[i - 1].low == "the" && one_of(t[i - 2].low, {"to", "up"}));
    f.partial = f.partial || one_of(w, {"partly", "partially"}) ||
                (w == "part" && i + 3 < t.size() && t[i + 1].low == "of" && t[i + 3].low == "way");
    hex = hex || one_of(w, {"hex", "hexagon", "hexagonal"});
    socket = socket || one_of(w, {"socket", "shcs", "allen", "capscrew"}) ||
             (w == "cylinder" && i + 1 < t.size() && t[i + 1].low == "head");
    bolt = bolt || one_of(w, {"bolt", "bolts"});
    screw = screw || one_of(w, {"screw", "screws"});
    cap = cap || w == "cap";
    nut = nut || one_of(w, {"nut", "nuts", "locknut", "nyloc"});
    f.thin = f.thin || one_of(w, {"thin", "jam"});
    f.nyloc = f.nyloc || one_of(w, {"nyloc", "locknut", "nylon", "lock", "locking"});
    washer = washer || is_washer_word(w);
    f.large = f.large || one_of(w, {"large", "penny", "fender"});
    f.spring = f.spring || one_of(w, {"spring", "split"});
    other = other || one_of(w, {"circlip", "countersunk", "csk", "set", "setscrew", "grub",
                                "flange", "flanged", "wing", "cap_nut"});
    standoff = standoff || one_of(w, {"standoff", "standoffs", "spacer", "spacers", "pillar"});
    f.male = f.male || w == "male" || w == "mf" ||
             (w == "m" && i + 1 < t.size() && t[i + 1].low == "f" && !t[i].glued_to_next);
    f.female = f.female || w == "ff" || (w == "female" && !(i > 0 && t[i - 1].low == "male")) ||
               (w == "f" && i + 1 < t.size() && t[i + 1].low == "f");
  }
  if (other) return f;
  f.spring = f.spring || f.nyloc;  // a lock washer is a spring washer
  // One kind, named unmistakably: a standoff before its hexagon, a nut or a
  // washer before the bolt it goes on, a socket before the "hex" of its key.
  const int kinds = standoff + nut + washer;
  if (kinds > 1 || (nut && (bolt || screw || socket))) return f;  // "M8 bolt and nut"
  if (standoff)
    f.kind = FastenerKind::kStandoff;
  else if (nut)
    f.kind = FastenerKind::kNut;
  else if (washer)
    f.kind = f.spring ? FastenerKind::kSpringWasher : FastenerKind::kWasher;
  else if (socket || (cap && !hex))
    f.kind = FastenerKind::kSocketScrew;  // "M8 cap screw"
  else if (bolt || (hex && screw))
    f.kind = FastenerKind::kHexBolt;
  return f;
}

// [lo, hi] widened by `relative` each way, to the hundredth of a millimetre
// outside it (the answer lists it as read).
NumberRange span(double lo, double hi, double relative) {
  return {std::floor(100 * lo * (1 - relative)) / 100, std::ceil(100 * hi * (1 + relative)) / 100,
          false, false};
}

// A hexagon across flats s is 2 s / sqrt(3) across its corners; real models
// chamfer the corners, the tables' e_min is about 0.96 of that.
constexpr double kCornersPerFlat = 1.1547005383792515;

// The corners' and the flats' extents of a hexagon s_lo to s_hi across flats.
std::pair<NumberRange, NumberRange> hexagon(double s_lo, double s_hi) {
  NumberRange corners = span(kCornersPerFlat * s_lo, kCornersPerFlat * s_hi, 0.01);
  corners.min = std::floor(100 * 0.95 * kCornersPerFlat * s_lo) / 100;
  return {corners, span(s_lo, s_hi, 0.01)};
}

// What the tables say of a named fastener's shape.
struct FastenerShape {
  std::vector<NumberRange> dims;        // its three extents, in any order; empty: none known
  std::vector<NumberRange> other_dims;  // a second shape the words allow equally; empty: none
  std::vector<std::pair<FilterKey, NumberRange>> head;  // a screw without a length: its head
  std::optional<NumberRange> steps;                     // the round pieces of its shank
  bool body_length = false;  // the length said is a standoff's body's, not the part's
  bool hugs_bolt = false;    // a spring washer's bore is tighter than a clearance
};

// Hex bolts and socket head cap screws of thread d and length (0: not said).
FastenerShape screw_shape(const NamedFastener& f, double d, double length) {
  FastenerShape shape;
  if (f.kind == FastenerKind::kSocketScrew) {
    const auto head = cad::socket_head_size(d);
    if (!head) return shape;
    const NumberRange across = span(head->dk, head->dk, 0.01);
    if (length <= 0)
      shape.head = {{FilterKey::kMiddle, across}, {FilterKey::kSmallest, across}};
    else
      shape.dims = {span(length + head->k, length + head->k, 0.01), across, across};
    return shape;
  }
  const auto head = cad::hex_head_size(d);
  if (!head) return shape;
  const bool both = f.iso == f.din;
  const double s_lo = both ? std::min(head->s, head->s_din) : f.din ? head->s_din : head->s;
  const double s_hi = both ? std::max(head->s, head->s_din) : s_lo;
  const double k_lo = both ? std::min(head->k, head->k_din) : f.din ? head->k_din : head->k;
  const double k_hi = both ? std::max(head->k, head->k_din) : k_lo;
  const auto [corners, flats] = hexagon(s_lo, s_hi);
  if (length <= 0) {
    shape.head = {{FilterKey::kMiddle, corners}, {FilterKey::kSmallest, flats}};
    return shape;
  }
  shape.dims = {span(length + k_lo, length + k_hi, 0.01), corners, flats};
  // Threaded part of the way, the shank keeps the nominal diameter: two
  // round pieces of one axis; threaded up to the head, one.
  if (f.full != f.partial)
    shape.steps = f.partial ? NumberRange{2, std::numeric_limits<double>::infinity(), false, false}
                            : NumberRange{0, 1, false, false};
  return shape;
}

// Nuts, washers and standoffs of thread d and length (0: not said).
FastenerShape nut_washer_standoff_shape(const NamedFastener& f, double d, double length) {
  FastenerShape shape;
  if (f.kind == FastenerKind::kNut) {
    const auto nut = cad::hex_nut_size(d);
    if (!nut || length > 0) return shape;
    double s_lo = nut->s, s_hi = nut->s, m_lo = nut->m, m_hi = nut->m;
    if (f.nyloc) {
      m_lo = m_hi = nut->h_nyloc;
    } else if (f.thin) {
      m_lo = m_hi = nut->m_thin;
    } else if (f.din || !f.iso) {  // DIN 934, or a regular nut of either standard
      s_lo = f.din ? nut->s_din : std::min(nut->s, nut->s_din);
      s_hi = f.din ? nut->s_din : std::max(nut->s, nut->s_din);
      m_lo = f.din ? nut->m_din : std::min(nut->m, nut->m_din);
      m_hi = f.din ? nut->m_din : std::max(nut->m, nut->m_din);
    }
    if (m_lo <= 0) return shape;  // no thin or nyloc nut of this size
    const auto [corners, flats] = hexagon(s_lo, s_hi);
    shape.dims = {corners, flats, span(m_lo, m_hi, 0.01)};
  } else if (f.kind == FastenerKind::kWasher) {
    const auto washer = cad::plain_washer_size(d);
    if (!washer || length > 0) return shape;
    const double d2 = f.large ? washer->d2_large : washer->d2;
    const double h = f.large ? washer->h_large : washer->h;
    if (d2 > 0) shape.dims = {span(d2, d2, 0.01), span(d2, d2, 0.01), span(h, h, 0.01)};
  } else if (f.kind == FastenerKind::kSpringWasher) {
    // DIN 127 B: the ring d2 across, s thick; its split ring's helix stands
    // up to h_min (models leave it flat or draw it).
    const auto spring = cad::spring_washer_size(d);
    if (!spring || length > 0) return shape;
    shape.dims = {span(spring->d2, spring->d2, 0.01), span(spring->d2, spring->d2, 0.01),
                  span(spring->s, spring->h_min, 0.01)};
    shape.hugs_bolt = true;
  } else if (f.kind == FastenerKind::kStandoff) {
    const auto standoff = cad::hex_standoff_size(d);
    if (!standoff || length <= 0) return shape;
    const auto [corners, flats] = hexagon(standoff->s, standoff->s);
    // Its length is the hexagon's; a male end's stud adds to the whole.
    // Ends not said: female-female or male-female, one length or the other.
    const double whole = length + standoff->stud;
    shape.dims = {f.male ? span(whole, whole, 0.01) : span(length, length, 0.01), corners, flats};
    if (!f.male && !f.female) shape.other_dims = {span(whole, whole, 0.01), corners, flats};
    shape.body_length = true;
  }
  return shape;
}

// The three extents largest first; false where two ranges overlap and the
// order of the part's sides is not known (a standoff as long as its
// hexagon is wide).
bool sort_sides(std::vector<NumberRange>& dims) {
  std::sort(dims.begin(), dims.end(), [](const NumberRange& a, const NumberRange& b) {
    return a.min + a.max > b.min + b.max;
  });
  auto apart = [](const NumberRange& a, const NumberRange& b) {
    return a.min > b.max || (a.min == b.min && a.max == b.max);
  };
  return apart(dims[0], dims[1]) && apart(dims[1], dims[2]);
}

}  // namespace

// A countersunk screw's head (ISO 10642): its whole length, read before as
// the largest extent, and the head's diameter twice (±1%), where the screw
// is longer than its head is wide.
void QueryReading::read_countersunk_head() {
  const auto thread = std::find_if(out.begin(), out.end(), [](const Condition& c) {
    return c.key == FilterKey::kThread && c.ranges.size() == 1;
  });
  if (thread == out.end()) return;
  const std::optional<double> dk = cad::countersunk_head_diameter(thread->ranges[0].min);
  const std::string because = thread->because;
  const auto whole = std::find_if(out.begin(), out.end(), [&](const Condition& c) {
    return c.key == FilterKey::kLargest && c.because == because;
  });
  if (!dk || whole == out.end() || whole->ranges[0].min <= 1.01 * *dk) return;
  whole->key = FilterKey::kDims;
  whole->ranges.push_back(span(*dk, *dk, 0.01));
  whole->ranges.push_back(span(*dk, *dk, 0.01));
}

// The shape a fastener's designation gives: "M8x40 hex bolt", "DIN 912
// M6x20", "M8 nut", "washer M10", "standoff M3x10": the part's extents,
// largest first (`dims`), from the tables of data/standards, ±1% (a
// hexagon's corners -5%). Where the standard is not said, the range spans
// the ISO and DIN forms of the size. The thread itself stays as
// read_threads read it; a countersunk screw's length was read before.
void QueryReading::read_fastener_shapes() {
  if (countersunk) {
    read_countersunk_head();
    return;
  }
  const Condition* thread = nullptr;
  int threads = 0;
  for (const Condition& c : out) {
    if (c.key != FilterKey::kThread && c.key != FilterKey::kClearance) continue;
    thread = &c;
    ++threads;
  }
  if (threads != 1) return;
  const NamedFastener f = named_fastener(t);
  const double d = thread->ranges[0].min;
  // The length said with the thread, 0 when none was.
  const double length = thread->ranges.size() == 2 && thread->ranges[1].min == thread->ranges[1].max
                            ? thread->ranges[1].min
                            : 0.0;
  const std::string because = thread->because;
  FastenerShape shape = f.kind == FastenerKind::kHexBolt || f.kind == FastenerKind::kSocketScrew
                            ? screw_shape(f, d, length)
                            : nut_washer_standoff_shape(f, d, length);
  for (const auto& [key, range] : shape.head) out.push_back(stated(key, range, because));
  if (shape.steps) out.push_back(stated(FilterKey::kSteps, *shape.steps, because));
  if (shape.dims.empty() || !sort_sides(shape.dims)) return;
  if (!shape.other_dims.empty() && !sort_sides(shape.other_dims)) return;
  // A male standoff's thread is not as long as the part: the shape says the length.
  if (shape.body_length)
    for (Condition& c : out)
      if (c.key == FilterKey::kThread && c.ranges.size() == 2) c.ranges.pop_back();
  // A spring washer's bore (d + 0.1) takes the bolt without clearance: the shape says it.
  if (shape.hugs_bolt)
    std::erase_if(out, [](const Condition& c) { return c.key == FilterKey::kClearance; });
  Condition sides = stated(FilterKey::kDims, shape.dims[0], because);
  sides.ranges.push_back(shape.dims[1]);
  sides.ranges.push_back(shape.dims[2]);
  sides.ranges.insert(sides.ranges.end(), shape.other_dims.begin(), shape.other_dims.end());
  out.push_back(std::move(sides));
}

// A washer's designation without an M: "ISO 7089 - 8 - 200 HV", "DIN 127 -
// B 14": the bolt's size after the standard (and a form letter).
void QueryReading::read_washer_designations() {
  for (const Condition& c : out)
    if (c.key == FilterKey::kClearance || c.key == FilterKey::kThread) return;
  for (size_t i = 0; i + 2 < t.size(); ++i) {
    if (used[i] || !is_washer_standard(standard_number(t, i + 1))) continue;
    size_t at = i + 2;
    if (one_of(t[at].text, {"A", "B"}) && at + 1 < t.size()) ++at;
    if (!t[at].number) continue;
    const double d = t[at].value;
    const bool known = t[i + 1].text == "127" ? cad::spring_washer_size(d).has_value()
                                              : cad::plain_washer_size(d).has_value();
    if (!known) continue;
    out.push_back(
        stated_thread(FilterKey::kClearance, d, std::nullopt, words_between(text, t, i, at + 1)));
    mark(i, at + 1);
    return;
  }
}

// Retaining rings (circlips) by the shaft or bore they fit: "DIN 471 5x0.6",
// "DIN 472 15", "5 mm external circlip", "bore circlip 15 mm": the ring's
// thickness s (±2%) as its smallest extent; a bore ring's free outside d3
// (±1%) as its largest, a shaft ring's between d1 and d1 + 2a (the outline
// of its lugs is the maker's).
void QueryReading::read_retaining_rings() {
  bool ring = false, shaft = false, bore = false;
  std::optional<std::pair<double, std::pair<size_t, size_t>>> size;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string& w = t[i].low;
    const bool named_ring =
        i + 1 < t.size() && t[i + 1].low == "ring" && one_of(w, {"retaining", "snap", "seeger"});
    ring = ring || one_of(w, {"circlip", "circlips", "seeger"}) || named_ring;
    shaft = shaft || one_of(w, {"shaft", "shafts", "external", "outer", "outside"});
    bore = bore || one_of(w, {"bore", "bores", "internal", "inner", "inside", "housing"});
    if (i >= 1 && t[i - 1].low == "din" && one_of(t[i].text, {"471", "472"})) {
      ring = true;
      (t[i].text == "471" ? shaft : bore) = true;
      if (i + 1 < t.size() && t[i + 1].number) {
        size_t end = i + 2;
        if (end + 1 < t.size() && t[end].low == "x" && t[end + 1].number) end += 2;
        size = {t[i + 1].value, {i - 1, end}};
      }
    }
  }
  if (!ring || (shaft && bore)) return;
  for (size_t i = 0; i < t.size() && !size; ++i)  // "5 mm circlip", "for a 15 mm bore"
    if (const auto length = length_at(t, i); length && !used[i])
      size = {length->first, {i, length->second}};
  if (!size) return;
  // A ring said to be neither for a shaft nor for a bore: the one table that
  // has the size ("5 mm circlip": DIN 472 starts at 8 mm).
  if (!shaft && !bore) {
    const bool on_shaft = cad::retaining_ring_size(true, size->first).has_value();
    if (on_shaft == cad::retaining_ring_size(false, size->first).has_value()) return;
    (on_shaft ? shaft : bore) = true;
  }
  const std::optional<cad::RetainingRingSize> r = cad::retaining_ring_size(shaft, size->first);
  if (!r) return;
  const auto [from, to] = size->second;
  const std::string because = words_between(text, t, from, to);
  out.push_back(stated(FilterKey::kSmallest, around(r->s, 0.02, 0.01), because));
  out.push_back(stated(
      FilterKey::kLargest,
      bore ? around(r->d3, 0.01, 0.05) : span(size->first, size->first + 2 * r->a, 0.01), because));
  mark(from, to);
  // "for a 5 mm shaft" names the shaft the ring fits, not a hole of the ring.
  if (to < t.size() && one_of(t[to].low, {"shaft", "shafts", "bore", "bores"})) mark(to, to + 1);
}
#endif

// "8x22x7", "14 x 25 x 12 mm" at token i, unread, the second number larger
// than the first: bore x outside x width in mm (a unit after the last
// number applies to all three; none: mm).
std::optional<QueryReading::BoreOutsideWidth> QueryReading::bore_outside_width_at(size_t i) const {
  if (i + 4 >= t.size() || used[i] || !t[i].number || t[i + 1].low != "x" || !t[i + 2].number ||
      t[i + 3].low != "x" || !t[i + 4].number || !(t[i + 2].value > t[i].value))
    return std::nullopt;
  const bool unit = i + 5 < t.size() && unit_factor(t[i + 5].low);
  const double to_mm = unit ? *unit_factor(t[i + 5].low) : 1.0;
  return BoreOutsideWidth{t[i].value * to_mm, t[i + 2].value * to_mm, t[i + 4].value * to_mm,
                          unit ? i + 6 : i + 5};
}

// "bearing 8x22x7": bore x outside x width, in mm.
void QueryReading::read_bearing_sizes() {
  if (!bearing) return;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::optional<BoreOutsideWidth> size = bore_outside_width_at(i);
    if (!size) continue;
    add_bearing(out, size->bore, size->outside, size->width, words_between(text, t, i, size->end));
    mark(i, size->end);
    return;
  }
  // "a ball bearing, 25 mm bore, 52 mm outside, 15 mm wide".
  std::optional<std::pair<double, size_t>> sizes[3];  // bore, outside, width
  size_t at[3] = {0, 0, 0};
  for (size_t i = 0; i < t.size(); ++i) {
    const auto length = length_at(t, i);
    if (used[i] || !length || length->second >= t.size()) continue;
    const std::string& word = t[length->second].low;
    const int which = is_inner_word(word)                        ? 0
                      : one_of(word, {"outside", "outer", "od"}) ? 1
                      : one_of(word, {"wide", "width", "thick"}) ? 2
                                                                 : -1;
    if (which < 0 || sizes[which]) continue;
    sizes[which] = length;
    at[which] = i;
  }
  if (!sizes[0] || !sizes[1] || !sizes[2] || !(sizes[1]->first > sizes[0]->first)) return;
  std::string because;
  for (int k = 0; k < 3; ++k) {
    because += (k ? ", " : "") + words_between(text, t, at[k], sizes[k]->second + 1);
    mark(at[k], sizes[k]->second + 1);
  }
  add_bearing(out, sizes[0]->first, sizes[1]->first, sizes[2]->first, because);
}

// Thread sizes: "M8", "M 8" (an upper-case M right before a number), with
// a length "M8x40", "M8 x 40".
void QueryReading::read_threads() {
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (used[i] || t[i].text != "M" || !t[i + 1].number) continue;
    if (!t[i].glued_to_next && i + 2 < t.size() && unit_factor(t[i + 2].low)) continue;  // "M 8 mm"
    const double d = t[i + 1].value;
    size_t end = i + 2;
    std::optional<double> length;
    if (end + 1 < t.size() && t[end].low == "x" && t[end + 1].number) {
      length = t[end + 1].value;
      end += 2;
      if (end < t.size() && t[end].low == "mm") ++end;
    }
    // "M8 holes", "an M8 bracket": holes for the thread, tapped to clearance;
    // "M8 nut", "M8 bolt": the thread of the part itself.
    bool holes = false;
    for (size_t k = end; k < t.size() && k < end + 2; ++k)
      holes = holes || is_hole_word(t[k].low) || one_of(t[k].low, {"tapped", "threaded"});
    const std::string because = words_between(text, t, i, end);
    if ((holes || !fastener) && !washer && !length) {
      out.push_back(stated(FilterKey::kHoleDiameter, {0.8 * d, 1.25 * d, false, false}, because));
    } else if (washer && !length) {
      out.push_back(stated_thread(FilterKey::kClearance, d, std::nullopt, because));
    } else {
      out.push_back(stated_thread(FilterKey::kThread, d, length, because));
    }
    mark(i, end);
  }
}

// The thread a number of millimetres names: "a hex head bolt, 14 mm thread",
// "a nut for an 5 mm bolt", "a hexagon bolt for 14 mm holes" (the holes it
// passes through); read as "M14" would be (read_threads).
void QueryReading::read_threads_in_words() {
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i]) continue;
    const auto length = length_at(t, i);
    if (!length || length->second >= t.size()) continue;
    const std::string& next = t[length->second].low;
    // "k = 9 mm, thread to the head": a comma ends the length's phrase.
    if (punctuation_between(text, t, length->second - 1, length->second)) continue;
    const bool said = one_of(next, {"thread", "threads", "threaded"});
    const size_t before = i >= 1 && one_of(t[i - 1].low, {"a", "an"}) ? i - 1 : i;
    const bool for_a =
        before >= 1 && t[before - 1].low == "for" &&
        (one_of(next, {"bolt", "bolts", "screw", "screws"}) || (fastener && is_hole_word(next)));
    if (!said && !for_a) continue;
    // The part is a fastener when a fastener word names it, not the bolts
    // that its holes are for ("a plate with holes for 8 mm bolts").
    bool part_is_fastener = false;
    for (size_t k = 0; k < t.size(); ++k)
      if (k != length->second && is_fastener_word(t[k].low)) part_is_fastener = true;
    const double d = length->first;
    const std::string because = words_between(text, t, i, length->second + 1);
    if (washer) {
      out.push_back(stated_thread(FilterKey::kClearance, d, std::nullopt, because));
    } else if (!part_is_fastener) {  // holes for the bolts
      out.push_back(stated(FilterKey::kHoleDiameter, {0.8 * d, 1.25 * d, false, false}, because));
    } else {
      out.push_back(stated_thread(FilterKey::kThread, d, std::nullopt, because));
    }
    mark(i, length->second + 1);
  }
}

// "for a 10 mm shaft": the bore a collar, bearing or hub takes, ±1%.
void QueryReading::read_shaft_bores() {
  for (size_t i = 1; i < t.size(); ++i) {
    if (used[i]) continue;
    const auto length = length_at(t, i);
    if (!length || length->second >= t.size() ||
        !one_of(t[length->second].low, {"shaft", "shafts", "axle"}))
      continue;
    const size_t before = one_of(t[i - 1].low, {"a", "an"}) ? i - 1 : i;
    if (before < 1 || t[before - 1].low != "for") continue;
    out.push_back(stated(FilterKey::kHoleDiameter, around(length->first, 0.01, 0.05),
                         words_between(text, t, i, length->second + 1)));
    mark(i, length->second + 1);
  }
}

// Shaft collars (DIN 705) by their bore: "25 mm shaft collar", "set collar
// 14", "shaft collar 14 x 25 x 12" (bore x outside x width): the bore as a
// hole ±1% (at least 0.05 mm), and with the other two the extents
// outside x outside x width ±1%. Only where the part is a collar: "shaft",
// "set", "stop" or "clamp" collar, or "collar" first in the query.
void QueryReading::read_collar_sizes() {
  bool collar = false;
  for (size_t i = 0; i < t.size(); ++i)
    collar = collar || (one_of(t[i].low, {"collar", "collars"}) &&
                        (i == 0 || one_of(t[i - 1].low, {"shaft", "set", "stop", "clamp"})));
  if (!collar) return;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::optional<BoreOutsideWidth> size = bore_outside_width_at(i);
    if (!size) continue;
    const double outside = size->outside, width = size->width;
    const std::string because = words_between(text, t, i, size->end);
    out.push_back(stated(FilterKey::kHoleDiameter, around(size->bore, 0.01, 0.05), because));
    Condition dims = stated(FilterKey::kDims, around(std::max(outside, width), 0.01, 0.1), because);
    dims.ranges.push_back(around(outside, 0.01, 0.1));
    dims.ranges.push_back(around(std::min(outside, width), 0.01, 0.1));
    out.push_back(std::move(dims));
    mark(i, size->end);
    return;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i] || !t[i].number) continue;
    const auto length = length_at(t, i);
    // "set collar 14": a bare number right after the collar is its bore in mm.
    const bool bare = !length && i > 0 && one_of(t[i - 1].low, {"collar", "collars"});
    if (!length && !bare) continue;
    const size_t end = length ? length->second : i + 1;  // past the unit
    out.push_back(stated(FilterKey::kHoleDiameter,
                         around(length ? length->first : t[i].value, 0.01, 0.05),
                         words_between(text, t, i, end)));
    mark(i, end);
    return;
  }
}

// A thread's length said apart: "M8 bolt 40 mm long", "M8 screw, length 40
// mm", "M16 cap screw, 110 mm".
void QueryReading::read_thread_length() {
  const auto thread = std::find_if(out.begin(), out.end(), [](const Condition& c) {
    return c.key == FilterKey::kThread && c.ranges.size() == 1;
  });
  if (thread != out.end() && std::count_if(out.begin(), out.end(), [](const Condition& c) {
                               return c.key == FilterKey::kThread;
                             }) == 1) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (used[i]) continue;
      const auto length = length_at(t, i);
      if (!length) continue;
      const bool after = length->second < t.size() && is_length_word(t[length->second].low);
      const bool before = i > 0 && is_length_word(t[i - 1].low);
      // "M16 cap screw, 110 mm", "M4 hex spacer 25mm": the length follows the part's name.
      const bool named = i > 0 && is_fastener_word(t[i - 1].low);
      if (!after && !before && !named) continue;
      const size_t from = before ? i - 1 : i, to = after ? length->second + 1 : length->second;
      thread->ranges.push_back({length->first, length->first, false, false});
      thread->because += ", " + words_between(text, t, from, to);
      mark(from, to);
      break;
    }
  }
}

// A countersunk screw's length is its whole length: "M5x12 countersunk
// screw" is a thread of M5 and a largest extent of 12 mm (±2%), where
// other screws measure the threaded shank.
void QueryReading::read_countersunk_length() {
  if (!countersunk) return;
  for (Condition& c : out) {
    if (c.key != FilterKey::kThread || c.ranges.size() != 2) continue;
    const double length = c.ranges[1].min;
    c.ranges.pop_back();
    Condition whole = stated(FilterKey::kLargest, around(length, 0.02, 0.2), c.because);
    out.push_back(std::move(whole));
    return;  // `out` may have moved: one countersunk screw a query
  }
}

// Dowels and pins by diameter x length: "10x24 dowel", "ISO 8734 3x30",
// "dowel pin 6 x 20 mm": the part's extents are length x diameter x
// diameter, ±1%.
void QueryReading::read_pin_sizes() {
  if (!pin) return;
  for (size_t i = 0; i + 2 < t.size(); ++i) {
    // "10 m6 x 50": the diameter's fit said between.
    const size_t by = is_fit_class(t, i + 1) ? i + 3 : i + 1;
    if (used[i] || !t[i].number || by + 1 >= t.size() || t[by].low != "x" || !t[by + 1].number)
      continue;
    if (i > 0 && t[i - 1].text == "M") continue;  // a thread, read above
    const double d = t[i].value, length = t[by + 1].value;
    if (!(length > d) || d <= 0) continue;
    size_t end = by + 2;
    double to_mm = 1;
    if (is_fit_class(t, end))
      end += 2;  // "10x75 m6"
    else if (end < t.size() && unit_factor(t[end].low))
      to_mm = *unit_factor(t[end++].low);
    Condition dims =
        stated(FilterKey::kDims, around(length * to_mm, 0.01, 0.1), words_between(text, t, i, end));
    dims.ranges.push_back(around(d * to_mm, 0.01, 0.1));
    dims.ranges.push_back(around(d * to_mm, 0.01, 0.1));
    out.push_back(std::move(dims));
    mark(i, end);
    return;
  }
  // "a hardened steel pin 10 mm thick, 55 mm long".
  std::optional<std::pair<double, size_t>> thick, along;
  size_t thick_at = 0, along_at = 0;
  for (size_t i = 0; i + 2 < t.size(); ++i) {
    const auto length = length_at(t, i);
    if (used[i] || !length || length->second >= t.size()) continue;
    const std::string& word = t[length->second].low;
    // "3 mm dowel pin 22 mm long": the size before the pin's name is its diameter.
    if ((one_of(word, {"thick", "diameter", "dia"}) || is_pin_word(word)) && !thick) {
      thick = length;
      thick_at = i;
    } else if (is_length_word(word) && !along) {
      along = length;
      along_at = i;
    }
  }
  if (!thick || !along || !(along->first > thick->first)) return;
  Condition dims = stated(FilterKey::kDims, around(along->first, 0.01, 0.1),
                          words_between(text, t, thick_at, thick->second + 1) + ", " +
                              words_between(text, t, along_at, along->second + 1));
  dims.ranges.push_back(around(thick->first, 0.01, 0.1));
  dims.ranges.push_back(around(thick->first, 0.01, 0.1));
  out.push_back(std::move(dims));
  mark(thick_at, thick->second + 1);
  mark(along_at, along->second + 1);
}

}  // namespace cadclip::index::detail
