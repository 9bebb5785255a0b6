// B-Rep graphs in Python: BRepGraph (its arrays as tensors that share the
// graph's memory), read_cad and read_cad_many (through the ingest pool's
// worker processes, so a file that crashes Open CASCADE costs one item),
// the prepared-folder reader and collation into the model's batch.
#include <ATen/ATen.h>
#include <torch/csrc/utils/pybind.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bindings.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/brep_graph.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/graph_codec.h"
#include "cadclip/data/ingest_failure.h"
#include "cadclip/data/ingest_limits.h"
#include "cadclip/data/pairwise.h"
#include "cadclip/data/prepared.h"
#if CADCLIP_WITH_OCCT
#include "cadclip/cad/ingest.h"
#include "cadclip/cad/ingest_pool.h"
#endif

namespace py = pybind11;

namespace cadclip::python {
namespace {

namespace fs = std::filesystem;
using GraphPtr = std::shared_ptr<data::BRepGraph>;

// A tensor over `values` that keeps `owner` (and so the values) alive.
template <class T>
at::Tensor view(const GraphPtr& owner, const std::vector<T>& values, std::vector<int64_t> sizes,
                at::ScalarType type) {
  if (values.empty()) return at::empty(sizes, type);
  return at::from_blob(
      const_cast<T*>(values.data()), sizes, [keep = owner](void*) {}, at::TensorOptions(type));
}

// The arrays of a graph, under the names, dtypes and shapes of a shard's
// rows (docs/FORMATS.md): field(g, name) is what shard[name] holds for this model.
constexpr const char* kFields[] = {"face_grids",    "face_types", "face_areas",   "face_centroids",
                                   "face_rational", "face_loops", "edge_src",     "edge_dst",
                                   "edge_grids",    "edge_types", "edge_lengths", "edge_convexity",
                                   "bbox_mm",       "scale_mm",   "solid_count",  "closed"};

at::Tensor field(const GraphPtr& g, std::string_view name) {
  const int64_t f = g->num_faces(), e = g->num_edges();
  if (name == "face_grids") return view(g, g->face_grids, {f, 10, 10, 7}, at::kFloat);
  if (name == "face_types") return view(g, g->face_types, {f}, at::kByte);
  if (name == "face_areas") return view(g, g->face_areas, {f}, at::kFloat);
  if (name == "face_centroids") return view(g, g->face_centroids, {f, 3}, at::kFloat);
  if (name == "face_rational") return view(g, g->face_rational, {f}, at::kByte);
  if (name == "face_loops") return view(g, g->face_loops, {f}, at::kInt);
  if (name == "edge_src") return view(g, g->edge_src, {e}, at::kInt);
  if (name == "edge_dst") return view(g, g->edge_dst, {e}, at::kInt);
  if (name == "edge_grids") return view(g, g->edge_grids, {e, 10, 12}, at::kFloat);
  if (name == "edge_types") return view(g, g->edge_types, {e}, at::kByte);
  if (name == "edge_lengths") return view(g, g->edge_lengths, {e}, at::kFloat);
  if (name == "edge_convexity") return view(g, g->edge_convexity, {e}, at::kByte);
  if (name == "bbox_mm")
    return at::from_blob(
        g->bbox_mm.data(), {6}, [keep = g](void*) {}, at::TensorOptions(at::kFloat));
  if (name == "scale_mm") return at::scalar_tensor(g->scale_mm, at::kFloat);
  if (name == "solid_count") return at::scalar_tensor(g->solid_count, at::kInt);
  CADCLIP_CHECK(name == "closed", "no BRepGraph field '{}'", name);
  return at::scalar_tensor(static_cast<int64_t>(g->closed), at::kByte);
}

py::dict graph_tensors(const GraphPtr& g) {
  py::dict out;
  for (const char* name : kFields) out[name] = field(g, name);
  return out;
}

py::dict pairwise_tensors(const data::BRepGraph& g) {
  data::PairwiseInputs p;
  {
    py::gil_scoped_release release;
    p = data::pairwise_inputs(g);
  }
  const int64_t f = p.num_faces;
  py::dict out;
  out["hops"] = at::from_blob(p.hops.data(), {f, f}, at::kInt).clone();
  out["normal_angle"] = at::from_blob(p.normal_angle.data(), {f, f}, at::kFloat).clone();
  out["normal_defined"] = at::from_blob(p.normal_defined.data(), {f}, at::kByte).clone();
  out["centroid_distance"] = at::from_blob(p.centroid_distance.data(), {f, f}, at::kFloat).clone();
  return out;
}

py::dict batch_dict(const data::BRepBatch& b) {
  py::dict out;
  out["ids"] = b.ids;
  for (const auto& [name, tensor] : b.named_tensors()) out[py::str(name)] = tensor;
  out["face_offsets"] = b.face_offsets;
  out["edge_offsets"] = b.edge_offsets;
  return out;
}

// ---- Reading CAD files ------------------------------------------------------

// ReadError's help, with the kinds from the one table of data/ingest_failure.h.
std::string read_error_doc() {
  std::string kinds;
  for (const data::FailureKind kind : data::failure_kinds())
    kinds += format("{}'{}'", kinds.empty() ? "" : ", ", data::failure_kind_name(kind));
  return "A CAD file that could not be read as a part. Attributes: path, kind (why, one of " +
         kinds + ", as failures.jsonl names them) and reason (what failed and what to do).";
}

// The exception class of a file that could not be read (cadclip.ReadError),
// made in bind_graphs.
py::handle g_read_error;

py::object read_error(const std::string& path, std::string_view kind, const std::string& reason) {
  py::object error = g_read_error(format("{}: {}: {}", path, kind, reason));
  error.attr("path") = path;
  error.attr("kind") = std::string(kind);
  error.attr("reason") = reason;
  return error;
}

[[noreturn]] void raise(const py::object& error) {
  PyErr_SetObject(g_read_error.ptr(), error.ptr());
  throw py::error_already_set();
}

[[noreturn]] void raise_failure(const std::string& path, const data::IngestFailure& failure) {
  raise(read_error(path, data::failure_kind_name(failure.kind), failure.reason));
}

// How cadclip.read_cad and read_cad_many read files (keyword arguments).
struct ReadOptions {
  std::string unit;           // unit of unitless inputs; empty = mm
  data::IngestLimits limits;  // keywords max_faces, max_edges, max_file_mb, file_timeout_s
  bool deepcad_symmetric_full = true;
};

#if CADCLIP_WITH_OCCT
cad::IngestOptions ingest_options(const ReadOptions& o) {
  cad::IngestOptions ingest;
  if (!o.unit.empty()) ingest.assume_unit = o.unit;
  ingest.limits = o.limits;
  ingest.deepcad_symmetric_full = o.deepcad_symmetric_full;
  return ingest;
}

cad::IngestPoolOptions pool_options(const ReadOptions& o, int workers) {
  if (worker_binary().empty() || !fs::exists(worker_binary()))
    throw Error(
        format("cadclip's worker executable '{}' is missing: read_cad and read_cad_many ingest in "
               "`cadclip prepare-worker` processes. Reinstall the package (make build), or set "
               "CADCLIP_WORKER_BINARY to a cadclip executable of the same build",
               worker_binary()));
  cad::IngestPoolOptions pool;
  pool.workers = workers;
  pool.worker_binary = worker_binary();
  pool.ingest = ingest_options(o);
  return pool;
}

GraphPtr decode(const cad::IngestOutcome& outcome, const std::string& path) {
  return std::make_shared<data::BRepGraph>(
      data::decode_graph(std::as_bytes(std::span(outcome.graph.data(), outcome.graph.size())),
                         format("the worker's graph of {}", path)));
}
#endif

#if !CADCLIP_WITH_OCCT
[[noreturn]] void no_occt() {
  throw Error(
      "this cadclip was built without Open CASCADE (-DCADCLIP_WITH_OCCT=OFF), so it cannot read "
      "CAD files; read prepared folders with PreparedDataset, or rebuild with Open CASCADE");
}
#endif

GraphPtr read_cad(const std::string& path, const ReadOptions& o, bool isolated,
                  const std::optional<std::string>& id) {
#if CADCLIP_WITH_OCCT
  const std::string graph_id = id.value_or(fs::path(path).stem().string());
  if (!isolated) {
    // The pool's checks before opening, then its worker's work, here.
    const cad::IngestOptions ingest = ingest_options(o);
    if (const auto failure = cad::check_before_opening(path, graph_id, ingest))
      raise_failure(path, *failure);
    Result<data::BRepGraph> result = [&] {
      py::gil_scoped_release release;
      cad::quiet_occt_messages();
      return cad::ingest_file(path, ingest);
    }();
    if (!result.is_ok())
      raise_failure(path, {data::FailureKind::kIngest, result.status().reason()});
    auto graph = std::make_shared<data::BRepGraph>(std::move(result).value());
    graph->id = graph_id;
    return graph;
  }
  const cad::IngestPoolOptions options = pool_options(o, 1);
  try {
    py::gil_scoped_release release;
    return std::make_shared<data::BRepGraph>(cad::ingest_in_worker(path, options, graph_id));
  } catch (const data::IngestError& e) {
    raise_failure(path, e.failure());
  }
#else
  no_occt();
#endif
}

// One input's outcome for Python: cadclip.ReadResult.
struct ReadResult {
  int64_t index = 0;
  std::string path, id;
  py::object graph = py::none();  // BRepGraph, or None
  py::object error = py::none();  // ReadError, or None
  double seconds = 0;
  std::vector<std::string> warnings;
};

// The iterator behind read_cad_many: a thread runs the ingest pool and
// collects outcomes, which come largest file first; __next__ hands them out
// in input order. Closing or dropping the iterator stops the workers.
class ReadMany {
 public:
  ReadMany(std::vector<std::string> paths, std::vector<std::string> ids, const ReadOptions& o,
           int workers)
      : paths_(std::move(paths)) {
#if CADCLIP_WITH_OCCT
    cad::IngestPoolOptions options = pool_options(o, workers);
    options.stop = &stop_;
    inputs_.reserve(paths_.size());
    for (size_t i = 0; i < paths_.size(); ++i)
      inputs_.push_back({paths_[i], ids[i], /*thumbnail=*/false});
    thread_ = std::thread([this, options] {
      try {
        cad::IngestPool(options).run(inputs_, [this](cad::IngestOutcome outcome) {
          const std::lock_guard lock(mutex_);
          const size_t index = outcome.index;
          outcomes_.emplace(index, std::move(outcome));
          ready_.notify_all();
        });
      } catch (...) {
        const std::lock_guard lock(mutex_);
        failure_ = std::current_exception();
      }
      const std::lock_guard lock(mutex_);
      finished_ = true;
      ready_.notify_all();
    });
#else
    no_occt();
#endif
  }
  ReadMany(const ReadMany&) = delete;
  ReadMany& operator=(const ReadMany&) = delete;
  ~ReadMany() {
    py::gil_scoped_release release;
    close_now();
  }

