# config/version_header.cmake - run at every build (cmake -P, the rtm3d_version target of the
# top-level CMakeLists.txt): rtm_version.h from rtm_version.h.in with the revision of the
# sources as they are when the build runs (git describe --always --dirty), rewritten only
# when its text changes, so that the run reports and `rtm3d info` name what was built, not
# what was configured. Variables: SOURCE_DIR, INPUT, OUTPUT, PROJECT_VERSION,
# RTM3D_CUDA_ARCHITECTURES, GIT_EXECUTABLE (empty without git).
set(RTM3D_GIT_REVISION "unknown")
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
                  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE _rev
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _rev)
    set(RTM3D_GIT_REVISION "${_rev}")
  endif()
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
