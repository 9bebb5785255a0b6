# The cadclip Python module (python/, docs/PYTHON.md): a pybind11 extension
# for the interpreter of the venv that holds the torch wheel, so that it links
# the LibTorch that `import torch` loads (and its Python bindings,
# libtorch_python.so, which hand tensors across without copies).
#
# The module links the layers' static libraries into a shared object, so
# everything is compiled position-independent while it is built (-fPIC, and
# -fno-semantic-interposition so that calls inside a library still inline).
option(CADCLIP_PYTHON_MODULE "Build the cadclip Python module (python/)" ON)

if(CADCLIP_PYTHON_MODULE)
  set(Python3_EXECUTABLE "${CADCLIP_PYTHON}")
  find_package(Python3 COMPONENTS Interpreter Development.Module)
  set(_torch_python "${CADCLIP_TORCH_ROOT}/lib/libtorch_python.so")
  if(NOT Python3_Development.Module_FOUND)
    message(WARNING "cadclip: no Python headers for ${CADCLIP_PYTHON} (Debian: python3-dev, "
                    "which scripts/setup.sh installs): the Python module is left out")
    set(CADCLIP_PYTHON_MODULE OFF)
  elseif(NOT EXISTS "${_torch_python}")
    message(WARNING "cadclip: the torch wheel has no ${_torch_python}: the Python module is "
                    "left out")
    set(CADCLIP_PYTHON_MODULE OFF)
  endif()
endif()

if(CADCLIP_PYTHON_MODULE)
  add_compile_options(-fPIC -fno-semantic-interposition)
  add_library(cadclip_torch_python SHARED IMPORTED)
  set_target_properties(cadclip_torch_python PROPERTIES IMPORTED_LOCATION "${_torch_python}")
  # Where `cmake --install <build> --component python` puts the package: the
  # venv's site-packages.
  execute_process(
    COMMAND "${CADCLIP_PYTHON}" -c "import sysconfig; print(sysconfig.get_path('platlib'))"
    OUTPUT_VARIABLE _site OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(CADCLIP_PYTHON_SITE "${_site}" CACHE PATH
      "site-packages folder the Python module installs into (--component python)")
  message(STATUS "cadclip: Python module for ${CADCLIP_PYTHON} (Python ${Python3_VERSION}), "
                 "installs into ${CADCLIP_PYTHON_SITE}")
endif()
