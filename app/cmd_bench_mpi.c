/* rtm3d bench under an MPI launcher (app.h): the deck's propagation across z-slabs, timed
 * with the exchange off, blocking and overlapped, against the one-rank run of the same deck
 * on rank 0; aggregate MCells/s, parallel efficiency and the share of the exchange the
 * overlap hides, on stdout and in OUTPUT.json, which is claimed as a model run claims its
 * name (rtm_app_claim_output: the name lock, no input replaced, no earlier run's NAME.*
 * replaced without --force). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "rtm_io.h"
#include "rtm_mpi.h"
#include "rtm_propagator.h"
#include "rtm_status.h"
#include "rtm_version.h"
#include "solver_io.h"

typedef struct {
  rtm_mpi_t *mpi; /* main's */
  rtm_config_t cfg;
  rtm_grid_t whole, slab; /* the whole volume (rank 0 alone), this rank's slab of it */
  rtm_model_t model;
  size_t cells; /* of the whole grid */
  int steps, warmup;
  double one_rank_s; /* rank 0 alone, the whole volume */
  double seconds[3]; /* mpi.exchange = overlap, blocking, off: the slowest rank's */
  /* the overlapped run's phases (rtm_phase_t, then the host's wait in the exchange), the
   * most any rank spent in each */
  double phases[RTM_PHASE_COUNT + 1];
  char device[256];
  char transport[16]; /* how a device's planes travel (rtm_propagator_transport), "" for host */
  char report_path[2 * RTM_CONFIG_PATH_MAX + 8]; /* output.dir/output.name.json */
  rtm_io_name_lock_t lock;                       /* output.name's, world rank 0's */
} mpi_bench_t;

/* bench.warmup untimed then bench.steps timed steps of `grid` with `exchange`; the time of
 * the slowest rank of `ranks` (1: this rank alone). */
static int time_steps(mpi_bench_t *b, const rtm_grid_t *grid, const rtm_model_t *model,
                      rtm_mpi_exchange_t exchange, int ranks, double *seconds) {
  int status = RTM_OK;
  rtm_propagator_t prop;
  rtm_config_t cfg = b->cfg;
  cfg.mpi.exchange = exchange;
  cfg.receivers.layout = RTM_RECEIVERS_NONE;
  RTM_TRY(rtm_propagator_create(&cfg, grid, model, &prop));
  if (!b->device[0] && prop.backend->describe)
    prop.backend->describe(prop.state, b->device, sizeof b->device);
  if (prop.halo || prop.link) /* rank 0's, toward the rank above */
    snprintf(b->transport, sizeof b->transport, "%s", rtm_propagator_transport(&prop, 1));
  for (int it = 0; it < b->warmup; ++it)
    RTM_TRY(rtm_propagator_step(&prop, it, RTM_FORWARD));
  if (prop.backend->synchronize) RTM_TRY(prop.backend->synchronize(prop.state));
  double warmup_phases[RTM_PHASE_COUNT]; /* read and dropped: the timed steps' alone */
  RTM_TRY(rtm_propagator_phase_seconds(&prop, warmup_phases));
  memset(prop.phase_s, 0, sizeof prop.phase_s);
  prop.halo_s = 0.0;
  if (ranks > 1) RTM_TRY(rtm_mpi_barrier(b->mpi));
  const double start_s = rtm_wall_seconds();
  for (int it = b->warmup; it < b->warmup + b->steps; ++it)
    RTM_TRY(rtm_propagator_step(&prop, it, RTM_FORWARD));
  if (prop.backend->synchronize) RTM_TRY(prop.backend->synchronize(prop.state));
  *seconds = rtm_wall_seconds() - start_s;
  if (ranks > 1) RTM_TRY(rtm_mpi_allreduce(b->mpi, seconds, 1, RTM_MPI_MAX));
  if (ranks > 1 && exchange == RTM_EXCHANGE_OVERLAP) {
    RTM_TRY(rtm_propagator_phase_seconds(&prop, b->phases));
    b->phases[RTM_PHASE_COUNT] = prop.halo_s;
    RTM_TRY(rtm_mpi_allreduce(b->mpi, b->phases, RTM_PHASE_COUNT + 1, RTM_MPI_MAX));
  }
fail:
  rtm_mpi_fail_fast(b->mpi, status); /* before the propagator's collective release */
  rtm_propagator_destroy(&prop);
  return status;
}

