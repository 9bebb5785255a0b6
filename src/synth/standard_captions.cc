// Captions of standard parts, written as engineers write them: the plain
// description (abstract), short forms (beginner: "M8x40 hex bolt", "M8 bolt
// 40 mm long"), designations with the old and new standard numbers
// (intermediate: "DIN 933 M8x40"), the full designation of the standard with
// its table dimensions (expert: "Hexagon head screw ISO 4017 - M8 x 40 - 8.8")
// and what a file would be called (name: "608ZZ", "ISO4017_M8x40").
#include <algorithm>
#include <array>
#include <cmath>

#include "cadclip/cad/standard_tables.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

// One way to write the part, and the fact keys it states.
struct Say {
  std::string text;
  std::vector<std::string> keys;
};
using Levels = std::array<std::vector<Say>, 5>;  // kCaptionLevels order
enum { kAbstract, kBeginner, kIntermediate, kExpert, kName };

std::string n(double value) { return dim_text(value); }
std::string n(const nlohmann::json& value) { return dim_text(value.get<double>()); }
std::string no_space(std::string text) {
  std::erase(text, ' ');
  return text;
}

// ISO 4014/4017 (and the DIN standards they replaced): bolts and screws with a hexagon head.
Levels hex_bolt(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const bool partial = it.standard == "ISO 4014" || it.standard == "DIN 931";
  const bool din = it.standard.starts_with("DIN");
  const std::string iso = partial ? "ISO 4014" : "ISO 4017", old = partial ? "DIN 931" : "DIN 933";
  const bool same = t.number(it.row, "s_din") == t.number(it.row, "s") &&
                    t.number(it.row, "k_din") == t.number(it.row, "k");
  const std::string size = t.cell(it.row, "size"), l = n(it.length), d = n(b.dims["d"]);
  const std::string sl = size + "x" + l, s = n(b.dims["s"]), k = n(b.dims["k"]);
  const std::string noun = partial ? "Hexagon head bolt" : "Hexagon head screw";
  const std::string thread = partial ? "threaded part of the way" : "threaded up to the head";
  facts["old_standard"] = din ? it.standard : old;
  facts["new_standard"] = iso;
  const std::string other = din ? iso : old;
  std::string history =
      din ? it.standard + " is withdrawn and replaced by " + iso +
                (same ? ""
                      : ", whose " + size + " has " + n(t.number(it.row, "s")) + " mm across flats")
      : same ? "the same part as the old " + old
             : "replaces " + old;
  Levels L;
  L[kAbstract] = {
      {"a hex head bolt, " + d + " mm thread, " + l + " mm long", {"d", "l"}},
      {"a bolt with a hexagon head, " + d + " mm thread, " + l + " mm long, " + thread, {"d", "l"}},
      {"a " + l + " mm long hexagon bolt for " + d + " mm holes", {"d", "l"}}};
  L[kBeginner] = {{sl + " hex bolt", {"size", "l"}},
                  {size + " bolt " + l + " mm long", {"size", "l"}},
                  {"hex head bolt " + size + " x " + l, {"size", "l"}},
                  {"an " + size + " hex bolt, " + l + " mm", {"size", "l"}}};
  L[kIntermediate] = {
      {it.standard + " " + sl, {"standard", "size", "l"}},
      {it.standard + " " + sl + " " + (partial ? "hexagon head bolt" : "hexagon head screw"),
       {"standard", "size", "l"}},
      {std::string(partial ? "hex bolt " : "hex cap screw ") + size + " x " + l + " to " +
           it.standard + (same || din ? " (" + other + ")" : ""),
       {"standard", "size", "l"}},
      {std::string(partial ? "partly" : "fully") + " threaded hex " +
           (partial ? "bolt " : "screw ") + sl + ", " + s + " mm across flats",
       {"size", "l", "s"}}};
  if (same && !din) L[kIntermediate].push_back({old + " " + sl, {"old_standard", "size", "l"}});
  L[kExpert] = {
      {noun + " " + it.standard + " - " + size + " x " + l + " - 8.8", {"standard", "size", "l"}},
      {noun + " " + it.standard + " - " + size + " x " + l + " - 8.8 (" + history + "): " + s +
           " mm across flats, head height " + k + " mm, thread pitch " + n(b.dims["P"]) + " mm",
       {"standard", "size", "l", "s", "k", "P"}},
      {noun + " " + it.standard + " " + sl + ", s = " + s + " mm, k = " + k + " mm" +
           (partial ? ", thread length b = " + n(b.dims["b"]) + " mm" : ", thread to the head"),
       {"standard", "size", "l", "s", "k"}}};
  L[kName] = {{sl + " hex bolt", {"size", "l"}},
              {it.standard + " " + sl, {"standard", "size", "l"}},
              {no_space(it.standard) + "_" + sl, {"standard", "size", "l"}},
              {"hex screw " + sl, {"size", "l"}}};
  if (same && !din) L[kName].push_back({old + " " + sl, {"old_standard", "size", "l"}});
  return L;
}

