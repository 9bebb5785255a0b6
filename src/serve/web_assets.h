// The files of web/, built into the binary by cmake/embed_web.cmake.
#pragma once

#include <string_view>
#include <vector>

namespace cadclip::serve::detail {

struct WebAsset {
  std::string_view name;  // file name in web/ ("index.html")
  std::string_view data;  // its bytes
};

const std::vector<WebAsset>& web_assets();

}  // namespace cadclip::serve::detail
