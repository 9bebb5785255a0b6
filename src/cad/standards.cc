#include "cadclip/cad/standards.h"

#include <cctype>
#include <cmath>

#include "cadclip/cad/standard_tables.h"

namespace cadclip::cad {

std::optional<BearingSize> ball_bearing_size(std::string_view number) {
  const StandardTable& table = standard_table("ball_bearings.csv");
  for (size_t row = 0; row < table.rows.size(); ++row) {
    if (table.cell(row, "designation") != number) continue;
    return BearingSize{std::string(number), table.number(row, "d"), table.number(row, "D"),
                       table.number(row, "B")};
  }
  return std::nullopt;
}

std::optional<SteelProfileSize> steel_profile_size(std::string_view series, std::string_view size) {
  std::string upper(series);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const bool angle = upper == "L";
  const char* file = angle            ? "steel_angles.csv"
                     : upper == "UPN" ? "steel_channels.csv"
                                      : "steel_i_sections.csv";
  const StandardTable& table = standard_table(file);
  const std::string designation = upper + " " + std::string(size);
  for (size_t row = 0; row < table.rows.size(); ++row) {
    if (table.cell(row, "designation") != designation) continue;
    const double area = 100 * table.number(row, "A");
    if (angle) {
      const double a = table.number(row, "a"), t = table.number(row, "t");
      return SteelProfileSize{designation, file, a, a, t, t, area};
    }
    return SteelProfileSize{designation,
                            file,
                            table.number(row, "h"),
                            table.number(row, "b"),
                            table.number(row, "tw"),
                            table.number(row, "tf"),
                            area};
  }
  return std::nullopt;
}

namespace {

// The row of `file` whose column `column` is d; nullopt when there is none.
std::optional<size_t> row_of_diameter(const StandardTable& table, const char* column, double d) {
  for (size_t row = 0; row < table.rows.size(); ++row)
    if (table.number(row, column) == d) return row;
  return std::nullopt;
}

double number_or_zero(const StandardTable& table, size_t row, const char* column) {
  return table.has(row, column) ? table.number(row, column) : 0.0;
}

}  // namespace

std::optional<HexHeadSize> hex_head_size(double d) {
  const StandardTable& t = standard_table("hex_bolts.csv");
  const std::optional<size_t> row = row_of_diameter(t, "d", d);
  if (!row) return std::nullopt;
  return HexHeadSize{t.number(*row, "s"), t.number(*row, "k"), t.number(*row, "s_din"),
                     t.number(*row, "k_din")};
}

std::optional<SocketHeadSize> socket_head_size(double d) {
  const StandardTable& t = standard_table("socket_head_cap_screws.csv");
  const std::optional<size_t> row = row_of_diameter(t, "d", d);
  if (!row) return std::nullopt;
  return SocketHeadSize{t.number(*row, "dk"), t.number(*row, "k")};
}

std::optional<double> countersunk_head_diameter(double d) {
  const StandardTable& t = standard_table("countersunk_socket_screws.csv");
  const std::optional<size_t> row = row_of_diameter(t, "d", d);
  if (!row) return std::nullopt;
  return t.number(*row, "dk");
}

std::optional<HexNutSize> hex_nut_size(double d) {
  const StandardTable& t = standard_table("hex_nuts.csv");
  const std::optional<size_t> row = row_of_diameter(t, "D", d);
  if (!row) return std::nullopt;
  return HexNutSize{t.number(*row, "s"),
                    t.number(*row, "m_4032"),
                    number_or_zero(t, *row, "m_4035"),
                    number_or_zero(t, *row, "h_7040"),
                    t.number(*row, "s_din"),
                    t.number(*row, "m_din")};
}

std::optional<PlainWasherSize> plain_washer_size(double d) {
  const StandardTable& t = standard_table("plain_washers.csv");
  const std::optional<size_t> row = row_of_diameter(t, "d", d);
  if (!row) return std::nullopt;
  return PlainWasherSize{t.number(*row, "d2"), t.number(*row, "h"),
                         number_or_zero(t, *row, "d2_large"), number_or_zero(t, *row, "h_large")};
}

std::optional<SpringWasherSize> spring_washer_size(double d) {
  const StandardTable& t = standard_table("spring_lock_washers.csv");
  const std::optional<size_t> row = row_of_diameter(t, "d", d);
  if (!row) return std::nullopt;
  return SpringWasherSize{t.number(*row, "d2"), t.number(*row, "s"), t.number(*row, "h_min")};
}

std::optional<RetainingRingSize> retaining_ring_size(bool shaft, double d1) {
  const StandardTable& t =
      standard_table(shaft ? "retaining_rings_shaft.csv" : "retaining_rings_bore.csv");
  const std::optional<size_t> row = row_of_diameter(t, "d1", d1);
  if (!row) return std::nullopt;
  return RetainingRingSize{t.number(*row, "s"), t.number(*row, "d3"), t.number(*row, "a")};
}

std::optional<HexStandoffSize> hex_standoff_size(double d) {
  const StandardTable& t = standard_table("hex_standoffs.csv");
  const std::optional<size_t> row = row_of_diameter(t, "d", d);
  if (!row) return std::nullopt;
  return HexStandoffSize{t.number(*row, "s"), t.number(*row, "stud")};
}

std::optional<TslotProfileSize> tslot_profile_size(int series, double slot) {
  const StandardTable& table = standard_table("tslot_profiles.csv");
  for (size_t row = 0; row < table.rows.size(); ++row) {
    if (table.number(row, "series") != series) continue;
    if (slot != 0 && table.number(row, "slot") != slot) continue;
    return TslotProfileSize{table.cell(row, "designation"), table.cell(row, "catalogue"),
                            table.cell(row, "misumi"),      table.number(row, "a"),
                            table.number(row, "slot"),      table.number(row, "bore")};
  }
  return std::nullopt;
}

std::optional<PulleySize> gt2_pulley_size(int teeth) {
  if (teeth < 10 || teeth > 250) return std::nullopt;
  const double pitch = teeth * 2 / 3.14159265358979323846;
  const StandardTable& table = standard_table("gt2_pulleys.csv");
  bool in_table = false;
  for (size_t row = 0; row < table.rows.size(); ++row)
    in_table |= table.number(row, "teeth") == teeth;
  return PulleySize{teeth, pitch, pitch - 2 * 0.254, in_table};
}

std::optional<GearSize> spur_gear_size(double module, int teeth) {
  if (!(module > 0) || teeth < 6) return std::nullopt;
  const double d = module * teeth;
  return GearSize{module,
                  teeth,
                  d,
                  module * (teeth + 2),
                  module * (teeth - 2.5),
                  d * std::cos(20 * 3.14159265358979323846 / 180)};
}

}  // namespace cadclip::cad
