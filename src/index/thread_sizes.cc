#include "thread_sizes.h"

#include <array>
#include <cmath>

namespace cadclip::index::detail {
namespace {

struct Row {
  double d, pitch, fine, medium;
};

// ISO 261 coarse pitches and ISO 273 clearance holes, fine and medium series.
constexpr std::array kRows = {
    Row{1.6, 0.35, 1.7, 1.8}, Row{2, 0.4, 2.2, 2.4}, Row{2.5, 0.45, 2.7, 2.9},
    Row{3, 0.5, 3.2, 3.4},    Row{4, 0.7, 4.3, 4.5}, Row{5, 0.8, 5.3, 5.5},
    Row{6, 1, 6.4, 6.6},      Row{8, 1.25, 8.4, 9},  Row{10, 1.5, 10.5, 11},
    Row{12, 1.75, 13, 13.5},  Row{14, 2, 15, 15.5},  Row{16, 2, 17, 17.5},
    Row{18, 2.5, 19, 20},     Row{20, 2.5, 21, 22},  Row{22, 2.5, 23, 24},
    Row{24, 3, 25, 26},       Row{27, 3, 28, 30},    Row{30, 3.5, 31, 33},
    Row{33, 3.5, 34, 36},     Row{36, 4, 37, 39},
};

}  // namespace

MetricThread metric_thread(double d) {
  MetricThread t;
  t.d = d;
  t.pitch = d / 7;
  t.clearance_fine = 1.06 * d;
  t.clearance_medium = 1.1 * d;
  for (const Row& row : kRows) {
    if (std::abs(row.d - d) < 1e-9) {
      t.pitch = row.pitch;
      t.clearance_fine = row.fine;
      t.clearance_medium = row.medium;
    }
  }
  t.minor_external = d - 1.22687 * t.pitch;
  t.minor_internal = d - 1.0825 * t.pitch;
  return t;
}

bool is_thread_diameter(const MetricThread& thread, double diameter_mm) {
  // Within 1.5% of one of them: wide enough for the modelling rounding of a
  // library part, narrow enough that an M8 shank (8 mm) is no M10 thread core
  // (8.16 mm).
  for (const double at : {thread.minor_external, thread.minor_internal, thread.d})
    if (std::abs(diameter_mm - at) <= 0.015 * at) return true;
  return false;
}

bool is_clearance_diameter(const MetricThread& thread, double diameter_mm) {
  return diameter_mm >= 0.98 * thread.clearance_fine &&
         diameter_mm <= 1.02 * thread.clearance_medium;
}

}  // namespace cadclip::index::detail
