// ingest_file: format dispatch, the model rule, featurization, and the one
// place where OCCT exceptions become per-file failures.
#include <Standard_ErrorHandler.hxx>
#include <Standard_Failure.hxx>

#include <exception>
#include <fstream>
#include <iterator>
#include <system_error>

#include "cad/occt_shape.h"
#include "cadclip/cad/ingest.h"
#include "cadclip/core/format.h"

namespace cadclip::cad {
namespace {

Result<std::string> read_whole(const std::filesystem::path& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return Status::failure(format("cannot read {}: {}", path.string(), error.message()));
  if (size == 0) return Status::failure(format("{} is empty (0 bytes)", path.string()));
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) return Status::failure(format("cannot read {}", path.string()));
  return text;
}

Result<data::BRepGraph> ingest_checked(const std::filesystem::path& path,
                                       const IngestOptions& options, TopoDS_Shape* kept,
                                       std::vector<std::string>* warnings) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    return Status::failure(format("{} is not a readable file", path.string()));
  const std::string id = path.stem().string();
  const data::CadFormat kind = data::format_of(path);
  if (kind == data::CadFormat::kUnknown)
    return Status::failure(format("{}: unknown extension '{}'; cadclip reads {}", path.string(),
                                  path.extension().string(), data::kCadExtensions));
  if (kind == data::CadFormat::kDeepcadJson) {
    Result<double> factor = millimetres_per_unit(options.assume_unit);
    if (!factor) return factor.status();
    Result<std::string> text = read_whole(path);
    if (!text) return text.status();
    Result<TopoDS_Shape> shape = deepcad_to_shape(text.value(), path.string(), options, warnings);
    if (!shape) return shape.status();
    Result<data::BRepGraph> graph =
        ingest_shape(shape.value(), id, "assumed:" + options.assume_unit, options, kept);
    if (!graph) return Status::failure(format("{}: {}", path.string(), graph.status().reason()));
    return graph;
  }
  Result<LoadedShape> loaded = read_shape(path, options);
  if (!loaded) return loaded.status();
  Result<data::BRepGraph> graph = ingest_shape(loaded->shape, id, loaded->unit, options, kept);
  if (!graph) return Status::failure(format("{}: {}", path.string(), graph.status().reason()));
  return graph;
}

}  // namespace

Result<data::BRepGraph> ingest_shape(const TopoDS_Shape& shape, std::string id, std::string unit,
                                     const IngestOptions& options, TopoDS_Shape* kept) {
  Result<ModelShape> model = select_model(shape);
  if (!model) return model.status();
  Result<data::BRepGraph> graph = featurize_shape(model->shape, options);
  if (!graph) return graph.status();
  graph->id = std::move(id);
  graph->unit = std::move(unit);
  graph->solid_count = model->solid_count;
  graph->closed = model->closed;
  if (kept != nullptr) *kept = model->shape;
  return graph;
}

namespace {

Result<data::BRepGraph> ingest_caught(const std::filesystem::path& path,
                                      const IngestOptions& options, TopoDS_Shape* kept,
                                      std::vector<std::string>* warnings) {
  try {
    OCC_CATCH_SIGNALS
    return ingest_checked(path, options, kept, warnings);
  } catch (const Standard_Failure& failure) {
    return Status::failure(format("{}: OCCT failed: {} ({})", path.string(),
                                  failure.GetMessageString(), failure.DynamicType()->Name()));
  } catch (const std::bad_alloc&) {
    return Status::failure(format("{}: out of memory while ingesting", path.string()));
  } catch (const std::exception& failure) {
    return Status::failure(format("{}: {}", path.string(), failure.what()));
  }
}

}  // namespace

Result<data::BRepGraph> ingest_file(const std::filesystem::path& path,
                                    const IngestOptions& options) {
  return ingest_caught(path, options, nullptr, nullptr);
}

Result<data::BRepGraph> ingest_file_keeping(const std::filesystem::path& path,
                                            const IngestOptions& options, TopoDS_Shape& kept,
                                            std::vector<std::string>& warnings) {
  return ingest_caught(path, options, &kept, &warnings);
}

}  // namespace cadclip::cad
