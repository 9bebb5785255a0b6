# Run by `cmake --install <build> --component python` after the package's
# files are copied: writes cadclip-<version>.dist-info beside the package so
# that pip lists the package and `pip uninstall cadclip` removes it.
# CADCLIP_PACKAGE (the installed package folder) and CADCLIP_PACKAGE_VERSION
# come from an install(CODE) before this script.
get_filename_component(_site "${CADCLIP_PACKAGE}" DIRECTORY)
file(GLOB _old LIST_DIRECTORIES true "${_site}/cadclip-*.dist-info")
if(_old)
  file(REMOVE_RECURSE ${_old})
endif()
set(_info "${_site}/cadclip-${CADCLIP_PACKAGE_VERSION}.dist-info")
file(MAKE_DIRECTORY "${_info}")
file(WRITE "${_info}/METADATA"
     "Metadata-Version: 2.1\nName: cadclip\nVersion: ${CADCLIP_PACKAGE_VERSION}\n"
     "Summary: Find the CAD part a sentence describes (the C++ core from Python)\n"
     "Requires-Dist: torch\n")
file(WRITE "${_info}/INSTALLER" "cmake\n")
file(GLOB_RECURSE _files RELATIVE "${_site}" "${CADCLIP_PACKAGE}/*")
set(_record "")
foreach(_file IN LISTS _files)
  if(NOT _file MATCHES "__pycache__")
    string(APPEND _record "${_file},,\n")
  endif()
endforeach()
string(APPEND _record "cadclip-${CADCLIP_PACKAGE_VERSION}.dist-info/METADATA,,\n"
       "cadclip-${CADCLIP_PACKAGE_VERSION}.dist-info/INSTALLER,,\n"
       "cadclip-${CADCLIP_PACKAGE_VERSION}.dist-info/RECORD,,\n")
file(WRITE "${_info}/RECORD" "${_record}")
message(STATUS "Installed the cadclip Python package: ${CADCLIP_PACKAGE}")
