#define _POSIX_C_SOURCE 200809L /* gethostname */
/* rank_lines.c - under MPI, the line each rank gives the run report about its propagator
 * (rtm_propagator_rank_lines), gathered on the first rank. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rtm_mpi.h"
#include "rtm_mpi_halo.h"
#include "rtm_propagator.h"
#include "rtm_status.h"

int rtm_propagator_rank_lines(const rtm_propagator_t *prop, const rtm_config_t *cfg,
                              const char *device, char **lines) {
  int status = RTM_OK;
  const rtm_grid_t *grid = &prop->grid; /* this rank's slab */
  char line[RTM_RANK_LINE], host[64] = "?", halo[96] = "", group[32] = "", parts[48] = "";
  *lines = NULL;
  if (rtm_mpi_world_size(grid->mpi) == 1) return RTM_OK;
  if (rtm_mpi_groups(grid->mpi) > 1)
    snprintf(group, sizeof group, "group %d, ", rtm_mpi_group(grid->mpi));
  gethostname(host, sizeof host - 1);
  if (prop->halo || prop->link)
    snprintf(halo, sizeof halo, ", halo below %s, above %s, buffers %zu bytes",
             rtm_propagator_transport(prop, 0), rtm_propagator_transport(prop, 1),
             prop->halo ? rtm_mpi_halo_bytes(prop->halo) : 0);
  if (prop->receiver_parts) {
    int split = 0;
    for (int r = 0; r < prop->receivers.count; ++r)
      split += prop->receiver_parts[r] > 1;
    snprintf(parts, sizeof parts, ", %d receivers recorded in parts", split);
  }
  snprintf(line, sizeof line,
           "rank %d: %s, %s, %splanes %d..%d, memory %.3f GB (preflight estimate %.3f GB)%s%s",
           rtm_mpi_world_rank(grid->mpi), host, device[0] ? device : prop->backend->name, group,
           grid->z_offset, grid->z_offset + grid->nz_local - 1, prop->ledger.total_bytes * 1e-9,
           rtm_propagator_bytes(cfg, grid) * 1e-9, halo, parts);
  if (rtm_mpi_world_rank(grid->mpi) == 0) {
    *lines = calloc((size_t)rtm_mpi_world_size(grid->mpi), RTM_RANK_LINE);
    if (!*lines) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the ranks' lines");
  }
  RTM_TRY(rtm_mpi_gather_lines(grid->mpi, line, RTM_RANK_LINE, *lines));
fail:
  return status;
}
