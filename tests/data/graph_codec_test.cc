#include "cadclip/data/graph_codec.h"

#include <gtest/gtest.h>

#include <limits>

#include "test_graphs.h"

namespace cadclip::data {
namespace {

using testing::chain_graph;
using testing::same_graph;

std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

TEST(GraphCodec, RoundTripKeepsEveryField) {
  const BRepGraph g = chain_graph("a/b", 5, 1.5f);
  const std::string bytes = encode_graph(g);
  EXPECT_TRUE(same_graph(decode_graph(as_bytes(bytes), "test"), g));
}

TEST(GraphCodec, RoundTripOfAGraphWithoutEdges) {
  const BRepGraph g = chain_graph("single", 1, 2.0f);
  ASSERT_EQ(g.num_edges(), 0);
  EXPECT_TRUE(same_graph(decode_graph(as_bytes(encode_graph(g)), "test"), g));
}

TEST(GraphCodec, TruncatedOrExtendedBytesAreRejectedWithTheSourceNamed) {
  const std::string bytes = encode_graph(chain_graph("x", 3, 1.0f));
  for (size_t cut : {size_t{0}, size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    try {
      decode_graph(as_bytes(bytes.substr(0, cut)), "journal record 7");
      FAIL() << "decoded " << cut << " bytes";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("journal record 7"), std::string::npos);
    }
  }
  EXPECT_THROW(decode_graph(as_bytes(bytes + "x"), "t"), Error);
}

TEST(ValidateGraph, NamesTheInconsistentArray) {
  BRepGraph g = chain_graph("x", 3, 1.0f);
  ASSERT_TRUE(validate_graph(g).is_ok());
  g.face_areas.pop_back();
  EXPECT_NE(validate_graph(g).reason().find("face_areas"), std::string::npos);

  g = chain_graph("x", 3, 1.0f);
  g.edge_dst[0] = 3;
  EXPECT_NE(validate_graph(g).reason().find("edge 0"), std::string::npos);

  g = chain_graph("x", 3, 1.0f);
  g.face_grids[17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(validate_graph(g).reason().find("face_grids"), std::string::npos);

  g = chain_graph("x", 3, 1.0f);
  g.edge_convexity[1] = 9;
  EXPECT_FALSE(validate_graph(g).is_ok());
}

}  // namespace
}  // namespace cadclip::data
