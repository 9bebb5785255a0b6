#include "geometry_oracle.h"

#include <BRepAdaptor_Surface.hxx>
#include <BRepBndLib.hxx>
#include <BRepCheck_Analyzer.hxx>
#include <BRepClass3d_SolidClassifier.hxx>
#include <BRepGProp.hxx>
#include <BRepTools.hxx>
#include <Bnd_Box.hxx>
#include <GProp_GProps.hxx>
#include <STEPControl_Reader.hxx>
#include <TopExp_Explorer.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Face.hxx>
#include <gp_Cylinder.hxx>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

namespace cadclip::test {

OracleMeasure oracle_measure(const std::string& step_text) {
  const auto path =
      std::filesystem::temp_directory_path() /
      ("cadclip_oracle_" +
       std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id())) + ".step");
  { std::ofstream(path, std::ios::binary) << step_text; }
  STEPControl_Reader reader;
  if (reader.ReadFile(path.string().c_str()) != IFSelect_RetDone)
    throw std::runtime_error("STEP not readable");
  reader.TransferRoots();
  const TopoDS_Shape shape = reader.OneShape();
  std::filesystem::remove(path);
  return oracle_measure_shape(shape);
}

OracleMeasure oracle_measure_shape(const TopoDS_Shape& shape) {
  OracleMeasure m;
  for (TopExp_Explorer it(shape, TopAbs_SOLID); it.More(); it.Next()) ++m.solids;
  m.valid = BRepCheck_Analyzer(shape).IsValid();
  GProp_GProps props;
  BRepGProp::VolumeProperties(shape, props);
  m.volume = props.Mass();
  Bnd_Box box;
  BRepBndLib::AddOptimal(shape, box, false, false);
  double b[6];
  box.Get(b[0], b[1], b[2], b[3], b[4], b[5]);
  for (int i = 0; i < 3; ++i) m.extent[i] = b[i + 3] - b[i];

  BRepClass3d_SolidClassifier classifier(shape);
  std::map<std::string, double> hole_axes;  // axis line + radius -> diameter
  for (TopExp_Explorer it(shape, TopAbs_FACE); it.More(); it.Next()) {
    const TopoDS_Face& face = TopoDS::Face(it.Current());
    BRepAdaptor_Surface surface(face);
    if (surface.GetType() != GeomAbs_Cylinder) continue;
    const gp_Cylinder cyl = surface.Cylinder();
    double u0, u1, v0, v1;
    BRepTools::UVBounds(face, u0, u1, v0, v1);
    const gp_Ax3 pos = cyl.Position();
    const gp_Pnt centre = pos.Location().Translated(gp_Vec(pos.Direction()) * (0.5 * (v0 + v1)));
    const double r = cyl.Radius();
    bool ring_is_hole = true;
    for (int k = 0; k < 16 && ring_is_hole; ++k) {
      const double a = 2 * M_PI * k / 16;
      const gp_Vec radial =
          gp_Vec(pos.XDirection()) * std::cos(a) + gp_Vec(pos.YDirection()) * std::sin(a);
      classifier.Perform(centre.Translated(radial * (r - 0.02)), 1e-6);
      const bool air_inside = classifier.State() == TopAbs_OUT;
      classifier.Perform(centre.Translated(radial * (r + 0.02)), 1e-6);
      const bool material_outside = classifier.State() == TopAbs_IN;
      ring_is_hole = air_inside && material_outside;
    }
    if (!ring_is_hole) continue;
    gp_Dir d = pos.Direction();
    if (d.X() + 1e-3 * d.Y() + 1e-6 * d.Z() < 0) d.Reverse();
    const gp_Vec o(pos.Location().XYZ());
    const gp_Vec foot = o - gp_Vec(d) * o.Dot(gp_Vec(d));
    auto q = [](double x) { return std::round(x * 100) / 100 + 0.0; };  // + 0.0 turns -0 into 0
    // Coaxial holes in two walls count twice: the key holds where along the axis the ring is.
    const double along = std::round(gp_Vec(centre.XYZ()).Dot(gp_Vec(d)) * 10) / 10 + 0.0;
    char key[200];
    std::snprintf(key, sizeof(key), "%.2f %.2f %.2f %.2f %.2f %.2f %.3f %.1f", q(d.X()), q(d.Y()),
                  q(d.Z()), q(foot.X()), q(foot.Y()), q(foot.Z()), r, along);
    hole_axes[key] = 2 * r;
  }
  std::map<long, int> by_diameter;
  for (const auto& [key, diameter] : hole_axes) ++by_diameter[std::lround(diameter * 1000)];
  for (const auto& [d, n] : by_diameter) m.holes.emplace_back(d / 1000.0, n);
  return m;
}

