/* One migration run, shot after shot (rtm_migration.h): the source side forward with its
 * snapshots, the receiver side over the reversed gather, the imaging condition between. */
#include "rtm_migration.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imaging_cuda.h"
#include "imaging_impl.h"
#include "reconstruction_impl.h"
#include "rtm_codec.h" /* RTM_CODEC_BLOCK_PLANES */
#include "rtm_mpi.h"
#include "rtm_status.h"
#include "rtm_traces.h" /* rtm_dispersion_check_migration */

/* A reconstruction's store with the image against what is free where they would live. */
typedef struct {
  size_t need;     /* the store and the image, and a reserve beside them (auto) */
  size_t estimate; /* the store and the image alone: the preflight's estimate */
  size_t available, image;
  int on_device;
  int limited;            /* available is memory.limit_gb, less than is free */
  char reserve_of[192];   /* what `need` counts beside the store and the image, or "" */
} rtm_fit_t;

struct rtm_migration {
  rtm_config_t cfg; /* the run's, receivers.layout none: neither side records */
  rtm_grid_t grid;
  const rtm_model_t *model;
  rtm_propagator_t source, receiver;
  int steps, imaging_step;
  int device; /* where the fields live: -1 host */
  rtm_image_t *image;
  rtm_gathers_t *gathers; /* rtm.offset_lags > 0, else NULL */
  rtm_gather_plan_t gather_plan;
  size_t gathers_beside_fields; /* bytes of the gathers where the fields live (auto's reserve) */
  /* what is kept in host memory beside a store there: the caller's arrays
   * (rtm_migration_create_beside), and on a GPU the gathers' host volumes */
  size_t host_beside;
  char host_beside_of[96];
  float *held_image, *held_illumination; /* rtm_migration_hold's arrays, until its wait */
  float *held_gathers;
  rtm_migration_lit_t lit;               /* rtm_migration_on_lit's */
  void *lit_context;
  const rtm_reconstruction_ops_t *reconstruction; /* rtm.reconstruction */
  rtm_precision_t snapshot_precision;             /* rtm.snapshot_precision, or what auto chose */
  int snapshot_rate;                              /* rtm.snapshot_rate, or what auto chose */
  void *reconstruction_state;
  /* The imaging condition in the receiver's steps (image_next_step): refused by its kernel
   * shape (then imaged apart for the rest of the run), and asked of its next step. */
  int fuse_refused, fused_pending;
  int steps_image; /* the backend's steps can image this equation (rtm_backend_images_in_step) */
  int store_images_refused; /* the reconstruction's image_at said it cannot: not asked again */
  rtm_mem_ledger_t ledger; /* the image and the snapshots; each side has its own */
  rtm_fit_t fit;           /* the preflight's, for the chosen reconstruction */
  size_t measured_bytes;   /* what the image and the store took where fit counted them */
};

static int gathers_sources_stay(const rtm_migration_t *m);

/* Four samples a period at 2.5 f, where the Ricker's spectrum is 3% of its peak. */
static int auto_imaging_step(const rtm_config_t *cfg, double dt_s) {
  const int step = (int)floor(1.0 / (4.0 * 2.5 * cfg->source.frequency_hz * dt_s));
  return step < 1 ? 1 : step;
}

/* memory.imaging (or memory.strategy), auto resolved as the backends resolve it. */
static const char *imaging_strategy(const rtm_config_t *cfg, int device) {
  const char *strategy = rtm_config_strategy_for(cfg, "imaging");
  if (strcmp(strategy, "auto") == 0) return device >= 0 ? "device" : "host";
  return strategy;
}

/* The image lives where the fields are and is accumulated there: host memory on the cpu
 * backend, the wavefield's strategy (memory.wavefield or memory.strategy) on cuda. Only the
 * reconstruction's store follows memory.imaging, which may be host memory (pinned). */
static const char *image_strategy(const rtm_config_t *cfg, int device) {
  if (device < 0) return "host";
  const char *strategy = rtm_imaging_strategy(rtm_config_strategy_for(cfg, "wavefield"), device);
  return rtm_imaging_host_strategy(strategy) ? "device" : strategy;
}

/* The imaging step and the snapshots it takes, from the config and dt. */
static int plan_imaging(rtm_migration_t *m, const rtm_config_t *cfg) {
  int status = RTM_OK;
  double dt_s = 0.0;
  RTM_TRY(rtm_resolve_dt(cfg, m->model, &m->grid, &dt_s));
  m->steps = cfg->time.steps;
  m->imaging_step =
      cfg->rtm.imaging_step > 0 ? cfg->rtm.imaging_step : auto_imaging_step(cfg, dt_s);
  /* auto's step says where it came from and what moves it (probe V, V2: "173" of a deck that
   * set none) */
  if (m->imaging_step > m->steps && cfg->rtm.imaging_step <= 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "rtm.imaging_step = 0 (auto) is %d steps here, four samples a period at 2.5 x "
             "source.frequency (%g Hz) with dt = %.3g s, more than time.steps = %d: the run "
             "spans %.3g s, less than one imaging interval; raise time.steps (or time.dt, "
             "time.cfl), or set rtm.imaging_step to at most %d",
             m->imaging_step, 2.5 * cfg->source.frequency_hz, dt_s, m->steps, m->steps * dt_s,
             m->steps);
  if (m->imaging_step > m->steps)
    RTM_FAIL(RTM_ERR_CONFIG,
             "rtm.imaging_step = %d exceeds time.steps = %d: the imaging condition would "
             "never be applied",
             m->imaging_step, m->steps);
  if (cfg->rtm.end_taper_s > m->steps * dt_s) {
    char where[RTM_CONFIG_ORIGIN_MAX];
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: rtm.end_taper = %.9g s is longer than the record the migration uses, "
             "time.steps x dt = %d x %.9g s = %.9g s: set at most that (0: no taper; auto: 0.5 "
             "/ source.frequency, at most half the record)",
             rtm_config_origin(cfg, "rtm.end_taper", where, sizeof where), cfg->rtm.end_taper_s,
             m->steps, dt_s, m->steps * dt_s);
  }
  /* coarser than auto, the imaging condition samples the wavefields' product below its
   * band: the image aliases (probe O, O3, before the end taper: 5, 6 and 8 steps against
   * auto's 4 changed a 48^3 image by 29%, 27% and 16%; migrate_small.ini at 8 against 4:
   * 58% untapered, 1.9% tapered, docs/migration.md) */
  const int coarsest = auto_imaging_step(cfg, dt_s);
  if (m->imaging_step > coarsest)
    rtm_log_warning("rtm.imaging_step = %d is coarser than %d, four samples a period at 2.5 x "
                    "source.frequency (%g Hz): the imaging condition samples the wavefields' "
                    "product below its band and the image aliases (percents where the record's "
                    "end is tapered, tens of percent where not: docs/migration.md); leave it "
                    "0 (auto) or set at most %d",
                    m->imaging_step, coarsest, 2.5 * cfg->source.frequency_hz, coarsest);
fail:
  return status;
}

/* The ways of rtm.reconstruction; the config's enum indexes them. */
static const rtm_reconstruction_ops_t *const reconstructions[] = {
    [RTM_RECONSTRUCT_SNAPSHOTS] = &rtm_reconstruction_snapshots,
    [RTM_RECONSTRUCT_BOUNDARY] = &rtm_reconstruction_boundary,
    [RTM_RECONSTRUCT_CHECKPOINT] = &rtm_reconstruction_checkpoint,
};

/* How the backward pass will read the snapshots: by their blocks (zfp decoded as imaged) on
 * a GPU whose receiver steps do not image (tti, vti) and without gathers (which take S's
 * volume), else as volumes. */
static rtm_snapshots_read_t snapshots_read(const rtm_migration_t *m, const rtm_config_t *cfg,
                                           int device) {
  const int blocks = device >= 0 && cfg->rtm.offset_lags <= 0 && !m->steps_image;
  return blocks ? RTM_SNAPSHOTS_BLOCKS : RTM_SNAPSHOTS_VOLUMES;
}

