// The shared corpus of real CAD files from public projects, found through the
// CMake variable CADCLIP_SHARED_DATA (default: ../shared/data beside the
// checkout). A test that reads it starts with
//   CADCLIP_SKIP_WITHOUT_SHARED_DATA();
// and is skipped, saying where the corpus was looked for, when it is absent.
#pragma once

#include <filesystem>

#define CADCLIP_SKIP_WITHOUT_SHARED_DATA()                               \
  if (!std::filesystem::exists(CADCLIP_SHARED_DATA))                     \
  GTEST_SKIP() << "the shared CAD corpus is not at " CADCLIP_SHARED_DATA \
                  ": put it there or "                                   \
                  "configure with -DCADCLIP_SHARED_DATA=DIR"
