#include "cadclip/data/graph_codec.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cadclip/core/format.h"

namespace cadclip::data {
namespace {

constexpr uint32_t kMagic = 0x31474343;  // "CCG1" read as little-endian bytes
constexpr int64_t kFaceGridValues = kUvGridSize * kUvGridSize * kFaceChannels;
constexpr int64_t kEdgeGridValues = kCurveSamples * kEdgeChannels;

template <class T>
Status check_size(const std::vector<T>& values, int64_t expected, const char* name) {
  if (static_cast<int64_t>(values.size()) == expected) return Status::ok();
  return Status::failure(format("{} holds {} values where the face/edge counts imply {}", name,
                                values.size(), expected));
}

Status check_finite(const std::vector<float>& values, const char* name) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]))
      return Status::failure(format("{} holds a non-finite value at position {}", name, i));
  }
  return Status::ok();
}

template <class T>
void put(std::string& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <class T>
void put_vector(std::string& out, const std::vector<T>& values) {
  put(out, static_cast<uint64_t>(values.size()));
  if (!values.empty())
    out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

void put_string(std::string& out, const std::string& text) {
  put(out, static_cast<uint64_t>(text.size()));
  out.append(text);
}

class Decoder {
 public:
  Decoder(std::span<const std::byte> bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  template <class T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  template <class T>
  std::vector<T> get_vector() {
    const uint64_t n = get<uint64_t>();
    if (n > (bytes_.size() - at_) / sizeof(T)) fail("an array runs past the end");
    std::vector<T> values(n);
    if (n) std::memcpy(values.data(), take(n * sizeof(T)), n * sizeof(T));
    return values;
  }
  std::string get_string() {
    const uint64_t n = get<uint64_t>();
    if (n > bytes_.size() - at_) fail("a string runs past the end");
    const std::byte* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  bool at_end() const { return at_ == bytes_.size(); }
  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(
        format("{} is not a valid encoded B-Rep graph: {} (byte {} of {}); it was written "
               "by another cadclip version or is damaged: prepare the input again",
               what_, problem, at_, bytes_.size()));
  }

 private:
  const std::byte* take(size_t n) {
    if (n > bytes_.size() - at_) fail("the bytes end early");
    const std::byte* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  std::span<const std::byte> bytes_;
  const std::string& what_;
  size_t at_ = 0;
};

}  // namespace

Status validate_graph(const BRepGraph& g) {
  const int64_t f = g.num_faces();
  const int64_t e = g.num_edges();
  for (Status s :
       {check_size(g.face_grids, f * kFaceGridValues, "face_grids"),
        check_size(g.face_areas, f, "face_areas"),
        check_size(g.face_centroids, f * 3, "face_centroids"),
        check_size(g.face_rational, f, "face_rational"), check_size(g.face_loops, f, "face_loops"),
        check_size(g.edge_dst, e, "edge_dst"),
        check_size(g.edge_grids, e * kEdgeGridValues, "edge_grids"),
        check_size(g.edge_types, e, "edge_types"), check_size(g.edge_lengths, e, "edge_lengths"),
        check_size(g.edge_convexity, e, "edge_convexity")}) {
    if (!s) return s;
  }
  for (int64_t i = 0; i < e; ++i) {
    if (g.edge_src[i] < 0 || g.edge_src[i] >= f || g.edge_dst[i] < 0 || g.edge_dst[i] >= f) {
      return Status::failure(format("edge {} joins faces {} and {}, but the graph has {} faces", i,
                                    g.edge_src[i], g.edge_dst[i], f));
    }
  }
  for (int64_t i = 0; i < f; ++i) {
    if (g.face_types[i] >= static_cast<uint8_t>(SurfaceType::kCount))
      return Status::failure(
          format("face {} has surface type {}, out of range", i, +g.face_types[i]));
  }
  for (int64_t i = 0; i < e; ++i) {
    if (g.edge_types[i] >= static_cast<uint8_t>(CurveType::kCount))
      return Status::failure(
          format("edge {} has curve type {}, out of range", i, +g.edge_types[i]));
    if (g.edge_convexity[i] >= static_cast<uint8_t>(Convexity::kCount))
      return Status::failure(
          format("edge {} has convexity {}, out of range", i, +g.edge_convexity[i]));
  }
  for (Status s :
       {check_finite(g.face_grids, "face_grids"), check_finite(g.face_areas, "face_areas"),
        check_finite(g.face_centroids, "face_centroids"), check_finite(g.edge_grids, "edge_grids"),
        check_finite(g.edge_lengths, "edge_lengths")}) {
    if (!s) return s;
  }
  for (float v : g.bbox_mm) {
    if (!std::isfinite(v)) return Status::failure("bbox_mm holds a non-finite value");
  }
  if (!std::isfinite(g.scale_mm)) return Status::failure("scale_mm is not finite");
  return Status::ok();
}

std::string encode_graph(const BRepGraph& g) {
  std::string out;
  out.reserve(64 + g.face_grids.size() * 4 + g.edge_grids.size() * 4 + g.num_faces() * 16 +
              g.num_edges() * 16);
  put(out, kMagic);
  put_string(out, g.id);
  put_vector(out, g.face_grids);
  put_vector(out, g.face_types);
  put_vector(out, g.face_areas);
  put_vector(out, g.face_centroids);
  put_vector(out, g.face_rational);
  put_vector(out, g.face_loops);
  put_vector(out, g.edge_src);
  put_vector(out, g.edge_dst);
  put_vector(out, g.edge_grids);
  put_vector(out, g.edge_types);
  put_vector(out, g.edge_lengths);
  put_vector(out, g.edge_convexity);
  for (float v : g.bbox_mm) put(out, v);
  put(out, g.scale_mm);
  put_string(out, g.unit);
  put(out, g.solid_count);
  put(out, static_cast<uint8_t>(g.closed ? 1 : 0));
  put_string(out, g.geometry_hash);
  return out;
}

BRepGraph decode_graph(std::span<const std::byte> bytes, const std::string& what) {
  Decoder in(bytes, what);
  if (in.get<uint32_t>() != kMagic) in.fail("it does not start with the CCG1 mark");
  BRepGraph g;
  g.id = in.get_string();
  g.face_grids = in.get_vector<float>();
  g.face_types = in.get_vector<uint8_t>();
  g.face_areas = in.get_vector<float>();
  g.face_centroids = in.get_vector<float>();
  g.face_rational = in.get_vector<uint8_t>();
  g.face_loops = in.get_vector<int32_t>();
  g.edge_src = in.get_vector<int32_t>();
  g.edge_dst = in.get_vector<int32_t>();
  g.edge_grids = in.get_vector<float>();
  g.edge_types = in.get_vector<uint8_t>();
  g.edge_lengths = in.get_vector<float>();
  g.edge_convexity = in.get_vector<uint8_t>();
  for (float& v : g.bbox_mm) v = in.get<float>();
  g.scale_mm = in.get<float>();
  g.unit = in.get_string();
  g.solid_count = in.get<int32_t>();
  g.closed = in.get<uint8_t>() != 0;
  g.geometry_hash = in.get_string();
  if (!in.at_end()) in.fail("bytes follow the last field");
  const Status valid = validate_graph(g);
  if (!valid) in.fail(valid.reason());
  return g;
}

}  // namespace cadclip::data
