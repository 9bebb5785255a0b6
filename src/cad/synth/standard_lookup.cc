#include "cadclip/cad/standards.h"

#include "standard_tables.h"

namespace cadclip::cad {

std::optional<BearingSize> ball_bearing_size(std::string_view number) {
  const synth::StandardTable& table = synth::standard_table("ball_bearings.csv");
  for (size_t row = 0; row < table.rows.size(); ++row) {
    if (table.cell(row, "designation") != number) continue;
    return BearingSize{std::string(number), table.number(row, "d"), table.number(row, "D"),
                       table.number(row, "B")};
  }
  return std::nullopt;
}

}  // namespace cadclip::cad
