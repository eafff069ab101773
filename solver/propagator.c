/* One shot's propagator from the config: dt, the absorbing layer, the source with its
 * scaled wavelet, the receivers, and the backend state they are handed to. */
#include "rtm_propagator.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_anisotropy.h"
#include "rtm_mpi.h"
#include "rtm_mpi_halo.h"
#include "rtm_mpi_device.h"
#include "rtm_status.h"
#include "rtm_traces.h"

unsigned rtm_field_mask(const char *list) {
  return (strchr(list, 'p') ? RTM_FIELD_BIT(RTM_FIELD_P) : 0u) |
         (strchr(list, 'q') ? RTM_FIELD_BIT(RTM_FIELD_Q) : 0u);
}

int rtm_field_count(unsigned mask) {
  return !!(mask & RTM_FIELD_BIT(RTM_FIELD_P)) + !!(mask & RTM_FIELD_BIT(RTM_FIELD_Q));
}

/* z-slabs with a point operator wider than two planes (sinc): a receiver whose taps fall in
 * the planes of more than one rank is recorded in parts, one a plane (that plane's taps, the
 * others weighed 0). A part is then one rank's sum, its sum over the ranks exact (the others
 * add zeros), and the first rank adds the parts in plane order as one rank's recording adds
 * its planes (rtm_propagator_gather_traces). A trilinear point's two planes need no parts:
 * a + b is b + a. Collective over the ranks that share the slabs. */
static int split_receivers(const rtm_grid_t *grid, const rtm_points_t *receivers,
                           rtm_points_t *recorded, int **parts_out) {
  int status = RTM_OK;
  const int count = receivers->count, taps = receivers->taps;
  const int planes = taps > 0 ? taps / receivers->taps_per_plane : 0;
  double *owners = NULL;
  int *parts = NULL;
  memset(recorded, 0, sizeof *recorded);
  *parts_out = NULL;
  if (!rtm_grid_is_slab(grid) || planes <= 2 || count == 0) return RTM_OK;
  owners = calloc((size_t)count, sizeof *owners);
  parts = malloc((size_t)count * sizeof *parts);
  if (!owners || !parts) RTM_FAIL(RTM_ERR_NOMEM, "out of memory splitting %d receivers", count);
  for (int r = 0; r < count; ++r)
    for (int t = 0; t < taps && owners[r] == 0.0; ++t)
      if (receivers->tap_weight[(size_t)r * taps + t] != 0.0f) owners[r] = 1.0;
  RTM_TRY(
      rtm_mpi_allreduce(grid->mpi, owners, count, RTM_MPI_SUM)); /* the ranks holding its taps */
  int total = 0;
  for (int r = 0; r < count; ++r) {
    parts[r] = owners[r] > 1.0 ? planes : 1;
    total += parts[r];
  }
  if (total == count) goto fail; /* nothing to split: status RTM_OK, no parts */
  const size_t all_taps = (size_t)total * (size_t)taps;
  recorded->position_m = malloc((size_t)total * 3 * sizeof *recorded->position_m);
  recorded->tap_index = malloc(all_taps * sizeof *recorded->tap_index);
  recorded->tap_weight = malloc(all_taps * sizeof *recorded->tap_weight);
  if (!recorded->position_m || !recorded->tap_index || !recorded->tap_weight)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d receiver parts", total);
  recorded->count = total;
  recorded->taps = taps;
  recorded->taps_per_plane = receivers->taps_per_plane;
  for (int r = 0, at = 0; r < count; ++r)
    for (int part = 0; part < parts[r]; ++part, ++at) {
      const size_t from = (size_t)r * taps, to = (size_t)at * taps;
      memcpy(recorded->position_m + 3 * (size_t)at, receivers->position_m + 3 * (size_t)r,
             3 * sizeof *recorded->position_m);
      memcpy(recorded->tap_index + to, receivers->tap_index + from,
             (size_t)taps * sizeof *recorded->tap_index);
      for (int t = 0; t < taps; ++t) /* a part: its plane's taps alone */
        recorded->tap_weight[to + t] = parts[r] == 1 || t / receivers->taps_per_plane == part
                                           ? receivers->tap_weight[from + t]
                                           : 0.0f;
    }
  *parts_out = parts;
  parts = NULL;
fail:
  if (status != RTM_OK) rtm_points_release(recorded);
  free(owners);
  free(parts);
  return status;
}

int rtm_propagator_gather_traces(const rtm_propagator_t *prop, rtm_field_t field, float *traces) {
  int status = RTM_OK;
  const size_t samples = (size_t)prop->steps + 1, count = (size_t)prop->receivers.count;
  float *parts = NULL;
  if (!prop->receiver_parts) {
    RTM_TRY(prop->backend->read_traces(prop->state, field, traces));
    return rtm_mpi_sum_to_root(prop->grid.mpi, traces,
                               count * samples); /* each rank's taps summed */
  }
  const size_t recorded = (size_t)prop->recorded.count;
  parts = malloc(recorded * samples * sizeof *parts);
  if (!parts) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %zu receiver parts' traces", recorded);
  RTM_TRY(prop->backend->read_traces(prop->state, field, parts));
  RTM_TRY(rtm_mpi_sum_to_root(prop->grid.mpi, parts, recorded * samples));
  if (rtm_mpi_rank(prop->grid.mpi) != 0) goto fail;
  for (size_t r = 0, at = 0; r < count; at += (size_t)prop->receiver_parts[r], ++r)
    for (size_t s = 0; s < samples; ++s) {
      float sum = 0.0f; /* the parts in plane order, as the backends add a point's planes */
      for (int part = 0; part < prop->receiver_parts[r]; ++part)
        sum += parts[(at + (size_t)part) * samples + s];
      traces[r * samples + s] = sum;
    }
fail:
  free(parts);
  return status;
}