// ISO 4762 (DIN 912 before it): socket head cap screws.
Levels socket_screw(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const std::string size = t.cell(it.row, "size"), l = n(it.length), d = n(b.dims["d"]);
  const std::string sl = size + "x" + l, s = n(b.dims["s"]);
  facts["old_standard"] = "DIN 912";
  facts["new_standard"] = "ISO 4762";
  Levels L;
  L[kAbstract] = {
      {"a socket head cap screw, " + d + " mm thread, " + l + " mm long", {"d", "l"}},
      {"a screw with a round head and a hex socket, " + d + " mm thread and " + l + " mm long",
       {"d", "l"}},
      {"a cylinder head screw for a " + s + " mm hex key, " + l + " mm long", {"s", "l"}}};
  L[kBeginner] = {{sl + " socket head screw", {"size", "l"}},
                  {size + " allen bolt " + l + " mm long", {"size", "l"}},
                  {size + " cap screw, " + l + " mm", {"size", "l"}},
                  {sl + " SHCS", {"size", "l"}}};
  L[kIntermediate] = {{"ISO 4762 " + sl, {"standard", "size", "l"}},
                      {"DIN 912 " + sl, {"old_standard", "size", "l"}},
                      {"hex socket head cap screw " + size + " x " + l + " (ISO 4762 / DIN 912)",
                       {"standard", "old_standard", "size", "l"}},
                      {"socket cap screw " + sl + ", " + s + " mm hex key", {"size", "l", "s"}}};
  L[kExpert] = {{"Hexagon socket head cap screw ISO 4762 - " + size + " x " + l + " - 12.9",
                 {"standard", "size", "l"}},
                {"Hexagon socket head cap screw ISO 4762 - " + size + " x " + l +
                     " - 8.8 (formerly DIN 912): head " + n(b.dims["dk"]) + " mm across and " +
                     n(b.dims["k"]) + " mm high, " + s + " mm hexagon socket " + n(b.dims["t"]) +
                     " mm deep, thread pitch " + n(b.dims["P"]) + " mm",
                 {"standard", "old_standard", "size", "l", "dk", "k", "s", "t", "P"}}};
  L[kName] = {{sl + " socket head cap screw", {"size", "l"}},
              {"DIN 912 " + sl, {"old_standard", "size", "l"}},
              {"ISO4762_" + sl, {"standard", "size", "l"}},
              {"SHCS " + sl, {"size", "l"}},
              {sl + " allen bolt", {"size", "l"}}};
  return L;
}

// ISO 10642 (DIN 7991 before it, with a smaller head): countersunk socket screws, whose
// nominal length is the overall length, head included.
Levels countersunk_screw(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const std::string size = t.cell(it.row, "size"), l = n(it.length), d = n(b.dims["d"]);
  const std::string sl = size + "x" + l, s = n(b.dims["s"]), dk = n(b.dims["dk"]);
  facts["old_standard"] = "DIN 7991";
  facts["new_standard"] = "ISO 10642";
  Levels L;
  L[kAbstract] = {
      {"a countersunk screw with a hex socket, " + d + " mm thread, " + l + " mm long overall",
       {"d", "l"}},
      {"a flat head screw that sits flush in a 90 degree countersink, " + d + " mm thread, " + l +
           " mm long including the head",
       {"d", "l"}},
      {"a cone head screw " + dk + " mm across the head for a " + s + " mm hex key, " + l +
           " mm long",
       {"dk", "s", "l"}}};
  L[kBeginner] = {{sl + " countersunk screw", {"size", "l"}},
                  {size + " flat head allen screw " + l + " mm long", {"size", "l"}},
                  {size + " x " + l + " countersunk bolt", {"size", "l"}},
                  {sl + " CSK socket screw", {"size", "l"}}};
  L[kIntermediate] = {
      {"ISO 10642 " + sl, {"standard", "size", "l"}},
      {"ISO 10642 " + sl + " countersunk socket screw", {"standard", "size", "l"}},
      {"countersunk head socket screw " + size + " x " + l + " to ISO 10642 (replaces DIN 7991)",
       {"standard", "old_standard", "size", "l"}},
      {"flat head socket cap screw " + sl + ", " + s + " mm hex key, 90 degree head",
       {"size", "l", "s"}}};
  L[kExpert] = {{"Hexagon socket countersunk head screw ISO 10642 - " + size + " x " + l + " - 8.8",
                 {"standard", "size", "l"}},
                {"Hexagon socket countersunk head screw ISO 10642 - " + size + " x " + l +
                     " - 10.9 (replaces DIN 7991, whose head is smaller): 90 degree head " + dk +
                     " mm across and " + n(b.dims["k"]) + " mm high, " + s + " mm hexagon socket " +
                     n(b.dims["t"]) + " mm deep, l = " + l + " mm overall including the head",
                 {"standard", "old_standard", "size", "l", "dk", "k", "s", "t"}}};
  L[kName] = {{sl + " countersunk screw", {"size", "l"}},
              {"ISO10642_" + sl, {"standard", "size", "l"}},
              {"ISO 10642 " + sl, {"standard", "size", "l"}},
              {"CSK " + sl, {"size", "l"}},
              {"flat head " + sl, {"size", "l"}}};
  return L;
}

