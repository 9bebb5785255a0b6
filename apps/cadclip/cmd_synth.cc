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
#include "cadclip/synth/synth.h"
#include "command.h"

namespace cadclip::app {
namespace {

struct SynthCommandOptions {
  synth::SynthOptions synth;  // count, seed, noise, workers, max_attempts, families, kind, ...
  std::string out;            // folder to write parts/, captions.jsonl, splits.json, manifest.json
  std::string stats;          // instead of generating: report the reference numbers of this folder
};

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
  command.add_option("--count", options->synth.count, "Parts to make")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--seed", options->synth.seed,
                     "Random seed: the same seed gives the same bytes");
  command.add_option("--out", options->out,
                     "Folder for parts/*.step, captions.jsonl, splits.json, manifest.json");
  command
      .add_option(
          "--noise", options->synth.noise,
          "Probability that a caption is made noisy like a careless annotator's (0 = clean)")
      ->check(CLI::Range(0.0, 1.0));
  command.add_option("--workers", options->synth.workers, "Modelling threads (0 = one per core)")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--max-attempts", options->synth.max_attempts,
                     "Parameter draws per part before giving up (a rejected draw is counted)");
  command.add_option(
      "--family", options->synth.families,
      "Make only this family (repeatable; with --kind standard: this standard-part group, "
      "e.g. hex_bolt); default: all in turn");
  command
      .add_option("--kind", options->synth.kind,
                  "families (parametric parts as STEP), programs (sketch-and-extrude programs as "
                  "DeepCAD JSON, Text2CAD-style captions), standard (standard parts from the "
                  "standards' tables as STEP, captioned by designation) or mixed")
      ->check(CLI::IsMember({"families", "programs", "standard", "mixed"}));
  command
      .add_option("--program-share", options->synth.program_share,
                  "With --kind mixed: the share of parts that are programs (0.5 = half)")
      ->check(CLI::Range(0.0, 1.0));
  command
      .add_option("--standard-share", options->synth.standard_share,
                  "With --kind mixed: the share of parts that are standard parts (default 0.1; 0 "
                  "= none, the mixed set as it was before)")
      ->check(CLI::Range(0.0, 1.0));
  command
      .add_option("--program-test-share", options->synth.program_test_share,
                  "Programs' share in the test split (default 0.1; validation stays 0.1): a "
                  "large held-out program gallery from a small set")
      ->check(CLI::Range(0.0, 0.9));
  command
      .add_option("--caption-units", options->synth.caption_units,
                  "Programs' captions: units (Text2CAD's normalised units, largest side about "
                  "0.75) or mm")
      ->check(CLI::IsMember({"units", "mm"}));
  command
      .add_option(
          "--stats", options->stats,
          "Print the family-only oracle R@1 and shared-caption shares of a made set, then exit")
      ->check(CLI::ExistingDirectory);
  command.footer(
      "Then: cadclip prepare DIR/parts --captions DIR/captions.jsonl --splits DIR/splits.json "
      "(add --assume-unit m when the set has programs: DeepCAD JSON is in metres). See "
      "docs/SYNTHETIC.md.");
  run = [options] { return run_synth(*options); };
}

}  // namespace cadclip::app
#endif  // CADCLIP_WITH_OCCT
