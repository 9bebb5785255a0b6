# The NCCL communicator: a module (libcadclip_nccl.so, from src/train_nccl/)
# that the train layer loads with dlopen when a run asks for --backend nccl.
#
# Built whenever the LibTorch found is a CUDA build (lib/libtorch_cuda.so) and
# nccl.h and the CUDA runtime headers are found: from the nvidia-* wheels next
# to torch (nccl.h comes with nvidia-nccl, never with torch), else from a CUDA
# toolkit. Neither nvcc nor a toolkit is needed: nothing here is CUDA code.
# A module rather than a link: libtorch_cuda and the CUDA libraries it pulls
# in cost every CPU process about 0.14 s and 350 MB at start (docs/TRAINING.md);
# loaded on demand, they cost only the runs that use NCCL.
#
# Included from src/CMakeLists.txt after the train layer is defined. Sets
# CADCLIP_NCCL_BUILT (ON/OFF, a cache entry, for tests/) and CADCLIP_NCCL_MISSING.

set(CADCLIP_NCCL "AUTO" CACHE STRING
    "NCCL communicator: AUTO (when LibTorch is a CUDA build and nccl.h is found), ON (required), OFF")
set_property(CACHE CADCLIP_NCCL PROPERTY STRINGS AUTO ON OFF)

set(CADCLIP_NCCL_MISSING "")
get_filename_component(_site "${CADCLIP_TORCH_ROOT}/.." ABSOLUTE)
set(_torch_lib "${CADCLIP_TORCH_ROOT}/lib")

if(CADCLIP_NCCL STREQUAL "OFF")
  set(CADCLIP_NCCL_MISSING "it was configured with -DCADCLIP_NCCL=OFF")
elseif(NOT EXISTS "${_torch_lib}/libtorch_cuda.so" OR NOT EXISTS "${_torch_lib}/libc10_cuda.so")
  set(CADCLIP_NCCL_MISSING
      "the LibTorch it was built with (${CADCLIP_TORCH_ROOT}) is a CPU build: no lib/libtorch_cuda.so")