// ISO 4032, ISO 4035, ISO 7040 and DIN 934: hexagon nuts.
Levels hex_nut(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const std::string size = t.cell(it.row, "size"), d = n(b.dims["D"]), s = n(b.dims["s"]);
  const std::string& std_ = it.standard;
  const bool thin = std_ == "ISO 4035", nyloc = std_ == "ISO 7040", din = std_ == "DIN 934";
  const std::string kind = thin ? "thin nut" : nyloc ? "nyloc nut" : "hex nut";
  const std::string noun = thin    ? "Hexagon thin nut"
                           : nyloc ? "Prevailing torque hexagon nut with non-metallic insert"
                                   : "Hexagon nut";
  const std::string old = thin ? "DIN 439" : nyloc ? "DIN 982" : "DIN 934";
  const std::string height = n(nyloc ? b.dims["h"] : b.dims["m"]);
  facts["old_standard"] = old;
  facts["new_standard"] = din ? "ISO 4032" : std_;
  const std::string history = din ? "withdrawn, replaced by ISO 4032" : "replaces " + old;
  Levels L;
  L[kAbstract] = {
      {"a " +
           std::string(thin    ? "thin hexagon nut"
                       : nyloc ? "self-locking hexagon nut"
                               : "hexagon nut") +
           " for an " + d + " mm bolt",
       {"d"}},
      {"a hex nut, " + d + " mm thread, " + s + " mm across flats and " + height + " mm high",
       {"d", "s", nyloc ? "h" : "m"}}};
  if (nyloc) L[kAbstract].push_back({"a lock nut with a nylon ring, " + d + " mm thread", {"d"}});
  L[kBeginner] = {{size + " " + kind, {"size"}},
                  {"nut " + size, {"size"}},
                  {size + " nut, " + s + " mm spanner", {"size", "s"}}};
  if (thin) L[kBeginner].push_back({size + " jam nut", {"size"}});
  if (nyloc) L[kBeginner].push_back({size + " lock nut", {"size"}});
  L[kIntermediate] = {{std_ + " " + size, {"standard", "size"}},
                      {std_ + " " + size + " " + kind, {"standard", "size"}},
                      {kind + " " + size + " to " + std_ + " (" + history + ")",
                       {"standard", "old_standard", "size"}}};
  L[kExpert] = {
      {noun + " " + std_ + " - " + size + " - 8", {"standard", "size"}},
      {noun + " " + std_ + " - " + size + " - 8 (" + history + "): " + s + " mm across flats, " +
           height + " mm high, thread pitch " + n(b.dims["P"]) + " mm",
       {"standard", "old_standard", "size", "s", nyloc ? "h" : "m", "P"}}};
  L[kName] = {{size + " " + kind, {"size"}},
              {std_ + " " + size, {"standard", "size"}},
              {no_space(std_) + "_" + size, {"standard", "size"}},
              {"nut " + size, {"size"}}};
  return L;
}

// ISO 7089, ISO 7090 and ISO 7093: plain washers.
Levels plain_washer(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const std::string size = t.cell(it.row, "size"), nominal = n(t.number(it.row, "d"));
  const std::string d1 = n(b.dims["d1"]), d2 = n(b.dims["d2"]), h = n(b.dims["h"]);
  const std::string& std_ = it.standard;
  const bool large = std_ == "ISO 7093", chamfered = std_ == "ISO 7090";
  const std::string old = large ? "DIN 9021" : chamfered ? "DIN 125-B" : "DIN 125-A";
  const std::string kind = large ? "large washer" : chamfered ? "chamfered washer" : "flat washer";
  facts["old_standard"] = old;
  facts["new_standard"] = std_;
  Levels L;
  L[kAbstract] = {
      {"a flat washer for an " + nominal + " mm bolt, " + d2 + " mm across and " + h + " mm thick",
       {"d", "d2", "h"}},
      {"a thin ring with a " + d1 + " mm hole, " + d2 + " mm outside, " + h + " mm thick",
       {"d1", "d2", "h"}}};
  L[kBeginner] = {{"washer " + size, {"size"}},
                  {size + " " + kind, {"size"}},
                  {d1 + " x " + d2 + " x " + h + " washer", {"d1", "d2", "h"}}};
  if (large) L[kBeginner].push_back({size + " penny washer", {"size"}});
  L[kIntermediate] = {{std_ + " " + size, {"standard", "size"}},
                      {old + " " + size, {"old_standard", "size"}},
                      {"plain washer " + size + " to " + std_ + " (replaces " + old + ")",
                       {"standard", "old_standard", "size"}}};
  const std::string noun = large       ? "Plain washer, large series"
                           : chamfered ? "Plain washer, chamfered, normal series"
                                       : "Plain washer, normal series";
  L[kExpert] = {{"Washer " + std_ + " - " + nominal + " - 200 HV", {"standard", "d"}},
                {noun + " " + std_ + " - " + nominal + " - 200 HV (replaces " + old +
                     "): d1 = " + d1 + " mm, d2 = " + d2 + " mm, h = " + h + " mm",
                 {"standard", "old_standard", "d", "d1", "d2", "h"}}};
  L[kName] = {{"washer " + size, {"size"}},
              {size + " " + kind, {"size"}},
              {std_ + " " + nominal, {"standard", "d"}},
              {no_space(std_) + "_" + size, {"standard", "size"}}};
  return L;
}

// ISO 15: deep groove ball bearings, open, ZZ or 2RS.
Levels ball_bearing(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const std::string base = t.cell(it.row, "designation"), des = it.designation;
  const std::string d = n(b.dims["d"]), D = n(b.dims["D"]), B = n(b.dims["B"]);
  const std::string dims = d + "x" + D + "x" + B;
  const std::string& v = it.variant;
  const std::string closure = v == "ZZ"    ? "with metal shields on both sides"
                              : v == "2RS" ? "with rubber seals on both sides"
                                           : "open on both sides";
  const std::string tag = v == "ZZ" ? "shielded" : v == "2RS" ? "sealed" : "open";
  const std::string alt = v == "ZZ" ? base + "-2Z" : v == "2RS" ? base + " 2RS" : base + " open";
  facts["variant"] = v.empty() ? "open" : v;
  Levels L;
  L[kAbstract] = {{"a ball bearing, " + d + " mm bore, " + D + " mm outside, " + B + " mm wide",
                   {"d", "D", "B"}},
                  {"a ball bearing " + closure + " for a " + d + " mm shaft", {"d", "variant"}},
                  {"a " + tag + " bearing ring " + D + " mm across with a " + d + " mm hole",
                   {"d", "D", "variant"}}};
  L[kBeginner] = {{des + " bearing", {"designation"}},
                  {"bearing " + dims, {"d", "D", "B"}},
                  {"a " + des + " ball bearing", {"designation"}},
                  {tag + " ball bearing, " + d + " mm bore", {"d", "variant"}}};
  L[kIntermediate] = {{"deep groove ball bearing " + des, {"designation"}},
                      {des + " deep groove ball bearing, " + d + " x " + D + " x " + B + " mm",
                       {"designation", "d", "D", "B"}},
                      {t.cell(it.row, "series") + " series ball bearing " + alt + ", " + tag,
                       {"designation", "variant"}}};
  L[kExpert] = {{"Deep groove ball bearing " + des + " (ISO 15): d = " + d + " mm, D = " + D +
                     " mm, B = " + B + " mm, r = " + n(b.dims["r"]) + " mm",
                 {"designation", "d", "D", "B", "r"}},
                {"Single row deep groove ball bearing " + des + ", boundary dimensions " + d +
                     " x " + D + " x " + B + " mm to ISO 15, " + closure,
                 {"designation", "d", "D", "B", "variant"}}};
  L[kName] = {{des, {"designation"}},
              {des + " bearing", {"designation"}},
              {"bearing " + dims, {"d", "D", "B"}},
              {dims + " bearing", {"d", "D", "B"}},
              {alt, {"designation"}}};
  return L;
}

