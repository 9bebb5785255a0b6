#include "cadclip/index/stored_index.h"

#include <algorithm>
#include <set>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/model/checkpoint_io.h"
#include "layout.h"
#include "store.h"

namespace cadclip::index {

namespace fs = std::filesystem;

StoredIndex read_stored_index(const fs::path& index) {
  const detail::OpenedVersion version = detail::open_current_version(index);
  const detail::Catalog catalog = detail::Catalog::open(version.folder, /*create=*/false);
  StoredIndex out;
  out.checkpoint_identity = catalog.meta("checkpoint_identity").value_or("");
  out.checkpoint = catalog.meta("checkpoint").value_or("");
  // The copy the index carries, which stays where the index is.
  const fs::path carried = detail::model_folder(fs::absolute(index), out.checkpoint_identity);
  if (!out.checkpoint_identity.empty() && fs::exists(carried)) out.checkpoint = carried.string();
  out.library = catalog.meta("library").value_or("");
  out.model_name = catalog.meta("model_name").value_or("");
  out.embed_dim = std::stoll(catalog.meta("embed_dim").value_or("0"));
  catalog.each([&](detail::StoredItem&& s) {
    StoredPart& part = out.parts.emplace_back();
    part.item = std::move(s.item);
    part.embedding = std::move(s.embedding);
    if (!part.item.thumbnail.empty())
      part.thumbnail_file = version.folder / detail::kThumbnailDir / part.item.thumbnail;
  });
  // Vector rows follow ids until an update appends parts.
  std::sort(out.parts.begin(), out.parts.end(),
            [](const StoredPart& a, const StoredPart& b) { return a.item.id < b.item.id; });
  return out;
}

fs::path write_stored_index(const fs::path& index, const StoredIndex& contents,
                            const StoredIndexWriteOptions& options) {
  std::set<std::string> ids;
  for (const StoredPart& p : contents.parts) {
    if (!ids.insert(p.item.id).second)
      throw Error(format("{}: part id '{}' is given twice; ids must be unique in an index",
                         index.string(), p.item.id));
    if (static_cast<int64_t>(p.embedding.size()) != contents.embed_dim)
      throw Error(format("{}: part '{}' has an embedding of size {}, embed_dim is {}",
                         index.string(), p.item.id, p.embedding.size(), contents.embed_dim));
  }
  const bool have_model = !contents.checkpoint.empty() && fs::exists(contents.checkpoint);
  std::string model_name = contents.model_name;
  if (model_name.empty() && have_model)
    model_name = model::resolve_checkpoint(contents.checkpoint).filename().string();
  detail::IndexWriter writer = detail::IndexWriter::open(fs::absolute(index), options.wait);
  const fs::path out = writer.begin_version();
  {
    detail::Catalog catalog = detail::Catalog::open(out, /*create=*/true);
    catalog.begin();
    fs::create_directories(out / detail::kThumbnailDir);
    for (const StoredPart& p : contents.parts) {
      catalog.put(p.item, p.embedding);
      if (!p.thumbnail_file.empty())
        fs::copy_file(p.thumbnail_file, out / detail::kThumbnailDir / p.item.thumbnail,
                      fs::copy_options::overwrite_existing);
    }
    detail::seal_version(catalog, out,
                         {contents.checkpoint_identity, contents.checkpoint, contents.library,
                          model_name, contents.embed_dim, options.factory, options.search_params,
                          /*previous=*/{}});
    catalog.commit();
  }
  // Parts embedded by weights that are at hand: the index carries them, as
  // one `cadclip index` writes does.
  if (have_model) writer.store_model(contents.checkpoint, contents.checkpoint_identity);
  return writer.commit_version();
}

}  // namespace cadclip::index
