// Standard screws and pins: hexagon head bolts and screws (ISO 4014, ISO 4017,
// DIN 931, DIN 933), socket head cap screws (ISO 4762), countersunk socket
// screws (ISO 10642) and dowel pins (ISO 8734), from data/standards/. Axis z,
// the tip at z = 0, the head on top. Threads are plain cylinders at the minor diameter d3 = d
// - 1.22687 P (ISO 724), so a partly threaded bolt keeps its shank at the nominal d.
#include <cmath>

#include "cadclip/cad/standard_tables.h"
#include "cadclip/core/format.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

constexpr const char* kHexTable = "hex_bolts.csv";
constexpr const char* kSocketTable = "socket_head_cap_screws.csv";
constexpr const char* kPinTable = "dowel_pins.csv";
constexpr const char* kCountersunkTable = "countersunk_socket_screws.csv";
const double kTan30 = std::tan(30.0 * 3.14159265358979323846 / 180);

double minor_diameter(double d, double pitch) { return d - 1.22687 * pitch; }

// The tip: a 45 degree chamfer down to just below the minor diameter.
double tip_chamfer(double pitch) { return 0.5 * pitch; }

std::string size_text(double value) { return num_text(value); }

// ISO 4014 and DIN 931: thread length b for a bolt of length l.
double thread_length(const cad::StandardTable& t, size_t row, double l) {
  return l <= 125   ? t.number(row, "b_125")
         : l <= 200 ? t.number(row, "b_200")
                    : t.number(row, "b_over");
}

bool din_differs(const cad::StandardTable& t, size_t row) {
  return t.number(row, "s_din") != t.number(row, "s") ||
         t.number(row, "k_din") != t.number(row, "k");
}

}  // namespace

std::vector<StandardItem> hex_bolt_catalog() {
  const cad::StandardTable& t = cad::standard_table(kHexTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row) {
    const std::string size = t.cell(row, "size");
    const double d = t.number(row, "d");
    // Full thread (ISO 4017, DIN 933) and partly threaded (ISO 4014, DIN 931); the
    // DIN part is its own solid only where its head differs from the ISO one.
    struct Variant {
      const char* standard;
      const char* range;  // l_min/l_max column suffix
      bool din;
    };
    for (const Variant& v : {Variant{"ISO 4017", "4017", false}, Variant{"ISO 4014", "4014", false},
                             Variant{"DIN 933", "4017", true}, Variant{"DIN 931", "4014", true}}) {
      if (v.din && !din_differs(t, row)) continue;
      const bool partial = std::string(v.range) == "4014";
      for (double l : standard_lengths(t.number(row, std::string("l") + v.range + "_min"),
                                       t.number(row, std::string("l") + v.range + "_max"))) {
        if (partial && l - thread_length(t, row, l) < 0.5 * d) continue;
        items.push_back({"hex_bolt", v.standard, kHexTable, row, l, "",
                         std::string(v.standard) + " " + size + "x" + size_text(l)});
      }
    }
  }
  return items;
}

StandardBuilt build_hex_bolt(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kHexTable);
  const size_t row = item.row;
  const bool din = item.standard.starts_with("DIN");
  const bool partial = item.standard == "ISO 4014" || item.standard == "DIN 931";
  const double d = t.number(row, "d"), pitch = t.number(row, "P");
  const double s = t.number(row, din ? "s_din" : "s"), k = t.number(row, din ? "k_din" : "k");
  const double l = item.length, r3 = minor_diameter(d, pitch) / 2, r = d / 2;
  const double b = partial ? thread_length(t, row, l) : l;
  // The shank reaches half into the head so that the fuse overlaps instead of touching.
  std::vector<P2> profile = {{0, 0}, {r3, 0, tip_chamfer(pitch)}};
  if (partial) profile.insert(profile.end(), {{r3, b}, {r, b}});
  profile.insert(profile.end(), {{partial ? r : r3, l + k / 2}, {0, l + k / 2}});
  const TopoDS_Shape shank = turned_z(profile);
  // Head: the hexagon, its top corners turned off at 30 degrees from the across-flats circle.
  const double e = 2 * s / std::sqrt(3.0), reach = e / 2 + 0.5;
  const TopoDS_Shape chamfer = turned_z(
      {{0, l}, {reach, l}, {reach, l + k - (reach - s / 2) * kTan30}, {s / 2, l + k}, {0, l + k}});
  const TopoDS_Shape head = common(hex_prism(s, l, l + k), chamfer);
  StandardBuilt built;
  built.shape = fuse(head, {shank});
  built.extent[0] = e, built.extent[1] = s, built.extent[2] = l + k;
  built.dims = {{"d", d}, {"P", pitch}, {"s", s}, {"k", k},
                {"e", e}, {"l", l},     {"b", b}, {"d3", 2 * r3}};
  return built;
}

