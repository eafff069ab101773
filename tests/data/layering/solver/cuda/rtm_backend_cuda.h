/* A fixture of tests/layering: the header that declares the cuda backend's functions. */
int rtm_cuda_rank_device(int configured, int *device);