// ISO 8734 (DIN 6325 before it): hardened parallel pins.
Levels dowel_pin(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const std::string d = n(b.dims["d"]), l = n(it.length), dl = d + "x" + l;
  facts["old_standard"] = "DIN 6325";
  facts["new_standard"] = "ISO 8734";
  Levels L;
  L[kAbstract] = {
      {"a dowel pin, " + d + " mm in diameter and " + l + " mm long", {"d", "l"}},
      {"a hardened steel pin " + d + " mm thick, " + l + " mm long, chamfered ends", {"d", "l"}}};
  L[kBeginner] = {{"dowel pin " + dl, {"d", "l"}},
                  {d + " mm dowel pin " + l + " mm long", {"d", "l"}},
                  {dl + " dowel", {"d", "l"}}};
  L[kIntermediate] = {{"ISO 8734 " + dl, {"standard", "d", "l"}},
                      {"DIN 6325 " + dl + " m6", {"old_standard", "d", "l"}},
                      {"parallel pin " + d + " m6 x " + l + " to ISO 8734 (replaces DIN 6325)",
                       {"standard", "old_standard", "d", "l"}}};
  L[kExpert] = {{"Parallel pin ISO 8734 - " + d + " x " + l + " - A - St", {"standard", "d", "l"}},
                {"Parallel pin ISO 8734 - " + d + " m6 x " + l +
                     " - A - St, hardened, ends "
                     "chamfered " +
                     n(b.dims["c"]) + " mm",
                 {"standard", "d", "l", "c"}}};
  L[kName] = {{"dowel pin " + dl, {"d", "l"}},
              {"ISO8734_" + dl, {"standard", "d", "l"}},
              {"pin " + d + "x" + l, {"d", "l"}}};
  return L;
}

// DIN 127 form B: spring lock washers (split washers), square ends.
Levels spring_washer(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const std::string size = t.cell(it.row, "size"), nominal = n(t.number(it.row, "d"));
  const std::string d1 = n(b.dims["d1"]), d2 = n(b.dims["d2"]), s = n(b.dims["s"]);
  facts["form"] = "B";
  Levels L;
  L[kAbstract] = {{"a split spring washer for an " + nominal + " mm bolt, " + d2 +
                       " mm across and " + s + " mm thick",
                   {"d", "d2", "s"}},
                  {"a ring cut through on one side, " + d1 + " mm hole, " + d2 + " mm outside, " +
                       s + " mm thick",
                   {"d1", "d2", "s"}},
                  {"a lock washer for an " + nominal + " mm screw", {"d"}}};
  L[kBeginner] = {{size + " spring washer", {"size"}},
                  {size + " split washer", {"size"}},
                  {"lock washer " + size, {"size"}},
                  {"split lock washer for " + size + " bolts", {"size"}}};
  L[kIntermediate] = {
      {"DIN 127 B " + size, {"standard", "form", "size"}},
      {"DIN 127 B " + size + " spring lock washer", {"standard", "form", "size"}},
      {"spring washer " + size + " to DIN 127 form B, square ends", {"standard", "form", "size"}},
      {size + " split lock washer, " + d1 + " x " + d2 + " x " + s + " mm",
       {"size", "d1", "d2", "s"}}};
  L[kExpert] = {{"Spring lock washer DIN 127 - B " + nominal + " - FSt", {"standard", "form", "d"}},
                {"Spring lock washer DIN 127 - B " + nominal +
                     " - FSt (square ends; DIN 127 is withdrawn without an ISO successor): d1 = " +
                     d1 + " mm, d2 = " + d2 + " mm, s = " + s + " mm",
                 {"standard", "form", "d", "d1", "d2", "s"}}};
  L[kName] = {{"spring washer " + size, {"size"}},
              {"DIN127B_" + size, {"standard", "form", "size"}},
              {"DIN 127 B " + nominal, {"standard", "form", "d"}},
              {size + " split washer", {"size"}},
              {"lock washer " + size, {"size"}}};
  return L;
}

