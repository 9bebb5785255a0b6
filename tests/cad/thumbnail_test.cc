// Thumbnails: an isometric line drawing with hidden lines removed has visible
// strokes, fewer of them (and less ink) than the full wireframe of the same
// part, fits its 200 px frame, and a bad file is a failure with a reason.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "../shared_corpus.h"
#include "cadclip/cad/thumbnail.h"

namespace cadclip::cad {
namespace {

const char* kPart = CADCLIP_SHARED_DATA "/cad/brepnet/21165_5cb2d287_0000_2.step";

TEST(Thumbnail, HiddenLinesRemovedLeavesFewerStrokesThanTheWireframe) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const Result<Thumbnail> visible = make_thumbnail(kPart);
  ASSERT_TRUE(visible) << visible.status().reason();
  ThumbnailOptions all;
  all.remove_hidden = false;
  const Result<Thumbnail> wireframe = make_thumbnail(kPart, all);
  ASSERT_TRUE(wireframe) << wireframe.status().reason();

  EXPECT_GE(visible->strokes, 4);
  EXPECT_GT(visible->length_px, 200);  // real lines, not dots
  EXPECT_LT(visible->strokes, wireframe->strokes);
  EXPECT_LT(visible->length_px, wireframe->length_px);

  const std::string& svg = visible->svg;
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("width=\"200\""), std::string::npos);
  size_t polylines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1))
    ++polylines;
  EXPECT_EQ(static_cast<int64_t>(polylines), visible->strokes);
  // Every point lies in the 200 px frame.
  const std::regex point(R"((-?[0-9.]+),(-?[0-9.]+))");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), point); it != std::sregex_iterator();
       ++it) {
    for (int i = 1; i <= 2; ++i) {
      const double v = std::stod((*it)[i].str());
      EXPECT_GE(v, 0);
      EXPECT_LE(v, 200);
    }
  }
}

TEST(Thumbnail, BadFileIsAFailureWithItsName) {
  const Result<Thumbnail> missing = make_thumbnail("no/such/part.step");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().reason().find("part.step"), std::string::npos);
}

}  // namespace
}  // namespace cadclip::cad