rtm_point_operator_t rtm_config_point_operator(const rtm_config_t *cfg) {
  return (rtm_point_operator_t){
      cfg->points.interpolation == RTM_INTERPOLATION_SINC ? RTM_POINTS_SINC : RTM_POINTS_TRILINEAR,
      cfg->points.radius};
}

int rtm_propagator_interrupted(const char *what) {
  const int signal = rtm_interrupted();
  if (!signal) return RTM_OK;
  rtm_log_error("stopped by %s while %s (a second one ends it at once)", rtm_interrupt_name(),
                what);
  return RTM_ERR_INTERRUPTED;
}

/* The scaled Ricker, sample by sample: a billion samples take half a minute, so a signal
 * is looked for every 2^20 of them. */
static int fill_wavelet(const rtm_propagator_t *prop, const rtm_config_t *cfg, double scale,
                        double delay, size_t samples, float *wavelets) {
  const size_t block = (size_t)1 << 20;
  for (size_t first = 0; first < samples; first += block) {
    const int status = rtm_propagator_interrupted("making the source wavelet");
    if (status != RTM_OK) return status;
    const size_t end = samples - first < block ? samples : first + block;
    for (size_t it = first; it < end; ++it)
      wavelets[it] =
          (float)(scale * rtm_ricker((double)it * prop->dt_s, cfg->source.frequency_hz, delay));
  }
  return RTM_OK;
}

/* The shot's geometry and wavelet: the source at source_m with its wavelet scaled by v^2
 * there, and the receivers of that shot. Built aside and swapped in whole, so that a
 * failure leaves the propagator's shot as it was. */
static int place_shot(rtm_propagator_t *prop, const rtm_config_t *cfg, const double source_m[3]) {
  int status = RTM_OK;
  const rtm_grid_t *grid = &prop->grid;
  rtm_points_t sources = {0}, receivers = {0}, recorded = {0};
  int *receiver_parts = NULL;
  double *receiver_m = NULL;
  int receiver_count = 0;
  const size_t samples = (size_t)prop->steps + 1;
  float *wavelets = NULL;

  const rtm_point_operator_t op = rtm_config_point_operator(cfg);
  RTM_TRY(rtm_points_init_operator(&sources, grid, source_m, 1, "source", &op));
  rtm_points_warn_in_layer(grid, cfg->boundary.width_cells, source_m, 1, "source");
  const double *receiver_at = NULL;
  if (cfg->receivers.layout == RTM_RECEIVERS_FILE) { /* the file read once */
    if (!prop->receivers_file_m)
      RTM_TRY(rtm_receiver_positions(cfg, grid, source_m, &prop->receivers_file_m,
                                     &prop->receivers_file_count));
    receiver_at = prop->receivers_file_m;
    receiver_count = prop->receivers_file_count;
  } else {
    RTM_TRY(rtm_receiver_positions(cfg, grid, source_m, &receiver_m, &receiver_count));
    receiver_at = receiver_m;
  }
  if (receiver_count > 0) {
    RTM_TRY(
        rtm_points_init_operator(&receivers, grid, receiver_at, receiver_count, "receiver", &op));
    rtm_points_warn_in_layer(grid, cfg->boundary.width_cells, receiver_at, receiver_count,
                             "receiver");
  }
  RTM_TRY(split_receivers(grid, &receivers, &recorded, &receiver_parts));

  /* The source term v^2 s enters the leapfrog as dt^2 v^2 w(t) / (dx dy dz): a point
   * source of unit strength spread over one cell volume. */
  wavelets = malloc((size_t)samples * sizeof *wavelets);
  if (!wavelets) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the source wavelet");
  const double cell_volume = grid->spacing_m[0] * grid->spacing_m[1] * grid->spacing_m[2];
  const double delay =
      isnan(cfg->source.delay_s) ? 1.2 / cfg->source.frequency_hz : cfg->source.delay_s;
  double v2 = 0.0;
  RTM_TRY(rtm_points_mean(&sources, 0, grid, prop->model->vp, 1, &v2)); /* v^2 there */
  const double scale = cfg->source.amplitude * prop->dt_s * prop->dt_s * v2 / cell_volume;
  RTM_TRY(fill_wavelet(prop, cfg, scale, delay, samples, wavelets));
  /* full dispersion correction: the wavelet warped so that the run at omega gives the exact
   * response at psi(omega), which the recorded traces are warped back from (dispersion.c) */
  RTM_TRY(rtm_dispersion_warp_wavelet(prop->dispersion, (int)samples, prop->dt_s, wavelets));

  memcpy(prop->source_position_m, source_m, sizeof prop->source_position_m);
  rtm_points_release(&prop->sources);
  rtm_points_release(&prop->receivers);
  rtm_points_release(&prop->recorded);
  free(prop->receiver_parts);
  free(prop->wavelets);
  prop->sources = sources;
  prop->receivers = receivers;
  prop->recorded = recorded;
  prop->receiver_parts = receiver_parts;
  prop->wavelets = wavelets;
  free(receiver_m);
  return RTM_OK;
fail:
  free(wavelets);
  free(receiver_m);
  free(receiver_parts);
  rtm_points_release(&sources);
  rtm_points_release(&receivers);
  rtm_points_release(&recorded);
  return status;
}

