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
#include "cadclip/index/filter.h"
#include "cadclip/index/result_export.h"
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
  // No checkpoint: the released model (model::default_model).
  static std::unique_ptr<Model> load(std::optional<std::string> named, std::optional<int> threads) {
    if (threads) set_threads(*threads);
    auto m = std::make_unique<Model>();
    py::gil_scoped_release release;
    const std::string checkpoint = named ? *named : model::default_model().string();
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
            built_.model->embed_parts(std::span<const data::BRepGraph* const>(pointers)));
      }
    }
    if (parts.empty()) return at::empty({0, embed_dim()}, at::kFloat);
    return at::cat(parts).clone();
  }

  int64_t embed_dim() const { return built_.model->search_dim(); }
  int64_t size_block() const {
    return built_.model->search_dim() - built_.model->options().embed_dim;
  }
  std::string folder() const { return folder_.string(); }
  py::object config() const {
    return py::module_::import("json").attr("loads")(nlohmann::json(built_.config).dump());
  }
  double logit_scale() const { return built_.model->logit_scale().item<double>(); }

 private:
  fs::path folder_;
  model::BuiltModel built_;
};

// JSON (as `cadclip search --json` prints it) to plain Python objects.
py::object to_python(const nlohmann::json& value) {
  return py::module_::import("json").attr("loads")(
      value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// The keyword arguments of a query as the command line's options: filters in
// the filter language of `cadclip search --filter` (a string, or clauses as a
// sequence of strings), a minimum score, the facts the text states as hard
// conditions or (by default) as what ranks first, and for part queries the same size within ± a
// percentage and mirror images left out.
index::SearchOptions search_options(int64_t k, const py::object& filters,
                                    std::optional<double> min_score, bool strict_numbers,
                                    bool rank_by_facts, std::optional<double> same_size_percent,
                                    bool ignore_mirrored) {
  std::string text;
  if (py::isinstance<py::str>(filters)) {
    text = filters.cast<std::string>();
  } else if (!filters.is_none()) {
    if (!py::isinstance<py::sequence>(filters) || py::isinstance<py::dict>(filters))
      throw py::type_error(format(
          "filters must be a string in the filter language (\"size<100 holes>=4\", as `cadclip "
          "search --filter` takes) or a list of such clauses, not {}",
          py::str(py::type::of(filters).attr("__name__")).cast<std::string>()));
    for (const py::handle& clause : filters.cast<py::sequence>()) {
      if (!py::isinstance<py::str>(clause))
        throw py::type_error("filters: every clause in the list must be a string");
      text += (text.empty() ? "" : " ") + clause.cast<std::string>();
    }
  }
  index::SearchOptions options;
  options.k = k;
  options.filter = index::parse_filter(text);
  if (min_score) options.filter.min_score = *min_score;
  options.strict_numbers = strict_numbers;
  options.rank_by_facts = rank_by_facts;
  if (same_size_percent) {
    if (!(*same_size_percent > 0 && *same_size_percent <= 99))
      throw Error(format(
          "same_size = {}: give the tolerance in percent, above 0 and at most 99 (10 = ±10%)",
          *same_size_percent));
    options.same_size = *same_size_percent / 100;
  }
  options.ignore_mirrored = ignore_mirrored;
  return options;
}

// One answer as `cadclip search --json` prints it: query, filters applied,
// candidates and results.
py::object answer(const std::string& query, const index::SearchResult& result) {
  return to_python(
      index::result_json(query, result, [](const index::Item& item) { return item.thumbnail; }));
}

// How a part query names its part: an indexed part's id, or a CAD file.
enum class PartNamedBy { kId, kFile };

class Index {
 public:
  static std::unique_ptr<Index> open(const std::string& folder,
                                     const std::optional<std::string>& checkpoint,
                                     const std::optional<std::string>& search_params,
                                     const std::string& text_matmul) {
    index::SearcherOptions options;
    options.checkpoint = checkpoint.value_or("");
    options.search_params = search_params.value_or("");
    options.text_matmul = text_matmul;
    options.worker_binary = worker_binary();
    py::gil_scoped_release release;
    return std::make_unique<Index>(index::Searcher::open(folder, options));
  }
  explicit Index(index::Searcher searcher) : searcher_(std::move(searcher)) {}

  // One query of exactly one kind (text, like_id or like), as `cadclip search`.
  py::object query(const std::optional<std::string>& text,
                   const std::optional<std::string>& like_id,
                   const std::optional<std::string>& like,
                   const index::SearchOptions& options) const {
    if ((text.has_value() + like_id.has_value() + like.has_value()) != 1)
      throw py::value_error("Index.query needs exactly one of text, like_id and like");
    if (text && (options.same_size > 0 || options.ignore_mirrored))
      throw py::value_error(
          "same_size and ignore_mirrored compare with a part: use them with like_id or like");
    index::SearchResult result;
    std::string label;
    if (text) {
      label = *text;
      py::gil_scoped_release release;
      result = searcher_.query_text(*text, options);
    } else if (like_id) {
      label = "like " + *like_id;
      py::gil_scoped_release release;
      result = searcher_.query_item(*like_id, options);
    } else {
      label = "like " + *like;
      try {
        py::gil_scoped_release release;
        result = searcher_.query_file(*like, options);
      } catch (const data::IngestError& e) {
        raise_read_error(*like, data::failure_kind_name(e.failure().kind), e.failure().reason);
      }
    }
    return answer(label, result);
  }

  py::object results(const std::optional<std::string>& text,
                     const std::optional<std::string>& like_id,
                     const std::optional<std::string>& like,
                     const index::SearchOptions& options) const {
    return query(text, like_id, like, options)["results"];
  }

  // The results of a query by one part, an indexed one or a CAD file.
  py::object results_like(PartNamedBy named_by, const std::string& part,
                          const index::SearchOptions& options) const {
    if (named_by == PartNamedBy::kId) return results(std::nullopt, part, std::nullopt, options);
    return results(std::nullopt, std::nullopt, part, options);
  }

  at::Tensor embed_text(const std::string& text) const {
    py::gil_scoped_release release;
    return searcher_.embed_text(text).clone();
  }

  py::object item(const std::string& id) const {
    const index::Item* item = searcher_.find(id);
    if (!item) throw py::key_error(format("no part '{}' in the index", id));
    return to_python(index::item_json(*item, item->thumbnail));
  }

  const index::Searcher& searcher() const { return searcher_; }

 private:
  index::Searcher searcher_;
};

// similar() and similar_to_file(): the parts most like one part, with the
// same keywords; `argument` names the part as `named_by` says.
void def_part_query(py::class_<Index>& index, const char* name, PartNamedBy named_by,
                    const char* argument, const char* doc) {
  index.def(
      name,
      [named_by](const Index& i, const std::string& part, int64_t k, const py::object& filters,
                 std::optional<double> min_score, std::optional<double> same_size,
                 bool ignore_mirrored) {
        return i.results_like(
            named_by, part,
            search_options(k, filters, min_score, false, false, same_size, ignore_mirrored));
      },
      py::arg(argument), py::arg("k") = 10, py::arg("filters") = py::none(),
      py::arg("min_score") = py::none(), py::arg("same_size") = py::none(),
      py::arg("ignore_mirrored") = false, doc);
}

// Index's queries: search (text), similar and similar_to_file (a part), query (any one).
void bind_index_queries(py::class_<Index>& index) {
  index.def(
      "search",
      [](const Index& i, const std::string& text, int64_t k, const py::object& filters,
         std::optional<double> min_score, bool strict_numbers, bool facts) {
        return i.results(text, std::nullopt, std::nullopt,
                         search_options(k, filters, min_score, strict_numbers, facts, {}, false));
      },
      py::arg("text"), py::arg("k") = 10, py::arg("filters") = py::none(),
      py::arg("min_score") = py::none(), py::arg("strict_numbers") = false, py::arg("facts") = true,
      "The k parts that best match a text, best first, among those that pass the filters "
      "(the filter language of `cadclip search --filter`, docs/HTTP_API.md: a string such as "
      "'size<100 holes>=4', or a list of clauses), scoring at least min_score; "
      "parts that meet more of the facts the text states ('six bolt holes', 'M8 nut', "
      "'under 100 mm') come first (facts=False: the embedding alone), and strict_numbers "
      "makes those facts hard conditions. The results of `cadclip search INDEX TEXT -k K "
      "--filter F --json`.");
  def_part_query(index, "similar", PartNamedBy::kId, "id",
                 "The k parts most like an indexed part (itself first when it passes the "
                 "filters): `cadclip search --like-id`. same_size (percent) keeps parts whose "
                 "extents are within ± that share of the part's; ignore_mirrored leaves out its "
                 "mirror images.");
  def_part_query(index, "similar_to_file", PartNamedBy::kFile, "path",
                 "The k parts most like a CAD file, read in a worker process: `cadclip search "
                 "--like`; the keywords as similar().");
  index.def(
      "query",
      [](const Index& i, const std::optional<std::string>& text,
         const std::optional<std::string>& like_id, const std::optional<std::string>& like,
         int64_t k, const py::object& filters, std::optional<double> min_score, bool strict_numbers,
         bool facts, std::optional<double> same_size, bool ignore_mirrored) {
        return i.query(text, like_id, like,
                       search_options(k, filters, min_score, strict_numbers, facts, same_size,
                                      ignore_mirrored));
      },
      py::arg("text") = py::none(), py::kw_only(), py::arg("like_id") = py::none(),
      py::arg("like") = py::none(), py::arg("k") = 10, py::arg("filters") = py::none(),
      py::arg("min_score") = py::none(), py::arg("strict_numbers") = false, py::arg("facts") = true,
      py::arg("same_size") = py::none(), py::arg("ignore_mirrored") = false,
      "One query of one kind (text, like_id or like) with the whole answer, as `cadclip "
      "search --json` prints it: {'query', 'filters' (each applied clause with its origin: "
      "given, query or same_size), 'candidates' (parts that pass), 'results'}, with 'facts', "
      "'meeting_all' and each result's 'meets' when the text states facts.");
}

void bind_model(py::module_& m) {
  py::class_<Model>(m, "Model",
                    R"(A trained two-tower model, loaded from a checkpoint, in inference mode.

Model.load(checkpoint) takes a checkpoint pointer (RUN/checkpoints/best.json), a
checkpoint folder, or a run folder (then its last checkpoint); Model.load() the
released model (models/default.json, or $CADCLIP_MODEL). The weights are
health-checked (no NaN/Inf) and their sha256 compared with what the pointer
recorded. Embeddings are float32 on the CPU: unit rows of the shared space,
then, for a model with a size block (`cadclip fit-sizes`), its size_block
columns, so that text @ parts.T is what search ranks by.)")
      .def_static("load", &Model::load, py::arg("checkpoint") = py::none(),
                  py::arg("threads") = py::none(),
                  "Loads a checkpoint; threads, when given, sets LibTorch's intra-op threads "
                  "(torch.set_num_threads does the same).")
      .def("embed_text", &Model::embed_text, py::arg("texts"), py::arg("batch_size") = 32,
           "texts (list of str) -> [n, embed_dim] float32 (see the class): the text tower, the "
           "quantity "
           "branch and the head, shortest texts first in passes of batch_size. Equal, bit for "
           "bit, to `cadclip embed --checkpoint C --batch-size B` on the same texts.")
      .def("embed_parts", &Model::embed_parts, py::arg("graphs"), py::arg("batch_size") = 64,
           "graphs (a sequence of BRepGraph) -> [n, embed_dim] float32 (see the class), in passes "
           "of "
           "batch_size graphs in the given order (the passes `cadclip index` makes over a "
           "prepared folder in id order, so the vectors are the index's).")
      .def_property_readonly("embed_dim", &Model::embed_dim,
                             "Width of the embeddings: the shared space and the size block.")
      .def_property_readonly("size_block", &Model::size_block,
                             "Width of the size block at the end of each embedding; 0 = none.")
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
}

void bind_index(py::module_& m) {
  py::class_<Index> index(m, "Index", R"(A part index made by `cadclip index`, opened for searching.

Index.open(folder) loads the model the index was built with (or checkpoint=, which
must hold the same weights), the vectors and the catalog of the index's current
version, and keeps that version while open. Results are lists of plain dicts as
`cadclip search --json` prints them: rank, score (cosine), id, name, source,
size_mm (x, y, z), faces, holes, hole_diameters_mm, file_type, caption, metadata
(the fields imported with `cadclip index --metadata`) and thumbnail.)");
  index.def_static("open", &Index::open, py::arg("folder"), py::arg("checkpoint") = py::none(),
                   py::arg("search_params") = py::none(), py::arg("text_matmul") = "auto",
                   "Opens an index folder; search_params are FAISS search parameters "
                   "('nprobe=32'), default the index's own; text_matmul is the precision of "
                   "query encoding's matmuls: 'fp32', 'bf16', or 'auto' (bf16 where the CPU "
                   "multiplies it natively).");
  bind_index_queries(index);
  index
      .def("embed_text", &Index::embed_text, py::arg("text"),
           "A query's embedding [embed_dim] float32, as search() computes it.")
      .def("item", &Index::item, py::arg("id"),
           "One part's catalog entry as a dict; KeyError for an unknown id.")
      .def("__len__", [](const Index& i) { return i.searcher().size(); })
      .def("__contains__",
           [](const Index& i, const std::string& id) { return i.searcher().find(id) != nullptr; })
      .def_property_readonly("dim", [](const Index& i) { return i.searcher().dim(); })
      .def_property_readonly(
          "text_matmul", [](const Index& i) { return std::string(i.searcher().text_matmul()); },
          "'fp32' or 'bf16': what query encoding's matmuls run in.")
      .def_property_readonly("folder",
                             [](const Index& i) { return i.searcher().folder().string(); })
      .def_property_readonly(
          "version_folder", [](const Index& i) { return i.searcher().version_folder().string(); },
          "The version of the index this object holds.")
      .def_property_readonly(
          "checkpoint_identity", [](const Index& i) { return i.searcher().checkpoint_identity(); },
          "sha256 of the weights the index was built with.")
      .def_property_readonly(
          "model",
          [](const Index& i) {
            const index::ModelInfo& m = i.searcher().model();
            py::dict model;
            model["name"] = m.name;
            model["sha256"] = m.sha256;
            model["built_from"] = m.built_from;
            model["folder"] = m.folder.string();
            return model;
          },
          "The model the index searches with: name (the checkpoint folder it was built from), "
          "sha256 (of its weights), built_from (that checkpoint's path then) and folder (where "
          "its weights were loaded from: the copy the index carries, INDEX/models/<sha256>).")
      .def("__repr__", [](const Index& i) {
        return format("Index('{}', parts={}, dim={})", i.searcher().folder().string(),
                      i.searcher().size(), i.searcher().dim());
      });
}

}  // namespace

void bind_models(py::module_& m) {
  bind_model(m);
  bind_index(m);
}

}  // namespace cadclip::python
