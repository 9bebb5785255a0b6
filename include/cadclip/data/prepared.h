// A prepared dataset as train, eval and index read it: one folder written by
// `cadclip prepare` or `cadclip merge`, or several folders read as one (the
// parts of a sharded prepare, or datasets side by side), with its captions
// and splits merged as one prepare run over all the inputs writes them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/splits.h"

namespace cadclip::data {

// The folders that `paths` name, in order. Each path is a prepared folder, or
// a dataset file: a text file naming folders, one per line ('#' starts a
// comment line; relative paths are relative to the file). Throws
// cadclip::Error naming a path that is neither, or a dataset file that names
// no folder.
std::vector<std::filesystem::path> dataset_folders(const std::vector<std::string>& paths);

struct PreparedData {
  std::vector<std::filesystem::path> folders;  // as given, in order
  Dataset dataset;  // every folder's shards, models numbered folder after folder
  // Every folder's captions.jsonl. One folder: as the file has them. Several:
  // sorted by id (stable: an id's captions keep their order), as one prepare
  // writes them; reasons of problem lines then start with their file.
  CaptionFile captions;
  Splits splits;  // one folder: its splits.json; several: the union, each list sorted
  // The folders written by `cadclip prepare` behind `folders`: a merged
  // folder's parts in its place. Their thumbnails.jsonl name the drawings.
  std::vector<std::filesystem::path> sources;
};

// What open_prepared reads besides the shards.
struct PreparedParts {
  bool splits = true;             // each splits.json (train, eval); false = splits left empty
  bool captions_required = true;  // false: a folder without captions.jsonl has no captions (index)
};

// Opens the folders as one dataset. Throws cadclip::Error naming the folder
// and the file when one is not a prepared folder, naming both folders when a
// model id is in two of them, and naming both when an id is in different
// splits of two folders. Logs a warning when the folders hold only some parts
// of a sharded prepare (cadclip merge refuses that).
PreparedData open_prepared(const std::vector<std::filesystem::path>& folders,
                           const PreparedParts& parts = {});

}  // namespace cadclip::data
