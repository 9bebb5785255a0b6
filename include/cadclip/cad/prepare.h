// `cadclip prepare`: CAD files and captions in, a prepared dataset folder out
// (shards, captions.jsonl, splits.json, manifest.json, failures.jsonl,
// warnings.jsonl, options.json, and with thumbnails thumbnails/ and thumbnails.jsonl;
// docs/FORMATS.md). Files are ingested by fresh worker
// processes (cad::IngestPool), so a file that crashes or hangs Open CASCADE
// costs only itself, and a journal lets an interrupted run finish without
// redoing finished files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/cad/ingest.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/data/captions.h"

namespace cadclip::cad {

struct PrepareOptions {
  std::vector<std::string> inputs;  // CAD files, and folders searched recursively by extension
  std::string inputs_from;          // a text file naming more inputs, one per line ('#' comments;
                                    // relative paths are relative to the file); empty = none
  std::vector<std::string> extensions = data::cad_extensions();
  // what a folder search picks up (case-insensitive)
  std::string out;  // the prepared folder (created; resumed when it holds an
                    // unfinished run)
  std::vector<std::string>
      captions;                    // caption files (Text2CAD CSV, JSONL, CSV); none = no captions
  data::CaptionOptions caption;    // how to read them
  std::string splits;              // Text2CAD splits JSON; empty = split by a hash of each id
  double validation_ratio = 0.05;  // hash split: share of models in validation
  double test_ratio = 0.05;        // hash split: share of models in test
  IngestOptions ingest;            // loading and featurization, and the ingest limits
  int workers = 0;                 // worker processes; 0 = one per core
  int shard_models = 4096;         // models per shard at most
  double shard_mb = 512;           // shard data size at most, MiB (one larger model still fits)
  bool overwrite = false;          // replace a finished dataset, or a run with other options
  bool keep_work = false;          // keep <out>/work (the journal) after a finished run
  std::string worker_binary;       // the cadclip executable that workers run; empty = this one
  bool thumbnails = false;         // also draw each prepared model (thumbnails/, thumbnails.jsonl):
                                   // the worker draws the shape it featurized, after sending its
                                   // graph, so a crash while drawing loses only the drawing
  int thumbnail_px = 200;          // drawing width and height, pixels
  // A job array: this job prepares only the inputs whose id falls in part
  // `shard_index` of `num_shards` (shard_of), into its own `out`. The inputs
  // are listed and checked in full by every part, so the parts together hold
  // exactly what one run writes; `cadclip merge` or several --data join them.
  int shard_index = 0;  // this part, 0 .. num_shards - 1
  int num_shards = 1;   // parts of the job; 1 = all inputs
};

// The part of `num_shards` that the input with model id `id` belongs to: the
// first 8 bytes of SHA-256("cadclip.shard\n" + id), big-endian, modulo
// num_shards. An id is the input's path below the folder named on the command
// line, less its extension (the file's stem for a file named directly), so
// the part depends neither on the listing order, nor on where the folder is
// mounted, nor on earlier part counts; two files claiming one id meet in one
// part, whose duplicate check fails the second as a single run does.
int shard_of(std::string_view id, int num_shards);

// What the job did; the same numbers are in manifest.json.
struct PrepareSummary {
  int64_t inputs = 0;        // distinct input files found
  int64_t prepared = 0;      // models written to shards
  int64_t failed = 0;        // inputs listed in failures.jsonl; prepared + failed == inputs
  int64_t from_journal = 0;  // inputs finished by an earlier, interrupted run and not redone
  int64_t shards = 0;
  int64_t thumbnails = 0;          // prepared models with a drawing (runs with thumbnails)
  int64_t thumbnail_failures = 0;  // prepared models without one; thumbnails.jsonl says why
  int64_t warned = 0;  // prepared models built with warnings (warnings.jsonl lists them)
};

// Runs the whole job. Throws cadclip::Error for unusable arguments (an input
// that does not exist, a caption file without the needed columns, an output
// folder that holds something else); a bad CAD file is a failure in the
// summary, never an exception.
PrepareSummary run_prepare(const PrepareOptions& options);

// The body of the hidden `cadclip prepare-worker` subcommand that the ingest
// pool starts: reads file requests on file descriptor 3 and answers on it until
// the requests end. `parent_pid` is the job's process; the worker ends when it
// does. Returns the process exit status.
int run_prepare_worker(int parent_pid);

}  // namespace cadclip::cad
