// Trained models and indexes in Python: Model (a checkpoint's two towers, in
// inference mode) and Index (an index folder's searcher). Both take the code
// paths of the command line, so that Model.embed_text equals `cadclip embed
// --checkpoint` and Index.search equals `cadclip search`.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/utils/pybind.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/data/brep_graph.h"
#include "cadclip/data/ingest_failure.h"
#include "cadclip/index/searcher.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/model_config.h"
#include "cadclip/model/text_embedding.h"

namespace py = pybind11;

namespace cadclip::python {
namespace {

namespace fs = std::filesystem;
using GraphPtr = std::shared_ptr<data::BRepGraph>;

void set_threads(int threads) {
  if (threads < 1)
    throw Error(format("threads = {}: LibTorch needs at least one intra-op thread", threads));
  at::set_num_threads(threads);
}

class Model {
 public:
  static std::unique_ptr<Model> load(const std::string& checkpoint, std::optional<int> threads) {
    if (threads) set_threads(*threads);
    auto m = std::make_unique<Model>();
    py::gil_scoped_release release;
    m->folder_ = model::resolve_checkpoint(checkpoint);
    m->built_ = model::load_model_from_checkpoint(checkpoint);
    m->built_.model->eval();
    return m;
  }

  // texts -> [n, d]: the path of `cadclip embed --checkpoint --batch-size`.
  at::Tensor embed_text(const std::vector<std::string>& texts, int64_t batch_size) {
    if (batch_size < 1) throw Error(format("batch_size = {}; use 1 or more", batch_size));
    py::gil_scoped_release release;
    // A plain tensor (not an inference tensor) so that callers may use it anywhere.
    return model::embed_texts(built_, texts, text::LengthGrouping{.max_rows = batch_size}).clone();
  }

  // graphs -> [n, d], in passes of batch_size graphs in the given order (the
  // passes `cadclip index` makes over a prepared folder, in id order).
  at::Tensor embed_parts(const py::sequence& graphs, int64_t batch_size) {
    if (batch_size < 1) throw Error(format("batch_size = {}; use 1 or more", batch_size));
    std::vector<GraphPtr> held;
    held.reserve(graphs.size());
    for (const py::handle& g : graphs) held.push_back(g.cast<GraphPtr>());
    py::gil_scoped_release release;
    std::vector<at::Tensor> parts;
    {
      c10::InferenceMode inference;
      for (size_t begin = 0; begin < held.size(); begin += static_cast<size_t>(batch_size)) {
        const size_t end = std::min(held.size(), begin + static_cast<size_t>(batch_size));
        std::vector<const data::BRepGraph*> pointers;
        for (size_t i = begin; i < end; ++i) pointers.push_back(held[i].get());
        parts.push_back(
            built_.model->encode_brep(std::span<const data::BRepGraph* const>(pointers)));
      }
    }
    if (parts.empty()) return at::empty({0, embed_dim()}, at::kFloat);
    return at::cat(parts).clone();
  }

  int64_t embed_dim() const { return built_.model->options().embed_dim; }
  std::string folder() const { return folder_.string(); }
  py::object config() const {
    return py::module_::import("json").attr("loads")(nlohmann::json(built_.config).dump());
  }
  double logit_scale() const { return built_.model->logit_scale().item<double>(); }

 private:
  fs::path folder_;
  model::BuiltModel built_;
};

py::dict hit_dict(const index::Hit& h) {
  const index::Item& item = *h.item;
  py::dict out;
  out["rank"] = h.rank;
  out["score"] = h.score;
  out["id"] = item.id;
  out["name"] = item.name;
  py::list size;
  for (const double side : item.size_mm) size.append(side);
  out["size_mm"] = size;
  out["faces"] = item.faces;
  out["caption"] = item.caption;
  out["source"] = item.source;
  out["thumbnail"] = item.thumbnail;
  return out;
}

py::list hits_list(const std::vector<index::Hit>& hits) {
  py::list out;
  for (const index::Hit& h : hits) out.append(hit_dict(h));
  return out;
}

class Index {
 public:
  static std::unique_ptr<Index> open(const std::string& folder,
                                     const std::optional<std::string>& checkpoint,
                                     const std::optional<std::string>& search_params) {
    index::SearcherOptions options;
    options.checkpoint = checkpoint.value_or("");
    options.search_params = search_params.value_or("");
    options.worker_binary = worker_binary();
    py::gil_scoped_release release;
    return std::make_unique<Index>(index::Searcher::open(folder, options));
  }
  explicit Index(index::Searcher searcher) : searcher_(std::move(searcher)) {}

  py::list search(const std::string& text, int64_t k, const py::object& filters) const {
    if (!filters.is_none())
      throw py::type_error(
          "Index.search: filters are not supported by this cadclip yet (the index has no "
          "filter language); pass filters=None and filter the result dicts in Python");
    std::vector<index::Hit> hits;
    {
      py::gil_scoped_release release;
      hits = searcher_.search_text(text, k);
    }
    return hits_list(hits);
  }

  py::list similar(const std::string& id, int64_t k) const {
    std::vector<index::Hit> hits;
    {
      py::gil_scoped_release release;
      hits = searcher_.search_like_item(id, k);
    }
    return hits_list(hits);
  }

  py::list similar_to_file(const std::string& path, int64_t k) const {
    std::vector<index::Hit> hits;
    try {
      py::gil_scoped_release release;
      hits = searcher_.search_like_file(path, k);
    } catch (const data::IngestError& e) {
      raise_read_error(path, data::failure_kind_name(e.failure().kind), e.failure().reason);
    }
    return hits_list(hits);
  }