// DIN 471 and DIN 472: retaining rings (circlips) for shafts and for bores.
Levels retaining_ring(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const bool shaft = it.standard == "DIN 471";
  const std::string d = n(b.dims["d1"]), s = n(b.dims["s"]), d3 = n(b.dims["d3"]);
  const std::string a = n(b.dims["a"]), d5 = n(b.dims["d5"]), ds = d + "x" + s;
  const std::string& std_ = it.standard;
  const std::string type = shaft ? "external" : "internal", seat = shaft ? "shaft" : "bore";
  const std::string free = shaft ? "inside" : "outside";
  facts["d"] = b.dims["d1"];
  facts["type"] = type;
  Levels L;
  L[kAbstract] = {
      {"a retaining ring for a " + d + " mm " + seat + ", " + s + " mm thick", {"d", "s"}},
      {"an " + type + " circlip with two plier holes for a " + d + " mm " + seat, {"d", "type"}},
      {"a split spring ring that snaps into a groove " + std::string(shaft ? "on" : "in") + " a " +
           d + " mm " + seat + ", " + d3 + " mm " + free + " when free",
       {"d", "d3"}}};
  L[kBeginner] = {{d + " mm circlip", {"d"}},
                  {type + " circlip " + d + "mm", {"type", "d"}},
                  {seat + " circlip " + d + " mm", {"d"}},
                  {"snap ring for a " + d + " mm " + seat, {"d"}}};
  L[kIntermediate] = {
      {std_ + " " + ds, {"standard", "d", "s"}},
      {std_ + " " + d + " x " + s + " retaining ring for " + seat + "s", {"standard", "d", "s"}},
      {"circlip " + std_ + " - " + d + ", " + type + ", " + s + " mm thick",
       {"standard", "d", "type", "s"}},
      {type + " retaining ring " + d + " mm, plier holes " + d5 + " mm", {"type", "d", "d5"}}};
  L[kExpert] = {{"Retaining ring " + std_ + " - " + d + " x " + s, {"standard", "d", "s"}},
                {"Retaining ring for " + seat + "s " + std_ + " - " + d + " x " + s +
                     ", normal type: s = " + s + " mm, d3 = " + d3 + " mm free, lugs a = " + a +
                     " mm, plier holes d5 = " + d5 + " mm",
                 {"standard", "d", "s", "d3", "a", "d5"}}};
  L[kName] = {{no_space(std_) + "_" + ds, {"standard", "d", "s"}},
              {"circlip " + d, {"d"}},
              {std_ + " " + d, {"standard", "d"}},
              {d + "mm " + type + " circlip", {"d", "type"}}};
  return L;
}

// Hexagon standoffs, female-female and male-female: catalogue parts, no standard.
Levels hex_standoff(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const bool male = it.variant == "MF";
  const std::string size = t.cell(it.row, "size"), l = n(it.length), s = n(b.dims["s"]);
  const std::string sl = size + "x" + l, stud = male ? n(b.dims["stud"]) : "";
  const std::string type = male ? "male-female" : "female-female", tag = male ? "M-F" : "F-F";
  // A male-female standoff is written with its stud: "M3x10+6".
  const std::string full = male ? sl + "+" + stud : sl;
  const std::vector<std::string> full_keys =
      male ? std::vector<std::string>{"size", "l", "stud"} : std::vector<std::string>{"size", "l"};
  facts["type"] = type;
  Levels L;
  L[kAbstract] = {{"a hexagonal spacer " + l + " mm long with " +
                       (male ? "an " + size + " stud at one end and a tapped hole at the other"
                             : size + " threads in both ends"),
                   {"size", "l"}},
                  {"a " + s + " mm hex standoff, " + l + " mm long, " +
                       (male ? "with a " + stud + " mm long " + size + " male thread"
                             : "tapped " + size + " at both ends"),
                   male ? std::vector<std::string>{"s", "l", "stud", "size"}
                        : std::vector<std::string>{"s", "l", "size"}},
                  {"a threaded pillar to hold a circuit board " + l + " mm off a panel", {"l"}}};
  L[kBeginner] = {{sl + " standoff", {"size", "l"}},
                  {size + " hex spacer " + l + "mm", {"size", "l"}},
                  {"PCB standoff " + size + " x " + l, {"size", "l"}},
                  {full + " " + type + " standoff", full_keys}};
  L[kIntermediate] = {
      {"hex standoff " + size + " x " + l + ", " + type + ", " + s + " mm across flats",
       {"size", "l", "type", "s"}},
      {size + " x " + l + " " + tag + " hex spacer", {"size", "l", "type"}},
      {"threaded hex spacer " + full + (male ? ", " + stud + " mm stud" : ", tapped through"),
       full_keys}};
  L[kExpert] = {
      {"Hexagon standoff " + size + " x " + l + ", " + type + ", AF " + s + " mm, thread pitch " +
           n(b.dims["P"]) + " mm (a catalogue part; no standard covers standoffs)",
       {"size", "l", "type", "s", "P"}},
      {"Hex spacer " + size + " " + type + ", L = " + l + " mm" +
           (male ? ", male thread " + stud + " mm" : "") + ", SW " + s,
       male ? std::vector<std::string>{"size", "type", "l", "stud", "s"}
            : std::vector<std::string>{"size", "type", "l", "s"}}};
  L[kName] = {{"standoff_" + sl + "_" + (male ? "MF" : "FF"), {"size", "l", "type"}},
              {sl + " standoff", {"size", "l"}},
              {full + " standoff", full_keys},
              {"hex spacer " + sl, {"size", "l"}}};
  return L;
}

// DIN 705 form A: shaft collars (adjusting rings) with a radial set screw.
Levels shaft_collar(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const std::string d = n(b.dims["d1"]), d2 = n(b.dims["d2"]), w = n(b.dims["b"]);
  const std::string screw = b.dims["set_screw"].get<std::string>();
  const std::string dims = d + " x " + d2 + " x " + w;
  facts["d"] = b.dims["d1"];
  facts["form"] = "A";
  Levels L;
  L[kAbstract] = {{"a shaft collar for a " + d + " mm shaft, " + d2 + " mm outside and " + w +
                       " mm wide, with a set screw",
                   {"d", "d2", "b"}},
                  {"a thick ring with a " + d + " mm bore and a radial " + screw + " tapped hole",
                   {"d", "set_screw"}},
                  {"a stop ring clamped on a " + d + " mm shaft by a grub screw", {"d"}}};
  L[kBeginner] = {{d + " mm shaft collar", {"d"}},
                  {"set collar " + d + "mm", {"d"}},
                  {"shaft collar " + dims, {"d", "d2", "b"}},
                  {d + "mm bore collar with grub screw", {"d"}}};
  L[kIntermediate] = {
      {"DIN 705 A " + d, {"standard", "form", "d"}},
      {"DIN 705 A " + d + " adjusting ring", {"standard", "form", "d"}},
      {"set screw shaft collar " + d + " mm bore, " + d2 + " mm OD, " + screw + " set screw",
       {"d", "d2", "set_screw"}}};
  L[kExpert] = {{"Adjusting ring DIN 705 - A " + d + " - St", {"standard", "form", "d"}},
                {"Adjusting ring DIN 705 - A " + d + " - St (form A, with set screw): d1 = " + d +
                     " mm, d2 = " + d2 + " mm, b = " + w + " mm, set screw " + screw,
                 {"standard", "form", "d", "d2", "b", "set_screw"}}};
  L[kName] = {{"DIN705A_" + d, {"standard", "form", "d"}},
              {"shaft collar " + d + "mm", {"d"}},
              {"collar " + d + "x" + d2 + "x" + w, {"d", "d2", "b"}},
              {"set collar " + d, {"d"}}};
  return L;
}

