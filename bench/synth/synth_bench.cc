// How fast `cadclip synth` makes parts: time per family and per phase (model
// and measure, geometry hash, STEP text, captions) on one thread, then the
// whole job on 1 and 2 worker threads, alternating, and the projected time for
// 10,000 parts. Usage: synth_bench [parts_per_job=360] [out_dir=/tmp/cadclip_synth_bench]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cad/occt_shape.h"
#include "cad/synth/model.h"
#include "cadclip/cad/synth.h"
#include "common/bench_util.h"

using namespace cadclip;

int main(int argc, char** argv) {
  const int64_t parts = argc > 1 ? std::atoll(argv[1]) : 360;
  const std::filesystem::path out = argc > 2 ? argv[2] : "/tmp/cadclip_synth_bench";
  bench::print_header("synth: parametric parts to STEP + captions", bench::set_threads(1));

  std::printf("\n## one thread, 6 parts per family: milliseconds per part\n");
  std::printf("%-15s %9s %9s %7s %9s %7s\n", "family", "model+chk", "hash(ing)", "STEP", "captions",
              "total");
  std::map<std::string, double> phase_total;
  for (const cad::synth::FamilyInfo& info : cad::synth::families()) {
    double model = 0, hash = 0, step = 0, captions = 0;
    int made = 0;
    for (uint64_t i = 0; made < 6; ++i) {
      cad::synth::Rng rng(1, i, cad::synth::kTagParams, 0);
      cad::synth::Built built;
      try {
        model += bench::seconds_of([&] {
          built = info.build(rng);
          (void)cad::synth::measure_valid_solid(built.shape);
        });
      } catch (const cad::synth::Reject&) {
        continue;  // rejected draws cost time too: it stays in `model`
      }
      // The geometry hash comes from the ingest layer's featurization.
      hash += bench::seconds_of(
          [&] { (void)cad::ingest_shape(built.shape, "bench", "synthetic:mm", {}); });
      step += bench::seconds_of([&] { (void)cad::synth::step_text(built.shape, "bench"); });
      captions +=
          bench::seconds_of([&] { (void)cad::synth::write_captions(built.desc, 1, i, 0.2); });
      ++made;
    }
    const double total = model + hash + step + captions;
    std::printf("%-15s %9.1f %9.1f %7.1f %9.2f %7.1f\n", info.key.c_str(), model / made * 1e3,
                hash / made * 1e3, step / made * 1e3, captions / made * 1e3, total / made * 1e3);
    phase_total["model"] += model / made;
    phase_total["hash"] += hash / made;
    phase_total["step"] += step / made;
    phase_total["captions"] += captions / made;
  }
  const double n_families = static_cast<double>(cad::synth::families().size());
  std::printf(
      "%-15s %9.1f %9.1f %7.1f %9.2f %7.1f\n", "mean", phase_total["model"] / n_families * 1e3,
      phase_total["hash"] / n_families * 1e3, phase_total["step"] / n_families * 1e3,
      phase_total["captions"] / n_families * 1e3,
      (phase_total["model"] + phase_total["hash"] + phase_total["step"] + phase_total["captions"]) /
          n_families * 1e3);

  std::printf("\n## whole job (write_synth_dataset, %lld parts), alternating 1 and 2 workers\n",
              static_cast<long long>(parts));
  std::map<int, std::vector<double>> seconds;
  for (int repeat = 0; repeat < 2; ++repeat) {
    for (int workers : {1, 2}) {
      cad::SynthOptions options;
      options.count = parts;
      options.seed = 1;
      options.noise = 0.2;
      options.workers = workers;
      std::filesystem::remove_all(out);
      seconds[workers].push_back(
          bench::seconds_of([&] { cad::write_synth_dataset(options, out); }));
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