/* Hands the propagator's source and receivers to its backend state. */
static int hand_shot_to_backend(rtm_propagator_t *prop) {
  int status = RTM_OK;
  RTM_TRY(prop->backend->set_sources(prop->state, &prop->sources, prop->wavelets, prop->steps + 1));
  if (prop->receivers.count > 0)
    RTM_TRY(prop->backend->set_receivers(prop->state,
                                         prop->receiver_parts ? &prop->recorded : &prop->receivers,
                                         prop->trace_fields));
fail:
  return status;
}

size_t rtm_propagator_medium_bytes(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  const int iso = cfg->physics.equation == RTM_EQUATION_ISO;
  const size_t coefficient =
      !iso && rtm_config_model_precision(cfg) == RTM_PRECISION_FP16 ? 2 : sizeof(float);
  return (iso ? 1 : RTM_FDF_STORED_COUNT) * coefficient * grid->padded_cells;
}

size_t rtm_propagator_field_bytes(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  const int iso = cfg->physics.equation == RTM_EQUATION_ISO;
  return (iso ? 2 : 4) * sizeof(float) * grid->padded_cells;
}

size_t rtm_propagator_bytes(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  return rtm_propagator_field_bytes(cfg, grid) + rtm_propagator_medium_bytes(cfg, grid);
}

int rtm_model_parameter_count(rtm_equation_t equation) {
  return equation == RTM_EQUATION_ISO ? 1 : equation == RTM_EQUATION_VTI ? 3 : 5;
}

size_t rtm_model_bytes(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  return (size_t)rtm_model_parameter_count(cfg->physics.equation) * rtm_grid_interior_cells(grid) *
         sizeof(float);
}

/* memory.* names a strategy of rtm3d (or auto), built in or not (a build without CUDA
 * has only host; the cuda backend refuses what its build lacks); the cpu backend keeps its
 * fields in host memory whatever they say, and says so. */
static int check_strategies(const rtm_config_t *cfg, const char *backend) {
  static const char *const names[] = {"host",           "device",  "vmm",
                                      "vmm-compressed", "managed", "pinned"};
  int status = RTM_OK;
  const struct {
    const char *key, *value;
    int fields; /* a class of the propagator's own fields */
  } keys[] = {{"memory.strategy", cfg->memory.strategy, 1},
              {"memory.wavefield", cfg->memory.wavefield, 1},
              {"memory.model", cfg->memory.model, 1},
              {"memory.imaging", cfg->memory.imaging, 0}};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i) {
    const char *value = keys[i].value;
    if (!value[0] || strcmp(value, "auto") == 0) continue;
    int known = 0;
    for (size_t n = 0; n < sizeof names / sizeof names[0]; ++n)
      known = known || strcmp(value, names[n]) == 0;
    if (!known)
      RTM_FAIL(RTM_ERR_CONFIG,
               "%s = '%s' is unknown (known: auto, host, device, vmm, vmm-compressed, "
               "managed, pinned)",
               keys[i].key, value);
    if (keys[i].fields && strcmp(backend, "cpu") == 0 && strcmp(value, "host") != 0)
      rtm_log_warning("%s = %s is for the cuda backend: the cpu backend keeps its fields in "
                      "host memory",
                      keys[i].key, value);
  }
fail:
  return status;
}

/* "each rank (N of the M planes of grid.nz, over R ranks)" or "the W x H x D cells" */
static void describe_share(const rtm_grid_t *grid, char *text, size_t size) {
  if (rtm_grid_is_slab(grid))
    snprintf(text, size, "each rank (%d of the %d planes of grid.nz, over %d ranks)",
             grid->nz_local, grid->n[2], rtm_mpi_size(grid->mpi));
  else
    snprintf(text, size, "%d x %d x %d cells", grid->n[0], grid->n[1], grid->n[2]);
}

/* `need` bytes against `free_bytes` within memory.limit_gb; the refusal names what needs them
 * and `advice`. */
static int weigh(const rtm_config_t *cfg, const rtm_grid_t *grid, size_t need, size_t free_bytes,
                 const char *what, const char *memory, const char *advice) {
  int status = RTM_OK;
  const size_t available = rtm_config_free_within_limit(cfg, free_bytes);
  if (need <= available) return RTM_OK;
  const int limited = cfg->memory.limit_gb > 0.0 && (double)available <= cfg->memory.limit_gb * 1e9;
  char share[160];
  describe_share(grid, share, sizeof share);
  RTM_FAIL(RTM_ERR_NOMEM, "%s need %.3g GB of %s for %s, where %.3g GB are %s: %s", what,
           need / 1e9, memory, share, available / 1e9,
           limited ? "allowed (memory.limit_gb)" : "available", advice);
fail:
  return status;
}

