/* The ranks' slabs of a volume written into the run's file at once (parallel HDF5): every
 * rank opens PATH.partial through the MPI-IO driver, selects its planes and joins one
 * collective write. Rank 0's output has let go of the file before (run_file.c) and takes
 * it back after. Built without a parallel HDF5, rtm_io_parallel() is 0 and the writer
 * refuses. */
#include "rtm_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_io_impl.h"

#ifdef RTM3D_HAVE_PARALLEL_HDF5
#include <mpi.h>
#endif

int rtm_io_parallel(void) {
#ifdef RTM3D_HAVE_PARALLEL_HDF5
  return 1;
#else
  return 0;
#endif
}

#ifdef RTM3D_HAVE_PARALLEL_HDF5
int rtm_io_write_planes_collective(const char *path, const char *name, int index,
                                   const rtm_io_volume_t *volume, const float *dense,
                                   const void *communicator) {
  int status = RTM_OK;
  hid_t fapl = H5I_INVALID_HID, file = H5I_INVALID_HID, dataset = H5I_INVALID_HID;
  hid_t file_space = H5I_INVALID_HID, memory_space = H5I_INVALID_HID, dxpl = H5I_INVALID_HID;
  const size_t size = strlen(path) + sizeof ".partial";
  char *partial = malloc(size), dataset_path[SNAPSHOT_PATH_MAX];
  rtm_h5_quiet();
  if (!partial) RTM_FAIL(RTM_ERR_NOMEM, "out of memory writing %s of %s", name, path);
  RTM_TRY(rtm_io_partial_path(path, partial, size));
  if (index >= 0) { /* a snapshot series */
    rtm_output_snapshot_path(name, dataset_path, sizeof dataset_path);
    name = dataset_path;
  }
  RTM_H5_CHECK(fapl = H5Pcreate(H5P_FILE_ACCESS), RTM_ERR_IO, "output file %s", partial);
  RTM_H5_CHECK(H5Pset_fapl_mpio(fapl, *(const MPI_Comm *)communicator, MPI_INFO_NULL), RTM_ERR_IO,
               "output file %s: the MPI-IO driver", partial);
  RTM_H5_CHECK(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), RTM_ERR_IO, "output file %s", partial);
  RTM_H5_CHECK(file = H5Fopen(partial, H5F_ACC_RDWR, fapl), RTM_ERR_IO,
               "output file %s: opening it on every rank (parallel HDF5)", partial);
  RTM_H5_CHECK(dataset = H5Dopen2(file, name, H5P_DEFAULT), RTM_ERR_IO,
               "output file %s: opening %s", partial, name);
  RTM_TRY(rtm_output_select_planes(dataset, index >= 0 ? 4 : 3, index >= 0 ? index : 0, volume,
                                   name, &file_space, &memory_space));
  RTM_H5_CHECK(dxpl = H5Pcreate(H5P_DATASET_XFER), RTM_ERR_IO, "%s", name);
  RTM_H5_CHECK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), RTM_ERR_IO, "%s", name);
  /* MPI-IO reports no errno: the message names the usual causes */
  RTM_H5_CHECK(H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory_space, file_space, dxpl, dense),
               RTM_ERR_IO,
               "output file %s: writing planes %d to %d of %s collectively failed (a full disk "
               "or quota, or an output.dir that not every rank's node shares?)",
               partial, volume->z_offset, volume->z_offset + volume->nz_local - 1, name);
fail:
  rtm_h5_close(&dxpl);
  rtm_h5_close(&memory_space);
  rtm_h5_close(&file_space);
  rtm_h5_close(&fapl);
  if (status != RTM_OK) {
    /* Closing the dataset and the file is collective: a rank that failed alone would wait
     * there for ranks that wait in the write. Both are left open; the caller's failure ends
     * the job (rtm_mpi_fail_fast). */
    free(partial);
    return status;
  }
  rtm_h5_close(&dataset);
  if (rtm_h5_close(&file) != RTM_OK) {
    rtm_log_error("output file %s: closing it after the collective write of %s", partial, name);
    status = RTM_ERR_IO;
  }
  free(partial);
  return status;
}
#else
int rtm_io_write_planes_collective(const char *path, const char *name, int index,
                                   const rtm_io_volume_t *volume, const float *dense,
                                   const void *communicator) {
  (void)index, (void)volume, (void)dense, (void)communicator;
  rtm_log_error("%s of %s: this rtm3d was built without a parallel HDF5 (configure with "
                "-DHDF5_PREFER_PARALLEL=ON where one is installed)",
                name, path);
  return RTM_ERR_UNSUPPORTED;
}
#endif
