// cadclip synth: the built-in synthetic dataset (parametric parts as STEP and
// sketch-and-extrude programs as DeepCAD JSON, with captions at four levels),
// and --stats DIR for how hard retrieval on it is.
#ifdef CADCLIP_WITH_OCCT
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/synth/synth.h"
#include "command.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct SynthCommandOptions {
  synth::SynthOptions synth;  // count, seed, noise, workers, max_attempts, families, kind, ...
  std::string out;            // folder to write parts/, captions.jsonl, splits.json, manifest.json
  std::string stats;          // instead of generating: report the reference numbers of this folder
};

CADCLIP_OPTION_FIELDS(
    SynthCommandOptions, (count, synth.count, "Parts to make"),
    (seed, synth.seed, "Random seed: the same seed gives the same bytes"),
    (noise, synth.noise,
     "Probability that a caption is made noisy like a careless annotator's (0 = clean)"),
    (workers, synth.workers, "Modelling threads (0 = one per core)"),
    (max_attempts, synth.max_attempts,
     "Parameter draws per part before giving up (a rejected draw is counted)"),
    (families, synth.families,
     "Make only this family (repeatable; with --kind standard: this standard-part group, e.g. "
     "hex_bolt); default: all in turn"),
    (kind, synth.kind,
     "families (parametric parts as STEP), programs (sketch-and-extrude programs as DeepCAD "
     "JSON, Text2CAD-style captions), standard (standard parts from the standards' tables as "
     "STEP, captioned by designation) or mixed"),
    (program_share, synth.program_share,
     "With --kind mixed: the share of parts that are programs (0.5 = half)"),
    (standard_share, synth.standard_share,
     "With --kind mixed: the share of parts that are standard parts (default 0: none; "
     "scripts/train_release.sh uses 0.1)"),
    (program_test_share, synth.program_test_share,
     "Programs' share in the test split (default 0.1; validation stays 0.1): a large held-out "
     "program gallery from a small set"),
    (id_prefix, synth.id_prefix,
     "Starts every part's id and file name (default synth_): another prefix keeps two sets' ids "
     "apart when they are prepared or trained together"),
    (caption_units, synth.caption_units,
     "Programs' captions: units (Text2CAD's normalised units, largest side about 0.75) or mm"),
    (out, "Folder for parts/*.step, captions.jsonl, splits.json, manifest.json"),
    (stats, "Print the family-only oracle R@1 and shared-caption shares of a made set, then exit"))

int run_synth(const SynthCommandOptions& options) {
  if (!options.stats.empty()) {
    const synth::SynthStats stats = synth::synth_stats(options.stats);
    std::printf("test parts: %lld\n", static_cast<long long>(stats.test_parts));
    std::printf("family-only oracle R@1 (test split): %s\n",
                fixed(stats.family_oracle_r1, 4).c_str());
    std::printf("%-14s %28s %26s\n", "level", "shared word for word (test)",
                "shared word for word (all)");
    for (size_t i = 0; i < stats.shared_caption_share.size(); ++i)
      std::printf("%-14s %28s %26s\n", stats.shared_caption_share[i].first.c_str(),
                  fixed(stats.shared_caption_share[i].second, 4).c_str(),
                  fixed(stats.shared_caption_share_all[i].second, 4).c_str());
    if (!stats.program_distribution.is_null()) {
      const nlohmann::json& d = stats.program_distribution;
      std::printf("programs: %lld\n", d.at("parts").get<long long>());
      for (const char* key :
           {"extrudes_per_model", "curves", "operations", "extents", "sketch_planes",
            "faces_per_solid", "generators", "redraws_by_reason"}) {
        std::printf("%s:", key);
        for (auto it = d.at(key).begin(); it != d.at(key).end(); ++it)
          std::printf(" %s %lld", it.key().c_str(), it.value().get<long long>());
        std::printf("\n");
      }
    }
    return kExitOk;
  }
  if (options.out.empty())
    throw Error("cadclip synth needs --out DIR (or --stats DIR to read a made set)");
  const synth::SynthReport report = synth::write_synth_dataset(options.synth, options.out);
  std::printf(
      "%s: %lld parts, %lld captions (%lld noisy), %lld regenerated draws, %lld exact duplicates, "
      "%s\n",
      options.out.c_str(), static_cast<long long>(report.parts),
      static_cast<long long>(report.captions), static_cast<long long>(report.noisy_captions),
      static_cast<long long>(report.regenerated), static_cast<long long>(report.duplicates),
      human_duration(report.seconds).c_str());
  return kExitOk;
}

}  // namespace

void define_synth(CLI::App& command, Runner& run) {
  auto options = std::make_shared<SynthCommandOptions>();
  const SynthCommandOptions& o = *options;
  synth::SynthOptions& made = options->synth;
  const ConfigFlags config(command, options);
  add_field(command, "--count", o, made.count)->check(CLI::NonNegativeNumber);
  add_field(command, "--seed", o, made.seed);
  add_field(command, "--out", o, options->out);
  add_field(command, "--noise", o, made.noise)->check(CLI::Range(0.0, 1.0));
  add_field(command, "--workers", o, made.workers)->check(CLI::NonNegativeNumber);
  add_field(command, "--max-attempts", o, made.max_attempts);
  add_field(command, "--family", o, made.families);
  add_field(command, "--kind", o, made.kind)
      ->check(CLI::IsMember({"families", "programs", "standard", "mixed"}));
  add_field(command, "--program-share", o, made.program_share)->check(CLI::Range(0.0, 1.0));
  add_field(command, "--standard-share", o, made.standard_share)->check(CLI::Range(0.0, 1.0));
  add_field(command, "--program-test-share", o, made.program_test_share)
      ->check(CLI::Range(0.0, 0.9));
  add_field(command, "--caption-units", o, made.caption_units)
      ->check(CLI::IsMember({"units", "mm"}));
  add_field(command, "--id-prefix", o, made.id_prefix);
  add_field(command, "--stats", o, options->stats)->check(CLI::ExistingDirectory);
  command.footer(
      "Then: cadclip prepare DIR/parts --captions DIR/captions.jsonl --splits DIR/splits.json "
      "(add --assume-unit m when the set has programs: DeepCAD JSON is in metres). See "
      "docs/SYNTHETIC.md.");
  run = config.or_print([options] { return run_synth(*options); });
}

}  // namespace cadclip::app
#endif  // CADCLIP_WITH_OCCT
