/* The schema, defaults, --set overrides, "auto" values, cross-key validation, the memory
 * strategy lookup and the printed schema. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config_test_util.h"
#include "rtm_config.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

/* Sections stay contiguous (the echo prints each header once), keys are unique, each field
 * is filled by one row only, and sizes fit the type. */
static void test_schema_is_consistent(void **state) {
  (void)state;
  size_t rows = 0;
  for (const rtm_cfg_entry_t *a = rtm_config_schema; a->section; ++a, ++rows) {
    assert_non_null(a->key);
    assert_non_null(a->default_text);
    assert_non_null(a->help);
    assert_true(a->offset + a->size <= offsetof(rtm_config_t, path));
    switch (a->type) {
    case RTM_CFG_INT:
    case RTM_CFG_INT_AUTO:
    case RTM_CFG_BOOL:
    case RTM_CFG_ENUM: assert_int_equal(a->size, sizeof(int)); break;
    case RTM_CFG_DOUBLE:
    case RTM_CFG_DOUBLE_AUTO: assert_int_equal(a->size, sizeof(double)); break;
    case RTM_CFG_STRING: assert_true(a->size >= RTM_CONFIG_NAME_MAX); break;
    }
    if (a->type == RTM_CFG_ENUM) assert_non_null(a->choices);
    for (const rtm_cfg_entry_t *b = rtm_config_schema; b < a; ++b) {
      if (strcmp(a->section, b->section) == 0 && strcmp(a->key, b->key) == 0)
        fail_msg("%s.%s appears twice", a->section, a->key);
      if (a->offset < b->offset + b->size && b->offset < a->offset + a->size)
        fail_msg("%s.%s and %s.%s share bytes", a->section, a->key, b->section, b->key);
      /* a section seen before must be the one just before this row */
      if (strcmp(a->section, b->section) == 0 && strcmp(a->section, (a - 1)->section) != 0)
        fail_msg("section [%s] is split", a->section);
    }
  }
  /* The keys: 9 grid, 4 time, 10 model, 3 physics, 6 source, 9 shots, 10 receivers,
   * 2 points, 3 boundary, 2 snapshots, 7 output, 2 backend, 5 kernel, 7 memory, 22 rtm, 2 bench,
   * 1 traces, 4 mpi. */
  assert_int_equal(rows, 108);
}

/* Every default is legal text for its own row (rtm_config_defaults parses them). */
static void test_every_default_parses(void **state) {
  (void)state;
  char assignment[256];
  rtm_config_t cfg;
  rtm_config_defaults(&cfg);
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    snprintf(assignment, sizeof assignment, "%s.%s=%s", row->section, row->key,
             row->default_text[0] ? row->default_text : "\"\"");
    if (rtm_config_set(&cfg, assignment) != RTM_OK) fail_msg("default refused: %s", assignment);
  }
}

static void test_defaults(void **state) {
  (void)state;
  rtm_config_t cfg;
  memset(&cfg, 0x7f, sizeof cfg);
  rtm_config_defaults(&cfg);
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(cfg.grid.n[a], 100);
    assert_true(cfg.grid.spacing_m[a] == 10.0);
    assert_true(cfg.grid.origin_m[a] == 0.0);
    assert_true(isnan(cfg.source.position_m[a]));
  }
  assert_int_equal(cfg.time.steps, 500);
  assert_true(isnan(cfg.time.dt_s));
  assert_true(cfg.time.cfl == 0.4);
  assert_int_equal(cfg.time.dispersion_correction, RTM_DISPERSION_FULL); /* accurate by default */
  assert_string_equal(cfg.model.file, "");
  assert_true(cfg.model.vp_m_s == 2000.0);
  assert_true(cfg.model.epsilon == 0.0 && cfg.model.delta == 0.0);
  assert_true(cfg.model.theta_deg == 0.0 && cfg.model.phi_deg == 0.0);
  assert_int_equal(cfg.physics.equation, RTM_EQUATION_ISO);
  assert_true(cfg.physics.sigma == 0.75);
  assert_true(cfg.source.frequency_hz == 15.0);
  assert_true(isnan(cfg.source.delay_s));
  assert_true(cfg.source.amplitude == 1.0);
  assert_int_equal(cfg.receivers.layout, RTM_RECEIVERS_PLANE);
  assert_string_equal(cfg.receivers.file, "");
  assert_true(isnan(cfg.receivers.z_m) && isnan(cfg.receivers.x_first_m) &&
              isnan(cfg.receivers.x_step_m) && isnan(cfg.receivers.y_first_m) &&
              isnan(cfg.receivers.y_step_m));
  assert_int_equal(cfg.receivers.x_count, 0);
  assert_int_equal(cfg.receivers.y_count, 0);
  assert_string_equal(cfg.receivers.fields, "p");
  assert_int_equal(cfg.boundary.kind, RTM_BOUNDARY_SPONGE);
  assert_int_equal(cfg.boundary.width_cells, 20);
  assert_true(cfg.boundary.reflection == 1e-2);
  assert_int_equal(cfg.snapshots.every_steps, 0);
  assert_string_equal(cfg.output.dir, "out");
  assert_string_equal(cfg.output.name, "rtm3d");
  assert_true(isnan(cfg.output.trace_dt_s));
  assert_int_equal(cfg.output.stream_traces, RTM_STREAM_TRACES_AUTO);
  assert_int_equal(cfg.output.stream_window, 0);
  assert_run_keys(&cfg, &(run_keys_t){.backend = "auto",
                                      .device = 0,
                                      .halo = "auto", /* the measured winners for the GPU */
                                      .stages = RTM_CFG_AUTO_INT,
                                      .zblock = RTM_CFG_AUTO_INT,
                                      .block_x = RTM_CFG_AUTO_INT,
                                      .block_y = RTM_CFG_AUTO_INT,
                                      .strategy = "auto",
                                      .wavefield = "",
                                      .model = "",
                                      .imaging = "",
                                      .require_compression = 0,
                                      .model_precision = RTM_PRECISION_FP32,
                                      .warmup_steps = 10,
                                      .bench_steps = 50,
                                      .pipeline = "graph"});
  assert_true(cfg.memory.limit_gb == 0.0);                        /* all that is free */
  assert_int_equal(cfg.rtm.reconstruction, RTM_RECONSTRUCT_AUTO); /* the fastest that fits */
  assert_true(cfg.rtm.resume_every_s == 600.0); /* the resume state every ten minutes */
  assert_int_equal(cfg.mpi.exchange, RTM_EXCHANGE_OVERLAP);
  assert_int_equal(cfg.mpi.transport, RTM_TRANSPORT_AUTO);
  assert_string_equal(cfg.path, "");
  assert_int_equal(rtm_config_validate(&cfg), RTM_OK);
}

