// An index's parts with their embeddings, read and written without a model:
// for tools that grow, merge or convert part libraries from vectors they
// already have (bench/search grows a 100,000-part library from a real one).
// `cadclip index` itself embeds parts with a checkpoint (index/build_index.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cadclip/index/searcher.h"

namespace cadclip::index {

struct StoredPart {
  Item item;
  std::vector<float> embedding;          // [d], unit length
  std::filesystem::path thumbnail_file;  // where item.thumbnail's file is; "" = none
};

struct StoredIndex {
  std::string checkpoint_identity;  // of the weights that embedded the parts
  std::string checkpoint;           // where those weights are (searching loads them); read:
                                    // the copy the index carries (<index>/models/<identity>)
  std::string library;              // what the parts came from, for people
  std::string model_name;           // the checkpoint folder's name, for people; "" = the name of
                                    // the folder `checkpoint` resolves to
  int64_t embed_dim = 0;
  std::vector<StoredPart> parts;  // read: ordered by id
};

// The current version of an index folder. Throws cadclip::Error naming the
// folder when it holds no index.
StoredIndex read_stored_index(const std::filesystem::path& index);

struct StoredIndexWriteOptions {
  std::string factory = "auto";  // as IndexOptions::factory
  std::string search_params;     // as IndexOptions::search_params ("" = the factory's default)
  bool wait = false;             // another writer holds the folder: wait for it (else fail)
};

// Writes `contents` as the next version of the index folder (created when
// missing) and swaps it in as `cadclip index` does, copying each part's
// thumbnail file and, when `checkpoint` is there, its model. Throws cadclip::Error for a repeated
// id or an embedding whose size is not embed_dim; the current version is then unchanged. Returns
// the new version's folder.
std::filesystem::path write_stored_index(const std::filesystem::path& index,
                                         const StoredIndex& contents,
                                         const StoredIndexWriteOptions& options = {});

}  // namespace cadclip::index