/* What the reconstruction is made for (the device: -1 before the backend says). */
static rtm_reconstruction_plan_t plan_of(rtm_migration_t *m, const rtm_config_t *cfg, int device) {
  return (rtm_reconstruction_plan_t){.cfg = cfg,
                                     .grid = &m->grid,
                                     .boundary = &m->source.boundary,
                                     .steps = m->steps,
                                     .imaging_step = m->imaging_step,
                                     .device = device,
                                     .strategy = imaging_strategy(cfg, device),
                                     .precision = m->snapshot_precision,
                                     .rate = m->snapshot_rate,
                                     .read = snapshots_read(m, cfg, device),
                                     .ledger = &m->ledger,
                                     .host_beside = m->host_beside};
}

double rtm_migration_weighed_steps(const rtm_config_t *cfg, const rtm_grid_t *grid, int device,
                                   int steps, int imaging_step, rtm_reconstruction_t way,
                                   rtm_precision_t precision, int rate) {
  const rtm_reconstruction_plan_t plan = {.cfg = cfg,
                                          .grid = grid,
                                          .steps = steps,
                                          .imaging_step = imaging_step,
                                          .device = device,
                                          .strategy = imaging_strategy(cfg, device),
                                          .precision = precision,
                                          .rate = rate};
  return reconstructions[way]->steps_a_shot(&plan);
}

/* What a reconstruction would hold with the image, against what is free where it would
 * live (the device the backend takes, or host memory). `reserve`: more to find room for
 * beside them where the fields live (auto's estimate of the propagators, and the gathers),
 * 0 for none; `reserve_of` says what it is, for messages. A store in host memory counts
 * m->host_beside too. */
static int measure_fit(const rtm_migration_t *m, const rtm_reconstruction_ops_t *ops,
                       const rtm_reconstruction_plan_t *plan, size_t reserve,
                       const char *reserve_of, rtm_fit_t *fit) {
  int status = RTM_OK;
  const size_t volume = rtm_grid_interior_cells(plan->grid) * sizeof(float);
  const size_t store = ops->bytes(plan, &fit->on_device);
  /* the image and the illumination count where they live: with the store on the device,
   * or with it in host memory on the cpu backend */
  const int with_fields = fit->on_device || plan->device < 0;
  const size_t on_host = fit->on_device ? 0 : m->host_beside;
  fit->image = with_fields ? 2 * volume : 0;
  const size_t beside = fit->image + (with_fields ? reserve : 0) + on_host;
  snprintf(fit->reserve_of, sizeof fit->reserve_of, "%s%s%s",
           with_fields && reserve ? reserve_of : "",
           with_fields && reserve && on_host ? " and " : "", on_host ? m->host_beside_of : "");
  fit->need = store > SIZE_MAX - beside ? SIZE_MAX : store + beside;
  fit->estimate = store > SIZE_MAX - fit->image ? SIZE_MAX : store + fit->image;
  if (fit->on_device)
    RTM_TRY(rtm_mem_device_free_bytes(plan->device, &fit->available));
  else
    fit->available = rtm_imaging_host_free_bytes();
  const size_t free_bytes = fit->available;
  fit->available = rtm_config_free_within_limit(plan->cfg, free_bytes);
  fit->limited = fit->available < free_bytes;
fail:
  return status;
}

static int refuse(const rtm_reconstruction_ops_t *ops, const rtm_reconstruction_plan_t *plan,
                  const rtm_fit_t *fit) {
  int status = RTM_OK;
  char advice[512] = "hold it elsewhere (memory.imaging)";
  /* the room the store has: what is free less what comes beside it (the image, and for auto
   * the propagators: probe W, W1 advised a count that could not fit beside them) */
  const size_t store = fit->estimate - fit->image, beside = fit->need - store;
  if (ops->advise)
    ops->advise(plan, fit->available > beside ? fit->available - beside : 0, advice, sizeof advice);
  char with[256] = "";
  if (fit->image)
    snprintf(with, sizeof with, " (with the image%s%s)", fit->reserve_of[0] ? ", beside " : "",
             fit->reserve_of);
  else if (fit->reserve_of[0])
    snprintf(with, sizeof with, " (beside %s)", fit->reserve_of);
  RTM_FAIL(RTM_ERR_NOMEM, "rtm.reconstruction = %s needs %.3g GB%s in %s, where %.3g GB are %s: %s",
           ops->name, fit->need / 1e9, with, fit->on_device ? "device memory" : "host memory",
           fit->available / 1e9, fit->limited ? "allowed (memory.limit_gb)" : "free", advice);
fail:
  return status;
}

/* A way auto weighs: a reconstruction, and for snapshots the precision they are stored in
 * (for zfp, at `rate` bits a value). */
typedef struct {
  rtm_reconstruction_t way;
  rtm_precision_t precision;
  int rate;
} candidate_t;

/* "snapshots (fp16)", "snapshots (zfp at 6 bits a value)", "boundary", ... */
static void candidate_name(const candidate_t *c, char *text, size_t size) {
  const char *name = reconstructions[c->way]->name;
  char format[48];
  if (c->way != RTM_RECONSTRUCT_SNAPSHOTS) {
    snprintf(text, size, "%s", name);
    return;
  }
  rtm_snapshots_format_name(c->precision, c->rate, format, sizeof format);
  snprintf(text, size, "%s (%s)", name, format);
}

/* The plan of candidate c: its snapshots' precision and rate. */
static void plan_candidate(rtm_reconstruction_plan_t *plan, const candidate_t *c) {
  plan->precision = c->precision;
  plan->rate = c->rate;
}

/* What snapshot candidate c takes beyond its propagations, as auto weighs it, in text: zfp's
 * " (its coding 1.82 steps a snapshot, measured)", fp16's " (its packing 2.1 steps a
 * snapshot, measured)", in a GPU's host memory " (... its crossings of PCIe, out and back,
 * 5.92 steps a snapshot)"; else "" (the other ways' propagations say theirs). */
static const char *cost_clause(const rtm_reconstruction_plan_t *plan, const candidate_t *c,
                               char *text, size_t size) {
  rtm_reconstruction_plan_t p = *plan;
  plan_candidate(&p, c);
  text[0] = '\0';
  if (c->way != RTM_RECONSTRUCT_SNAPSHOTS) return text;
  const char *origin = "measured";
  const double coding = rtm_reconstruction_format_steps(&p, &origin),
               crossing = rtm_reconstruction_snapshot_steps(&p) - coding;
  char part[2][96] = {"", ""};
  if (coding > 0.0)
    snprintf(part[0], sizeof part[0], "its %s %.3g steps a snapshot, %s",
             c->precision == RTM_PRECISION_ZFP ? "coding" : "packing", coding, origin);
  if (crossing > 0.0)
    snprintf(part[1], sizeof part[1], "its crossings of PCIe, out and back, %.3g steps a snapshot",
             crossing);
  if (part[0][0] || part[1][0])
    snprintf(text, size, " (%s%s%s)", part[0], part[0][0] && part[1][0] ? "; " : "", part[1]);
  return text;
}

/* The rates below rtm.snapshot_rate's default that auto tries zfp snapshots at before
 * `boundary` (a rate set away from the default is the only one tried): each slab of the
 * codec spends its bits where the wavefield is, and a migrated image at 4 bits a value lies
 * 0.1 to 0.25% from fp32 snapshots', at 3 bits 0.3 to 0.7% (at 2, 1.1 to 2.3%: not tried)
 * on the surveys of tests/rtm/test_compressed_snapshots.c, where `boundary` costs a third
 * propagation. */
static const int auto_lower_rates[] = {4, 3};

