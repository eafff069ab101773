/* rtm_config.h - the run configuration: one schema table drives INI parsing, defaults,
 * range checks, --set overrides, the echo of the resolved deck and `rtm3d help-config`.
 *
 * Values land in the typed struct rtm_config_t; each schema row names the field it fills
 * (by offset), its type, its default text, its allowed range or choices and a help line.
 * A value "auto" is accepted by RTM_CFG_DOUBLE_AUTO keys and stored as NAN. */
#ifndef RTM_CONFIG_H
#define RTM_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTM_CONFIG_PATH_MAX 1024
#define RTM_CONFIG_NAME_MAX 64
/* A coordinate may lie this many cells beyond the first or last cell and still count as
 * inside, in a deck's keys and in a points file alike: positions written as origin +
 * (n - 1) h come back with a rounding error. */
#define RTM_EDGE_TOLERANCE_CELLS 1e-6
/* The least a field value may be and keep float32's 24 bits: FLT_MIN / FLT_EPSILON, where
 * the subnormal numbers (fewer bits, then zero) are still 2^23 below it. */
#define RTM_FLOAT_FULL_PRECISION 9.9e-32

typedef enum { RTM_EQUATION_ISO = 0, RTM_EQUATION_VTI, RTM_EQUATION_TTI } rtm_equation_t;
typedef enum {
  RTM_RECEIVERS_NONE = 0,
  RTM_RECEIVERS_PLANE,
  RTM_RECEIVERS_FILE,
  RTM_RECEIVERS_PATCH /* a plane moving with each shot: x_first, y_first are offsets */
} rtm_receiver_layout_t;
typedef enum { RTM_SHOTS_SINGLE = 0, RTM_SHOTS_GRID, RTM_SHOTS_FILE } rtm_shot_layout_t;
typedef enum {
  RTM_RECONSTRUCT_SNAPSHOTS = 0,
  RTM_RECONSTRUCT_BOUNDARY,
  RTM_RECONSTRUCT_CHECKPOINT,
  RTM_RECONSTRUCT_AUTO /* the fastest that fits: snapshots, then boundary, then checkpoint */
} rtm_reconstruction_t;
typedef enum { RTM_BOUNDARY_SPONGE = 0 } rtm_boundary_kind_t;
typedef enum {
  RTM_EXCHANGE_OVERLAP = 0,
  RTM_EXCHANGE_BLOCKING,
  RTM_EXCHANGE_OFF
} rtm_mpi_exchange_t;
/* The leapfrog's time dispersion removed (rtm_traces.h, rtm_traces_warp_t): not at all,
 * from the recorded traces (the inverse warp), or fully (the source wavelet warped forward
 * before the run as well). */
typedef enum {
  RTM_DISPERSION_NONE = 0,
  RTM_DISPERSION_TRACES,
  RTM_DISPERSION_FULL
} rtm_dispersion_correction_t;
/* Whether a run's gathers go to the file while the steps run (rtm_trace_stream.h). */
typedef enum { RTM_STREAM_TRACES_AUTO = 0, RTM_STREAM_TRACES_OFF } rtm_stream_traces_t;
/* How sources and receivers between nodes meet the grid (rtm_points.h). */
typedef enum { RTM_INTERPOLATION_TRILINEAR = 0, RTM_INTERPOLATION_SINC } rtm_point_interpolation_t;
/* How a device's planes travel between z-slabs (rtm_mpi_halo.h, rtm_mpi_device.h). */
typedef enum {
  RTM_TRANSPORT_AUTO = 0,  /* nccl when each rank has its own GPU, else shared (staged between
                              nodes) */
  RTM_TRANSPORT_SHARED,    /* staged, the host buffers in an MPI shared-memory window */
  RTM_TRANSPORT_STAGED,    /* staged, the host buffers sent as MPI messages */
  RTM_TRANSPORT_NCCL,      /* GPU to GPU through NCCL (rtm_mpi_device.h) */
  RTM_TRANSPORT_CUDA_AWARE /* GPU to GPU as MPI messages of device memory (rtm_mpi_device.h) */
} rtm_mpi_transport_t;
/* How the per-cell model coefficients are stored; the arithmetic is fp32 either way. */
/* fp32, IEEE binary16, or the codec (solver/grid/rtm_codec.h; snapshots only, at
 * rtm.snapshot_rate bits a value) */
typedef enum { RTM_PRECISION_FP32 = 0, RTM_PRECISION_FP16, RTM_PRECISION_ZFP } rtm_precision_t;

/* Room for the schema's rows in rtm_config_t.deck_line (config_schema.c asserts it). */
#define RTM_CONFIG_KEYS_MAX 256

