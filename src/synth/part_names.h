// What design engineers call a part (flange, bushing, mounting plate, L
// bracket, ...), chosen by rules over the facts of the built part, and the
// short name-like captions of the "name" level ("flange 6 holes", "M8 spacer
// 20mm", "mounting plate 120x80") that a file name or a catalog title holds.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "synth/model.h"
#include "synth/program.h"

namespace cadclip::synth {

// An engineer's name of a part and what a short name may state beside it;
// every field comes from the part's family, features and measured sizes.
struct PartName {
  // Five synonyms, the most usual first; the fifth (index 4) is held out for
  // test phrasings like every fifth entry of a synonym set.
  std::vector<std::string> nouns;
  std::string count_key;   // the count a name states ("hole_count", "tooth_count"); "" = none
  int count = 0;           // its value
  std::string count_noun;  // plural noun of the count ("holes", "teeth")
  std::string count_one;   // singular noun ("hole", "tooth")
  std::string bolt_key;    // "thread" (a nut's or standoff's) or "bolt_size" (a bore that clears
                           // a metric bolt); "" = none
  double bolt = 0;         // the metric size in mm (8 = M8)
  // Sizes a name states (fact key, value as the caption writer takes it:
  // millimetres for families, units for programs).
  std::vector<std::pair<std::string, double>> sizes;
};

// Families (STEP parts): rules over the family and the facts of its clean captions.
PartName family_part_name(const Description& desc);
// Programs: rules over the program's family, features and steps, and the
// measured solid (desc.extent, desc.mm_per_unit for metric sizes).
PartName program_part_name(const Program& program, const ProgramDescription& desc);

// The metric bolt (mm) whose clearance hole (ISO 273, from the nominal size
// to the coarse series) a bore of `d` mm is; 0 when none fits.
double clearance_bolt(double d);

// The name level has kStructures templates (program_caption.h); those at
// heldout_structure() are held out. What the name renderer asks of a writer:
struct NameWriter {
  std::function<int()> structure;                                   // a template index
  std::function<std::string(const std::vector<std::string>&)> syn;  // a synonym (held-out rule)
  std::function<bool(const std::string&)> hidden;                   // noise left this number out
  std::function<std::string(const std::string&, double)> bare;      // a size, no unit, as a fact
  std::function<std::string()> unit;                                // " mm", " units", ""
  std::function<std::string(const std::string&, int)> count;        // a count, as a fact
  std::function<std::string(const std::string&, double)> plain;     // a bolt size, as a fact
};
// One name-level caption of `name`, calling the part one of `nouns` (its own,
// or a confusable family's for other_name noise).
std::string render_name(const PartName& name, const std::vector<std::string>& nouns, NameWriter& w);
// The texts only held-out name templates use: for tests.
std::vector<std::string> name_heldout_markers();

}  // namespace cadclip::synth
