// ISO metric threads, for the filters and for the designations a query
// names ("M8 nut", "M8x40 bolt", "washer M10"): the coarse pitch (ISO 261),
// the minor diameters (ISO 724) and the clearance holes (ISO 273) of a
// nominal diameter. Private to the index layer.
#pragma once

namespace cadclip::index::detail {

struct MetricThread {
  double d = 0;                 // nominal diameter, mm
  double pitch = 0;             // coarse pitch P
  double minor_external = 0;    // d3 = d - 1.22687 P: a bolt's thread core
  double minor_internal = 0;    // D1 = d - 1.0825 P: a nut's thread hole
  double clearance_fine = 0;    // ISO 273 fine clearance hole (ISO 7089 washers' bore)
  double clearance_medium = 0;  // ISO 273 medium
};

// The thread of nominal diameter `d` mm: the tables' values for M1.6 to M36,
// and for other sizes a pitch of about d/7 and clearances of 1.06 d and 1.1 d.
MetricThread metric_thread(double d);

// The diameters a thread of `d` is modelled at, each within 1.5%: a thread
// cylinder at d3, a nut's thread hole at D1, or a cosmetic thread (and a
// bolt's shank) at the nominal d.
bool is_thread_diameter(const MetricThread& thread, double diameter_mm);
// A hole a bolt of `d` passes through, fine to medium (a washer's bore).
bool is_clearance_diameter(const MetricThread& thread, double diameter_mm);

}  // namespace cadclip::index::detail
