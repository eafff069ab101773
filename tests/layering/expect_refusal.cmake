# expect_refusal.cmake - runs check_layering.cmake over the fixture tree of
# tests/data/layering and passes only when the check fails (non-zero exit) and names each
# planted violation: io including a solver header (quoted and in angle brackets), app
# including config's private header, solver/physics including solver/'s top level (above it
# in solver's order), solver/cuda including solver/cpu (its sibling of one level), a solver
# sub-folder the order does not place, and a function and an extern object declared by hand
# in solver/backend.c (but not its static function or its forward declaration), and a file
# that does not open with a comment (io/uncommented.c: a feature-test macro, then code).
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
        "solver/physics/boundary.c \\(solver/physics/\\) includes \"rtm_solver.h\" of solver/: a solver sub-folder may include its own and lower ones only"
        "solver/cuda/backend_cuda.c \\(solver/cuda/\\) includes \"rtm_backend_cpu.h\" of solver/cpu/"
        "solver/extras/ is not in the order of solver's sub-folders"
        "solver/backend.c declares rtm_cuda_rank_device\\(\\) by hand"
        "solver/backend.c declares extern rtm_backend_cuda by hand"
        "io/uncommented.c does not open with a comment"
        "9 violation\\(s\\)")
  if(NOT output MATCHES "${expected}")
    message(FATAL_ERROR "the layering check did not report: ${expected}")
  endif()
endforeach()