std::vector<std::string> caption_disagreements(const synth::SynthPart& part,
                                               const OracleMeasure& m) {
  std::vector<std::string> problems;
  const double kRounding = 0.5 + 1e-6;  // captions may round to whole millimetres
  const std::map<std::string, int> extent_axis = {{"length", 0},         {"width", 1},
                                                  {"height", 2},         {"thickness", 2},
                                                  {"outer_diameter", 1}, {"across_flats", 1}};
  auto nearest_hole = [&](double stated) -> const std::pair<double, int>* {
    const std::pair<double, int>* best = nullptr;
    for (const auto& hole : m.holes)
      if (!best || std::abs(hole.first - stated) < std::abs(best->first - stated)) best = &hole;
    return best && std::abs(best->first - stated) <= kRounding ? best : nullptr;
  };
  for (const synth::SynthCaption& caption : part.captions) {
    if (!caption.noise.is_null()) continue;
    const std::string where =
        part.id + " " + part.family + " " + caption.level + ": \"" + caption.text + "\"";
    if (caption.facts.value("family", "") != part.family)
      problems.push_back(where + ": family fact is wrong");
    for (auto it = caption.facts.begin(); it != caption.facts.end(); ++it) {
      const std::string& key = it.key();
      if (!it.value().is_number()) continue;
      const double stated = it.value().get<double>();
      if (auto axis = extent_axis.find(key); axis != extent_axis.end()) {
        if (std::abs(stated - m.extent[axis->second]) > kRounding)
          problems.push_back(where + ": " + key + " " + std::to_string(stated) + " but measured " +
                             std::to_string(m.extent[axis->second]));
      }
      const bool hole_diameter =
          key.ends_with("hole_diameter") || key == "bore_diameter" || key == "inner_diameter";
      if (hole_diameter && !nearest_hole(stated))
        problems.push_back(where + ": no round hole of " + std::to_string(stated) + " mm measured");
      if (key.ends_with("hole_count")) {
        std::string prefix = key.substr(0, key.size() - 6);  // "bolt_hole"
        const auto diameter = caption.facts.find(prefix + "_diameter");
        int measured = 0;
        if (diameter != caption.facts.end()) {
          const auto* hole = nearest_hole(diameter->get<double>());
          measured = hole ? hole->second : 0;
        } else if (prefix == "base_hole" || prefix == "leg_hole" || prefix == "side_hole") {
          continue;  // partial counts of a set whose total is checked under hole_count
        } else {
          // No diameter stated: some set of equal holes, or all holes, must have that count.
          int total = 0;
          for (const auto& hole : m.holes) {
            total += hole.second;
            if (hole.second == static_cast<int>(stated)) measured = hole.second;
          }
          if (measured == 0) measured = total;
        }
        if (measured != static_cast<int>(stated))
          problems.push_back(where + ": " + key + " " + std::to_string(static_cast<int>(stated)) +
                             " but " + std::to_string(measured) + " measured");
      }
    }
  }
  return problems;
}

}  // namespace cadclip::test