/* Each key lands in the struct field its name promises (the offsets in the table): every key
 * is set once, in one config (set_every_key), and the tests below read the fields section by
 * section. */
static const char *const every_key[] = {"grid.nx=11",
                                        "grid.ny=12",
                                        "grid.nz=13",
                                        "grid.dx=1.5",
                                        "grid.dy=2.5",
                                        "grid.dz=3.5",
                                        "grid.ox=-1",
                                        "grid.oy=-2",
                                        "grid.oz=-3",
                                        "time.steps=7",
                                        "time.dt=0.002",
                                        "time.cfl=0.25",
                                        "model.file=m.h5",
                                        "model.vp=1500",
                                        "model.epsilon=0.3",
                                        "model.delta=-0.2",
                                        "model.theta=45",
                                        "model.phi=90",
                                        "physics.equation=vti",
                                        "physics.sigma=2",
                                        "source.x=4",
                                        "source.y=5",
                                        "source.z=6",
                                        "source.frequency=8",
                                        "source.delay=0.2",
                                        "source.amplitude=3",
                                        "receivers.layout=file",
                                        "receivers.file=r.txt",
                                        "receivers.z=9",
                                        "receivers.x_first=10",
                                        "receivers.x_step=11",
                                        "receivers.x_count=12",
                                        "receivers.y_first=13",
                                        "receivers.y_step=14",
                                        "receivers.y_count=15",
                                        "receivers.fields=p,q",
                                        "boundary.type=sponge",
                                        "boundary.width=5",
                                        "boundary.reflection=0.01",
                                        "snapshots.every=3",
                                        "output.dir=d",
                                        "output.name=n",
                                        "output.trace_dt=0.008",
                                        "output.stream_traces=off",
                                        "output.stream_window=7",
                                        "backend.name=cuda",
                                        "backend.device=2",
                                        "kernel.halo=sync",
                                        "kernel.stages=3",
                                        "kernel.zblock=64",
                                        "kernel.block_x=128",
                                        "kernel.block_y=4",
                                        "memory.strategy=host",
                                        "memory.wavefield=vmm",
                                        "memory.model=device",
                                        "memory.imaging=managed",
                                        "memory.require_compression=true",
                                        "memory.model_precision=fp16",
                                        "memory.limit_gb=2.5",
                                        "bench.warmup=1",
                                        "bench.steps=2",
                                        "traces.pipeline=streams",
                                        "mpi.exchange=blocking",
                                        "mpi.transport=staged",
                                        "rtm.resume_every=0"};

static int set_every_key(void **state) {
  rtm_config_t *cfg = malloc(sizeof *cfg);
  if (!cfg) return -1;
  rtm_config_defaults(cfg);
  *state = cfg;
  for (size_t i = 0; i < sizeof every_key / sizeof every_key[0]; ++i)
    if (rtm_config_set(cfg, every_key[i]) != RTM_OK) {
      print_error("--set %s refused\n", every_key[i]);
      return -1;
    }
  return 0;
}

static int free_state(void **state) {
  free(*state);
  return 0;
}

static void test_set_lands_in_grid_time_model_fields(void **state) {
  const rtm_config_t *cfg = *state;
  assert_int_equal(cfg->grid.n[0], 11);
  assert_int_equal(cfg->grid.n[1], 12);
  assert_int_equal(cfg->grid.n[2], 13);
  assert_true(cfg->grid.spacing_m[0] == 1.5 && cfg->grid.spacing_m[1] == 2.5 &&
              cfg->grid.spacing_m[2] == 3.5);
  assert_true(cfg->grid.origin_m[0] == -1 && cfg->grid.origin_m[1] == -2 &&
              cfg->grid.origin_m[2] == -3);
  assert_int_equal(cfg->time.steps, 7);
  assert_true(cfg->time.dt_s == 0.002 && cfg->time.cfl == 0.25);
  assert_string_equal(cfg->model.file, "m.h5");
  assert_true(cfg->model.vp_m_s == 1500 && cfg->model.epsilon == 0.3 && cfg->model.delta == -0.2);
  assert_true(cfg->model.theta_deg == 45 && cfg->model.phi_deg == 90);
  assert_int_equal(cfg->physics.equation, RTM_EQUATION_VTI);
  assert_true(cfg->physics.sigma == 2);
}

static void test_set_lands_in_source_receiver_output_fields(void **state) {
  const rtm_config_t *cfg = *state;
  assert_true(cfg->source.position_m[0] == 4 && cfg->source.position_m[1] == 5 &&
              cfg->source.position_m[2] == 6);
  assert_true(cfg->source.frequency_hz == 8 && cfg->source.delay_s == 0.2 &&
              cfg->source.amplitude == 3);
  assert_int_equal(cfg->receivers.layout, RTM_RECEIVERS_FILE);
  assert_string_equal(cfg->receivers.file, "r.txt");
  assert_true(cfg->receivers.z_m == 9 && cfg->receivers.x_first_m == 10 &&
              cfg->receivers.x_step_m == 11);
  assert_int_equal(cfg->receivers.x_count, 12);
  assert_true(cfg->receivers.y_first_m == 13 && cfg->receivers.y_step_m == 14);
  assert_int_equal(cfg->receivers.y_count, 15);
  assert_string_equal(cfg->receivers.fields, "p,q");
  assert_int_equal(cfg->boundary.width_cells, 5);
  assert_true(cfg->boundary.reflection == 0.01);
  assert_int_equal(cfg->snapshots.every_steps, 3);
  assert_string_equal(cfg->output.dir, "d");
  assert_string_equal(cfg->output.name, "n");
  assert_true(cfg->output.trace_dt_s == 0.008);
  assert_int_equal(cfg->output.stream_traces, RTM_STREAM_TRACES_OFF);
  assert_int_equal(cfg->output.stream_window, 7);
}

