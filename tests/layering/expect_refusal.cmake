# expect_refusal.cmake - runs check_layering.cmake over the fixture tree of
# tests/data/layering and passes only when the check fails (non-zero exit) and names each
# planted violation: io including a solver header (quoted and in angle brackets) and app
# including config's private header.
#
#   cmake -DCHECK=<check_layering.cmake> -DROOT=<fixture tree> -P expect_refusal.cmake
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${ROOT} -P ${CHECK}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(result EQUAL 0)
  message(FATAL_ERROR "the layering check passed a tree with planted violations")
endif()
foreach(expected
        "io/reader.c \\(io\\) includes \"rtm_solver.h\" of solver: io may depend on config, status only"
        "io/writer.c \\(io\\) includes \"rtm_solver.h\" of solver"
        "app/main.c includes \"config_impl.h\", private to config/"
        "3 violation\\(s\\)")
  if(NOT output MATCHES "${expected}")
    message(FATAL_ERROR "the layering check did not report: ${expected}")
  endif()
endforeach()
