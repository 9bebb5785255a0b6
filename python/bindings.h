// The parts of the cadclip._core extension (docs/PYTHON.md): each binds one
// group of the C++ API into the module. Private to python/.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

namespace cadclip::python {

// BRepGraph, read_cad, the read_cad_many iterator, Dataset, collate.
void bind_graphs(pybind11::module_& m);
// The cadclip executable whose `prepare-worker` subcommand reads CAD files
// for read_cad, read_cad_many and Index.similar_to_file (the package sets it).
std::string& worker_binary();

// Raises cadclip.ReadError for a file that could not be read as a part.
[[noreturn]] void raise_read_error(const std::string& path, std::string_view kind,
                                   const std::string& reason);

// Model (checkpoint, embed_text, embed_parts) and Index (search, similar).
void bind_models(pybind11::module_& m);

}  // namespace cadclip::python