/* kernel.* shapes the cuda kernels; the cpu backend has one loop nest and ignores them:
 * each one set is named, once a run (rtm_propagator_preflight for the run). */
static void warn_kernel_keys(const rtm_config_t *cfg, const rtm_backend_t *backend) {
  if (strcmp(backend->name, "cpu") != 0) return;
  const struct {
    const char *key;
    int value; /* RTM_CFG_AUTO_INT: auto */
  } keys[] = {{"kernel.stages", cfg->kernel.stages},
              {"kernel.zblock", cfg->kernel.zblock},
              {"kernel.block_x", cfg->kernel.block[0]},
              {"kernel.block_y", cfg->kernel.block[1]}};
  if (strcmp(cfg->kernel.halo, "auto") != 0)
    rtm_log_warning("kernel.halo = %s is ignored by the cpu backend (it shapes the cuda kernels)",
                    cfg->kernel.halo);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
    if (keys[i].value != RTM_CFG_AUTO_INT)
      rtm_log_warning("%s = %d is ignored by the cpu backend (it shapes the cuda kernels)",
                      keys[i].key, keys[i].value);
}

/* What grows with time.steps, one shot's worth: the source wavelet (the propagator's copy
 * on the host and the backend's own) and the backend's traces, receivers x recorded fields
 * x (steps + 1) floats. The receivers are the sizing shot's: the most any shot records. */
typedef struct {
  int receivers, fields;
  double wavelet_bytes, traces_bytes;
  double taps_bytes; /* the receivers' tap tables on the host (points.c), for any step count */
} series_t;

static int weigh_series(const rtm_config_t *cfg, const rtm_grid_t *grid, series_t *series) {
  int status = RTM_OK;
  double source_m[3], *receiver_m = NULL;
  const double samples = (double)cfg->time.steps + 1.0;
  RTM_TRY(rtm_sizing_shot_position(cfg, grid, source_m));
  series->receivers = 0;
  RTM_TRY(rtm_receiver_positions(cfg, grid, source_m, &receiver_m, &series->receivers));
  series->fields = rtm_field_count(rtm_field_mask(cfg->receivers.fields));
  series->wavelet_bytes = samples * sizeof(float);
  series->traces_bytes = samples * sizeof(float) * series->receivers * series->fields;
  const int width = cfg->points.interpolation == RTM_INTERPOLATION_SINC ? 2 * cfg->points.radius : 2;
  series->taps_bytes = (double)series->receivers *
                       ((double)width * width * width * (sizeof(size_t) + sizeof(float)) +
                        3.0 * width * sizeof(double) + 3.0 * sizeof(double) + sizeof(size_t));
fail:
  free(receiver_m);
  return status;
}

/* The series do not fit beside `other_bytes` (the model, the fields) in `available`:
 * refused naming time.steps, the receivers and their fields. */
static int refuse_series(const rtm_config_t *cfg, const series_t *series, double series_bytes,
                         double other_bytes, const char *memory, size_t available) {
  const int limited = cfg->memory.limit_gb > 0.0 && (double)available <= cfg->memory.limit_gb * 1e9;
  rtm_log_error("time.steps = %d: the source wavelet and the traces of %d receiver%s x %d "
                "field%s hold time.steps + 1 samples each, %.3g GB of %s, where %.3g GB are "
                "%s, %.3g GB of them taken by the model and the fields: lower time.steps, or "
                "record fewer receivers ([receivers]) or fields (receivers.fields)",
                cfg->time.steps, series->receivers, series->receivers == 1 ? "" : "s",
                series->fields, series->fields == 1 ? "" : "s", series_bytes / 1e9, memory,
                available / 1e9, limited ? "allowed (memory.limit_gb)" : "available",
                other_bytes / 1e9);
  return RTM_ERR_CONFIG;
}

