// How fast `cadclip synth` makes parts: milliseconds per part for each family
// and for sketch-and-extrude programs on one thread (make_synth_part: draw,
// model, validity check, geometry hash, STEP or JSON text, captions), then the
// whole job on 1 and 2 worker threads, alternating, and the projected time for
// 10,000 parts. Usage: synth_bench [parts_per_job=360] [out_dir=/tmp/cadclip_synth_bench]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cadclip/synth/synth.h"
#include "common/bench_util.h"

using namespace cadclip;

namespace {

// Milliseconds per part and parameter draws per part over `parts` parts.
void time_parts(const std::string& label, const synth::SynthOptions& options, int64_t parts) {
  int draws = 0;
  const double seconds = bench::seconds_of([&] {
    for (int64_t i = 0; i < parts; ++i) draws += synth::make_synth_part(options, i).attempts;
  });
  std::printf("| %s | %.1f | %.2f |\n", label.c_str(), seconds / static_cast<double>(parts) * 1e3,
              static_cast<double>(draws) / static_cast<double>(parts));
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t parts = argc > 1 ? std::atoll(argv[1]) : 360;
  const std::filesystem::path out = argc > 2 ? argv[2] : "/tmp/cadclip_synth_bench";
  bench::print_header("synth: parametric parts and programs with captions", bench::set_threads(1));

  std::printf(
      "\n## one thread, make_synth_part\n| kind | ms per part | draws per part |\n"
      "|---|---|---|\n");
  for (const std::string& family : synth::synth_families()) {
    synth::SynthOptions options;
    options.seed = 1;
    options.noise = 0.2;
    options.families = {family};
    time_parts(family + " (6 parts)", options, 6);
  }
  synth::SynthOptions programs;
  programs.seed = 1;
  programs.kind = "programs";
  time_parts("programs (60 parts)", programs, 60);

  std::printf("\n## whole job (write_synth_dataset, %lld parts), alternating 1 and 2 workers\n",
              static_cast<long long>(parts));
  std::map<int, std::vector<double>> seconds;
  for (int repeat = 0; repeat < 2; ++repeat) {
    for (int workers : {1, 2}) {
      synth::SynthOptions options;
      options.count = parts;
      options.seed = 1;
      options.noise = 0.2;
      options.workers = workers;
      std::filesystem::remove_all(out);
      seconds[workers].push_back(
          bench::seconds_of([&] { synth::write_synth_dataset(options, out); }));
    }
  }
  std::filesystem::remove_all(out);
  std::printf("%-8s %10s %10s %10s %14s %8s\n", "workers", "median s", "p10 s", "p90 s", "parts/s",
              "10k parts");
  double one = 0;
  for (auto& [workers, list] : seconds) {
    const bench::Stats s = bench::summarize(list);
    const double rate = static_cast<double>(parts) / s.median;
    if (workers == 1) one = s.median;
    std::printf("%-8d %10.2f %10.2f %10.2f %14.1f %7.1fm\n", workers, s.median, s.p10, s.p90, rate,
                10000 / rate / 60);
  }
  std::printf("speed-up of 2 workers over 1: %.2fx\n", one / bench::summarize(seconds[2]).median);
  return 0;
}
