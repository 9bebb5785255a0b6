// One standard part: the catalog entry by a fixed shuffle of the groups'
// catalogs (so that a set smaller than the catalogs repeats no designation), the solid checked
// against the table's bounding box, the STEP text and the captions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>

#include "cad/occt_shape.h"
#include "cadclip/cad/standard_tables.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {

const std::vector<StandardGroup>& standard_groups() {
  static const std::vector<StandardGroup> kGroups = {
      {"hex_bolt", hex_bolt_catalog, build_hex_bolt},
      {"socket_head_cap_screw", socket_screw_catalog, build_socket_screw},
      {"hex_nut", hex_nut_catalog, build_hex_nut},
      {"plain_washer", plain_washer_catalog, build_plain_washer},
      {"ball_bearing", ball_bearing_catalog, build_ball_bearing},
      {"dowel_pin", dowel_pin_catalog, build_dowel_pin},
      {"spring_lock_washer", spring_washer_catalog, build_spring_washer},
      {"retaining_ring", retaining_ring_catalog, build_retaining_ring},
      {"hex_standoff", hex_standoff_catalog, build_hex_standoff},
      {"shaft_collar", shaft_collar_catalog, build_shaft_collar},
      {"countersunk_socket_screw", countersunk_screw_catalog, build_countersunk_screw},
      {"steel_profile", steel_profile_catalog, build_steel_profile},
      {"tslot_profile", tslot_profile_catalog, build_tslot_profile},
      {"gt2_pulley", gt2_pulley_catalog, build_gt2_pulley},
      {"spur_gear", spur_gear_catalog, build_spur_gear},
  };
  return kGroups;
}

const StandardGroup& standard_group(const std::string& key) {
  std::string keys;
  for (const StandardGroup& group : standard_groups()) {
    if (group.key == key) return group;
    keys += (keys.empty() ? "" : ", ") + group.key;
  }
  throw Error(format("'{}' is not a standard-part group; give one of {}", key, keys));
}

const std::vector<StandardItem>& standard_catalog(const std::string& group) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<StandardItem>> catalogs;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = catalogs.find(group);
  if (it == catalogs.end()) it = catalogs.emplace(group, standard_group(group).catalog()).first;
  return it->second;
}

bool standard_row_held_out(size_t row) { return row % 5 == 2; }

TopoDS_Shape turned_z(const std::vector<P2>& profile) {
  const gp_Pnt origin(0, 0, 0);
  return revolve(profile_face(profile, origin, gp_Dir(1, 0, 0), gp_Dir(0, 0, 1)),
                 gp_Ax1(origin, gp_Dir(0, 0, 1)), 2 * 3.14159265358979323846);
}

TopoDS_Shape hex_prism(double s, double z0, double z1) {
  std::vector<P2> corners;
  const double e = s / std::sqrt(3.0);  // corner radius
  for (int i = 0; i < 6; ++i) {
    const double a = i * 3.14159265358979323846 / 3;
    corners.push_back({e * std::cos(a), e * std::sin(a)});
  }
  return extrude(profile_face(corners, gp_Pnt(0, 0, z0), gp_Dir(1, 0, 0), gp_Dir(0, 1, 0)),
                 gp_Vec(0, 0, z1 - z0));
}

std::string dim_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
  std::string out = text;
  while (out.ends_with('0')) out.pop_back();
  if (out.ends_with('.')) out.pop_back();
  return out == "-0" ? "0" : out;
}

std::vector<double> standard_lengths(double lo, double hi) {
  // The nominal lengths of ISO 4014, ISO 4017 and ISO 4762 (their tables' l column).
  static const std::vector<double> kSeries = {5,   6,   8,   10,  12,  16,  20,  25, 30, 35,
                                              40,  45,  50,  55,  60,  65,  70,  80, 90, 100,
                                              110, 120, 130, 140, 150, 160, 180, 200};
  std::vector<double> out;
  for (double l : kSeries)
    if (l >= lo && l <= hi) out.push_back(l);
  return out;
}

SynthPart make_standard_part(const SynthOptions& options, int64_t index) {
  std::vector<std::string> keys =
      options.kind == "standard" ? options.families : std::vector<std::string>{};
  if (keys.empty())
    for (const StandardGroup& group : standard_groups()) keys.push_back(group.key);
  // The catalogs of the groups one after another, in a shuffle fixed by the
  // seed; part i takes entry i (mod the total) of it.
  std::vector<const StandardItem*> entries;
  for (const std::string& key : keys)
    for (const StandardItem& item : standard_catalog(standard_group(key).key))
      entries.push_back(&item);
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Rng shuffle(options.seed, keys.size(), kTagStandard);
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1],
              order[static_cast<size_t>(shuffle.integer(0, static_cast<int>(i) - 1))]);
  const StandardItem& item = *entries[order[static_cast<size_t>(index) % entries.size()]];
  const StandardGroup& group = standard_group(item.group);

  SynthPart part;
  part.id = part_id(options.id_prefix, index);
  part.kind = "standard";
  part.family = group.key;
  StandardBuilt built;
  Measured measured;
  try {
    built = group.build(item);
    measured = measure_valid_solid(built.shape);
  } catch (const Reject& e) {
    throw Error(
        format("standard part {} ({}) did not build: {}; this is a bug in its builder "
               "or its table row",
               part.id, item.designation, e.what()));
  }
  for (int axis = 0; axis < 3; ++axis)
    if (std::abs(measured.extent(axis) - built.extent[axis]) > 1e-3)
      throw Error(format(
          "standard part {} ({}): bounding box side {} is {} mm on the solid but {} "
          "mm by the table; this is a bug in its builder",
          part.id, item.designation, "xyz"[axis], measured.extent(axis), built.extent[axis]));
  Result<data::BRepGraph> graph = cad::ingest_shape(built.shape, part.id, "synthetic:mm", {});
  if (!graph)
    throw Error(format("standard part {} ({}) could not be featurized: {}", part.id,
                       item.designation, graph.status().reason()));
  const cad::StandardTable& table = cad::standard_table(item.table);
  part.geometry_hash = graph->geometry_hash;
  part.step = step_text(built.shape, part.id);
  part.measured = measured_json(measured);
  part.params = {{"standard", item.standard},
                 {"designation", item.designation},
                 {"table", item.table},
                 {"row_index", item.row},
                 {"row", table.row_json(item.row)},
                 {"heldout_row", standard_row_held_out(item.row)},
                 {"dims", built.dims}};
  if (item.length > 0) part.params["length"] = item.length;
  if (item.bore > 0) part.params["bore"] = item.bore;
  if (!item.variant.empty()) part.params["variant"] = item.variant;
  std::vector<StandardCaption> captions =
      standard_captions(item, built, options.seed, static_cast<uint64_t>(index));
  for (size_t level = 0; level < captions.size(); ++level)
    part.captions.push_back({kCaptionLevels[level], std::move(captions[level].text),
                             std::move(captions[level].facts), nullptr, nullptr});
  return part;
}

}  // namespace cadclip::synth