// EN 10365 (IPE, HEA, HEB, UPN) and EN 10056-1 (L): hot rolled steel sections cut to length.
Levels steel_profile(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const std::string profile = t.cell(it.row, "designation"), l = n(it.length);
  const bool angle = it.standard == "EN 10056-1";
  const std::string series = profile.substr(0, profile.find(' '));  // "IPE", "UPN", "L"
  const std::string size = t.cell(it.row, "size");
  const bool ipe = series == "IPE", channel = series == "UPN";
  // The superseded DIN numbers and the old German names (IPBl 160 is HEA 160).
  const std::string old = ipe               ? "DIN 1025-5"
                          : channel         ? "DIN 1026-1"
                          : angle           ? "DIN 1028"
                          : series == "HEA" ? "DIN 1025-3"
                                            : "DIN 1025-2";
  const std::string german = series == "HEA"   ? "IPBl " + size
                             : series == "HEB" ? "IPB " + size
                             : channel         ? "U " + size
                                               : profile;
  const std::string noun = ipe       ? "I-beam"
                           : channel ? "U-channel"
                           : angle   ? "equal angle"
                                     : "H-beam";
  const std::string kind = ipe       ? "parallel flange I section"
                           : channel ? "taper flange channel"
                           : angle   ? "equal leg angle"
                                     : std::string("wide flange H section, ") +
                                         (series == "HEA" ? "light" : "medium") + " series";
  facts["profile"] = profile;
  facts["series"] = series;
  facts["old_standard"] = old;
  facts["new_standard"] = it.standard;
  const std::string dims_text =
      angle ? "a = " + n(b.dims["a"]) + " mm, t = " + n(b.dims["t"]) +
                  " mm, r1 = " + n(b.dims["r1"]) + " mm"
            : "h = " + n(b.dims["h"]) + " mm, b = " + n(b.dims["b"]) +
                  " mm, tw = " + n(b.dims["tw"]) + " mm, tf = " + n(b.dims["tf"]) + " mm, r" +
                  (channel ? "1" : "") + " = " + n(b.dims[channel ? "r1" : "r"]) + " mm";
  const std::vector<std::string> dims_keys =
      angle     ? std::vector<std::string>{"a", "t", "r1"}
      : channel ? std::vector<std::string>{"h", "b", "tw", "tf", "r1"}
                : std::vector<std::string>{"h", "b", "tw", "tf", "r"};
  auto with = [](std::vector<std::string> keys, const std::vector<std::string>& more) {
    keys.insert(keys.end(), more.begin(), more.end());
    return keys;
  };
  Levels L;
  if (angle) {
    const std::string a = n(b.dims["a"]), th = n(b.dims["t"]);
    L[kAbstract] = {
        {"a steel angle with two " + a + " mm legs " + th + " mm thick, " + l + " mm long",
         {"a", "t", "l"}},
        {"an L-shaped steel bar " + a + " by " + a + " mm, " + l + " mm long", {"a", "l"}}};
  } else {
    const std::string h = n(b.dims["h"]), w = n(b.dims["b"]);
    const std::string shape = channel ? "a C-shaped steel channel "
                              : ipe   ? "a steel I-beam "
                                      : "a wide flange steel beam ";
    L[kAbstract] = {
        {shape + h + " mm deep and " + w + " mm wide, " + l + " mm long", {"h", "b", "l"}},
        {"a " + l + " mm length of hot rolled " + noun + ", " + h + " mm high", {"l", "h"}}};
  }
  L[kBeginner] = {{profile + " " + noun + " " + l + " mm long", {"profile", "l"}},
                  {profile + ", " + l + " mm", {"profile", "l"}},
                  {noun + " " + profile + " cut to " + l + " mm", {"profile", "l"}}};
  L[kIntermediate] = {
      {profile + " x " + l, {"profile", "l"}},
      {profile + " to " + it.standard + ", " + l + " mm long", {"profile", "standard", "l"}},
      {kind + " " + profile + " (" + it.standard + ", formerly " + old + "), L = " + l + " mm",
       {"profile", "standard", "old_standard", "l"}}};
  if (german != profile)
    L[kIntermediate].push_back(
        {german + " (" + profile + "), " + l + " mm long", {"profile", "l"}});
  L[kExpert] = {
      {"Hot rolled " + kind + " " + profile + " " + it.standard + " - S235JR, L = " + l + " mm",
       {"profile", "standard", "l"}},
      {"Hot rolled " + kind + " " + profile + " " + it.standard + " - S235JR (replaces " + old +
           "), L = " + l + " mm: " + dims_text,
       with({"profile", "standard", "old_standard", "l"}, dims_keys)}};
  L[kName] = {{no_space(profile) + "_" + l, {"profile", "l"}},
              {profile + " x " + l, {"profile", "l"}},
              {no_space(profile) + " L" + l, {"profile", "l"}},
              {profile + " " + noun, {"profile"}}};
  return L;
}