int rtm_propagator_preflight(const rtm_config_t *cfg, const rtm_grid_t *grid,
                             rtm_preflight_t what) {
  int status = RTM_OK;
  const rtm_backend_t *backend = NULL;
  int device = -1;
  RTM_TRY(rtm_backend_select(cfg->backend.name, &backend));
  const int model_loaded = what == RTM_PREFLIGHT_PROPAGATOR || what == RTM_PREFLIGHT_BESIDE;
  if (!model_loaded) warn_kernel_keys(cfg, backend);
  const int host_fields = what != RTM_PREFLIGHT_MODEL && strcmp(backend->name, "cpu") == 0;
  /* a propagator beside another holds no medium of its own (rtm_propagator_create_beside) */
  const size_t fields = what == RTM_PREFLIGHT_MODEL    ? 0
                        : what == RTM_PREFLIGHT_BESIDE ? rtm_propagator_field_bytes(cfg, grid)
                                                       : rtm_propagator_bytes(cfg, grid);
  const int parameters = rtm_model_parameter_count(cfg->physics.equation);
  const size_t model = model_loaded ? 0 : rtm_model_bytes(cfg, grid);
  char needs[160];
  const char *const run_advice = "run on more ranks (mpirun, z-slabs) or fewer cells";
  if (model && host_fields)
    snprintf(needs, sizeof needs,
             "the model's parameters (%d volume%s, %.3g GB) and the "
             "propagator (%.3g GB)",
             parameters, parameters > 1 ? "s" : "", model / 1e9, fields / 1e9);
  else if (model)
    snprintf(needs, sizeof needs, "the model's parameters (%d volume%s)", parameters,
             parameters > 1 ? "s" : "");
  else
    snprintf(needs, sizeof needs, "the propagator's fields and coefficients");
  const size_t host_volumes = model + (host_fields ? fields : 0);
  if (host_volumes)
    RTM_TRY(weigh(cfg, grid, host_volumes, rtm_mem_host_available_bytes(), needs, "host memory",
                  what == RTM_PREFLIGHT_MODEL ? "use fewer cells (grid.n)" : run_advice));
  if (what == RTM_PREFLIGHT_MODEL) return RTM_OK;

  /* the series: on the host the propagator's wavelet, and on the cpu backend its own
   * wavelet and the traces as well; on the device the backend's */
  series_t series;
  RTM_TRY(weigh_series(cfg, grid, &series));
  const double device_series = host_fields ? 0.0 : series.wavelet_bytes + series.traces_bytes;
  const double host_series =
      series.wavelet_bytes + (host_fields ? series.wavelet_bytes + series.traces_bytes : 0.0);
  const size_t host_available = rtm_config_free_within_limit(cfg, rtm_mem_host_available_bytes());
  /* the receivers: their tap tables (the propagator's, and the cpu backend's copy) and, on
   * the first rank, the gathers they fill */
  const double receiver_bytes = series.taps_bytes * (host_fields ? 2.0 : 1.0) + series.traces_bytes;
  if ((double)host_volumes + host_series + receiver_bytes > (double)host_available &&
      series.taps_bytes > host_series)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%d receivers: their tap tables (%s points) and gathers take %.3g GB, which do not "
             "fit in the %.3g GB of host memory %s beside the model, fields and traces (%.3g GB): "
             "record fewer receivers ([receivers]: x_step, y_step, x_count, y_count or the file)",
             series.receivers,
             cfg->points.interpolation == RTM_INTERPOLATION_SINC ? "sinc" : "trilinear",
             receiver_bytes / 1e9, host_available / 1e9,
             cfg->memory.limit_gb > 0.0 ? "allowed (memory.limit_gb)" : "available",
             ((double)host_volumes + host_series) / 1e9);
  if ((double)host_volumes + host_series + receiver_bytes > (double)host_available)
    return refuse_series(cfg, &series, host_series, (double)host_volumes, "host memory",
                         host_available);
  if (host_fields) return RTM_OK;
  /* the cuda backend measures its device again when it allocates, with working space */
  size_t free_bytes = 0;
  RTM_TRY(rtm_backend_device(cfg, grid->mpi, &device));
  RTM_TRY(rtm_mem_device_free_bytes(device, &free_bytes));
  char memory[64];
  snprintf(memory, sizeof memory, "device %d's memory", device);
  RTM_TRY(weigh(cfg, grid, fields, free_bytes, "the propagator's fields and coefficients", memory,
                run_advice));
  const size_t device_available = rtm_config_free_within_limit(cfg, free_bytes);
  if ((double)fields + device_series > (double)device_available)
    return refuse_series(cfg, &series, device_series, (double)fields, memory, device_available);
fail:
  return status;
}

/* The floats of R planes of a field as copy_planes stages them: their interior cells. */
static size_t staged_floats(const rtm_grid_t *grid) {
  return (size_t)RTM_RADIUS * (size_t)grid->n[0] * (size_t)grid->n[1];
}

/* z-slabs: whether a device's planes go GPU to GPU (mpi.transport, rtm_mpi_device_choose:
 * RTM_TRANSPORT_AUTO for no), the same answer on every rank, before anything is allocated. */
static int choose_transport(const rtm_config_t *cfg, const rtm_grid_t *grid,
                            const rtm_backend_t *backend, rtm_mpi_transport_t *link) {
  int status = RTM_OK, device = -1;
  char where[RTM_CONFIG_ORIGIN_MAX];
  *link = RTM_TRANSPORT_AUTO;
  if (!backend->exchange_planes) {
    if (cfg->mpi.transport == RTM_TRANSPORT_NCCL || cfg->mpi.transport == RTM_TRANSPORT_CUDA_AWARE)
      RTM_FAIL(RTM_ERR_CONFIG,
               "%s: mpi.transport = %s moves a GPU's planes; backend %s keeps its fields in "
               "host memory (set mpi.transport = auto, or backend.name = cuda)",
               rtm_config_origin(cfg, "mpi.transport, backend.name", where, sizeof where),
               cfg->mpi.transport == RTM_TRANSPORT_NCCL ? "nccl" : "cuda-aware", backend->name);
    return RTM_OK;
  }
  RTM_TRY(rtm_backend_device(cfg, grid->mpi, &device));
  RTM_TRY(rtm_mpi_device_choose(grid->mpi, cfg->mpi.transport, device, link));
fail:
  return status;
}

