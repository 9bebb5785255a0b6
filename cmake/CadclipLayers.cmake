# One library target per layer of docs/DESIGN.md; a layer links only to the
# layers below it (scripts/check_layers.py checks the includes as well).
#
#   cadclip_layer(<name> [DEPS <public targets>] [PRIVATE_DEPS <targets>] [TORCH])
#
# Sources are src/<name>/*.cc. TORCH gives the layer LibTorch and the shared
# precompiled header.

function(cadclip_layer name)
  cmake_parse_arguments(L "TORCH" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB_RECURSE _sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/${name}/*.cc")
  set(_target cadclip_${name})
  if(_sources)
    add_library(${_target} STATIC ${_sources})
    target_include_directories(${_target} PUBLIC "${PROJECT_SOURCE_DIR}/include"
                               PRIVATE "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(${_target} PUBLIC ${L_DEPS} PRIVATE ${L_PRIVATE_DEPS})
    target_compile_options(${_target} PRIVATE ${CADCLIP_WARNINGS})
    if(L_TORCH)
      target_link_libraries(${_target} PUBLIC cadclip::torch)
      cadclip_use_torch_pch(${_target})
    endif()
  else()
    # A layer whose code has not landed yet still states its place in the ladder.
    add_library(${_target} INTERFACE)
    target_link_libraries(${_target} INTERFACE ${L_DEPS})
    if(L_TORCH)
      target_link_libraries(${_target} INTERFACE cadclip::torch)
    endif()
  endif()
  add_library(cadclip::${name} ALIAS ${_target})
endfunction()

# One precompiled LibTorch header, built once and reused by every target that
# includes LibTorch (the flags of all of them match by construction).
add_library(cadclip_torch_pch OBJECT "${PROJECT_SOURCE_DIR}/cmake/torch_pch.cc")
target_link_libraries(cadclip_torch_pch PUBLIC cadclip::torch)
target_precompile_headers(cadclip_torch_pch PRIVATE "${PROJECT_SOURCE_DIR}/cmake/torch_pch.h")

function(cadclip_use_torch_pch target)
  if(CADCLIP_PCH)
    target_precompile_headers(${target} REUSE_FROM cadclip_torch_pch)
  endif()
endfunction()

# Builds the files of web/ into `target` (see cmake/embed_web.cmake).
function(cadclip_embed_web target)
  file(GLOB _files CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/web/*")
  set(_out "${CMAKE_BINARY_DIR}/generated/web_assets.cc")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND "${CMAKE_COMMAND}" "-DWEB_DIR=${PROJECT_SOURCE_DIR}/web" "-DOUT=${_out}"
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_web.cmake"
    DEPENDS ${_files} "${PROJECT_SOURCE_DIR}/cmake/embed_web.cmake"
    COMMENT "Embedding web/ into ${target}")
  target_sources(${target} PRIVATE "${_out}")
endfunction()

# Builds the dimension tables of data/standards/ into `target` (see
# cmake/embed_standards.cmake).
function(cadclip_embed_standards target)
  file(GLOB _files CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/data/standards/*.csv")
  set(_out "${CMAKE_BINARY_DIR}/generated/standard_tables_data.cc")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND "${CMAKE_COMMAND}" "-DDATA_DIR=${PROJECT_SOURCE_DIR}/data/standards" "-DOUT=${_out}"
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_standards.cmake"
    DEPENDS ${_files} "${PROJECT_SOURCE_DIR}/cmake/embed_standards.cmake"
    COMMENT "Embedding data/standards/ into ${target}")
  target_sources(${target} PRIVATE "${_out}")
endfunction()