  void close() {
    py::gil_scoped_release release;
    close_now();
  }

  size_t size() const { return paths_.size(); }

  ReadResult next() {
#if CADCLIP_WITH_OCCT
    if (next_ >= paths_.size() || closed_) throw py::stop_iteration();
    cad::IngestOutcome outcome;
    {
      py::gil_scoped_release release;
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return outcomes_.count(next_) || finished_; });
      const auto it = outcomes_.find(next_);
      if (it == outcomes_.end()) {
        if (failure_) std::rethrow_exception(failure_);
        CADCLIP_CHECK(false, "the ingest pool ended without an outcome for {}", paths_[next_]);
      }
      outcome = std::move(it->second);
      outcomes_.erase(it);
    }
    ReadResult r;
    r.index = static_cast<int64_t>(next_);
    r.path = paths_[next_];
    r.id = outcome.id;
    r.seconds = outcome.seconds;
    r.warnings = outcome.warnings;
    ++next_;
    if (outcome.failure) {
      r.error = read_error(r.path, data::failure_kind_name(outcome.failure->kind),
                           outcome.failure->reason);
    } else {
      GraphPtr graph;
      {
        py::gil_scoped_release release;
        graph = decode(outcome, r.path);
      }
      r.graph = py::cast(graph);
    }
    return r;
#else
    no_occt();
#endif
  }