/* rtm_mpi_on_abort's cleanup: the name lock goes with the job. */
static void release_lock(void *lock) {
  rtm_io_unlock_name(lock);
}

static int set_up(mpi_bench_t *b, int argc, char **argv) {
  int status = RTM_OK, quiet = 0;
  rtm_config_t *cfg = &b->cfg;
  RTM_TRY(rtm_app_load_config(argc, argv, cfg, &quiet, NULL, NULL));
  rtm_mpi_set_timeout(b->mpi, cfg->mpi.timeout_s); /* how long a rank waits for another */
  RTM_TRY(rtm_app_check_same_deck(cfg, b->mpi));
  /* the report's name claimed before any work, as a model run's (issue 32, D1: it replaced
   * a finished run's report, its own deck and a live run's file) */
  snprintf(b->report_path, sizeof b->report_path, "%s/%s.json", cfg->output.dir, cfg->output.name);
  if (rtm_mpi_world_rank(b->mpi) == 0) rtm_mpi_on_abort(b->mpi, release_lock, &b->lock);
  RTM_TRY(rtm_app_claim_output(cfg, b->mpi, b->report_path, 0, &b->lock));
  /* --force replaces the report alone: a run's files of the name are not left beside it
   * (rank 0's look, as its lock: a refusal there ends the job) */
  if (rtm_mpi_world_rank(b->mpi) == 0)
    RTM_TRY(
        rtm_app_refuse_other_runs(cfg->output.dir, cfg->output.name, "output.name",
                                  "bench's report NAME.json beside them would read as that run's"));
  RTM_TRY(rtm_grid_init(&b->whole, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  b->slab = b->whole;
  RTM_TRY(rtm_app_slab(&b->slab, b->mpi, 1));
  RTM_TRY(rtm_app_load_model(cfg, &b->slab, &b->model));
  b->cells = rtm_grid_interior_cells(&b->whole);
  b->steps = cfg->bench.steps;
  b->warmup = cfg->bench.warmup_steps;
  if (cfg->time.steps < b->warmup + b->steps) cfg->time.steps = b->warmup + b->steps;
fail:
  return status;
}

/* Rank 0 alone with the whole volume while the others wait: the one-rank reference. */
static int time_one_rank(mpi_bench_t *b) {
  int status = RTM_OK, failed = 0;
  if (rtm_mpi_rank(b->mpi) == 0) {
    rtm_model_t whole_model = {0};
    status = rtm_app_load_model(&b->cfg, &b->whole, &whole_model);
    if (status == RTM_OK)
      status = time_steps(b, &b->whole, &whole_model, RTM_EXCHANGE_OFF, 1, &b->one_rank_s);
    rtm_model_release(&whole_model);
    failed = status != RTM_OK;
  }
  double verdict[2] = {failed, b->one_rank_s};
  RTM_TRY(rtm_mpi_allreduce(b->mpi, verdict, 2, RTM_MPI_MAX)); /* every rank learns rank 0's */
  if (verdict[0] > 0.0 && status == RTM_OK)
    RTM_FAIL(RTM_ERR_NOMEM, "bench: rank 0 could not run the one-rank reference (see its error)");
  RTM_TRY(status);
  b->one_rank_s = verdict[1];
fail:
  return status;
}

static int report(const mpi_bench_t *b) {
  int status = RTM_OK;
  const int ranks = rtm_mpi_size(b->mpi);
  const double cell_steps = (double)b->cells * b->steps;
  const double overlap = b->seconds[0], blocking = b->seconds[1], off = b->seconds[2];
  const double efficiency = b->one_rank_s / (ranks * overlap);
  const double cost = blocking - off, hidden = cost > 0.0 ? 1.0 - (overlap - off) / cost : NAN;
  const char *output = b->report_path;
  printf("bench: %d x %d x %d cells, %d steps, %d ranks (z-slabs), %s%s%s\n", b->whole.n[0],
         b->whole.n[1], b->whole.n[2], b->steps, ranks, b->device,
         b->transport[0] ? ", planes through the transport " : "", b->transport);
  printf("  %-38s %9.4f s  %10.1f MCells/s\n", "1 rank, the whole volume", b->one_rank_s,
         cell_steps / b->one_rank_s * 1e-6);
  static const char *const names[3] = {"overlap", "blocking", "off (wrong results)"};
  for (int e = 0; e < 3; ++e) {
    char label[64];
    snprintf(label, sizeof label, "%d ranks, exchange %s", ranks, names[e]);
    printf("  %-38s %9.4f s  %10.1f MCells/s\n", label, b->seconds[e],
           cell_steps / b->seconds[e] * 1e-6);
  }
  const double *phase = b->phases;
  printf("  overlap's phases (the most a rank spent): edge planes %.4f s, interior %.4f s, "
         "copies out %.4f s, in %.4f s, host waiting in the exchange %.4f s\n",
         phase[RTM_PHASE_EDGE], phase[RTM_PHASE_INTERIOR], phase[RTM_PHASE_COPY_OUT],
         phase[RTM_PHASE_COPY_IN], phase[RTM_PHASE_COUNT]);
  printf("  parallel efficiency (overlap against one rank): %.3f\n", efficiency);
  printf("  exchange hidden by the overlap: %.0f%% (blocking costs %.4f s, overlapped %.4f s)\n",
         100.0 * hidden, cost, overlap - off);
  const rtm_timing_t timings[4] = {{"one_rank", b->one_rank_s},
                                   {"overlap", overlap},
                                   {"blocking", blocking},
                                   {"exchange_off", off}};
  char *config_text = rtm_config_echo_string(&b->cfg);
  const rtm_run_info_t info = {RTM3D_VERSION, RTM3D_GIT_REVISION, b->cfg.backend.name,
                               b->device,     config_text,        rtm_app_command_line()};
  const rtm_report_t json = {.command = "bench",
                             .info = &info,
                             .steps = b->steps,
                             .model_precision =
                                 rtm_precision_name(rtm_config_model_precision(&b->cfg)),
                             .timings = timings,
                             .timing_count = 4,
                             .mcells_per_s = cell_steps / overlap * 1e-6,
                             .parallel_efficiency = efficiency,
                             .exchange_hidden = hidden,
                             .rank_count = ranks,
                             /* nothing that appeared at the name meanwhile replaced (E3) */
                             .replace_none = !b->cfg.output.overwrite};
  status = rtm_app_write_report(output, &json, &b->whole, NULL);
  free(config_text);
  if (status == RTM_OK) printf("  wrote %s\n", output);
  return status;
}

int rtm_cmd_bench_mpi(int argc, char **argv, rtm_mpi_t *mpi) {
  int status = RTM_OK;
  mpi_bench_t *b = calloc(1, sizeof *b);
  if (!b) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  b->mpi = mpi;
  b->lock.fd = -1;
  RTM_TRY(set_up(b, argc, argv));
  RTM_TRY(time_one_rank(b));
  static const rtm_mpi_exchange_t order[3] = {RTM_EXCHANGE_OVERLAP, RTM_EXCHANGE_BLOCKING,
                                              RTM_EXCHANGE_OFF};
  for (int e = 0; e < 3; ++e)
    RTM_TRY(time_steps(b, &b->slab, &b->model, order[e], rtm_mpi_size(mpi), &b->seconds[e]));
  if (rtm_mpi_rank(mpi) == 0) RTM_TRY(report(b));
fail:
  rtm_mpi_fail_fast(mpi, status); /* an abort releases the lock first */
  rtm_mpi_on_abort(mpi, NULL, NULL);
  if (b) {
    rtm_io_unlock_name(&b->lock);
    rtm_model_release(&b->model);
  }
  free(b);
  return rtm_status_exit_code(status);
}