static void test_set_lands_in_run_fields(void **state) {
  assert_run_keys(*state, &(run_keys_t){.backend = "cuda",
                                        .device = 2,
                                        .halo = "sync",
                                        .stages = 3,
                                        .zblock = 64,
                                        .block_x = 128,
                                        .block_y = 4,
                                        .strategy = "host",
                                        .wavefield = "vmm",
                                        .model = "device",
                                        .imaging = "managed",
                                        .require_compression = 1,
                                        .model_precision = RTM_PRECISION_FP16,
                                        .warmup_steps = 1,
                                        .bench_steps = 2,
                                        .pipeline = "streams"});
  assert_true(((const rtm_config_t *)*state)->memory.limit_gb == 2.5);
  assert_int_equal(((const rtm_config_t *)*state)->mpi.exchange, RTM_EXCHANGE_BLOCKING);
  assert_int_equal(((const rtm_config_t *)*state)->mpi.transport, RTM_TRANSPORT_STAGED);
  assert_true(((const rtm_config_t *)*state)->rtm.resume_every_s == 0.0);
}

/* Whitespace around the parts, quotes, every boolean spelling, later --set wins. */
static void test_set_forms(void **state) {
  (void)state;
  rtm_config_t cfg;
  rtm_config_defaults(&cfg);
  assert_int_equal(rtm_config_set(&cfg, "  grid.nx =  64 "), RTM_OK);
  assert_int_equal(cfg.grid.n[0], 64);
  assert_int_equal(rtm_config_set(&cfg, "grid.nx=65"), RTM_OK);
  assert_int_equal(cfg.grid.n[0], 65);
  assert_int_equal(rtm_config_set(&cfg, "output.dir=\" spaced dir\""), RTM_OK);
  assert_string_equal(cfg.output.dir, " spaced dir");
  assert_int_equal(rtm_config_set(&cfg, "model.file=a=b.h5"), RTM_OK); /* first '=' splits */
  assert_string_equal(cfg.model.file, "a=b.h5");
  static const char *const truths[] = {"true", "YES", "On", "1"};
  static const char *const falsehoods[] = {"false", "no", "OFF", "0"};
  char text[64];
  for (int i = 0; i < 4; ++i) {
    snprintf(text, sizeof text, "memory.require_compression=%s", truths[i]);
    assert_int_equal(rtm_config_set(&cfg, text), RTM_OK);
    assert_int_equal(cfg.memory.require_compression, 1);
    snprintf(text, sizeof text, "memory.require_compression=%s", falsehoods[i]);
    assert_int_equal(rtm_config_set(&cfg, text), RTM_OK);
    assert_int_equal(cfg.memory.require_compression, 0);
  }
  /* an integer key that takes auto: a number, then auto again, echoed as written */
  assert_int_equal(rtm_config_set(&cfg, "kernel.stages=3"), RTM_OK);
  assert_int_equal(cfg.kernel.stages, 3);
  assert_int_equal(rtm_config_set(&cfg, "kernel.stages=AUTO"), RTM_OK);
  assert_int_equal(cfg.kernel.stages, RTM_CFG_AUTO_INT);
  char *echo = rtm_config_echo_string(&cfg);
  assert_non_null(echo);
  assert_non_null(strstr(echo, "stages = auto"));
  free(echo);
}

/* Two echoes of configs that differ only in rtm.resume_every, output.overwrite,
 * mpi.timeout_s and mpi.exchange compare equal once the pacing
 * keys are dropped; in any other key they still differ. The drop reads the section: a
 * resume_every line outside [rtm] stays. */
static void test_drop_pacing(void **state) {
  (void)state;
  rtm_config_t a, b;
  rtm_config_defaults(&a);
  rtm_config_defaults(&b);
  assert_int_equal(rtm_config_set(&b, "rtm.resume_every=0"), RTM_OK);
  /* --force (a run stopped by --max-shots resumed with it) and the ranks' patience too */
  assert_int_equal(rtm_config_set(&b, "output.overwrite=true"), RTM_OK);
  assert_int_equal(rtm_config_set(&b, "mpi.timeout_s=5"), RTM_OK);
  assert_int_equal(rtm_config_set(&b, "mpi.exchange=blocking"), RTM_OK);
  char *echo_a = rtm_config_echo_string(&a), *echo_b = rtm_config_echo_string(&b);
  assert_non_null(echo_a);
  assert_non_null(echo_b);
  assert_string_not_equal(echo_a, echo_b);
  rtm_config_drop_pacing(echo_a);
  rtm_config_drop_pacing(echo_b);
  assert_string_equal(echo_a, echo_b);
  assert_null(strstr(echo_a, "resume_every"));
  assert_non_null(strstr(echo_a, "[rtm]\nobserved = "));
  free(echo_b);
  assert_int_equal(rtm_config_set(&b, "rtm.laplacian=false"), RTM_OK);
  echo_b = rtm_config_echo_string(&b);
  assert_non_null(echo_b);
  rtm_config_drop_pacing(echo_b);
  assert_string_not_equal(echo_a, echo_b);
  free(echo_a);
  free(echo_b);
  char text[] = "[mpi]\nresume_every = 3\n[rtm]\nresume_every = 600\nlaplacian = true\n";
  rtm_config_drop_pacing(text);
  assert_string_equal(text, "[mpi]\nresume_every = 3\n[rtm]\nlaplacian = true\n");
}