// Aluminium T-slot profiles: catalogue parts, no standard.
Levels tslot_profile(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(it.table);
  const std::string size = t.cell(it.row, "size"), series = t.cell(it.row, "series");
  const std::string slot = n(b.dims["slot"]), l = n(it.length), a = n(b.dims["a"]);
  const std::string catalogue = t.cell(it.row, "catalogue"), misumi = t.cell(it.row, "misumi");
  const std::string code = series + series;  // "2020", "4545": how the trade writes the size
  const bool btype = catalogue.starts_with("B-type");
  facts["slot"] = b.dims["slot"];
  facts["catalogue"] = catalogue;
  Levels L;
  L[kAbstract] = {
      {"an aluminium extrusion " + a + " mm square with a T-slot on each side, " + l + " mm long",
       {"a", "l"}},
      {"a square aluminium profile " + a + " x " + a + " mm with four " + slot +
           " mm slots and a centre hole, " + l + " mm long",
       {"a", "slot", "l"}},
      {"a " + l + " mm length of " + a + " mm T-slot framing bar", {"l", "a"}}};
  L[kBeginner] = {{code + " aluminium extrusion " + l + " mm", {"size", "l"}},
                  {size + " T-slot profile, " + l + " mm", {"size", "l"}},
                  {code + " profile slot " + slot + ", " + l + " mm long", {"size", "slot", "l"}},
                  {size + " aluminum extrusion " + l + "mm", {"size", "l"}}};
  L[kIntermediate] = {
      {"aluminium profile " + size + " slot " + slot + " x " + l, {"size", "slot", "l"}},
      {size + " " + (btype ? "B-type " : "") + "T-slot profile, slot " + slot + ", L = " + l +
           " mm",
       {"size", "slot", "l"}},
      {"strut profile " + size + " N" + slot + ", " + l + " mm long (" + catalogue + ")",
       {"size", "slot", "l", "catalogue"}}};
  if (!misumi.empty())
    L[kIntermediate].push_back({misumi + "-" + l + " aluminium extrusion", {"size", "slot", "l"}});
  L[kExpert] = {
      {"Aluminium T-slot profile " + size + ", slot " + slot + ", L = " + l + " mm",
       {"size", "slot", "l"}},
      {"Aluminium T-slot profile " + size + ", slot " + slot + ", L = " + l + " mm, " + catalogue +
           " (a manufacturer convention; no standard covers T-slot profiles): slot opening " +
           slot + " mm, centre bore " + n(b.dims["bore"]) + " mm",
       {"size", "slot", "l", "catalogue", "bore"}}};
  L[kName] = {{code + "_" + l, {"size", "l"}},
              {"profile_" + size + "_N" + slot + "_L" + l, {"size", "slot", "l"}},
              {size + " extrusion " + l, {"size", "l"}}};
  if (!misumi.empty()) L[kName].push_back({misumi + "-" + l, {"size", "slot", "l"}});
  return L;
}

// GT2 timing pulleys (2 mm pitch): the belt system is Gates'; the hub and flanges are the
// catalogues' convention.
Levels gt2_pulley(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const std::string z = n(b.dims["teeth"]), bore = n(b.dims["bore"]);
  const std::string belt = n(b.dims["belt_width"]),
                    pd = n(std::round(b.dims["PD"].get<double>() * 100) / 100);
  const std::string od = n(std::round(b.dims["OD"].get<double>() * 100) / 100);
  facts["PD"] = std::round(b.dims["PD"].get<double>() * 100) / 100;
  facts["OD"] = std::round(b.dims["OD"].get<double>() * 100) / 100;
  Levels L;
  L[kAbstract] = {
      {"a toothed pulley with " + z + " teeth for a " + belt + " mm wide timing belt, " + bore +
           " mm bore",
       {"teeth", "belt_width", "bore"}},
      {"a small timing belt pulley with flanges on both sides and a set screw hub, for a " + bore +
           " mm shaft",
       {"bore"}},
      {"a GT2 belt pulley " + od + " mm across the teeth with a " + bore + " mm hole",
       {"OD", "bore"}}};
  L[kBeginner] = {{"GT2 pulley " + z + "T " + bore + "mm bore", {"teeth", "bore"}},
                  {z + " tooth GT2 pulley, " + bore + " mm bore, " + belt + " mm belt",
                   {"teeth", "bore", "belt_width"}},
                  {"GT2 " + z + " teeth pulley for " + belt + "mm belt", {"teeth", "belt_width"}},
                  {z + "T timing pulley " + bore + "mm", {"teeth", "bore"}}};
  L[kIntermediate] = {
      {it.designation, {"designation"}},
      {"GT2 timing pulley " + z + " teeth, bore " + bore + " mm, belt width " + belt + " mm",
       {"teeth", "bore", "belt_width"}},
      {"2GT " + z + "T pulley, pitch diameter " + pd + " mm, " + bore + " mm bore",
       {"teeth", "PD", "bore"}},
      {"2MGT timing pulley " + z + " grooves, " + belt + " mm belt, " + bore + " mm bore",
       {"teeth", "belt_width", "bore"}}};
  L[kExpert] = {{"Timing pulley GT2 2 mm pitch, " + z + " teeth, bore " + bore + " mm, for " +
                     belt + " mm belts",
                 {"teeth", "bore", "belt_width"}},
                {"Timing pulley GT2 (2MR, 2 mm pitch) " + z + " teeth, pitch diameter " + pd +
                     " mm, outside diameter " + od + " mm, bore " + bore + " mm, belt width " +
                     belt + " mm, two flanges, hub with M3 set screw",
                 {"teeth", "PD", "OD", "bore", "belt_width"}}};
  L[kName] = {{"GT2_" + z + "T_" + bore + "mm", {"teeth", "bore"}},
              {"GT2-" + z + "T-B" + bore + "-W" + belt, {"teeth", "bore", "belt_width"}},
              {"pulley GT2 " + z + "T", {"teeth"}},
              {z + "T GT2 pulley", {"teeth"}}};
  return L;
}

