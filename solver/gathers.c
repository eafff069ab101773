/* gathers.c - a shot's gathers after the run (rtm_gathers.h): the sampling output.trace_dt
 * asks, the traces collected from the group's ranks, warped and resampled on its first rank,
 * and the messages that bring the shot groups' gathers to the file's rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_gathers.h"
#include "rtm_mpi.h"
#include "rtm_status.h"
#include "rtm_traces.h"

int rtm_gathers_plan(const rtm_propagator_t *prop, double trace_dt_s, rtm_trace_sampling_t *plan) {
  int status = RTM_OK;
  float *dry_in = NULL, *dry_out = NULL;
  plan->samples = prop->steps + 1;
  plan->resample = !isnan(trace_dt_s) && fabs(trace_dt_s - prop->dt_s) > 1e-9 * prop->dt_s;
  plan->trace_dt = plan->resample ? trace_dt_s : prop->dt_s;
  const double trace_samples =
      plan->resample ? floor(prop->steps * prop->dt_s / plan->trace_dt + 1e-9) + 1 : plan->samples;
  /* a shot's gathers on rank 0: the recorded traces, the resampled ones of each field and the
   * pipeline's spectra (about 12 bytes a resampled sample), weighed now, not after the run */
  const int fields = rtm_field_count(prop->trace_fields);
  /* the traces as recorded (a sinc receiver cut between ranks in parts, one a plane) */
  const int recorded = prop->receiver_parts ? prop->recorded.count : prop->receivers.count;
  const double gathers_bytes =
      (double)recorded * plan->samples * 4.0 + (double)prop->receivers.count * trace_samples *
                                                   (4.0 * fields + (plan->resample ? 12.0 : 0.0));
  const double available = (double)rtm_mem_host_available_bytes();
  const int too_large = trace_samples > 1e9 || (available > 0.0 && gathers_bytes > available);
  if (prop->receivers.count > 0 && too_large && plan->resample)
    RTM_FAIL(RTM_ERR_CONFIG,
             "output.trace_dt = %g s makes %.4g samples a trace (the run lasts %g s): the "
             "gathers of %d receivers would need %.3g GB on rank 0, %.3g GB are available; "
             "raise output.trace_dt (dt = %g s) or record fewer receivers",
             plan->trace_dt, trace_samples, prop->steps * prop->dt_s, prop->receivers.count,
             gathers_bytes * 1e-9, available * 1e-9, prop->dt_s);
  if (prop->receivers.count > 0 && too_large)
    RTM_FAIL(RTM_ERR_CONFIG,
             "the gathers of %d receivers x %.4g samples (time.steps + 1) would need %.3g GB on "
             "rank 0, %.3g GB are available: record fewer receivers ([receivers]) or fewer "
             "samples (output.trace_dt coarser than dt = %g s)",
             prop->receivers.count, trace_samples, gathers_bytes * 1e-9, available * 1e-9,
             prop->dt_s);
  plan->trace_samples = (int)trace_samples;
  if (plan->resample && prop->receivers.count > 0) {
    dry_in = calloc((size_t)plan->samples, sizeof *dry_in);
    dry_out = calloc((size_t)plan->trace_samples, sizeof *dry_out);
    if (!dry_in || !dry_out) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
    if (rtm_traces_resample("cpu", 1, plan->samples, prop->dt_s, dry_in, plan->trace_samples,
                            plan->trace_dt, dry_out) != RTM_OK)
      RTM_FAIL(RTM_ERR_CONFIG, "output.trace_dt = %g s cannot be reached from dt = %g s",
               plan->trace_dt, prop->dt_s);
  }
fail:
  free(dry_in);
  free(dry_out);
  return status;
}

void rtm_gathers_release(rtm_shot_gathers_t *g) {
  free(g->position_m);
  free(g->samples);
  memset(g, 0, sizeof *g);
}

/* The samples of `g`'s traces: trace_samples a receiver and recorded field. */
static size_t gathers_samples(const rtm_shot_gathers_t *g, int trace_samples) {
  return (size_t)rtm_field_count(g->fields) * (size_t)g->count * (size_t)trace_samples;
}

static int gathers_alloc(rtm_shot_gathers_t *g, int count, unsigned fields, int trace_samples) {
  g->count = count;
  g->fields = fields;
  g->position_m = malloc(((size_t)count * 3 + 1) * sizeof *g->position_m);
  g->samples = rtm_mem_host_large((gathers_samples(g, trace_samples) + 1) * sizeof *g->samples);
  if (g->position_m && g->samples) return RTM_OK;
  rtm_log_error("out of memory for the gathers of %d receivers", count);
  return RTM_ERR_NOMEM;
}