/* rtm.reconstruction = auto: the fastest way that can serve the run and fits with the
 * propagators. In this order, which breaks ties: snapshots (2 propagations a shot) in
 * rtm.snapshot_precision, then smaller ones (fp16, then zfp at rtm.snapshot_rate and at the
 * lower auto_lower_rates: lossy, some 1e-4 of the image at 6 bits, far less than a reflector's
 * image moves with a velocity error of a percent), boundary (3), checkpoint (2 and its
 * recomputation). Of those that fit, the one of the fewest steps a shot (steps_a_shot): zfp's
 * coding counts, so that imaged every step on a GPU (iso: 1.8 steps a snapshot) boundary wins,
 * where zfp ran 0.86x of its speed; fp16's packing counts (on a GPU more than zfp's coding,
 * so zfp, smaller and closer to fp32, goes first); so do a GPU's crossings of PCIe to a store
 * in host memory
 * (memory.imaging = pinned), so that fp32 snapshots there (15 iso steps each way) give way
 * to zfp's or to boundary, 3.7 times faster on an H200 (run/results/rtm.md). Checkpoint
 * counts no fewer steps than boundary. */
static int choose_reconstruction(rtm_migration_t *m, const rtm_config_t *cfg, int device) {
  enum { MOST = 7 };
  const rtm_precision_t asked = cfg->rtm.snapshot_precision;
  const int rate = cfg->rtm.snapshot_rate, slabs = rtm_grid_is_slab(&m->grid);
  candidate_t order[MOST];
  int count = 0;
  order[count++] = (candidate_t){RTM_RECONSTRUCT_SNAPSHOTS, asked, rate};
  if (asked == RTM_PRECISION_FP32)
    order[count++] = (candidate_t){RTM_RECONSTRUCT_SNAPSHOTS, RTM_PRECISION_FP16, rate};
  if (asked != RTM_PRECISION_ZFP)
    order[count++] = (candidate_t){RTM_RECONSTRUCT_SNAPSHOTS, RTM_PRECISION_ZFP, rate};
  for (size_t r = 0; r < sizeof auto_lower_rates / sizeof auto_lower_rates[0]; ++r)
    if (rate == RTM_SNAPSHOT_RATE_DEFAULT && auto_lower_rates[r] < rate)
      order[count++] =
          (candidate_t){RTM_RECONSTRUCT_SNAPSHOTS, RTM_PRECISION_ZFP, auto_lower_rates[r]};
  order[count++] = (candidate_t){RTM_RECONSTRUCT_BOUNDARY, asked, rate};
  order[count++] = (candidate_t){RTM_RECONSTRUCT_CHECKPOINT, asked, rate};
  int status = RTM_OK, chosen = count, next = count; /* next: the fastest fitting non-snapshot */
  char passed[2560] = "", name[64], other[64], codec[192];
  char why_not[MOST][352] = {{0}}; /* why each was passed over, for the log */
  /* 1 where it can serve the run and fits (on z-slabs: on every rank), and its steps a shot
   * (on z-slabs: the most of any rank's) */
  double fit[MOST] = {0}, steps[MOST] = {0};
  rtm_fit_t fits[MOST] = {{0}};
  rtm_reconstruction_plan_t plan = plan_of(m, cfg, device);
  /* the two sides' fields, and the medium they share; the gathers where they live with them */
  const size_t reserve = 2 * rtm_propagator_field_bytes(cfg, &m->grid) +
                         rtm_propagator_medium_bytes(cfg, &m->grid) + m->gathers_beside_fields;
  const char *beside =
      m->gathers_beside_fields ? "the propagators and the gathers" : "the propagators";
  /* what checkpoint's estimate of its count leaves to them: the reserve and the image */
  plan.fields_beside = reserve + 2 * rtm_grid_interior_cells(&m->grid) * sizeof(float);
  for (int i = 0; i < count; ++i) {
    const rtm_reconstruction_ops_t *ops = reconstructions[order[i].way];
    char why[256];
    plan_candidate(&plan, &order[i]);
    candidate_name(&order[i], name, sizeof name);
    if (ops->usable && !ops->usable(&plan, why, sizeof why)) {
      snprintf(why_not[i], sizeof why_not[i], "%s: %s", name, why);
      continue;
    }
    RTM_TRY(measure_fit(m, ops, &plan, reserve, beside, &fits[i]));
    if (fits[i].need > fits[i].available) {
      snprintf(why_not[i], sizeof why_not[i], "%s needs %.3g GB%s%s, %.3g GB %s", name,
               fits[i].need / 1e9, fits[i].reserve_of[0] ? " with " : "", fits[i].reserve_of,
               fits[i].available / 1e9, fits[i].limited ? "allowed" : "free");
      continue;
    }
    fit[i] = 1.0;
    steps[i] = ops->steps_a_shot(&plan);
    if (!slabs && steps[i] <= 2.0 * m->steps) break; /* none after it takes fewer */
  }
  if (slabs) { /* the ways every rank can take, each at its most steps of any rank */
    double here[MOST];
    memcpy(here, fit, sizeof here);
    RTM_TRY(rtm_mpi_allreduce(m->grid.mpi, fit, count, RTM_MPI_MIN));
    RTM_TRY(rtm_mpi_allreduce(m->grid.mpi, steps, count, RTM_MPI_MAX));
    for (int i = 0; i < count; ++i)
      if (here[i] > 0.0 && fit[i] == 0.0) {
        candidate_name(&order[i], name, sizeof name);
        snprintf(why_not[i], sizeof why_not[i], "%s fits here, not on every rank", name);
      }
  }
  /* rtm.snapshot_precision's snapshots (order[0]) where they fit, else the other formats,
   * the fastest of them: fp16 and zfp cost a GPU more than fp32, and each other's place by
   * their time */
  if (fit[0] > 0.0)
    for (int i = 1; i < count; ++i)
      if (order[i].way == RTM_RECONSTRUCT_SNAPSHOTS) fit[i] = 0.0;
  /* a lower rate only where the higher ones do not fit: its fewer bytes cross PCIe faster
   * (a store in host memory), but its image is further from fp32's */
  for (int i = 0, zfp_fits = 0; i < count; ++i) {
    if (order[i].way != RTM_RECONSTRUCT_SNAPSHOTS || order[i].precision != RTM_PRECISION_ZFP)
      continue;
    if (zfp_fits) fit[i] = 0.0; /* unsaid: the log names the higher rate */
    zfp_fits = zfp_fits || fit[i] > 0.0;
  }
  for (int i = 0; i < count; ++i)
    if (fit[i] > 0.0 && (chosen == count || steps[i] < steps[chosen])) chosen = i;
  for (int i = 0; i < count; ++i)
    if (fit[i] > 0.0 && i != chosen && order[i].way != RTM_RECONSTRUCT_SNAPSHOTS &&
        (next == count || steps[i] < steps[next]))
      next = i;
  for (int i = 0; i < chosen && i < count; ++i) { /* why the ways before it were passed over */
    const size_t used = strlen(passed);
    if (fit[i] > 0.0) { /* slower than the chosen */
      candidate_name(&order[i], name, sizeof name);
      candidate_name(&order[chosen], other, sizeof other);
      snprintf(why_not[i], sizeof why_not[i],
               "%s fits but takes %.3g propagations a shot%s, %s %.3g", name, steps[i] / m->steps,
               cost_clause(&plan, &order[i], codec, sizeof codec), other, steps[chosen] / m->steps);
    }
    if (why_not[i][0])
      snprintf(passed + used, sizeof passed - used, "%s%s", used ? "; " : "", why_not[i]);
  }
  if (chosen < count && cost_clause(&plan, &order[chosen], codec, sizeof codec)[0]) {
    const size_t used = strlen(passed); /* its time, as weighed */
    snprintf(passed + used, sizeof passed - used, "%sit takes %.3g propagations a shot%s",
             used ? "; " : "", steps[chosen] / m->steps, codec);
    if (next < count) {
      candidate_name(&order[next], name, sizeof name);
      const size_t more = strlen(passed);
      snprintf(passed + more, sizeof passed - more, ", %s %.3g", name, steps[next] / m->steps);
    }
  }
  if (chosen < count) {
    m->reconstruction = reconstructions[order[chosen].way];
    m->snapshot_precision = order[chosen].precision;
    m->snapshot_rate = order[chosen].rate;
    m->fit = fits[chosen];
    candidate_name(&order[chosen], name, sizeof name);
    if (passed[0]) rtm_log_info("rtm.reconstruction = auto: %s (%s)", name, passed);
    return RTM_OK;
  }
  m->reconstruction = reconstructions[order[count - 1].way];
  rtm_log_error("rtm.reconstruction = auto: none fits (%s)%s", passed,
                m->gathers_beside_fields
                    ? "; the subsurface-offset gathers take room beside each: fewer "
                      "rtm.offset_lags, or larger rtm.cip_x_step and rtm.cip_y_step, leave more"
                    : "");
  /* the last, the smallest, says what to change */
  plan_candidate(&plan, &order[count - 1]);
  RTM_TRY(refuse(m->reconstruction, &plan, &fits[count - 1]));
fail:
  return status;
}

