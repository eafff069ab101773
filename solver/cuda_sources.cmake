# cuda backend sources (issue: GPU backend): the z-marching kernels and their C host side.
if(RTM3D_HAVE_CUDA)
  target_sources(rtm3d_solver PRIVATE iso_cuda.cu backend_cuda.c)
  target_link_libraries(rtm3d_solver PUBLIC CUDA::cudart)
  target_compile_definitions(rtm3d_solver PUBLIC RTM3D_HAVE_CUDA_BACKEND=1)
  set_source_files_properties(iso_cuda.cu PROPERTIES COMPILE_OPTIONS "-Xptxas=-warn-spills")
endif()