/* Each refused override leaves cfg as it was, returns RTM_ERR_CONFIG and names the whole
 * --set argument and the reason. */
static void test_set_errors(void **state) {
  (void)state;
  static const struct {
    const char *assignment;
    const char *message;
  } cases[] = {
      {"grid.nx=abc", "--set grid.nx=abc: not an integer; expected an integer in [1, 100000]"},
      {"grid.nx=0", "--set grid.nx=0: out of range; expected an integer in [1, 100000]"},
      {"grid.nx=12abc", "--set grid.nx=12abc: unexpected \"abc\" after the number"},
      {"grid.nx=", "--set grid.nx=: empty value"},
      {"grid.dx=-1", "--set grid.dx=-1: out of range; expected a finite number > 0"},
      {"grid.dx=1e999", "--set grid.dx=1e999: not a finite number"},
      /* C's hexadecimal forms, which strtod reads (0x10 was 16): decimal only */
      {"grid.dx=0x10", "--set grid.dx=0x10: not a number"},
      {"grid.dx=-0X1p3", "--set grid.dx=-0X1p3: not a number"},
      {"grid.nx=0x10", "--set grid.nx=0x10: unexpected \"x10\" after the number"},
      {"rtm.resume_every=-1",
       "--set rtm.resume_every=-1: out of range; expected a finite number >= 0"},
      /* angles evenly from 0 to a largest of 0 would all be 0 degrees */
      {"rtm.angle_max=0",
       "--set rtm.angle_max=0: out of range; expected a finite number in [1, 89]"},
      {"grid.nxx=4", "--set grid.nxx=4: unknown key grid.nxx (did you mean grid.nx?)"},
      {"gird.nx=4", "--set gird.nx=4: unknown section and key gird.nx (did you mean grid.nx?)"},
      {"survey.count=4",
       "--set survey.count=4: unknown section and key survey.count (sections: grid"},
      {"nx=4",
       "--set nx=4: expected section.key=value, the key with its section (did you mean grid.nx?)"},
      {"grid.nx", "--set grid.nx: expected section.key=value"},
      {"physics.equation=elastic", "--set physics.equation=elastic: expected one of iso|vti|tti"},
      {"backend.name=opencl",
       "--set backend.name=opencl: not a known choice; expected one of auto|cpu|cuda"},
      {"traces.pipeline=graphs", "expected one of graph|streams"},
      {"receivers.fields=q,p", "--set receivers.fields=q,p: not a known choice; expected one of "
                               "p|q|p,q"},
      {"memory.model_precision=fp8", "--set memory.model_precision=fp8: expected one of fp32|fp16"},
      {"time.dispersion_correction=source",
       "a wavelet warped alone leaves the run's output warped (the leapfrog gives at omega the "
       "exact response at psi(omega)): full warps the wavelet and the recorded traces; expected "
       "one of none|traces|full"},
      {"kernel.stages=1", "auto or an integer in [2, 4]"},
      {"kernel.block_x=2000",
       "--set kernel.block_x=2000: out of range; expected auto or an integer in [1, 1024]"},
      {"output.name=a ;b", "which starts a comment in INI files"},
      /* 32 two-byte characters: the limit counts bytes, and says so */
      {"output.name="
       "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
       "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
       "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
       "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
       ": too long (64 bytes); expected text of at most 63 bytes"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    rtm_config_t cfg, before;
    rtm_config_defaults(&cfg);
    before = cfg;
    capture_t capture;
    capture_begin(&capture);
    int status = rtm_config_set(&cfg, cases[i].assignment);
    const char *err = capture_end(&capture);
    if (status != RTM_ERR_CONFIG) fail_msg("--set %s: status %d", cases[i].assignment, status);
    assert_contains(err, cases[i].message);
    assert_memory_equal(&cfg, &before, sizeof cfg);
  }
}

/* "auto" (any case) stores NAN in number|auto keys only; NaN and infinities are never
 * accepted as numbers, and a number replaces an auto and back. */
static void test_auto_values(void **state) {
  (void)state;
  rtm_config_t cfg;
  rtm_config_defaults(&cfg);
  assert_int_equal(rtm_config_set(&cfg, "time.dt=0.0005"), RTM_OK);
  assert_true(cfg.time.dt_s == 0.0005);
  assert_int_equal(rtm_config_set(&cfg, "time.dt=Auto"), RTM_OK);
  assert_true(isnan(cfg.time.dt_s));
  assert_int_equal(rtm_config_set(&cfg, "source.delay=-0.01"), RTM_OK);
  assert_true(cfg.source.delay_s == -0.01);
  assert_int_equal(rtm_config_set(&cfg, "receivers.z=auto"), RTM_OK);
  assert_true(isnan(cfg.receivers.z_m));

  static const char *const refused[] = {"time.dt=nan",        "time.dt=inf",  "time.dt=-inf",
                                        "time.cfl=auto",      "grid.nx=auto", "source.x=NaN",
                                        "receivers.x_step=0", "time.dt=autox"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    capture_t capture;
    capture_begin(&capture);
    int status = rtm_config_set(&cfg, refused[i]);
    capture_end(&capture);
    if (status != RTM_ERR_CONFIG) fail_msg("--set %s was accepted", refused[i]);
  }
  assert_true(isnan(cfg.time.dt_s));
  assert_true(isnan(cfg.source.position_m[0]));
}

static void test_strategy_for(void **state) {
  (void)state;
  rtm_config_t cfg;
  rtm_config_defaults(&cfg);
  assert_int_equal(rtm_config_set(&cfg, "memory.strategy=vmm"), RTM_OK);
  assert_int_equal(rtm_config_set(&cfg, "memory.imaging=managed"), RTM_OK);
  assert_string_equal(rtm_config_strategy_for(&cfg, "wavefield"), "vmm");
  assert_string_equal(rtm_config_strategy_for(&cfg, "model"), "vmm");
  assert_string_equal(rtm_config_strategy_for(&cfg, "imaging"), "managed");
  assert_int_equal(rtm_config_set(&cfg, "memory.wavefield=vmm-compressed"), RTM_OK);
  assert_string_equal(rtm_config_strategy_for(&cfg, "wavefield"), "vmm-compressed");
  assert_null(rtm_config_strategy_for(&cfg, "snapshots"));
}

/* Cross-key errors name the keys involved and are all reported together. */
static void test_validate(void **state) {
  (void)state;
  rtm_config_t cfg;
  capture_t capture;

  rtm_config_defaults(&cfg);
  /* A tile is cells, not threads: 128 x 16 is a valid iso tile (512 threads); the cuda
   * kernels judge their own shapes (tests/gpu). */
  assert_int_equal(rtm_config_set(&cfg, "kernel.block_x=128"), RTM_OK);
  assert_int_equal(rtm_config_set(&cfg, "kernel.block_y=16"), RTM_OK);
  assert_int_equal(rtm_config_validate(&cfg), RTM_OK);

  rtm_config_defaults(&cfg);
  snprintf(cfg.path, sizeof cfg.path, "deck.ini");
  assert_int_equal(rtm_config_set(&cfg, "receivers.layout=file"), RTM_OK);
  assert_int_equal(rtm_config_set(&cfg, "output.name=runs/a"), RTM_OK);
  assert_int_equal(rtm_config_set(&cfg, "source.x=-5"), RTM_OK);
  assert_int_equal(rtm_config_set(&cfg, "grid.oz=100"), RTM_OK);
  assert_int_equal(rtm_config_set(&cfg, "source.z=1090"), RTM_OK); /* last cell: 100 + 99 * 10 */
  assert_int_equal(rtm_config_set(&cfg, "output.dir=\"\""), RTM_OK);
  assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_ERR_CONFIG);
  assert_contains(capture.text, "deck.ini: receivers.layout = file needs receivers.file");
  assert_contains(capture.text,
                  "deck.ini: output.name = \"runs/a\": expected a file name stem without '/'");
  assert_contains(capture.text, "deck.ini: source.x = -5 m lies outside the volume, [0, 990] m "
                                "from grid.ox, grid.nx and grid.dx");
  assert_contains(capture.text, "deck.ini: output.dir is empty");
  if (strstr(capture.text, "source.z")) fail_msg("source.z = 1090 m is on the last cell");

  /* the edge's tolerance is a points file's (1e-6 cells), and a value beyond it is said
   * with the digits that show it outside (probe M, M5) */
  rtm_config_defaults(&cfg);
  snprintf(cfg.path, sizeof cfg.path, "deck.ini");
  assert_int_equal(rtm_config_set(&cfg, "source.x=990.000001"), RTM_OK); /* 1e-7 cells */
  assert_int_equal(rtm_config_set(&cfg, "source.y=990.0001"), RTM_OK);   /* 1e-5 cells */
  assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_ERR_CONFIG);
  if (strstr(capture.text, "source.x")) fail_msg("source.x is within the edge's tolerance");
  assert_contains(capture.text, "deck.ini: source.y = 990.0001 m lies outside the volume, [0, "
                                "990] m from grid.oy, grid.ny and grid.dy (0.0001 m beyond it)");

  rtm_config_defaults(&cfg);
  assert_int_equal(rtm_config_set(&cfg, "model.file=\"   \""), RTM_OK);
  assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_ERR_CONFIG);
  assert_contains(capture.text, "model.file = \"   \" is blank");

  /* q traces and snapshots exist for vti and tti only; p alone is fine for every equation */
  static const char *const q_fields[] = {"receivers.fields=q", "receivers.fields=p,q",
                                         "snapshots.fields=q"};
  static const char *const q_refusals[] = {
      "deck.ini: receivers.fields = q: physics.equation = iso has no field q",
      "deck.ini: receivers.fields = p,q: physics.equation = iso has no field q",
      "deck.ini: snapshots.fields = q: physics.equation = iso has no field q"};
  for (int i = 0; i < 3; ++i) {
    rtm_config_defaults(&cfg);
    snprintf(cfg.path, sizeof cfg.path, "deck.ini");
    assert_int_equal(rtm_config_set(&cfg, q_fields[i]), RTM_OK);
    assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_ERR_CONFIG);
    assert_contains(capture.text, q_refusals[i]);
    assert_int_equal(rtm_config_set(&cfg, "physics.equation=vti"), RTM_OK);
    assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_OK);
    assert_int_equal(rtm_config_set(&cfg, "physics.equation=tti"), RTM_OK);
    assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_OK);
  }

  /* Warnings do not fail a deck. */
  rtm_config_defaults(&cfg);
  assert_int_equal(rtm_config_set(&cfg, "model.epsilon=0.2"), RTM_OK);
  assert_int_equal(rtm_config_set(&cfg, "snapshots.every=1000"), RTM_OK);
  assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_OK);
  assert_contains(capture.text,
                  "warning: configuration: model.epsilon and model.delta are ignored");
  assert_contains(capture.text, "snapshots.every = 1000 exceeds time.steps = 500");

  /* fp16 coefficients exist for vti/tti only: a warning for iso, silence otherwise. */
  rtm_config_defaults(&cfg);
  assert_int_equal(rtm_config_set(&cfg, "memory.model_precision=fp16"), RTM_OK);
  assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_OK);
  assert_contains(capture.text, "warning: configuration: memory.model_precision = fp16 is "
                                "ignored by physics.equation = iso");
  assert_int_equal(rtm_config_model_precision(&cfg), RTM_PRECISION_FP32);
  assert_int_equal(rtm_config_set(&cfg, "physics.equation=tti"), RTM_OK);
  assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_OK);
  assert_true(strstr(capture.text, "model_precision") == NULL);
  assert_int_equal(rtm_config_model_precision(&cfg), RTM_PRECISION_FP16);
  assert_string_equal(rtm_precision_name(rtm_config_model_precision(&cfg)), "fp16");
}