/* How a message names `allowed` bytes: memory.limit_gb's cap when it is below what is free. */
static const char *room_of(size_t allowed, size_t free_bytes) {
  return allowed < free_bytes ? "allowed (memory.limit_gb)" : "free";
}

/* rtm.offset_lags: the plan of the gathers, refused when their volumes cannot fit: the
 * migration's (on the GPU with a device, beside the fields, with the imaging steps they hold:
 * rtm_gathers_held_bytes, the more of its two counts, as the store that decides is not yet
 * chosen), and the caller's shot and float-pair sums on the host
 * (rtm_migration_gathers_read), four in all. */
static int preflight_gathers(rtm_migration_t *m, const rtm_config_t *cfg, int device) {
  int status = RTM_OK;
  const int lags = cfg->rtm.offset_lags;
  if (lags <= 0) return RTM_OK;
  RTM_TRY(rtm_gather_plan_make(&m->grid, cfg->boundary.width_cells, lags, cfg->rtm.cip_x_step,
                               cfg->rtm.cip_y_step, &m->gather_plan));
  const double volume =
      (double)rtm_gather_plan_cells(&m->gather_plan, m->grid.nz_local) * sizeof(float);
  const double bytes = (device >= 0 ? 3.0 : 4.0) * volume;
  /* on a GPU the migration's volume and the steps it holds are beside the fields; on the
   * host all four volumes are */
  const size_t held[2] = {rtm_gathers_held_bytes(&m->grid, device, 0),
                          rtm_gathers_held_bytes(&m->grid, device, 1)};
  m->gathers_beside_fields =
      device >= 0 ? (size_t)volume + (held[0] > held[1] ? held[0] : held[1]) : (size_t)bytes;
  if (device >= 0) {
    size_t device_free = 0;
    const double on_device = (double)m->gathers_beside_fields;
    RTM_TRY(rtm_imaging_free_bytes("device", device, &device_free));
    const size_t allowed = rtm_config_free_within_limit(cfg, device_free);
    if (on_device > (double)allowed)
      RTM_FAIL(RTM_ERR_NOMEM,
               "rtm.offset_lags = %d at %d x %d CIP lines needs %.3g GB of the GPU's memory for "
               "the gathers (%.3g GB) and the imaging steps they hold (up to three fields), "
               "where %.3g GB are %s: fewer lags or larger rtm.cip_x_step and rtm.cip_y_step",
               lags, m->gather_plan.count[0], m->gather_plan.count[1], on_device / 1e9,
               volume / 1e9, allowed / 1e9, room_of(allowed, device_free));
  }
  if (device >= 0) { /* the caller's shot and sums of them, on the host beside a store there */
    const size_t used = strlen(m->host_beside_of);
    m->host_beside += (size_t)bytes;
    snprintf(m->host_beside_of + used, sizeof m->host_beside_of - used, "%sthe gathers' sums",
             used ? " and " : "");
  }
  const size_t host_free = rtm_imaging_host_free_bytes();
  const size_t allowed = rtm_config_free_within_limit(cfg, host_free);
  if (bytes > (double)allowed)
    RTM_FAIL(RTM_ERR_NOMEM,
             "rtm.offset_lags = %d at %d x %d CIP lines (rtm.cip_x_step = %d, rtm.cip_y_step = "
             "%d) needs %.3g GB of host memory for the gathers (%d volumes of %d x %d lags x %d "
             "planes a CIP), where %.3g GB are %s: fewer lags or larger steps",
             lags, m->gather_plan.count[0], m->gather_plan.count[1], cfg->rtm.cip_x_step,
             cfg->rtm.cip_y_step, bytes / 1e9, device >= 0 ? 3 : 4, 2 * lags + 1, 2 * lags + 1,
             m->grid.nz_local, allowed / 1e9, room_of(allowed, host_free));
fail:
  return status;
}

/* With the store on the device, what stays in host memory (m->host_beside) against what is
 * free there; with it in host memory, measure_fit counted it. */
static int preflight_host_beside(const rtm_migration_t *m, const rtm_config_t *cfg) {
  int status = RTM_OK;
  if (!m->fit.on_device || m->host_beside == 0) return RTM_OK;
  const size_t host_free = rtm_imaging_host_free_bytes();
  const size_t allowed = rtm_config_free_within_limit(cfg, host_free);
  if (m->host_beside > allowed)
    RTM_FAIL(RTM_ERR_NOMEM, "migrate: %s need %.3g GB of host memory, where %.3g GB are %s",
             m->host_beside_of, m->host_beside / 1e9, allowed / 1e9, room_of(allowed, host_free));
fail:
  return status;
}

/* The preflight, before anything is allocated: the reconstruction's store and the image
 * against the memory free where they would live. The propagators come on top, so a plan that
 * passes may still leave too little for them (the backend then says so); one that cannot fit
 * is refused here, with the settings that shrink it. auto chooses with the propagators
 * counted. */
static int preflight(rtm_migration_t *m, const rtm_config_t *cfg) {
  int status = RTM_OK;
  rtm_fit_t fit = {0};
  int device = -1;
  RTM_TRY(rtm_backend_device(cfg, m->grid.mpi, &device));
  m->steps_image = rtm_backend_images_in_step(cfg);
  RTM_TRY(preflight_gathers(m, cfg, device));
  m->snapshot_precision = cfg->rtm.snapshot_precision;
  m->snapshot_rate = cfg->rtm.snapshot_rate;
  if (cfg->rtm.reconstruction == RTM_RECONSTRUCT_AUTO) {
    RTM_TRY(choose_reconstruction(m, cfg, device));
  } else {
    m->reconstruction = reconstructions[cfg->rtm.reconstruction];
    const rtm_reconstruction_plan_t plan = plan_of(m, cfg, device);
    RTM_TRY(measure_fit(m, m->reconstruction, &plan, 0, NULL, &fit));
    if (fit.need > fit.available) RTM_TRY(refuse(m->reconstruction, &plan, &fit));
    m->fit = fit;
  }
  RTM_TRY(preflight_host_beside(m, cfg));
fail:
  return status;
}

static int create_propagators(rtm_migration_t *m, const rtm_config_t *cfg) {
  int status = RTM_OK;
  m->cfg = *cfg;
  m->cfg.receivers.layout = RTM_RECEIVERS_NONE;
  RTM_TRY(rtm_propagator_create(&m->cfg, &m->grid, m->model, &m->source));
  /* the receiver side steps through the source side's medium (destroyed after it) */
  RTM_TRY(rtm_propagator_create_beside(&m->cfg, &m->grid, m->model, &m->source, &m->receiver));
fail:
  return status;
}

