#include "cadclip/data/part_facts.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <tuple>

namespace cadclip::data {
namespace {

using Vec = std::array<double, 3>;
using Mat = std::array<Vec, 3>;  // row-major, symmetric where it matters

constexpr int kSamples = kUvGridSize * kUvGridSize;
constexpr double kTwoPi = 2 * std::numbers::pi;

double dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double norm(const Vec& a) { return std::sqrt(dot(a, a)); }

// Eigenvalues (descending) and unit eigenvectors of a symmetric 3x3 matrix
// (cyclic Jacobi; exact enough for 3x3 after a handful of sweeps).
void eigen_symmetric(Mat a, Vec& values, Mat& vectors) {
  Mat v = {Vec{1, 0, 0}, Vec{0, 1, 0}, Vec{0, 0, 1}};
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    if (off < 1e-30 * (a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2]) + 1e-300) break;
    for (int p = 0; p < 2; ++p) {
      for (int q = p + 1; q < 3; ++q) {
        if (a[p][q] == 0) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; ++k) {  // A <- A J
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) {  // A <- J^T A
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {  // V <- V J (columns are eigenvectors)
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  std::array<int, 3> order = {0, 1, 2};
  std::sort(order.begin(), order.end(), [&](int i, int j) { return a[i][i] > a[j][j]; });
  for (int i = 0; i < 3; ++i) {
    values[i] = a[order[i]][order[i]];
    vectors[i] = {v[0][order[i]], v[1][order[i]], v[2][order[i]]};
  }
}

// One face's grid sample: point in millimetres (about the box centre), outward normal.
struct Sample {
  Vec p, n;
  bool inside = false;
};

std::vector<Sample> face_samples(const BRepGraph& g, int64_t f) {
  const double to_mm = g.scale_mm > 0 ? g.scale_mm / 2 : 1.0;
  std::vector<Sample> out(kSamples);
  const float* grid = g.face_grids.data() + f * kSamples * kFaceChannels;
  for (int s = 0; s < kSamples; ++s) {
    const float* x = grid + s * kFaceChannels;
    out[s].p = {x[0] * to_mm, x[1] * to_mm, x[2] * to_mm};
    out[s].n = {x[3], x[4], x[5]};
    out[s].inside = x[6] > 0.5f;
  }
  return out;
}

// A cylindrical face fitted from its samples.
struct CylinderPiece {
  Vec axis;       // unit, canonical sign
  Vec centre;     // the axis line's point closest to the box centre
  double radius;  // mm
  bool concave;   // normals point at the axis: a hole (material outside); else a shaft
  double sweep;   // radians the face turns about its axis
  double t0, t1;  // its extent along the axis
};

// Solves the 3x3 system m x = b by Cramer's rule; false when singular.
bool solve3(const Mat& m, const Vec& b, Vec& x) {
  const double det = dot(m[0], cross(m[1], m[2]));
  if (std::abs(det) < 1e-12) return false;
  for (int c = 0; c < 3; ++c) {
    Mat r = m;
    for (int row = 0; row < 3; ++row) r[row][c] = b[row];
    x[c] = dot(r[0], cross(r[1], r[2])) / det;
  }
  return true;
}

// The face as a piece of a round hole or shaft, when it is one: normals
// perpendicular to one axis, pointing at it (a hole) or away from it (a
// shaft) from a constant distance.
std::optional<CylinderPiece> cylinder_piece(const std::vector<Sample>& samples) {
  std::vector<const Sample*> usable;
  for (const Sample& s : samples)
    if (norm(s.n) > 0.5) usable.push_back(&s);
  if (usable.size() < 6) return std::nullopt;
  Mat scatter{};
  for (const Sample* s : usable)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) scatter[i][j] += s->n[i] * s->n[j];
  Vec values;
  Mat vectors;
  eigen_symmetric(scatter, values, vectors);
  const double count = static_cast<double>(usable.size());
  // Normals that barely turn (a sliver of a cylinder) leave the axis undefined.
  if (values[1] < 0.005 * count || values[2] > 0.01 * count) return std::nullopt;
  Vec axis = vectors[2];
  // Canonical direction: the first clearly non-zero component positive.
  for (int i = 0; i < 3; ++i) {
    if (std::abs(axis[i]) > 1e-6) {
      if (axis[i] < 0) axis = {-axis[0], -axis[1], -axis[2]};
      break;
    }
  }
  const Vec e1 = vectors[0];
  const Vec e2 = cross(axis, e1);
  // Least squares for the centre c and radius r of c = p + r n in the plane.
  Mat m{};
  Vec b{};
  std::vector<std::array<double, 4>> planar;  // px, py, nx, ny
  for (const Sample* s : usable) {
    const double px = dot(s->p, e1), py = dot(s->p, e2);
    double nx = dot(s->n, e1), ny = dot(s->n, e2);
    const double length = std::hypot(nx, ny);
    if (length < 1e-6) continue;
    nx /= length;
    ny /= length;
    planar.push_back({px, py, nx, ny});
    m[0][0] += 1;
    m[1][1] += 1;
    m[0][2] -= nx;
    m[1][2] -= ny;
    m[2][2] += 1;
    b[0] += px;
    b[1] += py;
    b[2] -= nx * px + ny * py;
  }
  m[2][0] = m[0][2];
  m[2][1] = m[1][2];
  Vec x;
  if (planar.size() < 6 || !solve3(m, b, x)) return std::nullopt;
  // c = p + r n: r > 0 where the normals point at the axis (a hole), r < 0
  // where they point away from it (a shaft or boss).
  const bool concave = x[2] > 0;
  const double radius = std::abs(x[2]);
  if (!(radius > 1e-6)) return std::nullopt;
  const double signed_radius = x[2];
  double residual = 0;
  std::vector<double> angles;
  for (const auto& [px, py, nx, ny] : planar) {
    residual +=
        std::pow(px + signed_radius * nx - x[0], 2) + std::pow(py + signed_radius * ny - x[1], 2);
    angles.push_back(std::atan2(ny, nx));
  }
  if (std::sqrt(residual / static_cast<double>(planar.size())) > 0.02 * radius + 1e-3)
    return std::nullopt;
  // How far the face turns: the samples are evenly spaced in angle, so the
  // largest gap between neighbours is the part of the turn it lacks, unless
  // it is no wider than the spacing (a full turn, whose ends coincide).
  std::sort(angles.begin(), angles.end());
  std::vector<double> distinct;
  for (const double a : angles)
    if (distinct.empty() || a - distinct.back() > 1e-3) distinct.push_back(a);
  if (distinct.size() > 1 && distinct.front() + kTwoPi - distinct.back() <= 1e-3)
    distinct.pop_back();
  if (distinct.size() < 2) return std::nullopt;
  std::vector<double> gaps;
  for (size_t i = 1; i < distinct.size(); ++i) gaps.push_back(distinct[i] - distinct[i - 1]);
  gaps.push_back(distinct.front() + kTwoPi - distinct.back());
  const double largest = *std::max_element(gaps.begin(), gaps.end());
  std::vector<double> sorted_gaps = gaps;
  std::nth_element(sorted_gaps.begin(), sorted_gaps.begin() + sorted_gaps.size() / 2,
                   sorted_gaps.end());
  const double typical = sorted_gaps[sorted_gaps.size() / 2];
  const double sweep = largest <= 1.5 * typical ? kTwoPi : kTwoPi - largest;
  CylinderPiece piece;
  piece.axis = axis;
  piece.radius = radius;
  piece.concave = concave;
  piece.sweep = sweep;
  for (int i = 0; i < 3; ++i) piece.centre[i] = x[0] * e1[i] + x[1] * e2[i];
  piece.t0 = 1e300;
  piece.t1 = -1e300;
  for (const Sample* s : usable) {
    piece.t0 = std::min(piece.t0, dot(s->p, axis));
    piece.t1 = std::max(piece.t1, dot(s->p, axis));
  }
  return piece;
}

// True when two pieces lie on one axis line (within `tolerance` mm).
bool same_axis_line(const CylinderPiece& a, const CylinderPiece& b, double tolerance) {
  Vec apart;
  for (int i = 0; i < 3; ++i) apart[i] = a.centre[i] - b.centre[i];
  return std::abs(dot(a.axis, b.axis)) > std::cos(0.02) && norm(apart) < tolerance;
}

// The part's full-turn cylinders: pieces of one axis line, radius, side and
// place along the axis joined (a hole split into two half faces is one hole).
struct RoundFeature {
  CylinderPiece piece;
  double sweep = 0;
};

std::vector<RoundFeature> round_features(const BRepGraph& g) {
  std::vector<RoundFeature> found;
  for (int64_t f = 0; f < g.num_faces(); ++f) {
    if (g.face_types[f] != static_cast<uint8_t>(SurfaceType::kCylinder)) continue;
    const std::optional<CylinderPiece> piece = cylinder_piece(face_samples(g, f));
    if (!piece) continue;
    const double tolerance = std::max(0.01, 0.01 * piece->radius);
    RoundFeature* same = nullptr;
    for (RoundFeature& h : found) {
      const CylinderPiece& o = h.piece;
      if (o.concave == piece->concave && same_axis_line(o, *piece, tolerance) &&
          std::abs(o.radius - piece->radius) < tolerance && piece->t0 <= o.t1 + tolerance &&
          o.t0 <= piece->t1 + tolerance) {
        same = &h;
        break;
      }
    }
    if (!same) {
      found.push_back({*piece, 0});
      same = &found.back();
    }
    same->sweep += piece->sweep;
    same->piece.t0 = std::min(same->piece.t0, piece->t0);
    same->piece.t1 = std::max(same->piece.t1, piece->t1);
  }
  std::erase_if(found, [](const RoundFeature& h) { return h.sweep < 0.97 * kTwoPi; });
  return found;
}

std::vector<double> round_holes(const std::vector<RoundFeature>& features) {
  std::vector<double> diameters;
  for (const RoundFeature& h : features)
    if (h.piece.concave) diameters.push_back(2 * h.piece.radius);
  std::sort(diameters.begin(), diameters.end());
  return diameters;
}

std::vector<Shaft> round_shafts(const std::vector<RoundFeature>& features) {
  std::vector<const CylinderPiece*> lines;  // one piece per axis line seen
  std::vector<Shaft> shafts;
  for (const RoundFeature& h : features) {
    if (h.piece.concave) continue;
    const CylinderPiece& p = h.piece;
    size_t line = 0;
    while (line < lines.size() && !same_axis_line(*lines[line], p, std::max(0.01, 0.01 * p.radius)))
      ++line;
    if (line == lines.size()) lines.push_back(&p);
    // Places along the axis measured along the line's first piece's
    // direction, so that coaxial cylinders compare.
    const double sign = dot(lines[line]->axis, p.axis) > 0 ? 1.0 : -1.0;
    const double a = sign * p.t0, b = sign * p.t1;
    shafts.push_back({2 * p.radius, std::min(a, b), std::max(a, b), static_cast<int>(line)});
  }
  std::sort(shafts.begin(), shafts.end(), [](const Shaft& a, const Shaft& b) {
    return std::tie(a.axis, a.from_mm, a.diameter_mm) < std::tie(b.axis, b.from_mm, b.diameter_mm);
  });
  return shafts;
}

ShapeSignature signature(const BRepGraph& g) {
  ShapeSignature out;
  std::vector<std::pair<Vec, double>> points;  // point, weight
  for (int64_t f = 0; f < g.num_faces(); ++f) {
    const std::vector<Sample> samples = face_samples(g, f);
    const int64_t inside =
        std::count_if(samples.begin(), samples.end(), [](const Sample& s) { return s.inside; });
    if (inside == 0) continue;
    const double weight = std::max(0.0, static_cast<double>(g.face_areas[f])) / inside;
    for (const Sample& s : samples)
      if (s.inside) points.emplace_back(s.p, weight);
  }
  double total = 0;
  Vec centroid{};
  for (const auto& [p, w] : points) {
    total += w;
    for (int i = 0; i < 3; ++i) centroid[i] += w * p[i];
  }
  if (!(total > 0)) return out;
  for (double& c : centroid) c /= total;
  Mat second{};
  for (const auto& [p, w] : points)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) second[i][j] += w * (p[i] - centroid[i]) * (p[j] - centroid[j]);
  for (Vec& row : second)
    for (double& v : row) v /= total;
  Vec values;
  Mat axes;
  eigen_symmetric(second, values, axes);
  for (int i = 0; i < 3; ++i) out.spread_mm[i] = std::sqrt(std::max(0.0, values[i]));
  // Third moments along each axis, and the mixed one, in the principal frame.
  Vec third{};
  double mixed = 0;
  for (const auto& [p, w] : points) {
    Vec d;
    for (int i = 0; i < 3; ++i) d[i] = p[i] - centroid[i];
    Vec c;
    for (int i = 0; i < 3; ++i) c[i] = dot(d, axes[i]);
    for (int i = 0; i < 3; ++i) third[i] += w * c[i] * c[i] * c[i];
    mixed += w * c[0] * c[1] * c[2];
  }
  for (int i = 0; i < 3; ++i) {
    const double sigma = out.spread_mm[i];
    third[i] = sigma > 1e-9 ? third[i] / total / (sigma * sigma * sigma) : 0;
    out.skew[i] = std::abs(third[i]);
  }
  const double scale = out.spread_mm[0] * out.spread_mm[1] * out.spread_mm[2];
  mixed = scale > 1e-12 ? mixed / total / scale : 0;
  // The frame has an orientation only when its axes are distinct and the
  // first two point somewhere (their skew): then the third, e1 x e2, carries
  // the handedness in its own skew, or failing that in the mixed moment.
  constexpr double kDistinct = 0.01, kSkewed = 0.02;
  const bool distinct = values[0] - values[1] > kDistinct * values[0] &&
                        values[1] - values[2] > kDistinct * values[0];
  if (!distinct || out.skew[0] < kSkewed || out.skew[1] < kSkewed) return out;
  // f1, f2 = e1, e2 turned along their skews, f3 = f1 x f2 = oriented e3.
  // A mirror image has f3 reversed, so the third moment along f3 and the
  // mixed moment over (f1, f2, f3) change sign.
  const double flip = (third[0] > 0 ? 1.0 : -1.0) * (third[1] > 0 ? 1.0 : -1.0);
  const double right = dot(cross(axes[0], axes[1]), axes[2]) > 0 ? 1.0 : -1.0;
  const double oriented = right * flip;
  if (out.skew[2] >= kSkewed) {
    out.handedness = third[2] * oriented > 0 ? 1 : -1;
  } else if (std::abs(mixed) >= kSkewed) {
    out.handedness = mixed * right > 0 ? 1 : -1;
  }
  return out;
}

bool close(double a, double b, double relative, double absolute) {
  return std::abs(a - b) <= absolute + relative * std::max(std::abs(a), std::abs(b));
}

// The sizes of the sets of 3 or more congruent faces spaced about the part's
// centre: the teeth of a gear, the spokes of a wheel, the slots of a T-slot
// profile. Faces are congruent here when they have one surface type, areas
// within 1% and centroids equally far from the centre of the bounding box
// (within 0.5% of the part's size; the box's centre stays on the axis of a
// pattern that leaves one place empty, the centre of area does not); a
// rotational pattern of N features
// gives such sets, and each feature has some face that is its own mirror
// image (a tooth's tip, a slot's floor), so one set has N members exactly.
// Linear patterns (ribs along a plate) are not seen.
std::vector<int64_t> face_repeats(const BRepGraph& g) {
  const int64_t faces = g.num_faces();
  const double to_mm = g.scale_mm > 0 ? g.scale_mm / 2 : 1.0;
  struct Face {
    int type;
    double area, radius;
  };
  std::vector<Face> all;
  for (int64_t f = 0; f < faces; ++f) {
    Vec d;  // from the centre of the bounding box, where the coordinates start
    for (int i = 0; i < 3; ++i) d[i] = g.face_centroids[3 * f + i] * to_mm;
    all.push_back({g.face_types[f], g.face_areas[f], norm(d)});
  }
  std::sort(all.begin(), all.end(), [](const Face& a, const Face& b) {
    return std::tie(a.type, a.area, a.radius) < std::tie(b.type, b.area, b.radius);
  });
  const double size = 2 * to_mm, radius_tolerance = 0.005 * size + 0.01;
  std::vector<int64_t> sets;
  for (size_t i = 0; i < all.size();) {
    // A run of one type with areas within 1% of its first...
    size_t end = i;
    while (end < all.size() && all[end].type == all[i].type &&
           all[end].area <= 1.01 * all[i].area + 1e-3)
      ++end;
    // ... split by the centroids' distance from the centre.
    std::vector<double> radii;
    for (size_t j = i; j < end; ++j) radii.push_back(all[j].radius);
    std::sort(radii.begin(), radii.end());
    for (size_t j = 0; j < radii.size();) {
      size_t run = j;
      while (run < radii.size() && radii[run] <= radii[j] + radius_tolerance) ++run;
      if (run - j >= 3) sets.push_back(static_cast<int64_t>(run - j));
      j = run;
    }
    i = end;
  }
  std::sort(sets.begin(), sets.end());
  sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
  return sets;
}

}  // namespace

PartFacts part_facts(const BRepGraph& graph) {
  PartFacts facts;
  const std::vector<RoundFeature> features = round_features(graph);
  facts.hole_diameters_mm = round_holes(features);
  facts.shafts = round_shafts(features);
  facts.shape = signature(graph);
  facts.repeats = face_repeats(graph);
  return facts;
}

std::optional<double> central_bore_mm(const BRepGraph& graph) {
  Vec sides;
  for (int i = 0; i < 3; ++i) sides[i] = graph.bbox_mm[3 + i] - graph.bbox_mm[i];
  // The sample points are about the box centre, so a piece's `centre` (its
  // axis line's point closest to the box centre) is that line's distance from it.
  const double tolerance = 0.01 * std::max({sides[0], sides[1], sides[2]}) + 0.01;
  std::optional<double> bore;
  for (const RoundFeature& h : round_features(graph)) {
    const CylinderPiece& p = h.piece;
    if (!p.concave || norm(p.centre) > tolerance) continue;
    // Along at least half the part's extent on its axis: a collar's radial
    // set screw hole points at the centre too, but runs through the wall only.
    const double extent = std::abs(p.axis[0]) * sides[0] + std::abs(p.axis[1]) * sides[1] +
                          std::abs(p.axis[2]) * sides[2];
    if (p.t1 - p.t0 < 0.5 * extent) continue;
    const double diameter = 2 * p.radius;
    if (!bore || diameter < *bore) bore = diameter;
  }
  return bore;
}

bool mirror_images(const ShapeSignature& a, const ShapeSignature& b) {
  if (a.handedness == 0 || b.handedness == 0 || a.handedness == b.handedness) return false;
  for (int i = 0; i < 3; ++i) {
    if (!close(a.spread_mm[i], b.spread_mm[i], 0.005, 0.01)) return false;
    if (!close(a.skew[i], b.skew[i], 0.02, 0.01)) return false;
  }
  return true;
}

}  // namespace cadclip::data