/* NCCL connects to a peer at the first message to it (about 1.2 s on two H100s, both ranks
 * waiting: run/results/mpi.md), as a CUDA-aware MPI may:
 * one exchange of the fresh fields' zeros (ghosts stay zeros) now, so that the set-up pays
 * for it, not the first step, and its time is not counted in the phases. */
static int connect_neighbours(rtm_propagator_t *prop) {
  int status = RTM_OK;
  double dropped[RTM_PHASE_COUNT];
  RTM_TRY(prop->backend->exchange_planes(prop->state, prop->link, RTM_LEVEL_CURRENT));
  RTM_TRY(prop->backend->synchronize(prop->state));
  RTM_TRY(rtm_propagator_phase_seconds(prop, dropped));
  memset(prop->phase_s, 0, sizeof prop->phase_s);
fail:
  return status;
}

int rtm_propagator_create(const rtm_config_t *cfg, const rtm_grid_t *grid, const rtm_model_t *model,
                          rtm_propagator_t *prop) {
  return rtm_propagator_create_beside(cfg, grid, model, NULL, prop);
}

int rtm_propagator_create_beside(const rtm_config_t *cfg, const rtm_grid_t *grid,
                                 const rtm_model_t *model, const rtm_propagator_t *medium,
                                 rtm_propagator_t *prop) {
  int status = RTM_OK;
  memset(prop, 0, sizeof *prop);
  rtm_mem_ledger_init(&prop->ledger);
  prop->grid = *grid;
  prop->model = model;
  prop->steps = cfg->time.steps;
  /* traces hold steps + 1 samples, an int count (the schema's range for time.steps) */
  if (prop->steps < 1 || prop->steps > INT_MAX - 1)
    RTM_FAIL(RTM_ERR_CONFIG,
             "time.steps = %d is outside [1, %d]: traces hold time.steps + 1 "
             "samples, a 32-bit count",
             prop->steps, INT_MAX - 1);

  RTM_TRY(rtm_resolve_dt(cfg, model, grid, &prop->dt_s));
  RTM_TRY(rtm_backend_select(cfg->backend.name, &prop->backend));
  if (medium && (medium->backend != prop->backend || !medium->state))
    RTM_FAIL(RTM_ERR_INTERNAL, "a propagator shares the medium of another backend's");
  RTM_TRY(check_strategies(cfg, prop->backend->name));
  /* before the wavelet and the backend's fields and traces are allocated */
  RTM_TRY(rtm_propagator_preflight(cfg, grid,
                                   medium ? RTM_PREFLIGHT_BESIDE : RTM_PREFLIGHT_PROPAGATOR));
  RTM_TRY(rtm_boundary_init(&prop->boundary, grid, cfg->boundary.width_cells,
                            cfg->boundary.reflection, model->vp_max, prop->dt_s));
  prop->trace_fields = rtm_field_mask(cfg->receivers.fields);
  prop->field_count = cfg->physics.equation == RTM_EQUATION_ISO ? 1 : 2;
  prop->exchange = cfg->mpi.exchange;
  prop->dispersion = cfg->time.dispersion_correction;
  double source_m[3];
  RTM_TRY(rtm_sizing_shot_position(cfg, grid, source_m));
  RTM_TRY(place_shot(prop, cfg, source_m));
  RTM_TRY(rtm_propagator_interrupted("setting up the propagator"));

  rtm_mpi_transport_t device_to_device = RTM_TRANSPORT_AUTO; /* none */
  if (rtm_grid_is_slab(grid))
    RTM_TRY(choose_transport(cfg, grid, prop->backend, &device_to_device));
  rtm_backend_desc_t desc = {
      .config = cfg,
      .grid = &prop->grid,
      .model = model,
      .boundary = &prop->boundary,
      .dt_s = prop->dt_s,
      .steps = prop->steps,
      .ledger = &prop->ledger,
      .medium_of = medium ? medium->state : NULL,
  };
  RTM_TRY(prop->backend->create(&desc, &prop->state));
  RTM_TRY(hand_shot_to_backend(prop));
  if (device_to_device != RTM_TRANSPORT_AUTO) {
    /* on the GPU the backend left current */
    RTM_TRY(rtm_mpi_device_create(grid->mpi, device_to_device, &prop->link));
    RTM_TRY(connect_neighbours(prop));
  } else if (rtm_grid_is_slab(grid) && prop->backend->copy_planes) {
    /* the planes of a device's fields travel through host memory: pinned, set up once; a
     * side holds the R planes of every field, their interior cells (copy_planes) */
    const size_t side_floats = (size_t)prop->field_count * staged_floats(grid);
    RTM_TRY(rtm_mpi_halo_create(grid, side_floats, cfg->mpi.transport, &prop->halo));
    void *start = NULL;
    size_t bytes = 0;
    rtm_mpi_halo_host_range(prop->halo, &start, &bytes);
    RTM_TRY(rtm_mem_host_pin(start, bytes, "halo buffers"));
    prop->halo_pinned = start;
  }
  return RTM_OK;
fail:
  rtm_propagator_destroy(prop);
  return status;
}