/* What the ledger holds of what the preflight counted: the store, and the image where the
 * preflight counted it (as taken: rounded to the strategy's granularity). */
static size_t ledger_counted(const rtm_migration_t *m) {
  size_t bytes = 0;
  for (int r = 0; r < m->ledger.count; ++r) {
    const rtm_mem_record_t *record = &m->ledger.records[r];
    const int image =
        strcmp(record->label, "image") == 0 || strcmp(record->label, "illumination") == 0;
    if (!image || m->fit.image)
      bytes += record->reserved_bytes ? record->reserved_bytes : record->bytes;
  }
  return bytes;
}

/* The image and the store, and what they took: on the device the drop of its free memory
 * (what the driver gave, whatever the ledger says), in host memory the ledger's. */
static int create_buffers(rtm_migration_t *m) {
  int status = RTM_OK;
  rtm_field_view_t view;
  size_t free_before = 0, free_after = 0;
  RTM_TRY(m->source.backend->view_field(m->source.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view));
  m->device = view.device;
  const rtm_reconstruction_plan_t plan = plan_of(m, &m->cfg, m->device);
  if (m->fit.on_device) RTM_TRY(rtm_mem_device_free_bytes(m->device, &free_before));
  RTM_TRY(rtm_image_create(&m->grid, m->device, image_strategy(&m->cfg, m->device), &m->ledger,
                           &m->image));
  /* the layer's image is zeroed when read (zero_layer): not summed there at each imaging step */
  rtm_image_keep_interior(m->image, m->source.boundary.width_cells);
  RTM_TRY(m->reconstruction->create(&plan, &m->reconstruction_state));
  if (m->reconstruction->held_bytes) /* what it chose to hold, for the report's estimate */
    m->fit.estimate = m->fit.image + m->reconstruction->held_bytes(m->reconstruction_state);
  if (m->fit.on_device) {
    RTM_TRY(rtm_mem_device_free_bytes(m->device, &free_after));
    m->measured_bytes = free_before > free_after ? free_before - free_after : 0;
  } else {
    m->measured_bytes = ledger_counted(m);
  }
  /* after the measure: they are no part of the reconstruction's store */
  if (m->gather_plan.lags > 0)
    RTM_TRY(rtm_gathers_create(&m->grid, &m->gather_plan, m->device, gathers_sources_stay(m),
                               &m->ledger, &m->gathers));
fail:
  return status;
}

int rtm_migration_create(const rtm_config_t *cfg, const rtm_grid_t *grid, const rtm_model_t *model,
                         rtm_migration_t **migration) {
  return rtm_migration_create_beside(cfg, grid, model, 0, "", migration);
}

int rtm_migration_create_beside(const rtm_config_t *cfg, const rtm_grid_t *grid,
                                const rtm_model_t *model, size_t host_bytes, const char *host_of,
                                rtm_migration_t **migration) {
  int status = RTM_OK;
  rtm_migration_t *m = calloc(1, sizeof *m);
  *migration = NULL;
  if (!m) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the migration");
  m->host_beside = host_bytes;
  snprintf(m->host_beside_of, sizeof m->host_beside_of, "%s", host_bytes ? host_of : "");
  RTM_TRY(rtm_dispersion_check_migration(cfg)); /* the app asks it too, before any work */
  m->grid = *grid;
  m->model = model;
  rtm_mem_ledger_init(&m->ledger);
  RTM_TRY(plan_imaging(m, cfg));
  RTM_TRY(preflight(m, cfg));
  /* steps that cannot image are not asked to: the store was planned without S's volume for
   * them (snapshots_read) */
  m->fuse_refused = !m->steps_image;
  RTM_TRY(create_propagators(m, cfg));
  RTM_TRY(create_buffers(m));
  *migration = m;
  return RTM_OK;
fail:
  rtm_migration_destroy(m);
  return status;
}

void rtm_migration_destroy(rtm_migration_t *m) {
  if (!m) return;
  if (m->reconstruction && m->reconstruction_state)
    m->reconstruction->destroy(m->reconstruction_state);
  rtm_gathers_destroy(m->gathers);
  rtm_image_destroy(m->image);
  rtm_propagator_destroy(&m->receiver);
  rtm_propagator_destroy(&m->source);
  rtm_mem_ledger_release(&m->ledger);
  free(m);
}

struct rtm_receiver_side {
  rtm_points_t adjoint; /* the receivers' taps times dt^2 v^2 / (1 + eta dt) */
  float *reversed;      /* [count][steps + 1], the gather back to front */
};

void rtm_receiver_side_destroy(rtm_receiver_side_t *side) {
  if (!side) return;
  rtm_points_release(&side->adjoint);
  free(side->reversed);
  free(side);
}

/* The receiver side's sources: the adjoint taps of the receivers and the gather reversed in
 * time (sample tau = observed sample steps - tau). */
int rtm_migration_receiver_side(const rtm_migration_t *m, const double *receivers_m, int count,
                                const float *observed, rtm_receiver_side_t **side_out) {
  int status = RTM_OK;
  rtm_points_t receivers = {0};
  const int samples = m->steps + 1;
  rtm_receiver_side_t *side = calloc(1, sizeof *side);
  *side_out = NULL;
  if (side)
    side->reversed = malloc(((size_t)count * samples > 0 ? (size_t)count * samples : 1) *
                            sizeof *side->reversed);
  if (!side || !side->reversed)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d reversed traces", count);
  for (int r = 0; r < count; ++r) {
    const float *trace = observed + (size_t)r * samples;
    float *back = side->reversed + (size_t)r * samples;
    for (int k = 0; k < samples; ++k)
      back[k] = trace[samples - 1 - k];
  }
  /* the operator the receivers recorded with (points.interpolation): injection is its
   * adjoint */
  const rtm_point_operator_t op = rtm_config_point_operator(&m->cfg);
  RTM_TRY(rtm_points_init_operator(&receivers, &m->grid, receivers_m, count, "receiver", &op));
  RTM_TRY(rtm_adjoint_receivers(&receivers, &m->grid, m->model, &m->receiver.boundary,
                                m->receiver.dt_s, &side->adjoint));
  *side_out = side;
  side = NULL;
fail:
  rtm_points_release(&receivers);
  rtm_receiver_side_destroy(side);
  return status;
}

/* The side handed to the receiver propagator's backend, its fields at rest. */
static int set_receiver_side(rtm_migration_t *m, const rtm_receiver_side_t *side) {
  int status = RTM_OK;
  const rtm_backend_t *backend = m->receiver.backend;
  RTM_TRY(backend->reset(m->receiver.state));
  RTM_TRY(backend->set_sources(m->receiver.state, &side->adjoint, side->reversed, m->steps + 1));
fail:
  return status;
}

static int drain(const rtm_propagator_t *prop) {
  return prop->backend->synchronize ? prop->backend->synchronize(prop->state) : RTM_OK;
}

int rtm_migration_wait(rtm_migration_t *m) {
  int status = RTM_OK;
  RTM_TRY(drain(&m->source));
  RTM_TRY(drain(&m->receiver));
fail:
  return status;
}

/* Forward: the source side to S(steps), the reconstruction told of every level. */
static int forward_pass(rtm_migration_t *m, rtm_migration_progress_t progress, void *context) {
  int status = RTM_OK;
  rtm_propagator_t *s = &m->source;
  for (int it = 0; it < m->steps; ++it) {
    if (m->reconstruction->before_forward)
      RTM_TRY(m->reconstruction->before_forward(m->reconstruction_state, s, it + 1));
    RTM_TRY(rtm_propagator_step(s, it, RTM_FORWARD)); /* with the z-slabs' exchange */
    RTM_TRY(m->reconstruction->after_forward(m->reconstruction_state, s, it + 1));
    if (progress) progress(context, it + 1);
  }
  RTM_TRY(drain(s));
fail:
  return status;
}

