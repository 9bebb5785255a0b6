# Finds LibTorch inside the PyPI torch wheel and defines cadclip::torch.
#
# The wheel is a CUDA build. Its TorchConfig.cmake insists on a CUDA toolkit
# of the wheel's CUDA version, which a CPU machine may lack or hold in another
# version. cadclip's CPU build therefore links the wheel's CPU libraries
# (torch_cpu, c10) through imported targets of its own and never asks for a
# toolkit. CADCLIP_WITH_CUDA=ON (a GPU machine) uses the official TorchConfig.

set(CADCLIP_PYTHON "/opt/cadclip/venv/bin/python" CACHE FILEPATH
    "Python of the environment that holds the torch wheel (scripts/setup.sh makes it)")
option(CADCLIP_WITH_CUDA "Link LibTorch's CUDA libraries through TorchConfig (needs a CUDA toolkit)" OFF)

if(NOT CADCLIP_TORCH_ROOT)
  execute_process(
    COMMAND "${CADCLIP_PYTHON}" -c "import os, torch; print(os.path.dirname(torch.__file__))"
    OUTPUT_VARIABLE _torch_root OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _torch_rc ERROR_QUIET)
  if(NOT _torch_rc EQUAL 0 OR NOT EXISTS "${_torch_root}/include/torch")
    message(FATAL_ERROR
      "cadclip needs the PyPI torch wheel, and '${CADCLIP_PYTHON} -c \"import torch\"' failed. "
      "Run scripts/setup.sh, or pass -DCADCLIP_PYTHON=<python with torch> "
      "or -DCADCLIP_TORCH_ROOT=<site-packages/torch>.")
  endif()
  set(CADCLIP_TORCH_ROOT "${_torch_root}" CACHE PATH "The torch package folder (include/, lib/, share/cmake)")
endif()

# torch/headeronly/version.h since 2.9, torch/csrc/api/include/torch/version.h before.
foreach(_candidate "include/torch/headeronly/version.h" "include/torch/csrc/api/include/torch/version.h")
  if(EXISTS "${CADCLIP_TORCH_ROOT}/${_candidate}")
    file(STRINGS "${CADCLIP_TORCH_ROOT}/${_candidate}" _parts REGEX "#define TORCH_VERSION_(MAJOR|MINOR|PATCH) ")
    if(_parts)
      break()
    endif()
  endif()
endforeach()
foreach(_part MAJOR MINOR PATCH)
  string(REGEX MATCH "TORCH_VERSION_${_part} ([0-9]+)" _match "${_parts}")
  set(_torch_${_part} "${CMAKE_MATCH_1}")
endforeach()
set(CADCLIP_TORCH_VERSION "${_torch_MAJOR}.${_torch_MINOR}.${_torch_PATCH}")
if(NOT _torch_MAJOR OR _torch_MAJOR LESS 2)
  message(FATAL_ERROR "cadclip needs LibTorch 2.x (autocast and c10d APIs); found '${CADCLIP_TORCH_VERSION}' in ${CADCLIP_TORCH_ROOT}")
endif()
message(STATUS "cadclip: LibTorch ${CADCLIP_TORCH_VERSION} from ${CADCLIP_TORCH_ROOT}")

add_library(cadclip_torch INTERFACE)
add_library(cadclip::torch ALIAS cadclip_torch)

