# check_layering.cmake - fails when a module includes a header of a module it must not
# depend on (README.md "Layout", after the design card):
#
#   app    -> solver, io, config, memory, status
#   solver -> memory, config, status
#   io     -> config, status
#   memory -> status          config -> status          status -> nothing
#   tests  -> everything but app
#
# A file belongs to the module of its folder (config/status/ is the module "status",
# solver/<sub-folder>/ is solver, tests/... is tests); an #include, quoted or in angle
# brackets, names a header that belongs to the module whose folder holds it (rtm_version.h,
# generated from config/rtm_version.h.in, belongs to config). A quoted include that no
# module holds is an error too (the check must place every header); an angle-bracket one
# that no module holds is a system header. Two headers of one name anywhere in the tree
# are an error (one include path per module cannot tell them apart). A private header (a
# name not beginning with rtm_, or ending in _impl.h, or a .cuh) may be included only from
# its own folder: app/ may use config, but not config/config_impl.h.
#
#   cmake -DROOT=<source dir> -P tests/layering/check_layering.cmake
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> -P check_layering.cmake")
endif()

set(modules status config memory solver io app tests)
set(allowed_status "")
set(allowed_config status)
set(allowed_memory status)
set(allowed_solver memory config status)
set(allowed_io config status)
set(allowed_app solver io config memory status)
set(allowed_tests solver io config memory status)

function(module_of path out)
  file(RELATIVE_PATH rel "${ROOT}" "${path}")
  if(rel MATCHES "^config/status/")
    set(${out} status PARENT_SCOPE)
  elseif(rel MATCHES "^(config|memory|solver|io|app|tests)/")
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

set(sources "")
set(headers "")
foreach(dir config memory solver io app tests)
  if(IS_DIRECTORY "${ROOT}/${dir}")
    file(GLOB_RECURSE found "${ROOT}/${dir}/*.c" "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.cu"
         "${ROOT}/${dir}/*.cuh" "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.hpp")
    list(APPEND sources ${found})
    file(GLOB_RECURSE found_headers "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.cuh"
         "${ROOT}/${dir}/*.hpp" "${ROOT}/${dir}/*.h.in")
    list(APPEND headers ${found_headers})
  endif()
endforeach()
# test data (the fixture of this check among it) is not code of the tree
foreach(list_name sources headers)
  set(kept "")
  foreach(path ${${list_name}})
    string(FIND "${path}" "${ROOT}/tests/data/" at)
    if(NOT at EQUAL 0)
      list(APPEND kept "${path}")
    endif()
  endforeach()
  set(${list_name} ${kept})
endforeach()

# header name -> owning module and folder (a name twice in the tree is ambiguous: an error)
set(violations 0)
foreach(header ${headers})
  get_filename_component(name "${header}" NAME)
  string(REGEX REPLACE "\\.in$" "" name "${name}")
  get_filename_component(folder "${header}" DIRECTORY)
  module_of("${header}" owner)
  if(DEFINED owner_of_${name})
    file(RELATIVE_PATH first "${ROOT}" "${folder_of_${name}}")
    file(RELATIVE_PATH second "${ROOT}" "${folder}")
    message("layering: header ${name} exists in ${first}/ and in ${second}/")
    math(EXPR violations "${violations} + 1")
  endif()
  set(owner_of_${name} ${owner})
  set(folder_of_${name} "${folder}")
endforeach()

foreach(source ${sources})
  module_of("${source}" module)
  file(RELATIVE_PATH rel "${ROOT}" "${source}")
  get_filename_component(source_folder "${source}" DIRECTORY)
  file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*" "\\1" included "${line}")
    string(REGEX MATCH "^[ \t]*#[ \t]*include[ \t]*\"" quoted "${line}")
    get_filename_component(name "${included}" NAME)
    if(NOT DEFINED owner_of_${name})
      if(quoted)
        message("layering: ${rel} includes \"${included}\", which no module holds")
        math(EXPR violations "${violations} + 1")
      endif()
      continue()
    endif()
    if(NOT folder_of_${name} STREQUAL source_folder AND
       (NOT name MATCHES "^rtm_" OR name MATCHES "_impl\\.h$" OR name MATCHES "\\.cuh$"))
      file(RELATIVE_PATH private_folder "${ROOT}" "${folder_of_${name}}")
      message("layering: ${rel} includes \"${included}\", private to ${private_folder}/")
      math(EXPR violations "${violations} + 1")
      continue()
    endif()
    set(owner ${owner_of_${name}})
    if(owner STREQUAL module)
      continue()
    endif()
    list(FIND allowed_${module} ${owner} found)
    if(found EQUAL -1)
      string(REPLACE ";" ", " may "${allowed_${module}}")
      if(may STREQUAL "")
        set(may "nothing")
      endif()
      message("layering: ${rel} (${module}) includes \"${included}\" of ${owner}: "
              "${module} may depend on ${may} only")
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()

list(LENGTH sources checked)
if(violations GREATER 0)
  message(FATAL_ERROR "layering: ${violations} violation(s) in ${checked} files")
endif()
message("layering: ${checked} files, every include within its module's dependencies")