/* The imaging condition at time n taken by the receiver's next step, which reads R(n) at its
 * stencil's centre (image_next_step): no pass of its own over R, no wait for it. RTM_OK with
 * *taken 0 where the receiver's kernel cannot (remembered for the rest of the run). */
static int image_in_next_step(rtm_migration_t *m, const float *source, rtm_layout_t layout,
                              int *taken) {
  int status = RTM_OK;
  const rtm_propagator_t *r = &m->receiver;
  rtm_step_image_t request;
  *taken = 0;
  RTM_TRY(rtm_image_step_request(m->image, source, layout, &request));
  status = r->backend->image_next_step(r->state, &request);
  if (status == RTM_ERR_UNSUPPORTED) {
    m->fuse_refused = 1;
    return RTM_OK;
  }
  RTM_TRY(status);
  m->fused_pending = *taken = 1;
fail:
  return status;
}

/* Time n of the backward pass: S(n) from the reconstruction, and at an imaging step the
 * imaging condition with R(n) in place, or, where a receiver step follows (n > 1), in that
 * step. */
static int image_at(rtm_migration_t *m, int n, double *imaging_s, double *gathers_s) {
  int status = RTM_OK;
  const rtm_propagator_t *r = &m->receiver;
  const float *source = NULL;
  rtm_layout_t source_layout;
  rtm_field_view_t view;
  const int wanted = n % m->imaging_step == 0;
  /* The step that imaged S(n + 1) reads it where the reconstruction put it: the snapshots'
   * own slots, or a staging volume rewritten on the legacy stream, which waits for the
   * receiver's (blocking) stream; a reconstruction that steps the source side (boundary,
   * checkpoint) rewrites it on the source's stream, so that step is done first. */
  if (m->fused_pending && m->reconstruction != &rtm_reconstruction_snapshots) RTM_TRY(drain(r));
  m->fused_pending = 0;
  const int in_step = n > 1 && !m->fuse_refused && r->backend->image_next_step;
  /* or the reconstruction images S(n) from its store, in place of source_at's volume and the
   * accumulation (zfp blocks decoded as they are imaged) */
  int from_store =
      wanted && !in_step && !m->gathers && !m->store_images_refused && m->reconstruction->image_at;
  int taken = 0;
  if (!from_store) {
    RTM_TRY(m->reconstruction->source_at(m->reconstruction_state, &m->source, n, wanted, &source,
                                         &source_layout));
    if (!wanted) return RTM_OK;
    if (in_step) {
      /* a reconstruction that steps the source side (boundary, checkpoint) made S(n) on the
       * source's stream, which the receiver's does not wait for; the snapshots' forward pass
       * was drained, and their gets run on the legacy stream */
      if (m->reconstruction != &rtm_reconstruction_snapshots) RTM_TRY(drain(&m->source));
      RTM_TRY(image_in_next_step(m, source, source_layout, &taken));
      /* the gathers still want S(n) and R(n) now: the next step only reads them (H200, 8
       * shots at 512^3 with +-16 lags: the image apart cost 0.85 ms an imaging step) */
      if (taken && !m->gathers) return RTM_OK;
    }
  }
  /* both sides' queued steps done (the source side's include a recomputation's), so that
   * the clock below times the imaging condition alone and a recomputation counts as
   * backward time */
  RTM_TRY(rtm_migration_wait(m));
  const double start_s = rtm_wall_seconds();
  RTM_TRY(r->backend->view_field(r->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view));
  if (from_store) {
    status = m->reconstruction->image_at(m->reconstruction_state, n, m->image, view.padded,
                                         rtm_layout_padded(&m->grid));
    if (status == RTM_ERR_UNSUPPORTED) { /* its store stays what it is for the run */
      m->store_images_refused = 1;
      from_store = 0;
      status = RTM_OK;
      RTM_TRY(m->reconstruction->source_at(m->reconstruction_state, &m->source, n, wanted, &source,
                                           &source_layout));
    }
    RTM_TRY(status);
  }
  if (!from_store && !taken)
    RTM_TRY(rtm_image_accumulate(m->image, source, source_layout, view.padded,
                                 rtm_layout_padded(&m->grid)));
  if (m->gathers) {
    const double gathers_start_s = rtm_wall_seconds();
    RTM_TRY(rtm_gathers_accumulate(m->gathers, source, source_layout, view.padded,
                                   rtm_layout_padded(&m->grid)));
    *gathers_s += rtm_wall_seconds() - gathers_start_s;
  }
  if (m->device >= 0) RTM_TRY(rtm_imaging_cuda_synchronize()); /* the accumulation done */
  *imaging_s += rtm_wall_seconds() - start_s;
fail:
  return status;
}

static int finish_shot(rtm_migration_t *m) {
  if (!m->reconstruction->finish_shot) return RTM_OK;
  return m->reconstruction->finish_shot(m->reconstruction_state, &m->source);
}

/* The sources of every imaging step held as volumes where the image is (fp32 snapshots):
 * their count, else 0. */
static int stored_sources(const rtm_migration_t *m, const float **first, size_t *stride) {
  const rtm_reconstruction_ops_t *way = m->reconstruction;
  const int count =
      way->stored_sources ? way->stored_sources(m->reconstruction_state, first, stride) : 0;
  return count == m->steps / m->imaging_step ? count : 0;
}

/* Whether the gathers read S in place: a store of fp32 volumes on the GPU keeps every S
 * through the backward pass (rtm_gathers_create). */
static int gathers_sources_stay(const rtm_migration_t *m) {
  const float *first = NULL;
  size_t stride = 0;
  return m->device >= 0 && stored_sources(m, &first, &stride) > 0;
}

/* The illumination of the stored sources in one pass, timed as imaging: each read once,
 * where the imaging steps read and wrote the illumination, 8 bytes a cell each. */
static int illuminate(rtm_migration_t *m, const float *first, size_t stride, int count,
                      double *imaging_s) {
  int status = RTM_OK;
  RTM_TRY(rtm_migration_wait(m));
  const double start_s = rtm_wall_seconds();
  RTM_TRY(rtm_image_illuminate(m->image, first, stride, count));
  if (m->device >= 0) RTM_TRY(rtm_imaging_cuda_synchronize());
  *imaging_s += rtm_wall_seconds() - start_s;
fail:
  return status;
}

/* Where the stored sources give the illumination (fp32 snapshots beside the fields), it is
 * made in one pass once the forward pass has stored them (*lit 1; the backward pass then
 * adds the image alone), else *lit 0. */
static int illuminate_stored(rtm_migration_t *m, double *imaging_s, int *lit) {
  int status = RTM_OK;
  const float *stored = NULL;
  size_t stride = 0;
  const int volumes = stored_sources(m, &stored, &stride);
  *lit = volumes > 0;
  /* the backward pass images the last one first: so does the pass, bit for bit */
  if (volumes > 0) RTM_TRY(illuminate(m, stored, stride, volumes, imaging_s));
fail:
  return status;
}

/* Backward: after receiver step tau the current level is R(steps - tau). `lit`: the
 * illumination made from the store already (illuminate_stored), the image alone added. */
static int backward_pass(rtm_migration_t *m, int lit, rtm_migration_progress_t progress,
                         void *context, double *imaging_s, double *gathers_s) {
  int status = RTM_OK;
  rtm_propagator_t *r = &m->receiver;
  m->fused_pending = 0;
  rtm_image_defer_illumination(m->image, lit);
  for (int tau = 0; tau < m->steps; ++tau) {
    RTM_TRY(rtm_propagator_step(r, tau, RTM_FORWARD));
    RTM_TRY(image_at(m, m->steps - tau, imaging_s, gathers_s));
    if (progress) progress(context, m->steps + tau + 1);
  }
  if (m->gathers) { /* the steps they hold (a pass's remainder), timed as imaging */
    const double gathers_start_s = rtm_wall_seconds();
    RTM_TRY(rtm_gathers_flush(m->gathers));
    if (m->device >= 0) RTM_TRY(rtm_imaging_cuda_synchronize());
    const double flush_s = rtm_wall_seconds() - gathers_start_s;
    *gathers_s += flush_s;
    *imaging_s += flush_s;
  }
  RTM_TRY(finish_shot(m));
  RTM_TRY(drain(r));
fail:
  rtm_image_defer_illumination(m->image, 0);
  return status;
}