  at::Tensor embed_text(const std::string& text) const {
    py::gil_scoped_release release;
    return searcher_.embed_text(text).clone();
  }

  py::object item(const std::string& id) const {
    const index::Item* item = searcher_.find(id);
    if (!item) throw py::key_error(format("no part '{}' in the index", id));
    py::dict out = hit_dict(index::Hit{0, 0, item});
    out.attr("pop")("rank");
    out.attr("pop")("score");
    return out;
  }

  const index::Searcher& searcher() const { return searcher_; }

 private:
  index::Searcher searcher_;
};

}  // namespace

void bind_models(py::module_& m) {
  py::class_<Model>(m, "Model",
                    R"(A trained two-tower model, loaded from a checkpoint, in inference mode.

Model.load(checkpoint) takes a checkpoint pointer (RUN/checkpoints/best.json), a
checkpoint folder, or a run folder (then its last checkpoint); the weights are
health-checked (no NaN/Inf) and their sha256 compared with what the pointer
recorded. Embeddings are unit rows of float32 on the CPU.)")
      .def_static("load", &Model::load, py::arg("checkpoint"), py::arg("threads") = py::none(),
                  "Loads a checkpoint; threads, when given, sets LibTorch's intra-op threads "
                  "(torch.set_num_threads does the same).")
      .def("embed_text", &Model::embed_text, py::arg("texts"), py::arg("batch_size") = 32,
           "texts (list of str) -> [n, embed_dim] float32, unit rows: the text tower, the quantity "
           "branch and the head, shortest texts first in passes of batch_size. Equal, bit for "
           "bit, to `cadclip embed --checkpoint C --batch-size B` on the same texts.")
      .def("embed_parts", &Model::embed_parts, py::arg("graphs"), py::arg("batch_size") = 64,
           "graphs (a sequence of BRepGraph) -> [n, embed_dim] float32, unit rows, in passes of "
           "batch_size graphs in the given order (the passes `cadclip index` makes over a "
           "prepared folder in id order, so the vectors are the index's).")
      .def_property_readonly("embed_dim", &Model::embed_dim, "Size of the shared embedding space.")
      .def_property_readonly("checkpoint", &Model::folder, "The checkpoint folder loaded.")
      .def_property_readonly("config", &Model::config,
                             "The model config (the checkpoint's config.json) as a dict.")
      .def_property_readonly("logit_scale", &Model::logit_scale,
                             "exp(learned log logit scale), clamped: 1 / temperature.")
      .def_property(
          "threads", [](const Model&) { return at::get_num_threads(); },
          [](Model&, int threads) { set_threads(threads); },
          "LibTorch's intra-op threads (process-wide, shared with torch.get_num_threads).")
      .def("__repr__", [](const Model& model) {
        return format("Model('{}', embed_dim={})", model.folder(), model.embed_dim());
      });

  py::class_<Index>(m, "Index", R"(A part index made by `cadclip index`, opened for searching.

Index.open(folder) loads the model the index was built with (or checkpoint=, which
must hold the same weights), the vectors and the catalog of the index's current
version, and keeps that version while open. Results are lists of plain dicts:
rank, score (cosine), id, name, size_mm (x, y, z), faces, caption, source and
thumbnail, as `cadclip search --json` prints them.)")
      .def_static("open", &Index::open, py::arg("folder"), py::arg("checkpoint") = py::none(),
                  py::arg("search_params") = py::none(),
                  "Opens an index folder; search_params are FAISS search parameters "
                  "('nprobe=32'), default the index's own.")
      .def("search", &Index::search, py::arg("text"), py::arg("k") = 10,
           py::arg("filters") = py::none(),
           "The k parts that best match a text, best first: what `cadclip search INDEX TEXT -k K` "
           "answers. filters must be None in this version (TypeError otherwise).")
      .def("similar", &Index::similar, py::arg("id"), py::arg("k") = 10,
           "The k parts most like an indexed part (itself first): `cadclip search --like-id`.")
      .def("similar_to_file", &Index::similar_to_file, py::arg("path"), py::arg("k") = 10,
           "The k parts most like a CAD file, read in a worker process: `cadclip search --like`.")
      .def("embed_text", &Index::embed_text, py::arg("text"),
           "A query's embedding [embed_dim] float32, as search() computes it.")
      .def("item", &Index::item, py::arg("id"),
           "One part's catalog entry as a dict; KeyError for an unknown id.")
      .def("__len__", [](const Index& i) { return i.searcher().size(); })
      .def("__contains__",
           [](const Index& i, const std::string& id) { return i.searcher().find(id) != nullptr; })
      .def_property_readonly("dim", [](const Index& i) { return i.searcher().dim(); })
      .def_property_readonly("folder",
                             [](const Index& i) { return i.searcher().folder().string(); })
      .def_property_readonly(
          "version_folder", [](const Index& i) { return i.searcher().version_folder().string(); },
          "The version of the index this object holds.")
      .def_property_readonly(
          "checkpoint_identity", [](const Index& i) { return i.searcher().checkpoint_identity(); },
          "sha256 of the weights the index was built with.")
      .def("__repr__", [](const Index& i) {
        return format("Index('{}', parts={}, dim={})", i.searcher().folder().string(),
                      i.searcher().size(), i.searcher().dim());
      });
}

}  // namespace cadclip::python