else()
  # Every nvidia-* wheel's include folder: CUDA 13 wheels put the runtime,
  # cuBLAS, cuSPARSE ... headers in nvidia/cu13/include, CUDA 12 wheels one
  # folder per library (nvidia/cuda_runtime/include, nvidia/cublas/include ...).
  file(GLOB _wheel_includes LIST_DIRECTORIES true "${_site}/nvidia/*/include")
  find_path(CADCLIP_NCCL_INCLUDE nccl.h
            HINTS "${_site}/nvidia/nccl/include" "$ENV{NCCL_HOME}/include" "$ENV{CUDA_HOME}/include"
                  /usr/local/cuda/include)
  find_path(CADCLIP_CUDA_RUNTIME_INCLUDE cuda_runtime_api.h
            HINTS ${_wheel_includes} "$ENV{CUDA_HOME}/include" /usr/local/cuda/include)
  if(NOT CADCLIP_NCCL_INCLUDE)
    set(CADCLIP_NCCL_MISSING
        "nccl.h was not found (it comes with the nvidia-nccl-cu* wheel that a CUDA torch wheel "
        "depends on; looked in ${_site}/nvidia/nccl/include, NCCL_HOME and CUDA_HOME)")
  elseif(NOT CADCLIP_CUDA_RUNTIME_INCLUDE)
    set(CADCLIP_NCCL_MISSING
        "cuda_runtime_api.h was not found (looked in ${_site}/nvidia/*/include and CUDA_HOME)")
  else()
    # ProcessGroupNCCL's layout depends on NCCL_VERSION_CODE: the header must
    # be the version LibTorch was built with, or objects made here would not
    # match the library's.
    file(STRINGS "${CADCLIP_NCCL_INCLUDE}/nccl.h" _nccl_parts REGEX "#define NCCL_(MAJOR|MINOR|PATCH) ")
    foreach(_part MAJOR MINOR PATCH)
      string(REGEX MATCH "NCCL_${_part} ([0-9]+)" _match "${_nccl_parts}")
      set(_nccl_${_part} "${CMAKE_MATCH_1}")
    endforeach()
    set(CADCLIP_NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
    execute_process(
      COMMAND "${CADCLIP_PYTHON}" -c
              "import torch; print('.'.join(map(str, torch.cuda.nccl.version())))"
      OUTPUT_VARIABLE _torch_nccl OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _torch_nccl_rc ERROR_QUIET)
    if(_torch_nccl_rc EQUAL 0 AND NOT _torch_nccl STREQUAL CADCLIP_NCCL_VERSION)
      set(CADCLIP_NCCL_MISSING
          "${CADCLIP_NCCL_INCLUDE}/nccl.h is NCCL ${CADCLIP_NCCL_VERSION}, but LibTorch was built "
          "with NCCL ${_torch_nccl}; point CADCLIP_NCCL_INCLUDE at the matching nccl.h")
    elseif(NOT _torch_nccl_rc EQUAL 0)
      message(STATUS "cadclip: cannot ask ${CADCLIP_PYTHON} for LibTorch's NCCL version; "
                     "trusting nccl.h ${CADCLIP_NCCL_VERSION}")
    endif()
  endif()
endif()

if(CADCLIP_NCCL_MISSING)
  set(CADCLIP_NCCL_BUILT OFF CACHE INTERNAL "Whether the NCCL communicator module is built")
  if(CADCLIP_NCCL STREQUAL "ON")
    message(FATAL_ERROR "cadclip: -DCADCLIP_NCCL=ON, but ${CADCLIP_NCCL_MISSING}")
  endif()
  message(STATUS "cadclip: no NCCL communicator (--backend nccl will say so): ${CADCLIP_NCCL_MISSING}")
  target_compile_definitions(cadclip_train PRIVATE
                             "CADCLIP_NCCL_MISSING=\"${CADCLIP_NCCL_MISSING}\"")
  return()
endif()

set(CADCLIP_NCCL_BUILT ON CACHE INTERNAL "Whether the NCCL communicator module is built")
message(STATUS "cadclip: NCCL communicator module with NCCL ${CADCLIP_NCCL_VERSION} "
               "(${CADCLIP_NCCL_INCLUDE}, CUDA headers ${CADCLIP_CUDA_RUNTIME_INCLUDE})")

add_library(cadclip_nccl MODULE "${PROJECT_SOURCE_DIR}/src/train_nccl/nccl_backend.cc")
target_include_directories(cadclip_nccl PRIVATE "${PROJECT_SOURCE_DIR}/include"
                           "${PROJECT_SOURCE_DIR}/src")
target_include_directories(cadclip_nccl SYSTEM PRIVATE "${CADCLIP_NCCL_INCLUDE}")
# The compile definitions of the wheel's torch_cuda target (Caffe2Targets.cmake):
# they select members of the c10d classes, whose layout must match the library.
target_compile_definitions(cadclip_nccl PRIVATE USE_C10D_NCCL USE_NVSHMEM)
target_compile_options(cadclip_nccl PRIVATE ${CADCLIP_WARNINGS})
target_link_libraries(cadclip_nccl PRIVATE cadclip::torch)
if(NOT CADCLIP_WITH_CUDA)
  # The CPU build's cadclip::torch has no CUDA libraries: import the two the
  # module calls, with the wheels' CUDA headers (TorchConfig does this when
  # CADCLIP_WITH_CUDA=ON).
  foreach(_name c10_cuda torch_cuda)
    add_library(cadclip_torch_${_name} SHARED IMPORTED)
    set_target_properties(cadclip_torch_${_name} PROPERTIES
      IMPORTED_LOCATION "${_torch_lib}/lib${_name}.so"
      INTERFACE_INCLUDE_DIRECTORIES "${CADCLIP_CUDA_RUNTIME_INCLUDE};${_wheel_includes}")
    target_link_libraries(cadclip_nccl PRIVATE cadclip_torch_${_name})
  endforeach()
endif()
# (No -Wl,--no-undefined: the asan preset's sanitizer runtime is linked into
# executables only. A missing symbol shows at dlopen, RTLD_NOW, in the error.)
set_target_properties(cadclip_nccl PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib")

# The train layer finds the module at its build path (or $CADCLIP_NCCL_PLUGIN,
# or ../lib/ next to the executable) and is built after it.
target_compile_definitions(cadclip_train PRIVATE CADCLIP_HAVE_NCCL=1
                           "CADCLIP_NCCL_PLUGIN_PATH=\"$<TARGET_FILE:cadclip_nccl>\"")
target_link_libraries(cadclip_train PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(cadclip_train cadclip_nccl)