/* Validates a deck of the defaults with `assignments` set (NULL-terminated), named
 * deck.ini; returns the status, the messages in capture->text. */
static int validate_with(capture_t *capture, const char *const *assignments) {
  rtm_config_t cfg;
  rtm_config_defaults(&cfg);
  snprintf(cfg.path, sizeof cfg.path, "deck.ini");
  for (const char *const *a = assignments; *a; ++a)
    if (rtm_config_set(&cfg, *a) != RTM_OK) fail_msg("refused: %s", *a);
  return captured(capture, rtm_config_validate(&cfg));
}

/* [shots] and receivers.layout = patch: what each layout needs, positions in metres inside
 * the volume (the default grid spans [0, 990] m), the keys a layout ignores, snapshots
 * refused with many shots, and patch offsets that are not positions. */
static void test_validate_shots(void **state) {
  (void)state;
  capture_t capture;
  assert_int_equal(validate_with(&capture, (const char *const[]){"shots.layout=file", NULL}),
                   RTM_ERR_CONFIG);
  assert_contains(capture.text, "deck.ini: shots.layout = file needs shots.file");

  const char *const grid_outside[] = {"shots.layout=grid",
                                      "shots.x_first=100",
                                      "shots.x_step=300",
                                      "shots.x_count=4",
                                      "shots.y_first=-1",
                                      "shots.z=2000",
                                      NULL};
  assert_int_equal(validate_with(&capture, grid_outside), RTM_ERR_CONFIG);
  assert_contains(capture.text, "deck.ini: shots.x_first + (shots.x_count - 1) shots.x_step (the "
                                "last shot's x) = 1000 m lies outside the volume, [0, 990] m");
  assert_contains(capture.text, "deck.ini: shots.y_first = -1 m lies outside the volume");
  assert_contains(capture.text, "deck.ini: shots.z = 2000 m lies outside the volume");
  if (strstr(capture.text, "shots.x_first ="))
    fail_msg("shots.x_first = 100 m lies inside the volume");

  /* the same shots fit at x_step = 290: the last one at 970 m */
  const char *const grid_inside[] = {"shots.layout=grid", "shots.x_first=100", "shots.x_step=290",
                                     "shots.x_count=4", NULL};
  assert_int_equal(validate_with(&capture, grid_inside), RTM_OK);

  const char *const snapshots[] = {"shots.layout=grid", "shots.x_count=2", "snapshots.every=10",
                                   NULL};
  assert_int_equal(validate_with(&capture, snapshots), RTM_ERR_CONFIG);
  assert_contains(capture.text, "deck.ini: snapshots.every = 10 with shots.layout = grid: runs "
                                "of many shots write no snapshots");

  /* keys of another layout are warnings, not errors */
  const char *const ignored[] = {"shots.x_count=3", "shots.z=100", "shots.file=s.txt", NULL};
  assert_int_equal(validate_with(&capture, ignored), RTM_OK);
  assert_contains(capture.text, "warning: deck.ini: shots.x_count, shots.z ignored unless "
                                "shots.layout = grid (shots.layout = single)");
  assert_contains(capture.text, "warning: deck.ini: shots.file is ignored unless shots.layout "
                                "= file");
  const char *const source_ignored[] = {"shots.layout=file", "shots.file=s.txt", "source.x=50",
                                        "source.z=60", NULL};
  assert_int_equal(validate_with(&capture, source_ignored), RTM_OK);
  assert_contains(capture.text, "source.x is ignored by shots.layout = file");
  assert_contains(capture.text, "source.z is ignored by shots.layout = file");
  /* an ignored coordinate is not checked against the volume (a deck's source left where a
   * larger grid had it); the depth the grid layout takes still is */
  const char *const outside_ignored[] = {"shots.layout=grid", "source.x=5000", "source.y=-5", NULL};
  assert_int_equal(validate_with(&capture, outside_ignored), RTM_OK);
  assert_contains(capture.text, "source.x is ignored by shots.layout = grid");
  if (strstr(capture.text, "lies outside")) fail_msg("an ignored source.x checked");
  const char *const depth_outside[] = {"shots.layout=grid", "source.z=5000", NULL};
  assert_int_equal(validate_with(&capture, depth_outside), RTM_ERR_CONFIG);
  assert_contains(capture.text, "deck.ini: source.z = 5000 m lies outside the volume");

  /* patch: x_first is an offset (-500 m is no position), the depth is one */
  const char *const patch[] = {"receivers.layout=patch", "receivers.x_first=-500",
                               "receivers.z=-10", NULL};
  assert_int_equal(validate_with(&capture, patch), RTM_ERR_CONFIG);
  assert_contains(capture.text, "deck.ini: receivers.z = -10 m lies outside the volume");
  if (strstr(capture.text, "x_first")) fail_msg("a patch's x_first is an offset");
  const char *const wide_patch[] = {"receivers.layout=patch", "receivers.y_count=101", NULL};
  assert_int_equal(validate_with(&capture, wide_patch), RTM_OK);
  assert_contains(capture.text,
                  "receivers.y_count = 101 at receivers.y_step = 10 m spans 1000 m, more "
                  "than the volume's 990 m");
  const char *const too_many[] = {"receivers.x_count=100000", "receivers.y_count=100000", NULL};
  assert_int_equal(validate_with(&capture, too_many), RTM_ERR_CONFIG);
  assert_contains(capture.text, "receivers.x_count x receivers.y_count = 100000 x 100000: too "
                                "many receivers");
}