typedef struct {
  struct {
    int n[3];            /* interior cells nx, ny, nz */
    double spacing_m[3]; /* dx, dy, dz */
    double origin_m[3];  /* coordinate of cell (0,0,0) */
  } grid;
  struct {
    int steps;   /* time steps; traces have steps + 1 samples */
    double dt_s; /* NAN = auto: cfl * h_min / v_max */
    double cfl;  /* used by dt = auto; must stay below the stability limit */
    rtm_dispersion_correction_t dispersion_correction; /* none | traces | full */
  } time;
  struct {
    char file[RTM_CONFIG_PATH_MAX];        /* HDF5 model; empty = constants below */
    char description[RTM_CONFIG_PATH_MAX]; /* rtm3d makemodel: what to build into file */
    double vp_m_s;
    double epsilon;
    double delta;
    double theta_deg;
    double phi_deg;
    double interface_z_m;     /* NAN = none: the constant model is one layer */
    double interface_dip_deg; /* along x, depth growing with x */
    double vp_below_m_s;      /* NAN = auto: vp */
  } model;
  struct {
    rtm_equation_t equation;
    double sigma;
    int smooth_angles_cells; /* tti: box half-width for averaging the symmetry axis; 0 = none */
  } physics;
  struct {
    double position_m[3];
    double frequency_hz; /* Ricker peak frequency */
    double delay_s;      /* NAN = auto: 1.2 / frequency */
    double amplitude;
  } source;
  struct {
    rtm_shot_layout_t layout;       /* single: the [source] position */
    char file[RTM_CONFIG_PATH_MAX]; /* layout = file: "x y z" in metres per line */
    double x_first_m, x_step_m;     /* layout = grid; NAN = auto */
    int x_count;
    double y_first_m, y_step_m;
    int y_count;
    double z_m; /* NAN = auto: source.z */
  } shots;
  struct {
    rtm_receiver_layout_t layout;
    char file[RTM_CONFIG_PATH_MAX]; /* layout = file: "x y z" in metres per line */
    double z_m;                     /* layout = plane: depth of the plane */
    double x_first_m, x_step_m;
    int x_count;
    double y_first_m, y_step_m;
    int y_count;
    char fields[RTM_CONFIG_NAME_MAX]; /* recorded: "p", "q" or "p,q" (q: vti and tti) */
  } receivers;
  struct {
    rtm_point_interpolation_t interpolation; /* trilinear | sinc */
    int radius;                              /* sinc: half-width in cells */
  } points;
  struct {
    rtm_boundary_kind_t kind;
    int width_cells;   /* absorbing layer inside the volume, on every face */
    double reflection; /* target amplitude reflection, sets the damping strength */
  } boundary;
  struct {
    int every_steps;                  /* 0 = no snapshots */
    char fields[RTM_CONFIG_NAME_MAX]; /* "p", "q" or "p,q" (q: vti and tti) */
  } snapshots;
  struct {
    char dir[RTM_CONFIG_PATH_MAX];
    char name[RTM_CONFIG_NAME_MAX];
    double trace_dt_s; /* NAN = auto: the modelling dt */
    int overwrite;     /* replace an existing dir/name.h5 (--force) */
    int segy;          /* also dir/name.sgy: the gathers as SEG-Y (rtm3d export) */
    rtm_stream_traces_t stream_traces; /* auto: streamed while the steps run when it can */
    int stream_window;                 /* samples a streamed window; 0 = about 64 MB */
  } output;
  struct {
    char name[RTM_CONFIG_NAME_MAX]; /* auto | cpu | cuda */
    int device;
  } backend;
  struct {
    /* each "auto" (halo) or RTM_CFG_AUTO_INT: the table of measured winners for the GPU
     * and the equation (rtm_cuda_kernel_choice) */
    char halo[RTM_CONFIG_NAME_MAX]; /* auto | sync | ldgsts | tma */
    int stages;
    int zblock;   /* planes per thread block along z; 0 = whole local nz */
    int block[2]; /* xy tile */
  } kernel;
  struct {
    char strategy[RTM_CONFIG_NAME_MAX];  /* default strategy for every field class */
    char wavefield[RTM_CONFIG_NAME_MAX]; /* per-class overrides; empty = strategy */
    char model[RTM_CONFIG_NAME_MAX];
    char imaging[RTM_CONFIG_NAME_MAX];
    int require_compression;
    double limit_gb; /* the most a run (a rank) counts as free in one memory; 0 = all */
    rtm_precision_t model_precision; /* vti/tti coefficient volumes: float or binary16 */
  } memory;
  struct {
    char observed[RTM_CONFIG_PATH_MAX]; /* the gathers to migrate (rtm3d model's shot layout) */
    rtm_reconstruction_t reconstruction;
    int imaging_step; /* 0 = auto */
    rtm_precision_t snapshot_precision;
    int snapshot_rate;        /* snapshot_precision zfp: bits a value, 1 .. 32 */
#define RTM_SNAPSHOT_RATE_DEFAULT 6 /* rtm.snapshot_rate's default: from it auto goes lower */
    double snapshot_codec_steps;    /* a zfp snapshot's coding in propagation steps; NAN = auto */
    int checkpoints;          /* reconstruction checkpoint: states kept; 0 = as many fit */
    int illumination;         /* divide by sum S^2 + eps */
    double illumination_eps;  /* relative to the largest illumination */
    int laplacian;            /* Laplacian filter of the image */
    int mute;                 /* mute the direct arrival in the observed data */
    int phase_correction;     /* -d/dt of the observed data: a zero-phase image */
    double mute_velocity_m_s; /* NAN = auto: vp at the source */
    double mute_taper_s;      /* NAN = auto: 1.5 / source.frequency */
    double end_taper_s;       /* NAN = auto: 0.5 / source.frequency, at most half the record */
    int shot_images;          /* also write each shot's image */
    double resume_every_s;    /* migrate: wall seconds between resume-state saves; 0 = each shot */
    int offset_lags;          /* subsurface-offset gathers: lags each way in x and y; 0 = none */
    int cip_x_step, cip_y_step; /* cells between the gathers' CIP lines along x and y */
    int angles;                 /* the angle gathers' incidence angles, 0 to angle_max_deg */
    double angle_max_deg;
  } rtm;
  struct {
    int warmup_steps;
    int steps;
  } bench;
  struct {
    char pipeline[RTM_CONFIG_NAME_MAX]; /* graph (CUDA graph replay) | streams (plain launches) */
  } traces;
  struct {
    rtm_mpi_exchange_t exchange;   /* z-slabs: overlap | blocking | off (benchmarks only) */
    rtm_mpi_transport_t transport; /* a GPU's planes: auto|shared|staged|nccl|cuda-aware */
    int shot_groups;               /* the ranks in groups, each its own shots and slabs */
    double timeout_s;              /* the longest wait for another rank; 0: for ever */
  } mpi;
  char path[RTM_CONFIG_PATH_MAX]; /* the deck this came from ("" for defaults only) */
  char set_keys[RTM_CONFIG_PATH_MAX]; /* "a.b, c.d": the keys --set changed, in order, once
                                         each ("" for none; ", ..." past its room) */
  int deck_line[RTM_CONFIG_KEYS_MAX]; /* by schema row: the deck's line that set the key, 0
                                         none (or a --set changed it since) */
} rtm_config_t;