// Spur gears by module (ISO 53 basic rack, 20 degree involute).
Levels spur_gear(const StandardItem& it, const StandardBuilt& b, nlohmann::json& facts) {
  const std::string m = n(b.dims["module"]), z = n(b.dims["teeth"]), d = n(b.dims["d"]);
  const std::string da = n(b.dims["da"]), w = n(b.dims["b"]), bore = n(b.dims["bore"]);
  Levels L;
  L[kAbstract] = {
      {"a spur gear with " + z + " teeth, " + da + " mm across, " + w + " mm wide",
       {"teeth", "da", "b"}},
      {"a straight toothed gear wheel, module " + m + ", " + z + " teeth, with a " + bore +
           " mm bore",
       {"module", "teeth", "bore"}},
      {"a flat gear " + d + " mm on the pitch circle with a " + bore + " mm hole", {"d", "bore"}}};
  L[kBeginner] = {{"module " + m + " gear " + z + " teeth", {"module", "teeth"}},
                  {z + " tooth spur gear, mod " + m, {"teeth", "module"}},
                  {"m" + m + " " + z + "T gear, " + bore + " mm bore", {"module", "teeth", "bore"}},
                  {"spur gear " + z + " teeth " + bore + "mm bore", {"teeth", "bore"}}};
  L[kIntermediate] = {
      {"spur gear m" + m + " z" + z, {"module", "teeth"}},
      {"spur gear m = " + m + ", z = " + z + ", b = " + w + " mm, bore " + bore + " mm",
       {"module", "teeth", "b", "bore"}},
      {"involute spur gear module " + m + ", " + z +
           " teeth, 20 degree pressure angle, pitch "
           "diameter " +
           d + " mm",
       {"module", "teeth", "d"}}};
  L[kExpert] = {
      {"Spur gear m " + m + " z " + z + ", 20 degree, ISO 53 basic rack, b = " + w + " mm",
       {"module", "teeth", "b"}},
      {"Spur gear module " + m + ", " + z +
           " teeth, pressure angle 20 degrees (ISO 53 basic "
           "rack, no profile shift): d = " +
           d + " mm, da = " + da + " mm, df = " + n(b.dims["df"]) + " mm, face width " + w +
           " mm, bore " + bore + " mm",
       {"module", "teeth", "d", "da", "df", "b", "bore"}}};
  L[kName] = {{"gear_m" + m + "_z" + z, {"module", "teeth"}},
              {"spur gear m" + m + " z" + z, {"module", "teeth"}},
              {"M" + m + "-" + z + "T gear", {"module", "teeth"}},
              {"gear " + z + "T mod " + m, {"teeth", "module"}}};
  return L;
}

// The texts of every level and the values of every key they may state.
Levels choices(const StandardItem& item, const StandardBuilt& built, nlohmann::json& facts) {
  const cad::StandardTable& t = cad::standard_table(item.table);
  facts = {{"family", item.group}, {"standard", item.standard}, {"designation", item.designation}};
  for (auto it = built.dims.begin(); it != built.dims.end(); ++it) facts[it.key()] = it.value();
  if (item.length > 0) facts["l"] = item.length;
  auto has = [&](const char* key) {
    return std::find(t.columns.begin(), t.columns.end(), key) != t.columns.end();
  };
  if (has("size")) facts["size"] = t.cell(item.row, "size");
  // The nominal diameter is "d" for every group (a nut's thread D as well).
  if (has("d")) facts["d"] = t.number(item.row, "d");
  if (has("D")) facts[item.group == "hex_nut" ? "d" : "D"] = t.number(item.row, "D");
  if (item.group == "hex_bolt") return hex_bolt(item, built, facts);
  if (item.group == "socket_head_cap_screw") return socket_screw(item, built, facts);
  if (item.group == "hex_nut") return hex_nut(item, built, facts);
  if (item.group == "plain_washer") return plain_washer(item, built, facts);
  if (item.group == "ball_bearing") return ball_bearing(item, built, facts);
  if (item.group == "spring_lock_washer") return spring_washer(item, built, facts);
  if (item.group == "retaining_ring") return retaining_ring(item, built, facts);
  if (item.group == "hex_standoff") return hex_standoff(item, built, facts);
  if (item.group == "shaft_collar") return shaft_collar(item, built, facts);
  if (item.group == "countersunk_socket_screw") return countersunk_screw(item, built, facts);
  if (item.group == "steel_profile") return steel_profile(item, built, facts);
  if (item.group == "tslot_profile") return tslot_profile(item, built, facts);
  if (item.group == "gt2_pulley") return gt2_pulley(item, built, facts);
  if (item.group == "spur_gear") return spur_gear(item, built, facts);
  return dowel_pin(item, built, facts);
}

}  // namespace

std::vector<StandardCaption> standard_captions(const StandardItem& item, const StandardBuilt& built,
                                               uint64_t seed, uint64_t index) {
  nlohmann::json all;
  const Levels levels = choices(item, built, all);
  Rng rng(seed, index, kTagCaption);
  std::vector<StandardCaption> out;
  for (const std::vector<Say>& options : levels) {
    const Say& say = rng.pick(options);
    nlohmann::json facts = {{"family", item.group}};
    for (const std::string& key : say.keys) facts[key] = all.at(key);
    out.push_back({say.text, facts});
  }
  return out;
}

std::vector<std::vector<std::string>> standard_caption_choices(const StandardItem& item,
                                                               const StandardBuilt& built) {
  nlohmann::json all;
  std::vector<std::vector<std::string>> out;
  for (const std::vector<Say>& options : choices(item, built, all)) {
    out.emplace_back();
    for (const Say& say : options) out.back().push_back(say.text);
  }
  return out;
}

}  // namespace cadclip::synth
