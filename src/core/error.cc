#include "cadclip/core/error.h"

#include <cstdio>
#include <cstdlib>

namespace cadclip::detail {

void invariant_failed(const char* expression, const char* file, int line,
                      const std::string& message) {
  std::fprintf(stderr, "\ncadclip: internal error at %s:%d: check '%s' failed%s%s\n", file, line,
               expression, message.empty() ? "" : ": ", message.c_str());
  std::fprintf(stderr, "This is a bug in cadclip; please report it with the command you ran.\n");
  std::fflush(stderr);
  std::abort();
}

}  // namespace cadclip::detail