typedef enum {
  RTM_CFG_INT,
  RTM_CFG_INT_AUTO, /* an integer or "auto" (stored as RTM_CFG_AUTO_INT) */
  RTM_CFG_DOUBLE,
  RTM_CFG_DOUBLE_AUTO, /* a number or "auto" (stored as NAN) */
  RTM_CFG_BOOL,        /* true/false, yes/no, on/off, 1/0 */
  RTM_CFG_STRING,
  RTM_CFG_ENUM /* one of `choices` (|-separated); stored as its int index */
} rtm_cfg_type_t;
/* The value an RTM_CFG_INT_AUTO key holds for "auto". */
#define RTM_CFG_AUTO_INT (-1)

typedef struct {
  const char *section;
  const char *key;
  rtm_cfg_type_t type;
  size_t offset; /* into rtm_config_t */
  size_t size;   /* bytes of the field (strings: buffer size) */
  const char *default_text;
  double min, max;     /* inclusive range for numbers */
  const char *choices; /* RTM_CFG_ENUM: "iso|vti|tti" */
  const char *help;
} rtm_cfg_entry_t;

/* The schema, terminated by a row with section == NULL. */
extern const rtm_cfg_entry_t rtm_config_schema[];

/* Fills cfg with every default. */
void rtm_config_defaults(rtm_config_t *cfg);

/* Every key of `section` (key NULL), or that one key, back at its default, and no longer
 * the deck's (its line forgotten): for a command that takes some keys of a deck alone. */
void rtm_config_reset(rtm_config_t *cfg, const char *section, const char *key);

/* Loads an INI deck over the defaults. Errors name path:line, the key and what was
 * expected; returns RTM_ERR_CONFIG (or RTM_ERR_INPUT for a missing file). */
int rtm_config_load(const char *path, rtm_config_t *cfg);

/* Applies one "section.key=value" override (the program's own). */
int rtm_config_set(rtm_config_t *cfg, const char *assignment);
/* The same for a user's --set, whose key is also noted in cfg->set_keys, so that messages
 * about several keys say the value came from the command line (rtm_config_origin). */