int rtm_migration_shot_side(rtm_migration_t *m, const double source_m[3],
                            rtm_receiver_side_t **side, rtm_migration_progress_t progress,
                            void *progress_context, rtm_shot_timing_t *timing) {
  int status = RTM_OK;
  rtm_shot_timing_t t = {0.0, 0.0, 0.0, 0, 0.0};
  RTM_TRY(rtm_propagator_set_shot(&m->source, &m->cfg, source_m));
  RTM_TRY(set_receiver_side(m, *side));
  rtm_receiver_side_destroy(*side); /* the backend holds its copy */
  *side = NULL;
  double start_s = rtm_wall_seconds();
  RTM_TRY(forward_pass(m, progress, progress_context));
  int lit = 0;
  /* the pass waits for the forward steps the GPU still runs: theirs, the forward's time */
  RTM_TRY(illuminate_stored(m, &t.imaging_s, &lit));
  t.forward_s = rtm_wall_seconds() - start_s - t.imaging_s;
  if (lit && m->lit) RTM_TRY(m->lit(m->lit_context)); /* the caller's time, not the shot's */
  const double imaging_before_s = t.imaging_s;        /* the illumination's pass */
  start_s = rtm_wall_seconds();
  RTM_TRY(backward_pass(m, lit, progress, progress_context, &t.imaging_s, &t.gathers_s));
  t.backward_s = rtm_wall_seconds() - start_s - (t.imaging_s - imaging_before_s);
  if (m->reconstruction->recomputed_steps)
    t.recomputed_steps = m->reconstruction->recomputed_steps(m->reconstruction_state);
  if (timing) *timing = t;
fail:
  return status;
}

int rtm_migration_shot(rtm_migration_t *m, const double source_m[3], const double *receivers_m,
                       int count, const float *observed, rtm_migration_progress_t progress,
                       void *progress_context, rtm_shot_timing_t *timing) {
  rtm_receiver_side_t *side = NULL;
  int status = rtm_migration_receiver_side(m, receivers_m, count, observed, &side);
  if (status == RTM_OK)
    status = rtm_migration_shot_side(m, source_m, &side, progress, progress_context, timing);
  rtm_receiver_side_destroy(side); /* NULL once handed over */
  return status;
}

/* Zeroes a dense volume outside the non-absorbing interior (`width` cells inside every
 * face). There the source wavefield is the damped one (snapshots), or one the forward pass
 * never had (boundary does not rebuild the layer), so the image means nothing there. Zeroed
 * for every reconstruction, their images agree; the Laplacian filter that follows works
 * inside the interior, mirrored at its faces (rtm_image_laplacian), so that the cut rings no
 * false reflector along the interior's edge. */
static void zero_layer(const rtm_grid_t *g, int width, float *dense) {
  const long nx = g->n[0], ny = g->n[1];
  const long x_low = width < nx ? width : nx, x_high = nx - width > x_low ? nx - width : x_low;
  if (!dense || width <= 0) return;
  for (long iz = 0; iz < g->nz_local; ++iz) {
    const long z = g->z_offset + iz;
    const int z_inside = z >= width && z < g->n[2] - width;
    for (long iy = 0; iy < ny; ++iy) {
      float *row = dense + ((size_t)iz * (size_t)ny + (size_t)iy) * (size_t)nx;
      if (!z_inside || iy < width || iy >= ny - width) {
        memset(row, 0, (size_t)nx * sizeof *row);
        continue;
      }
      memset(row, 0, (size_t)x_low * sizeof *row);
      memset(row + x_high, 0, (size_t)(nx - x_high) * sizeof *row);
    }
  }
}

static int same_layout(rtm_layout_t a, rtm_layout_t b) {
  return a.origin == b.origin && a.stride_y == b.stride_y && a.stride_z == b.stride_z;
}

/* A volume the reconstruction handed back (in the fields' memory, dense or padded) as a dense
 * host array; a device's padded volume comes through the host array `padded`. */
static int source_to_host(const rtm_migration_t *m, const float *volume, rtm_layout_t layout,
                          float *padded, float *dense) {
  int status = RTM_OK;
  const rtm_grid_t *g = &m->grid;
  const int is_dense = same_layout(layout, rtm_layout_dense(g));
  if (!is_dense && !same_layout(layout, rtm_layout_padded(g)))
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm.reconstruction = %s handed back a volume of an unknown layout",
             m->reconstruction->name);
  if (m->device < 0 && is_dense) {
    memcpy(dense, volume, rtm_grid_interior_cells(g) * sizeof *dense);
  } else if (m->device < 0) {
    rtm_grid_pack(g, volume, dense);
  } else if (is_dense) {
    RTM_TRY(rtm_imaging_cuda_read(dense, volume, rtm_grid_interior_cells(g) * sizeof *dense));
  } else {
    RTM_TRY(rtm_imaging_cuda_read(padded, volume, g->padded_cells * sizeof *padded));
    rtm_grid_pack(g, padded, dense);
  }
fail:
  return status;
}

int rtm_migration_replay_source(rtm_migration_t *m, const double source_m[3],
                                rtm_migration_visit_t visit, void *context) {
  int status = RTM_OK;
  float *dense = malloc(rtm_grid_interior_cells(&m->grid) * sizeof *dense);
  float *padded = m->device >= 0 ? malloc(m->grid.padded_cells * sizeof *padded) : NULL;
  const float *volume = NULL;
  rtm_layout_t layout;
  if (!dense || (m->device >= 0 && !padded))
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the replayed source wavefield");
  RTM_TRY(rtm_propagator_set_shot(&m->source, &m->cfg, source_m));
  RTM_TRY(forward_pass(m, NULL, NULL));
  for (int n = m->steps; n >= 1; --n) {
    const int wanted = n % m->imaging_step == 0;
    RTM_TRY(m->reconstruction->source_at(m->reconstruction_state, &m->source, n, wanted, &volume,
                                         &layout));
    if (!wanted) continue;
    RTM_TRY(source_to_host(m, volume, layout, padded, dense));
    RTM_TRY(visit(context, n, dense));
  }
  RTM_TRY(finish_shot(m));
fail:
  free(padded);
  free(dense);
  return status;
}

int rtm_migration_read(rtm_migration_t *m, float *image, float *illumination) {
  int status = RTM_OK;
  RTM_TRY(rtm_image_read(m->image, image, illumination));
  zero_layer(&m->grid, m->source.boundary.width_cells, image);
  zero_layer(&m->grid, m->source.boundary.width_cells, illumination);
fail:
  return status;
}

int rtm_migration_use_device(const rtm_migration_t *m) {
  return m->device < 0 ? RTM_OK : rtm_imaging_cuda_use_device(m->device);
}

int rtm_migration_pin_host(const rtm_migration_t *m, float *image, float *illumination,
                           size_t bytes, int *pinned) {
  int status = RTM_OK;
  *pinned = 0;
  if (m->device < 0) return RTM_OK;
  RTM_TRY(rtm_imaging_cuda_use_device(m->device)); /* not device 0's context by default */
  if (rtm_mem_host_try_pin(image, bytes) != RTM_OK) return RTM_OK;
  if (rtm_mem_host_try_pin(illumination, bytes) != RTM_OK) {
    rtm_mem_host_unpin(image);
    return RTM_OK;
  }
  *pinned = 1;
fail:
  return status;
}

void rtm_migration_on_lit(rtm_migration_t *m, rtm_migration_lit_t lit, void *context) {
  m->lit = lit;
  m->lit_context = context;
}