const char *rtm_propagator_transport(const rtm_propagator_t *prop, int side) {
  const int neighbour =
      side == 0 ? rtm_slab_has_below(&prop->grid) : rtm_slab_has_above(&prop->grid);
  if (!neighbour) return "none";
  if (prop->link) return rtm_mpi_device_name(prop->link);
  if (prop->halo) return rtm_mpi_halo_side_transport(prop->halo, (rtm_side_t)side);
  return "host";
}

/* The new level's first and last R planes of every field sent to the neighbours and theirs
 * received into its ghost planes. Host fields (cpu) travel from and into the padded arrays;
 * a device's through the staging buffers, the copies out queued after the steps so far and
 * the copies in before the steps queued later (copy_planes), so that the interior queued
 * between `begin` and `end` runs while the planes travel. */
static int exchange_begin(const rtm_propagator_t *prop, rtm_level_t level) {
  int status = RTM_OK;
  const rtm_backend_t *b = prop->backend;
  const int R = RTM_RADIUS, nz = prop->grid.nz_local;
  const size_t planes = staged_floats(&prop->grid); /* a field's R planes on a side */
  if (prop->link) /* queued now; a host-driven link starts in exchange_end */
    return rtm_mpi_device_queued(prop->link) ? b->exchange_planes(prop->state, prop->link, level)
                                             : RTM_OK;
  if (!b->copy_planes) return RTM_OK;
  /* only toward a neighbour (the volume's first and last slabs have one), each field's R
   * planes after the last's */
  float *below = rtm_mpi_halo_out(prop->halo, RTM_SIDE_BELOW);
  float *above = rtm_mpi_halo_out(prop->halo, RTM_SIDE_ABOVE);
  for (int f = 0; f < prop->field_count; ++f) {
    const size_t at = planes * (size_t)f;
    if (below) RTM_TRY(b->copy_planes(prop->state, (rtm_field_t)f, level, 0, R, below + at, NULL));
    if (above)
      RTM_TRY(b->copy_planes(prop->state, (rtm_field_t)f, level, nz - R, R, above + at, NULL));
  }
fail:
  return status;
}

static int exchange_end(const rtm_propagator_t *prop, rtm_level_t sent, rtm_level_t received) {
  int status = RTM_OK;
  const rtm_backend_t *b = prop->backend;
  const int R = RTM_RADIUS, nz = prop->grid.nz_local;
  const size_t planes = staged_floats(&prop->grid); /* a field's R planes on a side */
  if (prop->link) /* queued: the steps after it wait on the device; else the host waits */
    return rtm_mpi_device_queued(prop->link)
               ? RTM_OK
               : b->exchange_planes(prop->state, prop->link, received);
  if (!b->copy_planes) {
    for (int f = 0; f < prop->field_count; ++f) {
      rtm_field_view_t view;
      RTM_TRY(b->view_field(prop->state, (rtm_field_t)f, sent, &view));
      RTM_TRY(rtm_mpi_exchange_planes(&prop->grid, view.padded));
    }
    return RTM_OK;
  }
  RTM_TRY(b->wait_copies(prop->state)); /* the planes are out */
  RTM_TRY(rtm_mpi_halo_exchange(prop->halo));
  const float *below = rtm_mpi_halo_in(prop->halo, RTM_SIDE_BELOW);
  const float *above = rtm_mpi_halo_in(prop->halo, RTM_SIDE_ABOVE);
  for (int f = 0; f < prop->field_count; ++f) {
    const size_t at = planes * (size_t)f;
    if (below)
      RTM_TRY(b->copy_planes(prop->state, (rtm_field_t)f, received, -R, R, NULL, below + at));
    if (above)
      RTM_TRY(b->copy_planes(prop->state, (rtm_field_t)f, received, nz, R, NULL, above + at));
  }
fail:
  return status;
}

/* A split step's region, timed by the host's clock when the backend is synchronous (the
 * device's own timers measure the others: phase_seconds). */
static int timed_step(rtm_propagator_t *prop, int it, rtm_region_t region,
                      rtm_direction_t direction) {
  const rtm_backend_t *b = prop->backend;
  if (b->phase_seconds) return b->step(prop->state, it, region, direction);
  const double start_s = rtm_wall_seconds();
  const int status = b->step(prop->state, it, region, direction);
  prop->phase_s[region == RTM_REGION_EDGE_PLANES ? RTM_PHASE_EDGE : RTM_PHASE_INTERIOR] +=
      rtm_wall_seconds() - start_s;
  return status;
}

int rtm_propagator_phase_seconds(rtm_propagator_t *prop, double seconds[RTM_PHASE_COUNT]) {
  int status = RTM_OK;
  /* a device's timers add what they measured since the last call to phase_s */
  if (prop->backend && prop->state && prop->backend->phase_seconds)
    status = prop->backend->phase_seconds(prop->state, prop->phase_s);
  memcpy(seconds, prop->phase_s, sizeof prop->phase_s);
  return status;
}

int rtm_values_finite(const float *values, size_t count) {
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
  for (size_t i = 0; i < count; ++i)
    bad |= !isfinite(values[i]);
  return !bad;
}

int rtm_propagator_correct_traces(const rtm_propagator_t *prop, const char *backend, int count,
                                  float *traces) {
  return rtm_dispersion_correct_recorded(prop->dispersion, backend, count, prop->steps + 1,
                                         prop->dt_s, traces);
}

