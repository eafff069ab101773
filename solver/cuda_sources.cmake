# cuda backend sources (issue: GPU backend). Empty until the backend lands.
if(RTM3D_HAVE_CUDA)
  target_link_libraries(rtm3d_solver PUBLIC CUDA::cudart CUDA::cuda_driver)
endif()