 private:
  void close_now() {
    closed_ = true;
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  std::vector<std::string> paths_;
#if CADCLIP_WITH_OCCT
  std::vector<cad::IngestInput> inputs_;
  std::map<size_t, cad::IngestOutcome> outcomes_;
#endif
  std::mutex mutex_;
  std::condition_variable ready_;
  std::exception_ptr failure_;
  bool finished_ = false;
  bool closed_ = false;
  std::atomic<bool> stop_{false};
  size_t next_ = 0;
  std::thread thread_;
};

std::vector<std::string> cad_files(const std::string& folder) {
  const fs::path root(folder);
  if (!fs::is_directory(root))
    throw Error(format("{} is not a folder; cad_files lists the CAD files under a folder", folder));
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && data::is_cad_path(entry.path()))
      found.push_back(entry.path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

void raise_read_error(const std::string& path, std::string_view kind, const std::string& reason) {
  raise(read_error(path, kind, reason));
}

std::string& worker_binary() {
  static std::string binary;
  return binary;
}

namespace {

// BRepGraph: its facts, its arrays as tensor views, pickling.
void bind_graph_class(py::module_& m) {
  py::class_<data::BRepGraph, GraphPtr> graph_class(m, "BRepGraph",
                                                    R"(One solid as cadclip's B-Rep encoder sees it.

Faces (F of them) carry a 10 x 10 UV grid of 7 channels and attributes; directed
face-adjacency edges (E, both directions of each manifold B-Rep edge) carry a
10-sample curve grid and attributes. The tensors are those a prepared shard
holds for this model (same names, dtypes and shapes, docs/FORMATS.md) and share
the graph's memory: each property returns a CPU tensor view without a copy.)");
  graph_class
      .def_property_readonly(
          "id", [](const data::BRepGraph& g) { return g.id; },
          "The model id (file stem by default).")
      .def_property_readonly(
          "unit", [](const data::BRepGraph& g) { return g.unit; },
          "Where millimetres came from: 'file:millimetre', 'assumed:mm', ...")
      .def_property_readonly(
          "geometry_hash", [](const data::BRepGraph& g) { return g.geometry_hash; },
          "Hex hash of the quantised grids in mm: equal for a moved or re-exported part.")
      .def_property_readonly("num_faces", &data::BRepGraph::num_faces, "F, the number of faces.")
      .def_property_readonly("num_edges", &data::BRepGraph::num_edges,
                             "E, the number of directed edges.")
      .def_property_readonly(
          "scale_mm", [](const data::BRepGraph& g) { return g.scale_mm; },
          "Longest side of the bounding box, mm.")
      .def_property_readonly(
          "solid_count", [](const data::BRepGraph& g) { return g.solid_count; },
          "Solids in the source file.")
      .def_property_readonly(
          "closed", [](const data::BRepGraph& g) { return g.closed; },
          "True when every kept shell is closed.")
      .def(
          "tensors", [](const GraphPtr& g) { return graph_tensors(g); },
          R"(Every array as a tensor, under its shard name: face_grids [F, 10, 10, 7] float32,
face_types [F] uint8, face_areas [F] float32 (mm^2), face_centroids [F, 3] float32,
face_rational [F] uint8, face_loops [F] int32, edge_src and edge_dst [E] int32 (face
indices), edge_grids [E, 10, 12] float32, edge_types [E] uint8, edge_lengths [E]
float32 (mm), edge_convexity [E] uint8, bbox_mm [6] float32, and the 0-d scale_mm
(float32), solid_count (int32) and closed (uint8). Views of the graph's memory.)")
      .def(
          "pairwise", [](const data::BRepGraph& g) { return pairwise_tensors(g); },
          R"(The attention-bias inputs the B-Rep encoder derives at load time: hops [F, F]
int32 (-1 where no path), normal_angle [F, F] float32 (radians), normal_defined [F]
uint8, centroid_distance [F, F] float32.)")
      .def(py::pickle([](const data::BRepGraph& g) { return py::bytes(data::encode_graph(g)); },
                      [](const py::bytes& bytes) {
                        const std::string s = bytes;
                        return std::make_shared<data::BRepGraph>(data::decode_graph(
                            std::as_bytes(std::span(s.data(), s.size())), "a pickled BRepGraph"));
                      }))
      .def("__repr__", [](const data::BRepGraph& g) {
        return format("BRepGraph('{}', faces={}, edges={}, scale_mm={}, unit='{}')", g.id,
                      g.num_faces(), g.num_edges(), fixed(g.scale_mm, 3), g.unit);
      });
  // Each array also as a property of its name.
  for (const char* name : kFields) {
    if (std::string_view(name) == "scale_mm" || std::string_view(name) == "solid_count" ||
        std::string_view(name) == "closed")
      continue;  // plain numbers above
    graph_class.def_property_readonly(
        name, [name](const GraphPtr& g) { return field(g, name); },
        "A view of the graph's array; see tensors() for dtype and shape.");
  }
}

// Reading CAD files: ReadError, the options and limits, one file or many
// (in worker processes), and the files of a folder.
void bind_reading(py::module_& m) {
  g_read_error = PyErr_NewExceptionWithDoc("cadclip.ReadError", read_error_doc().c_str(),
                                           m.attr("Error").ptr(), nullptr);
  m.attr("ReadError") = g_read_error;

  py::class_<ReadOptions>(m, "_ReadOptions")
      .def(py::init([](std::optional<std::string> unit, int max_faces, int max_edges,
                       bool deepcad_symmetric_full, double file_timeout_s, double max_file_mb) {
             ReadOptions o;
             o.unit = unit.value_or("");
             o.limits = {max_faces, max_edges, max_file_mb, file_timeout_s};
             o.deepcad_symmetric_full = deepcad_symmetric_full;
             if (!o.unit.empty() && o.unit != "mm" && o.unit != "cm" && o.unit != "m" &&
                 o.unit != "inch")
               throw Error(
                   format("unit '{}' is not one cadclip knows: use mm, cm, m or inch", o.unit));
             data::check_limits(o.limits);
             return o;
           }),
           py::arg("unit"), py::arg("max_faces"), py::arg("max_edges"),
           py::arg("deepcad_symmetric_full"), py::arg("file_timeout_s"), py::arg("max_file_mb"));
  m.def(
      "_default_limits",
      [] {
        const data::IngestLimits limits;
        py::dict out;
        out["max_faces"] = limits.max_faces;
        out["max_edges"] = limits.max_edges;
        out["max_file_mb"] = limits.max_file_mb;
        out["file_timeout_s"] = limits.file_timeout_s;
        return out;
      },
      "The ingest limits' defaults (cadclip/data/ingest_limits.h), as read_cad takes them.");
  m.def(
      "_failure_kinds",
      [] {
        std::vector<std::string> names;
        for (const data::FailureKind kind : data::failure_kinds())
          names.emplace_back(data::failure_kind_name(kind));
        return names;
      },
      "Every failure kind's name (cadclip/data/ingest_failure.h), in the enum's order.");

  m.def("_set_worker_binary", [](const std::string& path) { worker_binary() = path; });
  m.def("_worker_binary", [] { return worker_binary(); });
  m.def("_read_cad", &read_cad, py::arg("path"), py::arg("options"), py::arg("isolated"),
        py::arg("id"));
  m.def("cad_files", &cad_files, py::arg("folder"),
        "Every CAD file (STEP, IGES, BREP, DeepCAD JSON) under a folder, searched recursively, "
        "sorted by path.");

  py::class_<ReadResult>(m, "ReadResult", "What became of one input of read_cad_many.")
      .def_readonly("index", &ReadResult::index, "Position in the input list.")
      .def_readonly("path", &ReadResult::path)
      .def_readonly("id", &ReadResult::id)
      .def_readonly("graph", &ReadResult::graph, "The BRepGraph, or None when it failed.")
      .def_readonly("error", &ReadResult::error, "The ReadError, or None when it was read.")
      .def_readonly("seconds", &ReadResult::seconds, "Time in the worker.")
      .def_readonly("warnings", &ReadResult::warnings,
                    "What ingest skipped without failing (loose faces, extra solids, ...).")
      .def_property_readonly("ok", [](const ReadResult& r) { return r.error.is_none(); })
      .def(
          "unwrap",
          [](const ReadResult& r) -> py::object {
            if (!r.error.is_none()) raise(r.error);
            return r.graph;
          },
          "The graph, or raises the ReadError.")
      .def("__repr__", [](const ReadResult& r) {
        return r.error.is_none()
                   ? format("ReadResult({}, ok, {})", r.index, py::str(r.graph).cast<std::string>())
                   : format("ReadResult({}, failed: {})", r.index,
                            py::str(r.error).cast<std::string>());
      });

  py::class_<ReadMany>(m, "_ReadMany")
      .def(py::init<std::vector<std::string>, std::vector<std::string>, const ReadOptions&, int>(),
           py::arg("paths"), py::arg("ids"), py::arg("options"), py::arg("workers"))
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &ReadMany::next)
      .def("__len__", &ReadMany::size)
      .def("close", &ReadMany::close);
}

// Prepared folders: the dataset files name, a dataset's graphs, and their
// collation into the B-Rep encoder's batch.
void bind_datasets(py::module_& m) {
  m.def(
      "_dataset_folders",
      [](const std::vector<std::string>& paths) {
        std::vector<std::string> out;
        for (const fs::path& folder : data::dataset_folders(paths)) out.push_back(folder.string());
        return out;
      },
      py::arg("paths"),
      "The prepared folders that paths name: each a folder, or a dataset file listing folders "
      "(one per line, '#' comments, relative to the file), as `cadclip train --data` reads them.");

  py::class_<data::Dataset>(m, "_Dataset")
      .def(py::init([](const std::string& folder) {
             py::gil_scoped_release release;
             return data::Dataset::open(folder);
           }),
           py::arg("folder"))
      .def("__len__", &data::Dataset::size)
      .def(
          "graph",
          [](const data::Dataset& d, int64_t i) {
            py::gil_scoped_release release;
            return std::make_shared<data::BRepGraph>(d.graph(i));
          },
          py::arg("index"))
      .def("id", &data::Dataset::id, py::arg("index"))
      .def("ids", &data::Dataset::ids)
      .def("find", &data::Dataset::find, py::arg("id"))
      .def("num_faces", &data::Dataset::num_faces, py::arg("index"))
      .def("num_edges", &data::Dataset::num_edges, py::arg("index"));

  m.def(
      "collate",
      [](const py::sequence& graphs) {
        std::vector<GraphPtr> held;
        held.reserve(graphs.size());
        for (const py::handle& g : graphs) held.push_back(g.cast<GraphPtr>());
        std::vector<const data::BRepGraph*> pointers;
        for (const GraphPtr& g : held) pointers.push_back(g.get());
        data::BRepBatch batch;
        {
          py::gil_scoped_release release;
          batch = data::collate(std::span<const data::BRepGraph* const>(pointers));
        }
        return batch_dict(batch);
      },
      py::arg("graphs"), R"(Graphs to the B-Rep encoder's batch: a dict of tensors (docs/PYTHON.md).

B graphs, N faces and E edges in all, M faces in the largest graph: ids (list of B
str), face_grids [N, 7, 10, 10], face_types [N], face_attrs [N, 6], face_graph [N],
face_slot [N], face_offsets [B + 1], edge_grids [E, 12, 10], edge_types [E],
edge_convexity [E], edge_attrs [E, 1], edge_pair [E], edge_offsets [B + 1],
graph_attrs [B, 4], hops, normal_angle, angle_defined, centroid_distance [B, M, M]
and padding_mask [B, M] (bool). Floats are float32, indices int64.)");
}

}  // namespace

void bind_graphs(py::module_& m) {
  bind_graph_class(m);
  bind_reading(m);
  bind_datasets(m);
}

}  // namespace cadclip::python