std::vector<StandardItem> socket_screw_catalog() {
  const cad::StandardTable& t = cad::standard_table(kSocketTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row)
    for (double l : standard_lengths(t.number(row, "l_min"), t.number(row, "l_max")))
      items.push_back({"socket_head_cap_screw", "ISO 4762", kSocketTable, row, l, "",
                       "ISO 4762 " + t.cell(row, "size") + "x" + size_text(l)});
  return items;
}

StandardBuilt build_socket_screw(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kSocketTable);
  const size_t row = item.row;
  const double d = t.number(row, "d"), pitch = t.number(row, "P"), dk = t.number(row, "dk");
  const double k = t.number(row, "k"), s = t.number(row, "s"), depth = t.number(row, "t");
  const double l = item.length, r3 = minor_diameter(d, pitch) / 2, r = d / 2;
  // Fully threaded up to the reference thread length b, then the plain shank.
  const double b = std::min(l, t.number(row, "b"));
  // The head's top edge is chamfered (ISO 4762 leaves its form open): 45 degrees, 0.1 k.
  std::vector<P2> profile = {{0, 0}, {r3, 0, tip_chamfer(pitch)}, {r3, b}};
  if (b < l) profile.insert(profile.end(), {{r, b}, {r, l}});
  profile.insert(profile.end(), {{dk / 2, l}, {dk / 2, l + k, 0.1 * k}, {0, l + k}});
  StandardBuilt built;
  built.shape = cut(turned_z(profile), {hex_prism(s, l + k - depth, l + k + 1)});
  built.extent[0] = dk, built.extent[1] = dk, built.extent[2] = l + k;
  built.dims = {{"d", d},     {"P", pitch}, {"dk", dk}, {"k", k},      {"s", s},
                {"t", depth}, {"l", l},     {"b", b},   {"d3", 2 * r3}};
  return built;
}

std::vector<StandardItem> countersunk_screw_catalog() {
  const cad::StandardTable& t = cad::standard_table(kCountersunkTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row)
    for (double l : standard_lengths(t.number(row, "l_min"), t.number(row, "l_max")))
      items.push_back({"countersunk_socket_screw", "ISO 10642", kCountersunkTable, row, l, "",
                       "ISO 10642 " + t.cell(row, "size") + "x" + size_text(l)});
  return items;
}

StandardBuilt build_countersunk_screw(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kCountersunkTable);
  const size_t row = item.row;
  const double d = t.number(row, "d"), pitch = t.number(row, "P"), dk = t.number(row, "dk");
  const double k = t.number(row, "k"), s = t.number(row, "s"), depth = t.number(row, "t");
  // ISO 10642's l is the overall length: the head's top face is at z = l.
  const double l = item.length, r3 = minor_diameter(d, pitch) / 2, r = d / 2;
  if (l - k <= tip_chamfer(pitch))
    throw Reject(format("{} is shorter than its head", item.designation));
  // Threaded up to b (or to the head on short screws), the plain shank at d up to the head;
  // the head is the 90 degree cone from d at l - k to dk at the top, its edge sharp (dk is
  // the standard's theoretical diameter of that sharp edge).
  const double b = std::min(l - k, t.number(row, "b"));
  std::vector<P2> profile = {{0, 0}, {r3, 0, tip_chamfer(pitch)}, {r3, b}};
  if (b < l - k) profile.push_back({r, b});
  profile.insert(profile.end(), {{r, l - k}, {dk / 2, l}, {0, l}});
  StandardBuilt built;
  built.shape = cut(turned_z(profile), {hex_prism(s, l - depth, l + 1)});
  built.extent[0] = dk, built.extent[1] = dk, built.extent[2] = l;
  built.dims = {{"d", d},     {"P", pitch}, {"dk", dk}, {"k", k},      {"s", s},
                {"t", depth}, {"l", l},     {"b", b},   {"d3", 2 * r3}};
  return built;
}

std::vector<StandardItem> dowel_pin_catalog() {
  const cad::StandardTable& t = cad::standard_table(kPinTable);
  std::vector<StandardItem> items;
  // ISO 8734's length series runs in finer steps than the screws' below 30 mm.
  const std::vector<double> series = {5,  6,  8,  10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32,
                                      35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100};
  for (size_t row = 0; row < t.rows.size(); ++row)
    for (double l : series)
      if (l >= t.number(row, "l_min") && l <= t.number(row, "l_max"))
        items.push_back({"dowel_pin", "ISO 8734", kPinTable, row, l, "",
                         "ISO 8734 " + t.cell(row, "size") + "x" + size_text(l)});
  return items;
}

StandardBuilt build_dowel_pin(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kPinTable);
  const double d = t.number(item.row, "d"), c = t.number(item.row, "c"), l = item.length;
  StandardBuilt built;
  // Both ends chamfered 45 degrees by c (the standard draws one end rounded; its radius is open).
  built.shape = turned_z({{0, 0}, {d / 2, 0, c}, {d / 2, l, c}, {0, l}});
  built.extent[0] = d, built.extent[1] = d, built.extent[2] = l;
  built.dims = {{"d", d}, {"c", c}, {"l", l}};
  return built;
}

}  // namespace cadclip::synth