/* rtm keys that do nothing in the deck are named, set away from their defaults: zfp's rate
 * where no snapshot is coded, the codec's cost where auto does not choose, the gathers' shape
 * without gathers; not under auto (which may fall back to zfp snapshots at the rate, weighed
 * at the codec's cost), nor once the keys are in use. */
static void test_validate_ignored_rtm_keys(void **state) {
  (void)state;
  capture_t capture;
  const char *const fp32_snapshots[] = {"rtm.reconstruction=snapshots", "rtm.snapshot_rate=4",
                                        "rtm.cip_x_step=8", "rtm.angle_max=30", NULL};
  assert_int_equal(validate_with(&capture, fp32_snapshots), RTM_OK);
  assert_contains(capture.text, "warning: deck.ini: rtm.snapshot_rate = 4 is ignored: it is "
                                "zfp's bits a value, and rtm.snapshot_precision = fp32");
  assert_contains(capture.text, "warning: deck.ini: rtm.cip_x_step = 8 is ignored: it shapes the "
                                "common-image gathers, and rtm.offset_lags = 0 takes none");
  assert_contains(capture.text, "rtm.angle_max = 30 is ignored");
  if (strstr(capture.text, "cip_y_step") || strstr(capture.text, "rtm.angles"))
    fail_msg("keys at their defaults are not named: %s", capture.text);
  const char *const boundary[] = {"rtm.reconstruction=boundary", "rtm.snapshot_rate=4", NULL};
  assert_int_equal(validate_with(&capture, boundary), RTM_OK);
  assert_contains(capture.text, "rtm.snapshot_rate = 4 is ignored: rtm.reconstruction = "
                                "boundary keeps no snapshots");
  const char *const chosen_by_name[] = {"rtm.reconstruction=checkpoint",
                                        "rtm.snapshot_codec_steps=0.5", NULL};
  assert_int_equal(validate_with(&capture, chosen_by_name), RTM_OK);
  assert_contains(capture.text, "rtm.snapshot_codec_steps = 0.5 is ignored: it weighs the ways "
                                "rtm.reconstruction = auto chooses from, and rtm.reconstruction = "
                                "checkpoint");
  const char *const in_use[][6] = {
      /* auto: zfp at 4 bits when fp32 and fp16 do not fit, weighed at its coding's cost */
      {"rtm.snapshot_rate=4", "rtm.snapshot_codec_steps=0.5", NULL},
      {"rtm.reconstruction=snapshots", "rtm.snapshot_precision=zfp", "rtm.snapshot_rate=4",
       "rtm.offset_lags=4", "rtm.cip_x_step=8", "rtm.angle_max=30"}};
  for (size_t k = 0; k < sizeof in_use / sizeof in_use[0]; ++k) {
    const char *deck[7] = {NULL};
    for (int j = 0; j < 6 && in_use[k][j]; ++j)
      deck[j] = in_use[k][j];
    assert_int_equal(validate_with(&capture, deck), RTM_OK);
    if (strstr(capture.text, "ignored")) fail_msg("keys in use named ignored: %s", capture.text);
  }
}

