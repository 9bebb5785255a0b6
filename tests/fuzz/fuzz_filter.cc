// libFuzzer: the filter language (index/filter.h) on any bytes, as a filter
// and as a query text read for its numbers (--strict-numbers). A filter is
// read or refused with cadclip::Error, never anything else; one that is
// read writes text that reads back to the same filter; every condition a
// text states has a key, a range, and the words it came from.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/index/filter.h"
#include "cadclip/index/query_facts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using cadclip::index::Filter;
  try {
    const Filter filter = cadclip::index::parse_filter(text);
    const std::string written = filter.to_string();
    Filter again;
    try {
      again = cadclip::index::parse_filter(written);
    } catch (const cadclip::Error&) {
      std::abort();  // the filter's own text must read
    }
    // The text form holds the whole filter (a filter read from text has
    // no origins or reasons to lose, and no NaN bounds: they are refused).
    if (again.to_string() != written || !(again == filter)) std::abort();
  } catch (const cadclip::Error&) {
  }
  for (const cadclip::index::Condition& c : cadclip::index::conditions_stated_in(text)) {
    if (c.ranges.empty() || c.because.empty()) std::abort();
    for (const cadclip::index::NumberRange& r : c.ranges)
      if (std::isnan(r.min) || std::isnan(r.max)) std::abort();
  }
  return 0;
}
