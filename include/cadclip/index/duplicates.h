// Duplicate parts in an index (`cadclip duplicates INDEX`): exact duplicates
// (the same geometry hash: the same part exported again or moved), mirror
// images (data/part_facts.h), and near duplicates (embeddings at least
// `min_score` alike and extents within a tolerance, but not the same
// geometry), each as clusters with scores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cadclip/index/filter.h"
#include "cadclip/index/searcher.h"

namespace cadclip::index {

struct DuplicateOptions {
  bool exact = true;             // clusters of parts with the same geometry hash
  bool mirrored = true;          // clusters of parts that are mirror images of each other
  bool near = true;              // clusters linked by embedding and size
  double min_score = 0.97;       // near: cosine similarity at least this
  double size_tolerance = 0.02;  // near: extents, largest first, within ± this share
  int64_t neighbours = 10;       // near: candidates per part taken from the vector index
  int64_t exact_up_to = 5000;    // near: up to this many parts every pair is compared exactly
  Filter filter;                 // only parts that pass these conditions are compared
};

struct DuplicateMember {
  const Item* item = nullptr;
  double score = 1;  // cosine similarity to the cluster's first member
};

struct DuplicateCluster {
  std::string kind;                      // "exact", "mirrored" or "near"
  std::vector<DuplicateMember> members;  // first: the smallest id; then by score, best first
  double min_score = 1;                  // the lowest member score
};

struct DuplicateReport {
  std::vector<DuplicateCluster> clusters;  // exact, then mirrored, then near; larger first
  int64_t parts = 0;                       // parts compared (those that pass the filter)
  int64_t exact_parts = 0, mirrored_parts = 0, near_parts = 0;  // parts in clusters of each kind
  double seconds = 0;
};

// Near duplicates use the index's own search (its nprobe) for every part, or
// compare every pair exactly when at most `exact_up_to` parts pass (a filter
// that keeps more is refused, as the index cannot search a subset in bulk). Throws
// cadclip::Error for options out of range or a field no part has. `searcher`
// must outlive the report (members point into it).
DuplicateReport find_duplicates(const Searcher& searcher, const DuplicateOptions& options);

// One row per member: cluster, kind, member, id, name, score, size_x_mm,
// size_y_mm, size_z_mm, faces, holes, file_type, geometry_hash, source.
std::string duplicates_csv(const DuplicateReport& report);

}  // namespace cadclip::index
