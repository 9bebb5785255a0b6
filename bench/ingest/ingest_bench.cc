// CAD ingest benchmark (docs/PERFORMANCE.md, "CAD ingest"): per file and per
// format, the bare OCCT read and transfer against the whole of ingest_file
// (read + model rule + featurization), runs alternating, medians compared.
//
//   ingest_bench [--repeats N] [--warmup N] [--synth N] [FOLDER_OR_FILE ...]
//
// Default corpus: the STEP, IGES and BREP files of ../shared/data/cad and the
// DeepCAD fixtures of tests/fixtures/deepcad (run from the project root).
// --synth N adds N synthetic parts (cadclip synth's families, seed 1) written
// as STEP to a temporary folder, reported as their own row.
#include <BRepTools.hxx>
#include <BRep_Builder.hxx>
#include <IGESControl_Controller.hxx>
#include <IGESControl_Reader.hxx>
#include <Interface_Static.hxx>
#include <STEPControl_Controller.hxx>
#include <STEPControl_Reader.hxx>
#include <TopoDS_Shape.hxx>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cadclip/cad/ingest.h"
#include "cadclip/core/file.h"
#include "cadclip/synth/synth.h"
#include "common/bench_util.h"

namespace fs = std::filesystem;
using namespace cadclip;

namespace {

// What a program that only wants the shape does: read, transfer, take it.
bool bare_read(const fs::path& path, data::CadFormat format) {
  TopoDS_Shape shape;
  if (format == data::CadFormat::kStep) {
    STEPControl_Reader reader;
    if (reader.ReadFile(path.c_str()) != IFSelect_RetDone) return false;
    reader.TransferRoots();
    shape = reader.OneShape();
  } else if (format == data::CadFormat::kIges) {
    IGESControl_Reader reader;
    if (reader.ReadFile(path.c_str()) != IFSelect_RetDone) return false;
    reader.TransferRoots();
    shape = reader.OneShape();
  } else if (format == data::CadFormat::kBrep) {
    BRep_Builder builder;
    if (!BRepTools::Read(shape, path.c_str(), builder)) return false;
  }
  return !shape.IsNull();
}

struct Row {
  std::string name;
  data::CadFormat format;
  int faces = 0;
  bench::Stats bare, full;
};

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7, warmup = 1;
  int64_t synth_parts = 0;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeats" && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else if (arg == "--synth" && i + 1 < argc) {
      synth_parts = std::atoll(argv[++i]);
    } else if (arg == "--warmup" && i + 1 < argc) {
      warmup = std::atoi(argv[++i]);
    } else {
      inputs.emplace_back(arg);
    }
  }
  if (inputs.empty()) inputs = {"../shared/data/cad", "tests/fixtures/deepcad"};
  std::vector<fs::path> files;
  for (const fs::path& input : inputs) {
    if (fs::is_directory(input)) {
      for (const auto& entry : fs::recursive_directory_iterator(input))
        if (entry.is_regular_file() && data::is_cad_path(entry.path()))
          files.push_back(entry.path());
    } else if (fs::is_regular_file(input)) {
      files.push_back(input);
    } else {
      std::fprintf(stderr, "ingest_bench: %s is neither a file nor a folder\n", input.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  fs::path synth_folder;
  if (synth_parts > 0) {
    synth_folder = fs::temp_directory_path() / format("cadclip_ingest_bench_{}", ::getpid());
    fs::create_directories(synth_folder);
    synth::SynthOptions options;
    options.count = synth_parts;
    for (int64_t i = 0; i < synth_parts; ++i) {
      const synth::SynthPart part = synth::make_synth_part(options, i);
      const fs::path path = synth_folder / (part.id + ".step");
      write_text_atomic(path, part.step);
      files.push_back(path);
    }
    std::printf("wrote %lld synthetic STEP parts to %s\n", static_cast<long long>(synth_parts),
                synth_folder.c_str());
  }
  bench::print_header("ingest_bench: bare OCCT read+transfer vs ingest_file",
                      bench::set_threads(1));
  cad::quiet_occt_messages();
  // The bare read gets the same unit parameter as ingest does (it exists once
  // the controllers are initialised).
  if (!STEPControl_Controller::Init() || !IGESControl_Controller::Init() ||
      !Interface_Static::SetCVal("xstep.cascade.unit", "MM")) {
    std::fprintf(stderr, "ingest_bench: OCCT refused xstep.cascade.unit=MM\n");
    return 2;
  }

  const cad::IngestOptions options;
  std::vector<Row> rows;
  for (const fs::path& file : files) {
    Row row{file.string(), data::format_of(file)};
    const Result<data::BRepGraph> probe = cad::ingest_file(file, options);
    if (!probe) {
      std::printf("skip %s: %s\n", file.c_str(), probe.status().reason().c_str());
      continue;
    }
    row.faces = static_cast<int>(probe->num_faces());
    const bool has_bare = row.format != data::CadFormat::kDeepcadJson;
    for (int i = 0; i < warmup; ++i) {
      if (has_bare) bare_read(file, row.format);
      (void)cad::ingest_file(file, options);
    }
    std::vector<double> bare, full;
    for (int i = 0; i < repeats; ++i) {  // alternating, so load drift hits both
      if (has_bare) bare.push_back(bench::seconds_of([&] { bare_read(file, row.format); }));
      full.push_back(bench::seconds_of([&] { (void)cad::ingest_file(file, options); }));
    }
    if (has_bare) row.bare = bench::summarize(bare);
    row.full = bench::summarize(full);
    rows.push_back(row);
  }

  std::printf("\n| file | faces | bare read ms (p10-p90) | ingest_file ms (p10-p90) | added |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const Row& row : rows) {
    if (!synth_folder.empty() && row.name.rfind(synth_folder.string(), 0) == 0) continue;
    const bool has_bare = row.format != data::CadFormat::kDeepcadJson;
    std::printf("| %s | %d | %s | %.1f (%.1f-%.1f) | %s |\n", fs::path(row.name).filename().c_str(),
                row.faces,
                has_bare ? format("{} ({}-{})", fixed(row.bare.median * 1e3, 1),
                                  fixed(row.bare.p10 * 1e3, 1), fixed(row.bare.p90 * 1e3, 1))
                               .c_str()
                         : "-",
                row.full.median * 1e3, row.full.p10 * 1e3, row.full.p90 * 1e3,
                has_bare
                    ? format("{}%", fixed(100 * (row.full.median / row.bare.median - 1), 0)).c_str()
                    : "-");
  }

  struct Total {
    int files = 0, faces = 0;
    double bare = 0, full = 0;
  };
  std::map<std::string, Total> totals;
  for (const Row& row : rows) {
    const bool synthetic = !synth_folder.empty() && row.name.rfind(synth_folder.string(), 0) == 0;
    Total& total =
        totals[std::string(data::format_name(row.format)) + (synthetic ? " (synthetic)" : "")];
    ++total.files;
    total.faces += row.faces;
    total.bare += row.bare.median;
    total.full += row.full.median;
  }
  std::printf(
      "\n| format | files | faces | bare read s | ingest_file s | added by ingest | "
      "ingest ms/face | added ms/face |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& [name, total] : totals) {
    const bool has_bare = total.bare > 0;
    std::printf(
        "| %s | %d | %d | %s | %.3f | %s | %.2f | %s |\n", name.c_str(), total.files, total.faces,
        has_bare ? fixed(total.bare, 3).c_str() : "-", total.full,
        has_bare ? format("{}%", fixed(100 * (total.full / total.bare - 1), 0)).c_str() : "-",
        1e3 * total.full / total.faces,
        has_bare ? fixed(1e3 * (total.full - total.bare) / total.faces, 2).c_str() : "-");
  }
  std::printf("\nrepeats=%d warmup=%d; medians per file, summed per format\n", repeats, warmup);
  if (!synth_folder.empty()) fs::remove_all(synth_folder);
  return 0;
}
