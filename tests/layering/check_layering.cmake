# check_layering.cmake - fails when a module includes a header of a module it must not
# depend on (docs/design.md "Modules and the layering rule"):
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
# Inside solver/ the sub-folders stand in one order, lowest first (solver/ itself is "."):
#
#   grid -> tuning -> mpi -> physics -> points -> traces -> backend -> cpu | cuda -> . -> rtm
#
# and a file of solver/ may include the headers of its own sub-folder and of lower ones only
# (cpu and cuda share a level and may not include each other), so the sub-folders cannot
# include each other in a loop. A sub-folder not in the order is an error (place it).
#
# A .c, .cu or .cpp file declares at file scope no function it does not define itself (a
# hand-written prototype: "int rtm_cuda_rank_device(int, int *);" where the header that
# declares it belongs), and no extern object: it includes the header instead, so that the
# compiler checks the declaration against the definition. Its own static functions and
# forward declarations of functions it defines are fine.
#
# Every source file opens with a comment saying what it holds: the first line that is not
# blank or a feature-test macro (#define _POSIX_C_SOURCE ...) begins a comment.
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
# solver's sub-folders, lowest first; a comma joins folders of one level
set(solver_levels grid tuning mpi physics points traces backend "cpu,cuda" . rtm)
set(level 0)
foreach(entry ${solver_levels})
  string(REPLACE "," ";" folders "${entry}")
  foreach(folder ${folders})
    set(solver_level_of_${folder} ${level})
  endforeach()
  math(EXPR level "${level} + 1")
endforeach()
string(REPLACE ";" " -> " solver_order "${solver_levels}")
string(REPLACE "," " | " solver_order "${solver_order}")

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

# The sub-folder of solver/ that holds `path` ("." for solver/ itself), "" outside solver/.
function(solver_folder_of path out)
  file(RELATIVE_PATH rel "${ROOT}" "${path}")
  if(rel MATCHES "^solver/([^/]+)/")
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  elseif(rel MATCHES "^solver/[^/]+$")
    set(${out} . PARENT_SCOPE)
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
  if(module STREQUAL "solver")
    solver_folder_of("${source}" from)
    if(NOT DEFINED solver_level_of_${from} AND NOT DEFINED unplaced_${from})
      set(unplaced_${from} 1)
      message("layering: solver/${from}/ is not in the order of solver's sub-folders "
              "(${solver_order}): place it in check_layering.cmake")
      math(EXPR violations "${violations} + 1")
    endif()
  endif()
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
    if(owner STREQUAL "solver" AND module STREQUAL "solver")
      solver_folder_of("${source}" from)
      solver_folder_of("${folder_of_${name}}/${name}" to)
      if(DEFINED solver_level_of_${from} AND NOT from STREQUAL to AND
         NOT solver_level_of_${to} LESS solver_level_of_${from})
        string(REGEX REPLACE "^solver/\\./$" "solver/" from_folder "solver/${from}/")
        string(REGEX REPLACE "^solver/\\./$" "solver/" to_folder "solver/${to}/")
        message("layering: ${rel} (${from_folder}) includes \"${included}\" of ${to_folder}: "
                "a solver sub-folder may include its own and lower ones only (${solver_order})")
        math(EXPR violations "${violations} + 1")
      endif()
      continue()
    endif()
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

# hand-written prototypes and extern objects at file scope of a .c, .cu or .cpp file. The text
# is read whole, with ; [ ] swapped for bytes no source holds, so that CMake's lists leave it be.
string(ASCII 1 semi)
string(ASCII 2 open)
string(ASCII 3 close)
foreach(source ${sources})
  if(NOT source MATCHES "\\.(c|cu|cpp)$")
    continue()
  endif()
  file(RELATIVE_PATH rel "${ROOT}" "${source}")
  file(READ "${source}" text)
  string(REPLACE ";" "${semi}" text "${text}")
  string(REPLACE "[" "${open}" text "${text}")
  string(REPLACE "]" "${close}" text "${text}")
  set(text "\n${text}")
  # a line at column 0: a return type, a name, a parameter list, a semicolon
  string(REGEX MATCHALL
         "\n[A-Za-z_][A-Za-z0-9_ \t*]*[ \t*][A-Za-z_][A-Za-z0-9_]*\\([^${semi}{}#]*\\)[ \t]*${semi}"
         declarations "${text}")
  foreach(declaration ${declarations})
    string(REGEX REPLACE "^\n" "" declaration "${declaration}")
    if(declaration MATCHES "^(static|typedef)[ \t]")
      continue()
    endif()
    string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_]*)\\(" name "${declaration}")
    set(name "${CMAKE_MATCH_1}")
    if(text MATCHES "[ \t*\n]${name}\\([^${semi}{}#]*\\)[ \t\n]*{")
      continue() # a forward declaration of a function the file defines
    endif()
    message("layering: ${rel} declares ${name}() by hand: include the header that declares "
            "it (a .c, .cu or .cpp file declares only functions it defines)")
    math(EXPR violations "${violations} + 1")
  endforeach()
  string(REGEX MATCHALL "\nextern[ \t][^(\"${semi}{}]*${semi}" objects "${text}")
  foreach(object ${objects})
    string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_]*)[ \t${open}${close}0-9]*${semi}$" name "${object}")
    message("layering: ${rel} declares extern ${CMAKE_MATCH_1} by hand: include the header "
            "that declares it")
    math(EXPR violations "${violations} + 1")
  endforeach()
endforeach()

# the opening comment of every source file (headers and .h.in templates included)
set(every_file ${sources} ${headers})
list(REMOVE_DUPLICATES every_file)
foreach(source ${every_file})
  file(RELATIVE_PATH rel "${ROOT}" "${source}")
  file(STRINGS "${source}" opening LIMIT_COUNT 8)
  set(opens "")
  foreach(line ${opening})
    if(line MATCHES "^[ \t]*$" OR line MATCHES "^#[ \t]*define[ \t]+_[A-Z_]*SOURCE")
      continue()
    endif()
    set(opens "${line}")
    break()
  endforeach()
  if(NOT opens MATCHES "^[ \t]*(/\\*|//)")
    message("layering: ${rel} does not open with a comment saying what it holds")
    math(EXPR violations "${violations} + 1")
  endif()
endforeach()

list(LENGTH sources checked)
if(violations GREATER 0)
  message(FATAL_ERROR "layering: ${violations} violation(s) in ${checked} files")
endif()
message("layering: ${checked} files, every include within its module's dependencies and "
        "solver's order, no prototype written by hand, each opening with a comment")