/* Keys that do nothing beside another key are named (a probe: each was taken without a word):
 * the interface's dip and lower velocity without an interface, the sinc radius with
 * trilinear points, the receivers' keys with none, the checkpoint count without
 * checkpoints, the mute's line without the mute; not where the other key puts them to use. */
static void test_validate_ignored_other_keys(void **state) {
  (void)state;
  capture_t capture;
  const char *const idle[] = {"model.vp_below=3000",
                              "model.interface_dip=30",
                              "points.interpolation=trilinear",
                              "points.radius=2",
                              "receivers.layout=none",
                              "receivers.z=50",
                              "rtm.reconstruction=snapshots",
                              "rtm.checkpoints=5",
                              "rtm.mute=false",
                              "rtm.mute_velocity=1000",
                              NULL};
  assert_int_equal(validate_with(&capture, idle), RTM_OK);
  static const char *const said[] = {
      "model.interface_dip = 30 is ignored: model.interface_z = auto puts no interface",
      "model.vp_below = 3000 is ignored: model.interface_z = auto",
      "points.radius = 2 is ignored: it is the sinc operator's, and points.interpolation = "
      "trilinear",
      "receivers.z = 50 is ignored: receivers.layout = none records nothing",
      "rtm.checkpoints = 5 is ignored: rtm.reconstruction = snapshots keeps no checkpoints",
      "rtm.mute_velocity = 1000 is ignored: rtm.mute = false mutes nothing"};
  for (size_t k = 0; k < sizeof said / sizeof said[0]; ++k)
    assert_contains(capture.text, said[k]);
  const char *const in_use[] = {
      "model.interface_z=300", "model.vp_below=3000",    "model.interface_dip=30",
      "points.radius=2",       "receivers.z=50",         "rtm.reconstruction=checkpoint",
      "rtm.checkpoints=5",     "rtm.mute_velocity=1000", NULL};
  assert_int_equal(validate_with(&capture, in_use), RTM_OK);
  if (strstr(capture.text, "ignored")) fail_msg("keys in use named ignored: %s", capture.text);
}

/* What rtm_config_print_schema writes for these sections at this width, NUL-terminated
 * (the caller frees it); its status in *status. */
