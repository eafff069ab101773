# GPU tests (issue: GPU backend). Label gpu; each exits 77 (skipped) without a CUDA device.
if(RTM3D_HAVE_CUDA)
  rtm3d_add_test(NAME test_cuda_backend SOURCES gpu/test_cuda_backend.c LABELS gpu TIMEOUT 900)
endif()
# vti/tti kernel (issue: TTI and VTI physics)
if(RTM3D_HAVE_CUDA)
  rtm3d_add_test(NAME test_cuda_tti SOURCES gpu/test_cuda_tti.c LABELS gpu TIMEOUT 900)
endif()