int rtm_migration_pin_gathers(const rtm_migration_t *m, float *gathers, int *pinned) {
  int status = RTM_OK;
  *pinned = 0;
  if (m->device < 0 || !m->gathers) return RTM_OK;
  RTM_TRY(rtm_imaging_cuda_use_device(m->device));
  const size_t bytes = rtm_gather_plan_cells(&m->gather_plan, m->grid.nz_local) * sizeof(float);
  *pinned = rtm_mem_host_try_pin(gathers, bytes) == RTM_OK;
fail:
  return status;
}

int rtm_migration_hold(rtm_migration_t *m, float *image, float *illumination, float *gathers) {
  int status = RTM_OK;
  if (gathers && !m->gathers)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_migration_hold: the migration takes no gathers");
  m->held_image = image;
  m->held_illumination = illumination;
  m->held_gathers = gathers;
  RTM_TRY(rtm_image_hold(m->image, image, illumination));
  if (gathers) RTM_TRY(rtm_gathers_hold(m->gathers, gathers));
fail:
  return status;
}

int rtm_migration_hold_wait(rtm_migration_t *m) {
  int status = RTM_OK;
  if (!m) return RTM_OK; /* a run stopped before its migration was made */
  if (m->held_gathers) RTM_TRY(rtm_gathers_hold_wait(m->gathers));
  m->held_gathers = NULL;
  RTM_TRY(rtm_image_hold_wait(m->image));
  zero_layer(&m->grid, m->source.boundary.width_cells, m->held_image);
  zero_layer(&m->grid, m->source.boundary.width_cells, m->held_illumination);
  m->held_image = m->held_illumination = NULL; /* zeroed once */
fail:
  return status;
}

int rtm_migration_clear(rtm_migration_t *m) {
  int status = RTM_OK;
  RTM_TRY(rtm_image_clear(m->image));
  if (m->gathers) RTM_TRY(rtm_gathers_clear(m->gathers));
fail:
  return status;
}

int rtm_migration_slab_planes(void) {
  return RTM_CODEC_BLOCK_PLANES;
}

size_t rtm_migration_gathers_held_bytes(const rtm_migration_t *m) {
  return m->gathers ? rtm_gathers_held_bytes(&m->grid, m->device, gathers_sources_stay(m)) : 0;
}

const rtm_gather_plan_t *rtm_migration_gather_plan(const rtm_migration_t *m) {
  return m->gathers ? &m->gather_plan : NULL;
}

int rtm_migration_gathers_read(rtm_migration_t *m, float *gathers) {
  if (!m->gathers) {
    rtm_log_error("rtm_migration_gathers_read: the migration takes no gathers (rtm.offset_lags)");
    return RTM_ERR_INTERNAL;
  }
  return rtm_gathers_read(m->gathers, gathers);
}

double rtm_migration_dt(const rtm_migration_t *m) {
  return m->source.dt_s;
}

int rtm_migration_steps(const rtm_migration_t *m) {
  return m->steps;
}

int rtm_migration_imaging_step(const rtm_migration_t *m) {
  return m->imaging_step;
}

double rtm_migration_velocity_at(const rtm_migration_t *m, const double position_m[3]) {
  rtm_points_t point = {0};
  double v = 0.0;
  if (rtm_points_init(&point, &m->grid, position_m, 1, "mute point") == RTM_OK &&
      rtm_points_mean(&point, 0, &m->grid, m->model->vp, 0, &v) != RTM_OK)
    v = 0.0;
  rtm_points_release(&point);
  return v;
}

double rtm_migration_mute_velocity(const rtm_migration_t *m, const double source_m[3]) {
  const rtm_config_t *cfg = &m->cfg;
  if (!cfg->rtm.mute) return NAN;
  return isnan(cfg->rtm.mute_velocity_m_s) ? rtm_migration_velocity_at(m, source_m)
                                           : cfg->rtm.mute_velocity_m_s;
}

void rtm_migration_prepare(const rtm_migration_t *m, const double source_m[3], double velocity,
                           const double *receivers_m, int count, float *observed) {
  const rtm_config_t *cfg = &m->cfg;
  const double f = cfg->source.frequency_hz;
  if (cfg->rtm.mute) {
    const double delay = isnan(cfg->source.delay_s) ? 1.2 / f : cfg->source.delay_s;
    const double taper = isnan(cfg->rtm.mute_taper_s) ? 1.5 / f : cfg->rtm.mute_taper_s;
    rtm_mute_direct(observed, count, m->steps + 1, m->source.dt_s, source_m, receivers_m, velocity,
                    delay, taper);
  }
  if (cfg->rtm.phase_correction)
    rtm_phase_correction(observed, count, m->steps + 1, m->source.dt_s);
}

int rtm_migration_memory(const rtm_migration_t *m, rtm_mem_ledger_t *memory) {
  const rtm_mem_ledger_t *parts[3] = {&m->source.ledger, &m->receiver.ledger, &m->ledger};
  const char *const prefix[3] = {"source ", "receiver ", ""};
  rtm_mem_ledger_init(memory);
  const int count = parts[0]->count + parts[1]->count + parts[2]->count;
  memory->records = malloc((size_t)(count > 0 ? count : 1) * sizeof *memory->records);
  if (!memory->records) {
    rtm_log_error("out of memory for the migration's memory report");
    return RTM_ERR_NOMEM;
  }
  memory->capacity = count;
  for (int p = 0; p < 3; ++p)
    for (int r = 0; r < parts[p]->count; ++r) {
      rtm_mem_record_t *record = &memory->records[memory->count++];
      *record = parts[p]->records[r];
      snprintf(record->label, sizeof record->label, "%s%s", prefix[p], parts[p]->records[r].label);
      memory->total_bytes += record->bytes;
    }
  return RTM_OK;
}

int rtm_migration_phase_seconds(rtm_migration_t *m, double seconds[RTM_PHASE_COUNT],
                                double *halo_s) {
  int status = RTM_OK;
  double source[RTM_PHASE_COUNT], receiver[RTM_PHASE_COUNT];
  RTM_TRY(rtm_propagator_phase_seconds(&m->source, source));
  RTM_TRY(rtm_propagator_phase_seconds(&m->receiver, receiver));
  for (int p = 0; p < RTM_PHASE_COUNT; ++p)
    seconds[p] = source[p] + receiver[p];
  *halo_s = m->source.halo_s + m->receiver.halo_s;
fail:
  return status;
}

const char *rtm_migration_backend(const rtm_migration_t *m) {
  return m->source.backend->name;
}

const char *rtm_migration_reconstruction(const rtm_migration_t *m) {
  return m->reconstruction->name;
}

rtm_precision_t rtm_migration_snapshot_precision(const rtm_migration_t *m) {
  return m->snapshot_precision;
}

int rtm_migration_snapshot_rate(const rtm_migration_t *m) {
  return m->snapshot_rate;
}

const char *rtm_migration_snapshot_format(const rtm_migration_t *m) {
  if (m->reconstruction != &rtm_reconstruction_snapshots || !m->reconstruction_state) return NULL;
  return rtm_reconstruction_snapshots_format(m->reconstruction_state);
}

double rtm_migration_snapshot_error(const rtm_migration_t *m) {
  if (m->reconstruction != &rtm_reconstruction_snapshots || !m->reconstruction_state) return -1.0;
  return rtm_reconstruction_snapshots_round_trip(m->reconstruction_state);
}

void rtm_migration_store_bytes(const rtm_migration_t *m, size_t *estimate, size_t *measured,
                               int *on_device) {
  *estimate = m->fit.estimate;
  *measured = m->measured_bytes;
  *on_device = m->fit.on_device;
}

void rtm_migration_describe(const rtm_migration_t *m, char *text, size_t size) {
  text[0] = '\0';
  if (m->source.backend->describe) m->source.backend->describe(m->source.state, text, size);
}
