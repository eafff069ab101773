/* fail_collective_write.c - an LD_PRELOAD library for mpi_write_failure.sh: the collective
 * H5Dwrite calls (parallel HDF5's MPI-IO transfer) of the rank named by
 * RTM3D_TEST_FAIL_RANK (its OMPI_COMM_WORLD_RANK or PMI_RANK) fail, as a full disk makes
 * them fail on one rank; every other write goes to HDF5. The fdatasync calls of the rank
 * named by RTM3D_TEST_FAIL_SYNC_RANK fail with EIO, as where that node's disk failed the
 * writes its page cache took. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <hdf5.h>

typedef herr_t (*write_t)(hid_t, hid_t, hid_t, hid_t, hid_t, const void *);

static int rank_named_by(const char *variable) {
  const char *wanted = getenv(variable);
  const char *rank =
      getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK") : getenv("PMI_RANK");
  return wanted && rank && atoi(wanted) == atoi(rank);
}

static int failing_rank(void) {
  return rank_named_by("RTM3D_TEST_FAIL_RANK");
}

int fdatasync(int fd) {
  static int (*sync_data)(int);
  if (!sync_data) sync_data = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  if (rank_named_by("RTM3D_TEST_FAIL_SYNC_RANK")) {
    fprintf(stderr, "fail_collective_write: failing this rank's fdatasync\n");
    errno = EIO;
    return -1;
  }
  return sync_data(fd);
}

herr_t H5Dwrite(hid_t dataset, hid_t memory_type, hid_t memory_space, hid_t file_space,
                hid_t transfer, const void *values) {
  static write_t write;
  if (!write) write = (write_t)dlsym(RTLD_NEXT, "H5Dwrite");
  H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
  if (transfer != H5P_DEFAULT && H5Pget_dxpl_mpio(transfer, &mode) >= 0 &&
      mode == H5FD_MPIO_COLLECTIVE && failing_rank()) {
    fprintf(stderr, "fail_collective_write: failing this rank's collective H5Dwrite\n");
    return -1;
  }
  return write(dataset, memory_type, memory_space, file_space, transfer, values);
}