int rtm_gathers_collect(const rtm_propagator_t *prop, const rtm_trace_sampling_t *plan,
                        const char *unstable_hint, rtm_shot_gathers_t *g, double *correct_s) {
  int status = RTM_OK;
  const size_t count = (size_t)prop->receivers.count, samples = (size_t)plan->samples;
  float *traces = NULL;
  int in_place = 0;
  memset(g, 0, sizeof *g);
  if (rtm_mpi_rank(prop->grid.mpi) == 0) {
    RTM_TRY(gathers_alloc(g, (int)count, prop->trace_fields, plan->trace_samples));
    memcpy(g->source_m, prop->source_position_m, sizeof g->source_m);
    if (count) memcpy(g->position_m, prop->receivers.position_m, count * 3 * sizeof(double));
  }
  if (count == 0) return RTM_OK;
  /* without resampling the traces land in the gathers themselves (the other ranks, which
   * only contribute, and resampling need a buffer of their own) */
  in_place = rtm_mpi_rank(prop->grid.mpi) == 0 && !plan->resample;
  if (!in_place) {
    traces = rtm_mem_host_large(count * samples * sizeof *traces);
    if (!traces) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %zu traces", count);
  }
  /* the time-dispersion warp where the traces are (a GPU), when it can be done there */
  const double correct_start_s = rtm_wall_seconds();
  int corrected = 0;
  RTM_TRY(rtm_propagator_correct_recorded(prop, &corrected));
  *correct_s += rtm_wall_seconds() - correct_start_s;
  float *out = g->samples;
  const char *pipeline = rtm_traces_backend_for(prop->backend->name);
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (!(prop->trace_fields & RTM_FIELD_BIT(f))) continue;
    const char *name = rtm_field_name((rtm_field_t)f);
    if (in_place) traces = out;
    /* each rank recorded the taps in its slab: the group's first rank gets the sums */
    RTM_TRY(rtm_propagator_gather_traces(prop, (rtm_field_t)f, traces));
    if (rtm_mpi_rank(prop->grid.mpi) != 0) continue;
    if (!rtm_values_finite(traces, count * samples))
      RTM_FAIL(RTM_ERR_NUMERIC, "the recorded traces of %s are not finite: the run is unstable%s",
               name, unstable_hint);
    if (!corrected) {
      const double host_start_s = rtm_wall_seconds();
      RTM_TRY(rtm_propagator_correct_traces(prop, pipeline, (int)count, traces));
      *correct_s += rtm_wall_seconds() - host_start_s;
    }
    if (plan->resample)
      RTM_TRY(rtm_traces_resample(pipeline, (int)count, plan->samples, prop->dt_s, traces,
                                  plan->trace_samples, plan->trace_dt, out));
    out += count * (size_t)plan->trace_samples;
  }
fail:
  if (!in_place) free(traces);
  if (status != RTM_OK) rtm_gathers_release(g);
  return status;
}

/* Shot groups: the gathers of a group's shot travel from its first rank to the file's
 * (rtm_mpi_leader_send): the receiver count and fields, then the source and receivers,
 * then the samples. */
enum { TAG_GATHER_HEAD = 21, TAG_GATHER_POSITIONS, TAG_GATHER_SAMPLES };

static int send_gathers(rtm_mpi_t *mpi, const rtm_trace_sampling_t *plan,
                        const rtm_shot_gathers_t *g) {
  int status = RTM_OK;
  const int head[2] = {g->count, (int)g->fields};
  RTM_TRY(rtm_mpi_leader_send(mpi, head, sizeof head, TAG_GATHER_HEAD));
  RTM_TRY(rtm_mpi_leader_send(mpi, g->source_m, sizeof g->source_m, TAG_GATHER_POSITIONS));
  RTM_TRY(rtm_mpi_leader_send(mpi, g->position_m, (size_t)g->count * 3 * sizeof(double),
                              TAG_GATHER_POSITIONS));
  RTM_TRY(rtm_mpi_leader_send(mpi, g->samples,
                              gathers_samples(g, plan->trace_samples) * sizeof(float),
                              TAG_GATHER_SAMPLES));
fail:
  return status;
}

static int receive_gathers(rtm_mpi_t *mpi, const rtm_trace_sampling_t *plan, int from_group,
                           rtm_shot_gathers_t *g) {
  int status = RTM_OK;
  int head[2] = {0, 0};
  RTM_TRY(rtm_mpi_leader_recv(mpi, from_group, head, sizeof head, TAG_GATHER_HEAD));
  RTM_TRY(gathers_alloc(g, head[0], (unsigned)head[1], plan->trace_samples));
  RTM_TRY(
      rtm_mpi_leader_recv(mpi, from_group, g->source_m, sizeof g->source_m, TAG_GATHER_POSITIONS));
  RTM_TRY(rtm_mpi_leader_recv(mpi, from_group, g->position_m, (size_t)g->count * 3 * sizeof(double),
                              TAG_GATHER_POSITIONS));
  RTM_TRY(rtm_mpi_leader_recv(mpi, from_group, g->samples,
                              gathers_samples(g, plan->trace_samples) * sizeof(float),
                              TAG_GATHER_SAMPLES));
fail:
  return status;
}

int rtm_gathers_write_round(rtm_mpi_t *mpi, const rtm_trace_sampling_t *plan, int round,
                            int shot_count, rtm_shot_gathers_t *own, rtm_gathers_write_t write,
                            void *context) {
  int status = RTM_OK;
  const int groups = rtm_mpi_groups(mpi);
  rtm_shot_gathers_t other = {0};
  if (rtm_mpi_world_rank(mpi) == 0) {
    RTM_TRY(write(context, round * groups, own));
    for (int g = 1; g < groups && round * groups + g < shot_count; ++g) {
      RTM_TRY(receive_gathers(mpi, plan, g, &other));
      RTM_TRY(write(context, round * groups + g, &other));
      rtm_gathers_release(&other); /* unless the writer took them */
    }
  } else if (rtm_mpi_rank(mpi) == 0 && round * groups + rtm_mpi_group(mpi) < shot_count) {
    RTM_TRY(send_gathers(mpi, plan, own));
  }
fail:
  rtm_gathers_release(&other);
  return status;
}
