#include "cadclip/cad/thumbnail.h"

#include <BRepAdaptor_Curve.hxx>
#include <GCPnts_TangentialDeflection.hxx>
#include <HLRAlgo_Projector.hxx>
#include <HLRBRep_Algo.hxx>
#include <HLRBRep_HLRToShape.hxx>
#include <Standard_ErrorHandler.hxx>
#include <Standard_Failure.hxx>
#include <TopExp_Explorer.hxx>
#include <TopoDS.hxx>
#include <gp_Ax2.hxx>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cad/occt_shape.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"

namespace cadclip::cad {
namespace {

using Polyline = std::vector<std::pair<double, double>>;

// Projected edges (in the projector's plane, z = 0) to polylines; curves are
// sampled finely enough that arcs look round at thumbnail size.
void add_polylines(const TopoDS_Shape& compound, std::vector<Polyline>& out) {
  if (compound.IsNull()) return;
  for (TopExp_Explorer it(compound, TopAbs_EDGE); it.More(); it.Next()) {
    const TopoDS_Edge& edge = TopoDS::Edge(it.Current());
    BRepAdaptor_Curve curve(edge);
    GCPnts_TangentialDeflection sampler(curve, /*angular=*/0.15, /*curvature=*/1e-3);
    if (sampler.NbPoints() < 2) continue;
    Polyline line;
    for (int i = 1; i <= sampler.NbPoints(); ++i) {
      const gp_Pnt p = sampler.Value(i);
      line.emplace_back(p.X(), p.Y());
    }
    out.push_back(std::move(line));
  }
}

Result<ModelShape> load_model(const std::filesystem::path& path, const IngestOptions& options) {
  if (data::format_of(path) == data::CadFormat::kDeepcadJson) {
    Result<TopoDS_Shape> shape = deepcad_to_shape(read_text_file(path), path.string(), options);
    if (!shape) return shape.status();
    return select_model(shape.value());
  }
  Result<LoadedShape> loaded = read_shape(path, options);
  if (!loaded) return loaded.status();
  return select_model(loaded->shape);
}

void check_options(const ThumbnailOptions& options) {
  if (options.size_px < 16 || options.margin_px * 2 >= options.size_px)
    throw Error(format("thumbnail size {} px with margin {} px leaves no room; use at least 16 px",
                       options.size_px, options.margin_px));
}

Result<Thumbnail> draw(const TopoDS_Shape& model, std::string_view name,
                       const ThumbnailOptions& options) {
  // Isometric view: looking along -(1, -1, 1), with +Z pointing up in the drawing.
  const gp_Dir towards_viewer(1, -1, 1);
  const gp_Dir right = gp_Dir(0, 0, 1).Crossed(towards_viewer);
  Handle(HLRBRep_Algo) algo = new HLRBRep_Algo();
  algo->Add(model);
  algo->Projector(HLRAlgo_Projector(gp_Ax2(gp_Pnt(0, 0, 0), towards_viewer, right)));
  algo->Update();
  algo->Hide();
  HLRBRep_HLRToShape shapes(algo);

  std::vector<Polyline> lines;
  add_polylines(shapes.VCompound(), lines);         // visible sharp edges
  add_polylines(shapes.OutLineVCompound(), lines);  // visible silhouettes
  if (!options.remove_hidden) {
    add_polylines(shapes.HCompound(), lines);
    add_polylines(shapes.OutLineHCompound(), lines);
    add_polylines(shapes.Rg1LineVCompound(), lines);
    add_polylines(shapes.Rg1LineHCompound(), lines);
  }
  if (lines.empty()) return Status::failure(format("{}: the drawing has no visible edge", name));

  double xmin = std::numeric_limits<double>::max(), ymin = xmin;
  double xmax = -xmin, ymax = -xmin;
  for (const Polyline& line : lines) {
    for (const auto& [x, y] : line) {
      xmin = std::min(xmin, x), xmax = std::max(xmax, x);
      ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
  }
  const double room = options.size_px - 2 * options.margin_px;
  const double extent = std::max({xmax - xmin, ymax - ymin, 1e-9});
  const double scale = room / extent;
  // Centred; SVG's y grows downwards.
  const double x0 = options.margin_px + (room - (xmax - xmin) * scale) / 2;
  const double y0 = options.margin_px + (room - (ymax - ymin) * scale) / 2;

  Thumbnail thumb;
  std::string& svg = thumb.svg;
  const std::string size = std::to_string(options.size_px);
  svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + size + "\" height=\"" + size +
        "\" viewBox=\"0 0 " + size + " " + size + "\">\n<rect width=\"" + size + "\" height=\"" +
        size + "\" fill=\"#ffffff\"/>\n" + "<g fill=\"none\" stroke=\"#1f2a36\" stroke-width=\"" +
        fixed(options.stroke_px, 2) + "\" stroke-linecap=\"round\" stroke-linejoin=\"round\">\n";
  for (const Polyline& line : lines) {
    svg += "<polyline points=\"";
    double px = 0, py = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      const double x = x0 + (line[i].first - xmin) * scale;
      const double y = y0 + (ymax - line[i].second) * scale;
      if (i > 0) thumb.length_px += std::hypot(x - px, y - py);
      px = x, py = y;
      svg += format("{}{},{}", i ? " " : "", fixed(x, 1), fixed(y, 1));
    }
    svg += "\"/>\n";
    ++thumb.strokes;
  }
  svg += "</g>\n</svg>\n";
  return thumb;
}

}  // namespace

Result<Thumbnail> draw_thumbnail(const TopoDS_Shape& model, std::string_view name,
                                 const ThumbnailOptions& options) {
  check_options(options);  // a usage error, thrown outside the per-file catch below
  try {
    OCC_CATCH_SIGNALS
    return draw(model, name, options);
  } catch (const Standard_Failure& failure) {
    return Status::failure(format("{}: OCCT failed while drawing: {} ({})", name,
                                  failure.GetMessageString(), failure.DynamicType()->Name()));
  } catch (const std::exception& failure) {
    return Status::failure(format("{}: drawing failed: {}", name, failure.what()));
  }
}

Result<Thumbnail> make_thumbnail(const std::filesystem::path& path,
                                 const ThumbnailOptions& options) {
  check_options(options);
  const Result<ModelShape> model = [&]() -> Result<ModelShape> {
    try {
      OCC_CATCH_SIGNALS
      return load_model(path, options.ingest);
    } catch (const Standard_Failure& failure) {
      return Status::failure(format("{}: OCCT failed while reading: {} ({})", path.string(),
                                    failure.GetMessageString(), failure.DynamicType()->Name()));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& failure) {
      return Status::failure(format("{}: reading failed: {}", path.string(), failure.what()));
    }
  }();
  if (!model) return model.status();
  return draw_thumbnail(model->shape, path.string(), options);
}

}  // namespace cadclip::cad
