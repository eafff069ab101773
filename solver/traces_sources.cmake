# Trace pipeline (issue: CUDA-graph trace pipeline): validation, layout and the FFTW (fftw3f)
# reference always; the cuFFT + CUB pipeline and its graph when the build has CUDA.
target_sources(rtm3d_solver PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/traces.c
  ${CMAKE_CURRENT_LIST_DIR}/traces_fftw.c)
target_link_libraries(rtm3d_solver PRIVATE PkgConfig::FFTW3F)
if(RTM3D_HAVE_CUDA)
  target_sources(rtm3d_solver PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/traces_gpu.c
    ${CMAKE_CURRENT_LIST_DIR}/traces_cuda.cu)
  target_link_libraries(rtm3d_solver PUBLIC CUDA::cudart CUDA::cufft)
endif()
