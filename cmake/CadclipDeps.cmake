# Third-party libraries from Debian, each behind a cadclip:: name so that the
# layer targets say what they use in one word.

find_package(nlohmann_json 3.10 REQUIRED)

add_library(cadclip_json INTERFACE)
target_link_libraries(cadclip_json INTERFACE nlohmann_json::nlohmann_json)
add_library(cadclip::json ALIAS cadclip_json)

# CLI11 is header-only: found as a header so that a GPU box without the
# Debian package can use a copy that travels with the source.
find_path(CADCLIP_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)
add_library(cadclip_cli11 INTERFACE)
target_include_directories(cadclip_cli11 SYSTEM INTERFACE "${CADCLIP_CLI11_INCLUDE}")
add_library(cadclip::cli11 ALIAS cadclip_cli11)

find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
# Debian builds cpp-httplib as a shared library (libcpp-httplib.so).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
add_library(cadclip_httplib INTERFACE)
target_link_libraries(cadclip_httplib INTERFACE PkgConfig::HTTPLIB Threads::Threads)
add_library(cadclip::httplib ALIAS cadclip_httplib)

find_package(SQLite3 REQUIRED)
add_library(cadclip::sqlite ALIAS SQLite::SQLite3)

# Debian's SentencePiece ships a pkg-config file and no CMake package.
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
add_library(cadclip::sentencepiece ALIAS PkgConfig::SENTENCEPIECE)

# ICU: Unicode categories, case mapping and NFD for BERT's WordPiece tokenizer.
pkg_check_modules(ICU REQUIRED IMPORTED_TARGET icu-uc)
add_library(cadclip::icu ALIAS PkgConfig::ICU)

# Debian's FAISS 1.7.3 is a static archive that needs OpenMP, BLAS and LAPACK.
find_library(CADCLIP_FAISS_LIB NAMES faiss REQUIRED)
find_path(CADCLIP_FAISS_INCLUDE faiss/Index.h REQUIRED)
find_package(BLAS REQUIRED)
find_package(LAPACK REQUIRED)
add_library(cadclip_faiss INTERFACE)
target_link_libraries(cadclip_faiss INTERFACE "${CADCLIP_FAISS_LIB}" cadclip::torch
                      LAPACK::LAPACK BLAS::BLAS)
target_include_directories(cadclip_faiss SYSTEM INTERFACE "${CADCLIP_FAISS_INCLUDE}")
# Linked with OpenMP, not compiled with it: our index code only calls
# omp_set_num_threads (omp.h needs no -fopenmp), and compiling with it defines
# _OPENMP, which made the shared LibTorch precompiled header unusable there.
target_link_options(cadclip_faiss INTERFACE -fopenmp)
add_library(cadclip::faiss ALIAS cadclip_faiss)

option(CADCLIP_WITH_OCCT "Build the cad layer (CAD ingest, synthetic parts, thumbnails) with Open CASCADE" ON)
if(CADCLIP_WITH_OCCT)
  find_package(OpenCASCADE REQUIRED CONFIG)
  if(OpenCASCADE_VERSION VERSION_LESS 7.6)
    message(FATAL_ERROR "cadclip needs Open CASCADE 7.6 or newer; found ${OpenCASCADE_VERSION}. "
                        "Install Debian 12's libocct-*-dev or build with -DCADCLIP_WITH_OCCT=OFF.")
  endif()
  add_library(cadclip_occt INTERFACE)
  target_include_directories(cadclip_occt SYSTEM INTERFACE ${OpenCASCADE_INCLUDE_DIR})
  target_link_libraries(cadclip_occt INTERFACE
    TKernel TKMath TKG2d TKG3d TKGeomBase TKBRep TKGeomAlgo TKTopAlgo TKPrim TKBO TKBool
    TKShHealing TKFillet TKOffset TKFeat TKMesh TKHLR TKXSBase TKSTEP TKSTEPBase TKSTEPAttr
    TKSTEP209 TKIGES)
  add_library(cadclip::occt ALIAS cadclip_occt)
endif()
