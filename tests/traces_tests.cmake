# trace pipeline tests (issue: trace pipeline). cpu: FFTW against analytic signals (unit);
# gpu: cuFFT + CUB (graph and streams) against FFTW, node count, replay (gpu, exit 77
# without a device). traces_bench runs `rtm3d bench --traces` on its own, for
# run/traces_check.sh when the rest of the app is mid-change.
rtm3d_add_test(NAME test_traces_cpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/traces/test_traces_cpu.c
               LABELS unit TIMEOUT 120)
if(RTM3D_HAVE_CUDA)
  rtm3d_add_test(NAME test_traces_gpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/traces/test_traces_gpu.c
                 LABELS gpu TIMEOUT 300 LIBS CUDA::cudart)
  add_executable(traces_bench ${CMAKE_SOURCE_DIR}/app/bench_traces.c
                 ${CMAKE_CURRENT_LIST_DIR}/traces/bench_main.c)
  target_include_directories(traces_bench PRIVATE ${CMAKE_SOURCE_DIR}/app)
  target_link_libraries(traces_bench PRIVATE rtm3d_solver rtm3d_config rtm3d_memory m)
endif()
foreach(t test_traces_cpu test_traces_gpu)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${CMAKE_SOURCE_DIR}/solver)
    target_link_libraries(${t} PRIVATE rtm3d_warnings)
  endif()
endforeach()
