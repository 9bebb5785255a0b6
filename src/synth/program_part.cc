// One program part: draw a program of the part's family, turn it onto its
// plane, give it a real size, write it as DeepCAD JSON in metres, build it
// through deepcad_to_shape (the import `cadclip prepare --assume-unit m` uses),
// measure and featurize the solid, and caption it. A draw that fails any of
// this is redrawn from the part's next parameter stream, with the reason kept.
#include <algorithm>
#include <cmath>

#include "cad/occt_shape.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "synth/part_names.h"
#include "synth/program.h"

namespace cadclip::synth {
namespace {

// Sorts a failure into the categories the manifest counts (docs/SYNTHETIC.md).
std::string classified(const std::string& message) {
  static const char* kKnown[] = {"self-intersecting profile",
                                 "build failed",
                                 "invalid solid",
                                 "several solids",
                                 "zero volume",
                                 "holes differ",
                                 "featurization failed",
                                 "draw does not fit"};
  for (const char* k : kKnown)
    if (message.starts_with(k) && !message.starts_with("build failed")) return message;
  const std::string detail = message.starts_with("build failed: ") ? message.substr(14) : message;
  if (detail.find("zero volume") != std::string::npos ||
      detail.find("degenerate") != std::string::npos)
    return "zero volume: " + detail;
  if (detail.find("solids instead of one") != std::string::npos) return "several solids: " + detail;
  if (detail.find("profile face is invalid") != std::string::npos ||
      detail.find("do not join") != std::string::npos)
    return "self-intersecting profile: " + detail;
  if (detail.find("invalid") != std::string::npos ||
      detail.find("not a valid") != std::string::npos)
    return "invalid solid: " + detail;
  if (message.starts_with("build failed")) return message;
  return "draw does not fit: " + detail;
}

nlohmann::json measured_json(const Measured& m, double mm_per_unit) {
  auto r3 = [](double v) { return std::round(v * 1000) / 1000; };
  auto r6 = [](double v) { return std::round(v * 1e6) / 1e6; };
  nlohmann::json holes = nlohmann::json::array();
  for (const auto& [d, n] : m.holes) holes.push_back({{"diameter", r3(d)}, {"count", n}});
  return {
      {"bbox",
       {r3(m.bbox[0]), r3(m.bbox[1]), r3(m.bbox[2]), r3(m.bbox[3]), r3(m.bbox[4]), r3(m.bbox[5])}},
      {"extent_units",
       {r6(m.extent(0) / mm_per_unit), r6(m.extent(1) / mm_per_unit),
        r6(m.extent(2) / mm_per_unit)}},
      {"volume_mm3", std::round(m.volume * 10) / 10},
      {"area_mm2", std::round(m.area * 10) / 10},
      {"faces", m.faces},
      {"holes", holes}};
}

// The holes the program says it has must be the ones the solid has.
void check_holes(const Program& program, const Measured& m, double mm_per_unit) {
  int expected = 0, found_total = 0;
  for (const HoleSet& set : program.holes) {
    expected += set.count;
    int found = 0;
    for (const auto& [d, n] : m.holes)
      if (std::abs(d - set.diameter * mm_per_unit) < 0.002 + 1e-6 * d) found += n;
    if (found != set.count)
      throw Reject(format("holes differ: {} holes of {} units stated, {} found on the solid",
                          set.count, set.diameter, found));
  }
  for (const auto& hole : m.holes) found_total += hole.second;
  if (program.generator != "free" && found_total != expected)
    throw Reject(
        format("holes differ: {} round holes on the solid, {} stated", found_total, expected));
}

}  // namespace

double nominal_extent(const Program& program) {
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (const ProgramStep& step : program.steps) {
    if (step.operation == Operation::kCut || step.operation == Operation::kIntersect) continue;
    const auto [low, high] = step.range();
    for (const SketchProfile& profile : step.profiles) {
      const auto [pmin, pmax] = profile_box(profile);
      for (double x : {pmin.x, pmax.x})
        for (double y : {pmin.y, pmax.y})
          for (double t : {low, high}) {
            V3 q = frame_point(step.frame, {x, y});
            const double v[3] = {q.x + step.frame.z.x * t, q.y + step.frame.z.y * t,
                                 q.z + step.frame.z.z * t};
            for (int i = 0; i < 3; ++i)
              lo[i] = std::min(lo[i], v[i]), hi[i] = std::max(hi[i], v[i]);
          }
    }
  }
  return std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
}

SynthPart make_program_part(const SynthOptions& options, int64_t index, int first_attempt) {
  const ProgramFamily& family = program_family_for(options.seed, static_cast<uint64_t>(index));
  SynthPart part;
  part.id = part_id(options.id_prefix, index);
  part.kind = "program";
  cad::IngestOptions ingest;
  ingest.assume_unit = "m";
  const CaptionUnits units =
      options.caption_units == "mm" ? CaptionUnits::kMillimetres : CaptionUnits::kUnits;
  for (int attempt = first_attempt; attempt < options.max_attempts; ++attempt) {
    Rng rng(options.seed, static_cast<uint64_t>(index), kTagParams, static_cast<uint64_t>(attempt));
    try {
      Program program = family.draw(rng);
      orient_program(rng, program);
      for (const ProgramStep& step : program.steps) {
        if (step.profiles.empty()) throw Reject("draw does not fit: an extrude with no profile");
        for (const SketchProfile& profile : step.profiles) check_profile(profile);
      }
      // A real size: the largest side log-uniform over 10-500 mm, to the millimetre.
      const double real_mm = std::round(std::exp(rng.uniform(std::log(10.0), std::log(500.0))));
      const double mm_per_unit = real_mm / nominal_extent(program);
      const std::string text = program_json(program, mm_per_unit / 1000);
      Result<TopoDS_Shape> shape = cad::deepcad_to_shape(text, part.id, ingest);
      if (!shape) throw Reject(classified("build failed: " + shape.status().reason()));
      Measured m;
      try {
        m = measure_valid_solid(shape.value());
      } catch (const Reject& e) {
        throw Reject(classified(e.what()));
      }
      std::vector<std::pair<double, int>> holes_units;
      for (const auto& [d, n] : m.holes) holes_units.push_back({d / mm_per_unit, n});
      if (program.generator == "free") name_free_program(program, holes_units);
      check_holes(program, m, mm_per_unit);
      ProgramDescription desc;
      desc.program = &program;
      for (int i = 0; i < 3; ++i) desc.extent[i] = m.extent(i) / mm_per_unit;
      desc.mm_per_unit = mm_per_unit;
      desc.units = units;
      // An engineer's names for this part join the shape's names as synonyms;
      // five each, so that every fifth stays held out.
      for (const std::string& noun : program_part_name(program, desc).nouns)
        program.names.push_back(noun);
      Result<data::BRepGraph> graph =
          cad::ingest_shape(shape.value(), part.id, "assumed:m", ingest);
      if (!graph) throw Reject("featurization failed: " + graph.status().reason());
      part.geometry_hash = graph->geometry_hash;
      part.json = program_json(program, mm_per_unit / 1000, m.bbox);
      part.program_hash = sha256_hex(program_signature(program));
      part.mm_per_unit = mm_per_unit;
      part.family = program.family;
      part.attempts = attempt + 1;
      part.params = {{"generator", program.generator},
                     {"names", program.names},
                     {"real_size_mm", real_mm},
                     {"program", program_summary(program)}};
      part.measured = measured_json(m, mm_per_unit);
      part.truth = {{"family", program.family}};
      for (const Phrasing phrasing : {Phrasing::kSeen, Phrasing::kHeldOut}) {
        for (int level = 0; level < 5; ++level) {
          ProgramCaption c = write_program_caption(desc, level, phrasing, options.seed,
                                                   static_cast<uint64_t>(index), options.noise);
          part.truth.update(c.truth);
          const bool held = phrasing == Phrasing::kHeldOut;
          SynthCaption caption{held ? std::string(kCaptionLevels[level]) + "_heldout"
                                    : std::string(kCaptionLevels[level]),
                               c.text,
                               c.facts,
                               c.noise,
                               {{"kind", "program"},
                                {"units", units == CaptionUnits::kUnits ? "units" : "mm"},
                                {"decimals", c.decimals}}};
          (held ? part.heldout_captions : part.captions).push_back(std::move(caption));
        }
      }
      return part;
    } catch (const Reject& e) {
      part.rejects.push_back(classified(e.what()));
    }
  }
  throw Error(format(
      "synthetic program {} ({}) failed {} draws in a row; last reason: {}. This is a bug in "
      "the family's ranges; report it with --seed {}, or raise --max-attempts",
      part.id, family.key, options.max_attempts - first_attempt,
      part.rejects.empty() ? std::string("none") : part.rejects.back(), options.seed));
}

}  // namespace cadclip::synth
