// libFuzzer: the caption readers (Text2CAD CSV, CSV, JSONL) on any bytes.
// Every caption they keep must be non-empty UTF-8 without NUL bytes, under
// an id of the same kind; every problem must name a line.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/utf8.h"

namespace {

bool clean(const std::string& text) {
  return !text.empty() && !cadclip::data::first_invalid_utf8(text) &&
         text.find('\0') == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the file name and the format option.
  const char* formats[] = {"auto", "text2cad", "csv", "jsonl"};
  const std::string format = formats[data[0] % 4];
  const std::string path = "/tmp/cadclip_fuzz_captions_" + std::to_string(::getpid()) +
                           ((data[0] >> 2) % 2 ? ".jsonl" : ".csv");
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) std::abort();
  if (size > 1) std::fwrite(data + 1, 1, size - 1, file);
  std::fclose(file);
  cadclip::data::CaptionOptions options;
  options.format = format;
  options.id_column = "uid";
  options.text_column = "abstract";
  try {
    const cadclip::data::CaptionFile captions = cadclip::data::read_captions(path, options);
    for (const cadclip::data::Caption& c : captions.captions)
      if (!clean(c.text) || !clean(c.id)) std::abort();
    for (const cadclip::data::CaptionProblem& p : captions.problems)
      if (p.line < 1 || p.reason.empty()) std::abort();
  } catch (const cadclip::Error&) {
    // An unreadable file or header: refused with a message.
  }
  return 0;
}