int rtm_propagator_correct_recorded(const rtm_propagator_t *prop, int *corrected) {
  int status = RTM_OK;
  *corrected = 0;
  if (!rtm_dispersion_corrects_recorded(prop->dispersion) || !prop->backend->view_traces ||
      rtm_grid_is_slab(&prop->grid) || prop->receivers.count == 0)
    return RTM_OK;
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (!(prop->trace_fields & RTM_FIELD_BIT(f))) continue;
    float *traces = NULL;
    RTM_TRY(prop->backend->view_traces(prop->state, (rtm_field_t)f, &traces));
    RTM_TRY(rtm_dispersion_correct_recorded_device(prop->dispersion, prop->receivers.count,
                                                   prop->steps + 1, (size_t)prop->steps + 1,
                                                   prop->dt_s, traces));
  }
  *corrected = 1;
fail:
  return status;
}

int rtm_propagator_exchange(rtm_propagator_t *prop, rtm_level_t level) {
  int status = RTM_OK;
  if (!rtm_grid_is_slab(&prop->grid) || prop->exchange == RTM_EXCHANGE_OFF) return RTM_OK;
  const double start_s = rtm_wall_seconds();
  RTM_TRY(exchange_begin(prop, level));
  RTM_TRY(exchange_end(prop, level, level));
  prop->halo_s += rtm_wall_seconds() - start_s;
fail:
  return status;
}

int rtm_propagator_step(rtm_propagator_t *prop, int it, rtm_direction_t direction) {
  int status = RTM_OK;
  const rtm_backend_t *b = prop->backend;
  if (rtm_interrupted())
    RTM_FAIL(RTM_ERR_INTERRUPTED, "stopped by %s before step %d (a second one ends it at once)",
             rtm_interrupt_name(), it);
  if (!rtm_grid_is_slab(&prop->grid) || prop->exchange == RTM_EXCHANGE_OFF)
    return b->step(prop->state, it, RTM_REGION_ALL, direction);
  if (prop->exchange == RTM_EXCHANGE_BLOCKING) {
    RTM_TRY(b->step(prop->state, it, RTM_REGION_ALL, direction));
    const double start_s = rtm_wall_seconds();
    RTM_TRY(exchange_begin(prop, RTM_LEVEL_CURRENT));
    RTM_TRY(exchange_end(prop, RTM_LEVEL_CURRENT, RTM_LEVEL_CURRENT));
    prop->halo_s += rtm_wall_seconds() - start_s;
    return RTM_OK;
  }
  /* overlap: the edge planes first, on their way while the interior is computed; the new
   * level is the one the step writes (previous forward, current backward) until INTERIOR
   * swaps the levels, after which it is the current one */
  const rtm_level_t written = direction == RTM_FORWARD ? RTM_LEVEL_PREVIOUS : RTM_LEVEL_CURRENT;
  RTM_TRY(timed_step(prop, it, RTM_REGION_EDGE_PLANES, direction));
  RTM_TRY(exchange_begin(prop, written));
  if (!b->copy_planes) { /* host fields: across before the interior, which reads no ghost */
    const double start_s = rtm_wall_seconds();
    RTM_TRY(exchange_end(prop, written, written));
    prop->halo_s += rtm_wall_seconds() - start_s;
    return timed_step(prop, it, RTM_REGION_INTERIOR, direction);
  }
  RTM_TRY(timed_step(prop, it, RTM_REGION_INTERIOR, direction));
  const double start_s = rtm_wall_seconds(); /* the interior is queued: what follows waits */
  RTM_TRY(exchange_end(prop, written, RTM_LEVEL_CURRENT));
  prop->halo_s += rtm_wall_seconds() - start_s;
fail:
  return status;
}

int rtm_propagator_set_shot(rtm_propagator_t *prop, const rtm_config_t *cfg,
                            const double source_m[3]) {
  int status = RTM_OK;
  if (!prop->backend || !prop->state)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_propagator_set_shot on a propagator not created");
  RTM_TRY(place_shot(prop, cfg, source_m));
  RTM_TRY(prop->backend->reset(prop->state));
  RTM_TRY(hand_shot_to_backend(prop));
fail:
  return status;
}

void rtm_propagator_destroy(rtm_propagator_t *prop) {
  if (prop->backend && prop->state) prop->backend->destroy(prop->state);
  prop->state = NULL;
  rtm_points_release(&prop->sources);
  rtm_points_release(&prop->receivers);
  rtm_points_release(&prop->recorded);
  free(prop->receiver_parts);
  prop->receiver_parts = NULL;
  free(prop->receivers_file_m);
  prop->receivers_file_m = NULL;
  rtm_boundary_release(&prop->boundary);
  if (prop->halo_pinned) rtm_mem_host_unpin(prop->halo_pinned);
  prop->halo_pinned = NULL;
  rtm_mpi_halo_destroy(prop->halo);
  prop->halo = NULL;
  rtm_mpi_device_destroy(prop->link);
  prop->link = NULL;
  free(prop->wavelets);
  prop->wavelets = NULL;
  rtm_mem_ledger_release(&prop->ledger);
}
