// The expert level of program captions, step by step: each extrude's
// coordinate system (Euler angles, translation), every loop's lines, arcs and
// circles, the sketch scale, the extrusion depths towards and opposite the
// normal, the operation and the part's size, in Text2CAD's wording.
#include <algorithm>
#include <utility>

#include "cadclip/core/format.h"
#include "synth/program_caption.h"

namespace cadclip::synth {
namespace {

using Strings = std::vector<std::string>;

std::string pt(ProgramWriter& w, const std::string& key, Pt p) {
  const std::string x = w.element(key, p.x), y = w.element(key, p.y);
  return "(" + x + ", " + y + ")";
}

std::string curve_text(ProgramWriter& w, const SketchCurve& c, const std::string& key,
                       const ExpertStyle& st, size_t index_of_kind) {
  const std::string ord = ordinal(index_of_kind);
  const size_t k = index_of_kind + 1;
  if (c.kind == SketchCurve::kLine) {
    const std::string a = pt(w, key, c.start), b = pt(w, key, c.end);
    switch (st.curve) {
      case 0:
        return "a line from " + a + " to " + b;
      case 1:
        return "the " + ord + " line starts at " + a + " and ends at " + b;
      case 2:
        return format("line {} runs from ", k) + a + " to " + b;
      default:
        return a + " → " + b + " as a straight run";
    }
  }
  if (c.kind == SketchCurve::kArc) {
    const std::string a = pt(w, key, c.start), m = pt(w, key, c.mid()), b = pt(w, key, c.end);
    switch (st.curve) {
      case 0:
        return "an arc starting at " + a + ", with its midpoint at " + m + ", and ending at " + b;
      case 1:
        return "the " + ord + " arc starts at " + a + ", passes through " + m + " and ends at " + b;
      case 2:
        return format("arc {} goes from ", k) + a + " through " + m + " to " + b;
      default:
        return "a curved run " + a + " → " + m + " → " + b;
    }
  }
  const std::string centre = pt(w, key, c.centre), r = w.element(key, c.radius);
  switch (st.curve) {
    case 0:
      return "a circle with its center at " + centre + " and a radius of " + r;
    case 1:
      return "the " + ord + " circle is centered at " + centre + " with a radius of " + r;
    case 2:
      return format("circle {}: center ", k) + centre + ", radius " + r;
    default:
      return "a ring outline about " + centre + " of radius " + r;
  }
}

std::string loop_text(ProgramWriter& w, const SketchLoop& loop, size_t face, size_t faces, size_t l,
                      const std::string& key, const ExpertStyle& st) {
  int lines = 0, arcs = 0, circles = 0;
  Strings curves;
  for (const SketchCurve& c : loop.curves) {
    const int index = c.kind == SketchCurve::kLine  ? lines++
                      : c.kind == SketchCurve::kArc ? arcs++
                                                    : circles++;
    curves.push_back(curve_text(w, c, key, st, static_cast<size_t>(index)));
  }
  Strings counts;
  auto say = [&](int n, const char* one, const char* many) {
    if (n) counts.push_back(count_word(n) + " " + (n == 1 ? one : many));
  };
  say(lines, "line", "lines");
  say(arcs, "arc", "arcs");
  say(circles, "circle", "circles");
  const std::string body = join_and(curves, "; and ");
  const std::string loop_word = w.syn(kLoop);
  switch (st.loop) {
    case 0:
      return "On the " + ordinal(face) + " face, draw the " + ordinal(l) + " " + loop_word +
             " with " + join_and(counts) + ": " + body + ".";
    case 1:
      return "In the " + ordinal(l) + " " + loop_word + " of face " + std::to_string(face + 1) +
             ": " + body + ".";
    case 2:
      return "Sketch the " + ordinal(l) + " " + loop_word +
             (faces > 1 ? " of the " + ordinal(face) + " face" : "") + " (" + join_and(counts) +
             "): " + body + ".";
    default:
      return format("Loop {}.{} traces ", face + 1, l + 1) + body + ".";
  }
}

// The step's coordinate system: its Euler angles and translation, which the
// writer states (and may leave out) in this order.
std::string coordinate_sentence(ProgramWriter& w, const ProgramStep& step, size_t k,
                                const std::string& key, const ExpertStyle& st) {
  const V3 e = euler_degrees(step.frame);
  const std::string ea = w.element(key + "euler", e.x, true),
                    eb = w.element(key + "euler", e.y, true),
                    ec = w.element(key + "euler", e.z, true);
  const V3& o = step.frame.origin;
  const std::string tx = w.element(key + "translation", o.x),
                    ty = w.element(key + "translation", o.y),
                    tz = w.element(key + "translation", o.z);
  const std::string cs = w.syn(kCoordinateSystem);
  switch (st.coordinate) {
    case 0:
      return (k == 0 ? w.syn(kBegin) + " creating a " : "Create another ") + cs +
             " with Euler angles set to [" + ea + ", " + eb + ", " + ec +
             "] degrees and a translation vector of [" + tx + ", " + ty + ", " + tz + "].";
    case 1:
      return "Create a " + cs + ": Euler angles [" + ea + ", " + eb + ", " + ec +
             "] and translation vector [" + tx + ", " + ty + ", " + tz + "].";
    case 2:
      return "Set up a " + cs + " rotated by the Euler angles " + ea + ", " + eb + " and " + ec +
             " degrees and translated by (" + tx + ", " + ty + ", " + tz + ").";
    default:
      return "Datum: Euler angles (" + ea + "°, " + eb + "°, " + ec + "°), origin shifted to (" +
             tx + ", " + ty + ", " + tz + ").";
  }
}

// The sketch scale `s`, as Text2CAD's expert captions give it.
std::string scale_sentence(const std::string& s, const std::string& sketch, const ExpertStyle& st) {
  switch (st.scale) {
    case 0:
      return "Scale the " + sketch + " using a sketch scale of " + s + ".";
    case 1:
      return "Apply a scale factor of " + s + " to the " + sketch + ".";
    case 2:
      return "The sketch scale is " + s + ".";
    default:
      return "Resize by the factor " + s + ".";
  }
}

std::string transform_sentence(const std::string& sketch, const ExpertStyle& st) {
  switch (st.transform) {
    case 0:
      return "Transform the scaled " + sketch +
             " into three dimensions by rotating it with the Euler angles and translating it "
             "with the translation vector.";
    case 1:
      return "Rotate and translate the " + sketch +
             " using the coordinate system's angles and vector.";
    case 2:
      return "Place the " + sketch + " in three dimensions using the coordinate system.";
    default:
      return "Carry the drawing into space with that frame.";
  }
}

// The extrusion depths towards (`p`) and opposite (`q`) the normal; either
// may be empty, left out by noise. Empty when both are.
std::string extrude_sentence(const std::string& p, const std::string& q, const std::string& sketch,
                             const ExpertStyle& st) {
  if (!p.empty() && !q.empty()) {
    switch (st.extrude) {
      case 0:
        return "Extrude the " + sketch + " " + p + " towards the normal and " + q +
               " in the opposite direction of the normal.";
      case 1:
        return "Extrude it to a depth of " + p + " towards the normal and " + q +
               " opposite the normal.";
      case 2:
        return "The extrusion depth is " + p + " along the normal and " + q + " against it.";
      default:
        return "Sweep it " + p + " with the normal and " + q + " against the normal.";
    }
  }
  if (!p.empty() || !q.empty())  // one depth left out by noise: the other alone
    return "Extrude the " + sketch + " " + (p.empty() ? q + " opposite" : p + " towards") +
           " the normal.";
  return "";
}

// The boolean operation, which is also stated as a fact.
std::string operation_sentence(ProgramWriter& w, const ProgramStep& step, const std::string& key,
                               const ExpertStyle& st) {
  static const std::vector<std::vector<std::string>> kOps = {
      {"This operation creates ", "Perform a new body operation to create ", "It makes ",
       "Result: "},
      {"Join this part to the existing body.", "Add it to the previous body with a join.",
       "It is joined to the body made so far.", "Result: welded onto the body so far."},
      {"Use it to cut material from the body.", "Remove the material where it overlaps the body.",
       "It is cut from the body made so far.", "Result: carved out of the body so far."},
      {"Keep only the intersection with the body.", "Intersect it with the previous body.",
       "Only the volume shared with the body is kept.", "Result: the shared volume retained."}};
  const size_t op = static_cast<size_t>(step.operation);
  w.fact(key + "operation", std::vector<std::string>{"new body", "join", "cut", "intersect"}[op]);
  std::string op_text = kOps[op][static_cast<size_t>(st.operation)];
  if (op == 0) op_text += w.syn(kNewBody) + ".";
  return op_text;
}

// The part's own size, as Text2CAD states it: its sketch's extent and its
// depth (`depth`, the extrusion's full range).
std::string size_sentence(ProgramWriter& w, const ProgramStep& step, const std::string& key,
                          const ExpertStyle& st, double depth) {
  const auto [lo, hi] = profile_box(step.profiles[0]);
  double x0 = lo.x, y0 = lo.y, x1 = hi.x, y1 = hi.y;
  for (const SketchProfile& p : step.profiles) {
    const auto [a, b] = profile_box(p);
    x0 = std::min(x0, a.x), y0 = std::min(y0, a.y), x1 = std::max(x1, b.x), y1 = std::max(y1, b.y);
  }
  const std::string size_key = key + "size";
  const std::string sl = w.element(size_key, x1 - x0), sw = w.element(size_key, y1 - y0),
                    sh = w.element(size_key, depth);
  static const char* kSize[] = {
      "The dimensions of this part are length {l}, width {w} and height {h}.",
      "This part measures {l} by {w} by {h}.", "Part size: length {l}, width {w}, height {h}.",
      "Its extent is {l} × {w} × {h}."};
  std::string size = kSize[st.scale];
  for (const auto& [tag, v] : {std::pair<const char*, std::string>{"{l}", sl + w.unit()},
                               {"{w}", sw + w.unit()},
                               {"{h}", sh + w.unit()}})
    size.replace(size.find(tag), 3, v);
  return size;
}

}  // namespace

ExpertStyle expert_style(int s) {
  static const ExpertStyle kStyles[kStructures] = {
      {0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1, 1, 1}, {2, 2, 2, 2, 2, 2, 2, 2},
      {0, 1, 2, 0, 1, 2, 0, 0}, {3, 3, 3, 3, 3, 3, 3, 3}, {1, 2, 0, 1, 2, 0, 1, 2},
      {2, 0, 1, 2, 0, 1, 2, 1}, {0, 2, 1, 1, 0, 2, 1, 0}, {1, 0, 2, 2, 1, 0, 2, 2},
      {3, 3, 3, 3, 3, 3, 3, 2}, {2, 1, 0, 0, 2, 1, 0, 1}, {0, 2, 2, 1, 1, 1, 2, 0},
      {1, 1, 0, 2, 2, 0, 0, 2}, {2, 0, 2, 1, 0, 2, 1, 0}, {1, 2, 1, 0, 2, 1, 2, 1}};
  return kStyles[s];
}

// Step k as Text2CAD's expert level has it: header, coordinate system, loops,
// scale, transform, extrude, operation and size, in the order the writer
// draws its noise and synonyms.
std::string expert_step(ProgramWriter& w, size_t k, const ExpertStyle& st) {
  const ProgramStep& step = w.desc().program->steps[k];
  const std::string key = format("step{}_", k + 1);
  Strings out;
  if (st.header == 0) out.push_back(format("<part_{}>", k + 1));
  if (st.header == 1) out.push_back(format("Part {}.", k + 1));
  if (st.header == 3) out.push_back(format("Stage {}:", k + 1));
  out.push_back(coordinate_sentence(w, step, k, key, st));
  const std::string sketch = w.syn(kSketch);
  for (size_t f = 0; f < step.profiles.size(); ++f)
    for (size_t l = 0; l < step.profiles[f].loops.size(); ++l)
      out.push_back(
          loop_text(w, step.profiles[f].loops[l], f, step.profiles.size(), l, key + "points", st));
  if (!w.hidden(key + "scale"))
    out.push_back(scale_sentence(w.bare(key + "scale", step.size), sketch, st));
  out.push_back(transform_sentence(sketch, st));
  const auto [low, high] = step.range();
  const std::string p = w.length(key + "towards", high), q = w.length(key + "opposite", -low);
  if (std::string extrude = extrude_sentence(p, q, sketch, st); !extrude.empty())
    out.push_back(std::move(extrude));
  out.push_back(operation_sentence(w, step, key, st));
  out.push_back(size_sentence(w, step, key, st, high - low));
  std::string text;
  for (const std::string& s : out) text += (text.empty() ? "" : " ") + s;
  return text;
}

}  // namespace cadclip::synth