if(CADCLIP_WITH_CUDA)
  # Without an architecture list TorchConfig probes the GPU with a try_run,
  # which fails on a machine without one (and with nvcc 13 under CMake 3.25,
  # which has no flags for "CUDA20"). Nothing here is CUDA code: the list only
  # fills TorchConfig's nvcc flags. 9.0 is the H200; the environment variable
  # at the first configure, or -DTORCH_CUDA_ARCH_LIST, chooses another.
  if(DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(_arch_default "$ENV{TORCH_CUDA_ARCH_LIST}")
  else()
    set(_arch_default "9.0")
  endif()
  set(TORCH_CUDA_ARCH_LIST "${_arch_default}" CACHE STRING
      "GPU architectures for TorchConfig's nvcc flags (9.0: H100/H200); skips its GPU probe")
  find_package(Torch REQUIRED PATHS "${CADCLIP_TORCH_ROOT}/share/cmake" NO_DEFAULT_PATH)
  # Not TorchConfig's `torch` and `torch_library` (lib/libtorch.so): that stub
  # exports its own std::filesystem functions without linking libstdc++, and,
  # needed before libstdc++, they replace the real ones (remove_all jumped to
  # address 0). torch_cpu_library and torch_cuda_library are what it links,
  # with --no-as-needed so that the CUDA kernels register.
  set(_torch_libraries ${TORCH_LIBRARIES})
  list(REMOVE_ITEM _torch_libraries torch torch_library)
  target_include_directories(cadclip_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  target_link_libraries(cadclip_torch INTERFACE torch_cpu_library torch_cuda_library
                        ${_torch_libraries})
  target_compile_definitions(cadclip_torch INTERFACE CADCLIP_WITH_CUDA=1)
else()
  set(_lib "${CADCLIP_TORCH_ROOT}/lib")
  foreach(_name c10 torch_cpu)
    add_library(cadclip_torch_${_name} SHARED IMPORTED)
    set_target_properties(cadclip_torch_${_name} PROPERTIES
      IMPORTED_LOCATION "${_lib}/lib${_name}.so"
      INTERFACE_INCLUDE_DIRECTORIES
        "${CADCLIP_TORCH_ROOT}/include;${CADCLIP_TORCH_ROOT}/include/torch/csrc/api/include")
    target_link_libraries(cadclip_torch INTERFACE cadclip_torch_${_name})
  endforeach()
  # LibTorch calls BLAS through global symbols (sgemm_, sgemv_, ...) that
  # libtorch_cpu defines itself (the wheel links MKL in), and Debian's OpenBLAS,
  # which FAISS brings, defines the same names: whichever library comes first in
  # a program's load order serves both. libtorch_cpu goes first, so that
  # LibTorch's matrix products are its own MKL's, as under `import torch` (the
  # Python module's results then equal the command's bit for bit), not
  # OpenBLAS's, which served them before when FAISS was linked.
  # (A program that calls no LibTorch sets CADCLIP_WITHOUT_TORCH to be left alone.)
  set(_first "$<NOT:$<BOOL:$<TARGET_PROPERTY:CADCLIP_WITHOUT_TORCH>>>")
  set_property(TARGET cadclip_torch APPEND PROPERTY INTERFACE_LINK_OPTIONS
               "$<${_first}:LINKER:--push-state,--no-as-needed>"
               "$<${_first}:${_lib}/libtorch_cpu.so>" "$<${_first}:LINKER:--pop-state>")
  # The wheel's lib folder is on every binary's run path. Its libgomp.so.1
  # then serves FAISS's OpenMP as well, so one OpenMP runtime runs per process.
  set(CMAKE_BUILD_RPATH "${CMAKE_BUILD_RPATH};${_lib}")
  set(CMAKE_INSTALL_RPATH "${CMAKE_INSTALL_RPATH};${_lib}")
endif()
# Gloo lives in torch_cpu; its c10d headers are guarded by these, and include
# Gloo's own headers, which the wheel lacks (Debian's libgloo-dev, or the copy
# that scripts/gpu_bundle.sh packs for a GPU machine).
target_compile_definitions(cadclip_torch INTERFACE USE_DISTRIBUTED USE_C10D_GLOO)
find_path(CADCLIP_GLOO_INCLUDE gloo/algorithm.h)
if(NOT CADCLIP_GLOO_INCLUDE)
  message(FATAL_ERROR "cadclip needs Gloo's headers (gloo/algorithm.h), which LibTorch's c10d "
                      "headers include: install libgloo-dev (scripts/setup.sh) or pass "
                      "-DCMAKE_PREFIX_PATH=<a prefix with include/gloo>.")
endif()
target_include_directories(cadclip_torch SYSTEM INTERFACE "${CADCLIP_GLOO_INCLUDE}")