int rtm_config_set_option(rtm_config_t *cfg, const char *assignment);

/* The volume's diagonal in metres (a cell at least): the farthest a receiver lies from the
 * source, where the wavefield |source.amplitude| / (4 pi r) is least; the deck check,
 * migrate's amplitude check and its observed gathers' check weigh it against float32. */
double rtm_config_volume_diagonal_m(const rtm_config_t *cfg);
/* Cross-key checks that no single row can make (receiver plane inside the grid, ...). Their
 * messages start with where the values came from (rtm_config_origin). */
int rtm_config_validate(const rtm_config_t *cfg);
/* Where a config's values came from, the prefix of a message about them: the deck's path
 * ("configuration" for defaults only) with the lines of the keys `about` names that the
 * deck set (":LINE" for the earliest, " (and line A)" or " (and lines A, B)" for up to four
 * more), then " with --set KEYS" naming the keys the user's --set changed that `about`
 * names (a message, or a list of keys; NULL: every such key, and no line), and ", ..." when
 * more keys were set than set_keys could hold, into `text` (RTM_CONFIG_ORIGIN_MAX holds
 * any). Returns `text`. */
#define RTM_CONFIG_ORIGIN_MAX (2 * RTM_CONFIG_PATH_MAX + 80)
const char *rtm_config_origin(const rtm_config_t *cfg, const char *about, char *text, size_t size);

/* The run's time step against the source: a step in which the float32 fields can see a
 * wave of source.frequency move (2 pi f dt >= sqrt(FLT_EPSILON)), and a source.delay whose
 * wavelet is not zero in float32 all through [0, time.steps x dt]. rtm_config_validate
 * checks it when the deck alone gives dt; the solver again once the model has (dt = auto
 * with model.file). Errors are printed, naming the key; RTM_ERR_CONFIG. */
int rtm_config_check_timing(const rtm_config_t *cfg, double dt_s);

/* Writes the fully resolved deck as INI text (every key, defaults included). */
void rtm_config_echo(const rtm_config_t *cfg, FILE *out);
/* Same into a malloc'd string; the caller frees it. Returns NULL on allocation failure. */
char *rtm_config_echo_string(const rtm_config_t *cfg);
/* Removes from echoed text (rtm_config_echo_string's), in place, the lines of the keys that
 * set how a run proceeds but not what it computes (rtm.resume_every, output.overwrite, which
 * --force sets, mpi.timeout_s, mpi.exchange, whose two choices give the same numbers, and
 * model's output.stream_*, output.segy), so that two echoes compare equal when their runs
 * give the same result: a resumed run may change them. */
void rtm_config_drop_pacing(char *text);
/* Removes from echoed text, in place, the lines of the `count` keys named "section.key". */
void rtm_config_drop_keys(char *text, const char *const *keys, size_t count);

/* Prints `rtm3d help-config`: the schema as one table a section (key, type, default, range or
 * choices, meaning), wrapped at `width` columns (at least 60), the meaning column under
 * itself. Every section after a paragraph on decks, or only the `section_count` named in
 * `sections` ("rtm" or "[rtm]"). An unknown section is RTM_ERR_USAGE, printed naming the
 * known ones, before anything is written to `out`. */
int rtm_config_print_schema(FILE *out, const char *const *sections, int section_count, int width);

/* Memory strategy for a field class ("wavefield", "model", "imaging"): the per-class
 * override when set, else memory.strategy. NULL for any other class name. */
const char *rtm_config_strategy_for(const rtm_config_t *cfg, const char *field_class);

/* The precision the model's coefficient volumes are stored in: memory.model_precision for
 * vti and tti, fp32 for iso (which ignores the key). */
rtm_precision_t rtm_config_model_precision(const rtm_config_t *cfg);
/* How many of the source's coordinates, from x, the shot layout places itself, so that the
 * deck's source.x/y/z there are ignored: 2 under grid (x and y; source.z is the shots' depth
 * when shots.z = auto), 3 under file, 0 under single. */
int rtm_config_source_axes_placed(const rtm_config_t *cfg);
/* What a run counts as free in one memory: `free_bytes`, or memory.limit_gb when less. */
size_t rtm_config_free_within_limit(const rtm_config_t *cfg, size_t free_bytes);
/* "iso", "vti", "tti": physics.equation as the deck spells it. */
const char *rtm_equation_name(rtm_equation_t equation);
/* "fp32" or "fp16", for reports. */
const char *rtm_precision_name(rtm_precision_t precision);

#ifdef __cplusplus
}
#endif

#endif