static char *schema_text(const char *const *sections, int count, int width, int *status) {
  FILE *file = tmpfile();
  assert_non_null(file);
  *status = rtm_config_print_schema(file, sections, count, width);
  long size = ftell(file);
  assert_true(size >= 0 && size < 262144);
  rewind(file);
  char *text = calloc((size_t)size + 1, 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
  fclose(file);
  return text;
}

/* Runs of spaces and line ends as one space: the text a reader follows through the wraps. */
static void collapse_spaces(char *text) {
  char *kept = text;
  for (const char *c = text; *c; ++c) {
    const int space = *c == ' ' || *c == '\n';
    if (space && (kept == text || kept[-1] == ' ')) continue;
    *kept++ = space ? ' ' : *c;
  }
  *kept = '\0';
}

/* help-config at a terminal's width: no line longer, every section and key at the start of
 * its line, every help text whole through the wraps (at 1000 columns each on one line). */
static void test_print_schema(void **state) {
  (void)state;
  const int widths[] = {60, 80, 100, 1000};
  char needle[2048];
  int status;
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    char *text = schema_text(NULL, 0, widths[w], &status);
    assert_int_equal(status, RTM_OK);
    for (const char *line = text; *line; line += strcspn(line, "\n") + 1) {
      if ((int)strcspn(line, "\n") > widths[w]) fail_msg("wider than %d: %.200s", widths[w], line);
      if (!line[strcspn(line, "\n")]) break;
    }
    for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
      snprintf(needle, sizeof needle, "\n[%s]\n", row->section);
      assert_contains(text, needle);
      snprintf(needle, sizeof needle, "\n  %s ", row->key);
      char own_line[96]; /* a key longer than its column has the line to itself */
      snprintf(own_line, sizeof own_line, "\n  %s\n", row->key);
      if (!strstr(text, needle) && !strstr(text, own_line)) fail_msg("no row for %s", row->key);
      if (widths[w] == 1000) {
        snprintf(needle, sizeof needle, "  %s\n", row->help);
        assert_contains(text, needle);
      }
    }
    collapse_spaces(text);
    for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
      snprintf(needle, sizeof needle, "%s", row->help);
      collapse_spaces(needle);
      assert_contains(text, needle);
    }
    free(text);
  }
  /* at 80 columns: each section's columns as wide as its cells; a long key on a line of its
   * own with the row under the columns; a long choice list with the meaning under it */
  char *text = schema_text(NULL, 0, 80, &status);
  assert_contains(text, "[grid]\n  key  type    default  range        meaning\n"
                        "  nx   int     100      [1, 100000]  interior cells along x\n");
  assert_contains(text, "\n  dt     number|auto  auto     > 0               time step, seconds; "
                        "auto = cfl\n");
  assert_contains(text, "\n  dispersion_correction\n         choice       full     "
                        "none|traces|full  the leapfrog's time dispersion\n");
  assert_contains(text, "\n  layout   choice       plane    none|plane|file|patch\n"
                        "                                                none, a regular plane,");
  assert_contains(text, "help-config SECTION' prints one section: grid, time, model,");
  free(text);
}

/* help-config SECTION: that section alone ("rtm" or "[rtm]"), several in the order given; an
 * unknown one is a usage error naming every section, before anything is printed. */
static void test_print_schema_sections(void **state) {
  (void)state;
  int status;
  const char *const one[] = {"rtm"};
  char *text = schema_text(one, 1, 80, &status);
  assert_int_equal(status, RTM_OK);
  assert_true(strncmp(text, "[rtm]\n", 6) == 0);
  assert_null(strstr(text + 1, "\n["));
  assert_contains(text, "\n  observed ");
  assert_null(strstr(text, "A deck is an INI file"));
  free(text);

  const char *const two[] = {"[mpi]", "grid"};
  text = schema_text(two, 2, 100, &status);
  assert_int_equal(status, RTM_OK);
  assert_true(strncmp(text, "[mpi]\n", 6) == 0);
  assert_non_null(strstr(text, "\n\n[grid]\n"));
  assert_null(strstr(text, "[rtm]"));
  free(text);

  const char *const unknown[] = {"grid", "rtn"};
  capture_t capture;
  capture_begin(&capture);
  text = schema_text(unknown, 2, 80, &status);
  capture_end(&capture);
  assert_int_equal(status, RTM_ERR_USAGE);
  assert_string_equal(text, "");
  assert_contains(capture.text, "no section [rtn] (did you mean [rtm]?); the sections are grid, "
                                "time, model, physics, source, shots, receivers, points, boundary, "
                                "snapshots, output, backend, kernel, memory, rtm, bench, traces, "
                                "mpi");
  free(text);
}

/* What help-config said wrongly once: where a plane's receivers start, the strategies, the
 * observed file's formats. */
static void test_schema_help_texts(void **state) {
  (void)state;
  const rtm_cfg_entry_t *row;
  for (row = rtm_config_schema; row->section; ++row) {
    if (strcmp(row->section, "receivers") == 0 &&
        (strcmp(row->key, "x_first") == 0 || strcmp(row->key, "y_first") == 0))
      assert_contains(row->help, "auto = the first cell past the absorbing layer");
    if (strcmp(row->section, "memory") == 0 && strcmp(row->key, "strategy") == 0)
      assert_contains(row->help, "host, device, vmm, vmm-compressed, managed or pinned");
    if (strcmp(row->section, "rtm") == 0 && strcmp(row->key, "observed") == 0)
      assert_contains(row->help, "or a SEG-Y file");
  }
}

RTM_TEST_MAIN(
    cmocka_unit_test(test_schema_is_consistent), cmocka_unit_test(test_every_default_parses),
    cmocka_unit_test(test_defaults),
    cmocka_unit_test_setup_teardown(test_set_lands_in_grid_time_model_fields, set_every_key,
                                    free_state),
    cmocka_unit_test_setup_teardown(test_set_lands_in_source_receiver_output_fields, set_every_key,
                                    free_state),
    cmocka_unit_test_setup_teardown(test_set_lands_in_run_fields, set_every_key, free_state),
    cmocka_unit_test(test_set_forms), cmocka_unit_test(test_drop_pacing),
    cmocka_unit_test(test_set_errors), cmocka_unit_test(test_auto_values),
    cmocka_unit_test(test_strategy_for), cmocka_unit_test(test_validate),
    cmocka_unit_test(test_validate_shots), cmocka_unit_test(test_validate_ignored_rtm_keys),
    cmocka_unit_test(test_validate_ignored_other_keys), cmocka_unit_test(test_print_schema),
    cmocka_unit_test(test_print_schema_sections), cmocka_unit_test(test_schema_help_texts))
