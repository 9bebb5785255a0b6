// cadclip._core: the C++ core of the `cadclip` Python package (docs/PYTHON.md).
// The package's __init__.py imports torch before this module, so that the
// LibTorch it links is the one torch already loaded.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "cadclip/core/error.h"
#include "cadclip/core/log.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "The C++ core of cadclip: CAD files to B-Rep graphs, prepared datasets, models, indexes";
  m.attr("__version__") = CADCLIP_VERSION;
  m.attr("torch_version") = CADCLIP_TORCH_VERSION;

  // cadclip::Error is bad input at an API boundary: the message names the
  // input and the fix. It reaches Python as cadclip.Error.
  static py::handle error = py::exception<cadclip::Error>(m, "Error", PyExc_RuntimeError).release();
  error.attr("__doc__") =
      "Bad input to cadclip (a missing folder, a checkpoint that does not fit, ...); the message "
      "names the input and what to do.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cadclip::Error& e) {
      py::set_error(error, e.what());
    }
  });

  // Python programs see warnings and errors; set_log_level("info") shows
  // what the command line shows.
  cadclip::log::set_level(cadclip::log::Level::kWarn);
  m.def(
      "set_log_level",
      [](const std::string& name) {
        const auto level = cadclip::log::parse_level(name);
        if (!level)
          throw cadclip::Error(cadclip::format(
              "unknown log level '{}': use trace, debug, info, warning, error or off", name));
        cadclip::log::set_level(*level);
      },
      py::arg("level"),
      "Sets how much cadclip logs to stderr: 'trace', 'debug', 'info', 'warning' (the default "
      "in Python), 'error' or 'off'.");

  cadclip::python::bind_graphs(m);
  cadclip::python::bind_models(m);
}
