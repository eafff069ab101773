/* rtm3d makemodel CONFIG: the model file of a deck built from a short description
 * (rtm_model_builder.h): model.description read, the model built on the deck's grid and
 * written to model.file (as model.file.partial, renamed when complete). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "rtm_io.h"
#include "rtm_model_builder.h"
#include "rtm_status.h"
#include "solver_io.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d makemodel CONFIG [--set section.key=value ...] [--force] [--quiet]\n\n"
          "Builds the HDF5 model file of the deck, model.file, on its grid ([grid]) from the\n"
          "text file model.description: one element a line, applied in order, '#' starts a\n"
          "comment; metres, m/s, degrees:\n\n"
          "  background vp=V [gradient=G] [epsilon= delta= theta= phi=]   (first)\n"
          "      vp = V + G (z - grid.oz) everywhere\n"
          "  layer depth=D vp=V [dip=A] [azimuth=B] [gradient=G] [epsilon= ...]\n"
          "      below a plane at depth D under the grid's centre, dipping A toward azimuth B\n"
          "      (from +x toward +y): vp = V + G (depth below the plane), and the\n"
          "      anisotropy given\n"
          "  box x=X0,X1 y=Y0,Y1 z=Z0,Z1 [vp=] [epsilon= delta= theta= phi=]\n"
          "  diffractor x= y= z= radius=R vp=V [epsilon= ...]   (a sphere, one node at least)\n"
          "  anomaly x= y= z= sigma=S dvp=DV                    (vp += DV exp(-r^2/2S^2))\n\n"
          "Every parameter is written (/vp /epsilon /delta /theta /phi), so the file serves\n"
          "iso, vti and tti. Errors name the description's file:line and key.\n\n"
          "  --set k=v   override one key of the deck (repeatable)\n"
          "  --force     replace model.file when it exists\n"
          "  --quiet, -q errors alone\n");
}

/* The description, read line by line with bounds (rtm_text_read_line): only a regular file,
 * no NUL byte (a NUL would cut the line the builder sees: "vp=20\\0" "00" built as vp=20),
 * no line of 1024 bytes or more; each refusal names file:line. A UTF-8 byte order mark at
 * the start is skipped. The lines are joined by '\\n' into *text for rtm_model_build. */
static int read_text(const char *path, char **text) {
  int status = RTM_OK, got = 0, line_number = 0;
  long long bytes = 0;
  size_t used = 0;
  char line[1024], why[256];
  FILE *f = NULL;
  *text = NULL;
  if (rtm_text_open(path, &f, &bytes, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_INPUT, "model.description = %s: %s", path, why);
  if (bytes > (1LL << 24))
    RTM_FAIL(RTM_ERR_INPUT, "%s: not a model description (%lld bytes)", path, bytes);
  /* each line's bytes and its newline, and a NUL: never more than the file's size + 2 */
  *text = calloc((size_t)bytes + 2, 1);
  if (!*text) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %s (%lld bytes)", path, bytes);
  if (!*text) RTM_FAIL(RTM_ERR_NOMEM, "out of memory reading %s", path);
  for (;;) {
    status = rtm_text_read_line(f, line, sizeof line, &got, why, sizeof why);
    if (status != RTM_OK) RTM_FAIL(status, "%s:%d: %s", path, line_number + 1, why);
    if (!got) break;
    ++line_number;
    const char *start = line;
    if (line_number == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0) start += 3;
    const size_t length = strlen(start);
    if (used + length + 1 > (size_t)bytes + 1)
      RTM_FAIL(RTM_ERR_INPUT, "%s: changed while it was read", path);
    memcpy(*text + used, start, length);
    used += length;
    (*text)[used++] = '\n';
  }
fail:
  if (f) fclose(f);
  if (status != RTM_OK) {
    free(*text);
    *text = NULL;
  }
  return status;
}

/* model.file DIR/NAME.h5 as its folder DIR ("." where it names none, "/" at the root) and
 * NAME, its file name without ".h5" (*h5: whether it ended so); RTM_ERR_CONFIG when it names
 * no file or does not fit. */
enum { MODEL_PATH_MAX = 4096 };
static int model_file_parts(const char *file, char dir[MODEL_PATH_MAX], char stem[MODEL_PATH_MAX],
                            int *h5) {
  int status = RTM_OK;
  const char *slash = strrchr(file, '/');
  const char *name = slash ? slash + 1 : file;
  const size_t dir_length = slash ? (size_t)(slash - file) : 0;
  if (!*name) RTM_FAIL(RTM_ERR_CONFIG, "model.file = %s: not a file name", file);
  if (dir_length >= MODEL_PATH_MAX || strlen(name) >= MODEL_PATH_MAX)
    RTM_FAIL(RTM_ERR_CONFIG, "model.file = %s: path too long", file);
  snprintf(dir, MODEL_PATH_MAX, "%.*s", slash ? (int)(dir_length ? dir_length : 1) : 1,
           slash ? file : ".");
  snprintf(stem, MODEL_PATH_MAX, "%s", name);
  const size_t length = strlen(stem);
  *h5 = length > 3 && strcmp(stem + length - 3, ".h5") == 0;
  if (*h5) stem[length - 3] = '\0';
fail:
  return status;
}

/* The name lock of the model file: DIR/NAME.lock beside DIR/NAME.h5 (rtm_io_lock_name), the
 * lock a model or migrate run of output.name NAME in DIR takes too: both write
 * DIR/NAME.h5.partial, so they must not run at once. */
static int lock_model_name(const char *file, rtm_io_name_lock_t *lock) {
  int status = RTM_OK, h5 = 0;
  char dir[MODEL_PATH_MAX], stem[MODEL_PATH_MAX];
  RTM_TRY(model_file_parts(file, dir, stem, &h5));
  RTM_TRY(rtm_io_lock_name(dir, stem, "model.file", lock));
fail:
  return status;
}

/* model.file, before anything is written: neither a device, a FIFO nor a folder (the
 * rename would replace it: as root /dev/null itself), nor a name of a run's own files, nor
 * a file the run reads (the deck, model.description), nor its lock, DIR/NAME.lock, or the
 * journal it takes over, one of them. */
static int claim_model_file(const rtm_config_t *cfg) {
  int status = RTM_OK;
  /* migrate's NAME.resume.h5, a partial, a lock or journal: another lock than the run's
   * (NAME.resume.lock for NAME.resume.h5), and a run removes or replaces such a file as its
   * own (issue 32, D3b: a migrate deleted makemodel's NAME.resume.h5 at its end) */
  if (rtm_io_run_bookkeeping_name(cfg->model.file))
    RTM_FAIL(RTM_ERR_CONFIG,
             "model.file = %s: rtm3d's runs write a file of that name for themselves (NAME.h5's "
             "resume state, partial files, locks, journals) and would remove or replace it: "
             "give the model a name of its own, such as NAME.h5 or NAME_model.h5",
             cfg->model.file);
  /* its lock, DIR/NAME.lock for DIR/NAME.h5 (lock_model_name; probe U, U1: a deck or a
   * description at that name was written over), and NAME.commit, the journal of a killed
   * run of NAME that taking the lock finishes and removes */
  char dir[MODEL_PATH_MAX], stem[MODEL_PATH_MAX];
  char lock[2 * MODEL_PATH_MAX + 8], journal[2 * MODEL_PATH_MAX + 8];
  int h5 = 0;
  RTM_TRY(model_file_parts(cfg->model.file, dir, stem, &h5));
  snprintf(lock, sizeof lock, "%s/%s.lock", dir, stem);
  snprintf(journal, sizeof journal, "%s/%s.commit", dir, stem);
  const char *const outputs[] = {cfg->model.file, lock, journal};
  RTM_TRY(rtm_app_check_inputs_kept(cfg, RTM_APP_READS_DESCRIPTION, outputs, 3));
  RTM_TRY(rtm_app_check_replaceable("model.file", cfg->model.file));
fail:
  return status;
}

/* model.file not one of the other files of a run whose run file DIR/NAME.h5 rtm3d wrote
 * (its report, sidecar, SEG-Y, figures, resume state): --force wrote the model over the
 * run's NAME.json or NAME_image_x.png, exit 0 (a probe). */
static int refuse_run_member(const char *file) {
  char run_file[MODEL_PATH_MAX + 8];
  const char *what = NULL;
  if (rtm_app_run_member(file, run_file, sizeof run_file, &what)) {
    rtm_log_error("model.file = %s is a name of the run whose file is %s (its %s): a model "
                  "there would replace or pose as that run's, --force or not; choose another "
                  "name for the model",
                  file, run_file, what);
    return RTM_ERR_CONFIG;
  }
  /* NAME_shot<k>.sgy: a file of export --per-shot beside the run file NAME.h5 */
  char given[MODEL_PATH_MAX + 8];
  const size_t given_length =
      rtm_segy_per_shot_given(file, given, sizeof given) >= 0 ? strlen(given) : 0; /* NAME.sgy */
  if (given_length > 4 && strcmp(given + given_length - 4, ".sgy") == 0) {
    snprintf(run_file, sizeof run_file, "%.*s.h5", (int)(given_length - 4), given);
    if (rtm_io_run_file_written(run_file)) {
      rtm_log_error("model.file = %s is a name of the run whose file is %s (its SEG-Y file of a "
                    "shot): export --per-shot writes it; choose another name for the model",
                    file, run_file);
      return RTM_ERR_CONFIG;
    }
  }
  return RTM_OK;
}

/* model.file DIR/NAME.h5 neither a run's file nor beside one rtm3d wrote for a run of NAME
 * (rtm_app_refuse_other_runs): --force would replace NAME.h5 and leave the run's NAME.json,
 * NAME.xmf and figures beside the model as if of one run (probe E7). */
static int refuse_run_files(const char *file) {
  int status = RTM_OK, h5 = 0;
  char dir[MODEL_PATH_MAX], stem[MODEL_PATH_MAX];
  RTM_TRY(model_file_parts(file, dir, stem, &h5));
  RTM_TRY(refuse_run_member(file));
  if (h5) /* else no run's name */
    status = rtm_app_refuse_other_runs(dir, stem, "model.file",
                                       "a model at NAME.h5 would read as that run's");
fail:
  return status;
}

int rtm_cmd_makemodel(int argc, char **argv) {
  char where[RTM_CONFIG_ORIGIN_MAX];
  int status = RTM_OK, quiet = 0;
  rtm_config_t *cfg = calloc(1, sizeof *cfg);
  rtm_io_name_lock_t lock = {.fd = -1};
  char *text = NULL;
  float *values[RTM_IO_PARAMETERS] = {NULL};
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      free(cfg);
      return 0;
    }
  if (!cfg) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  RTM_TRY(rtm_app_load_config(argc, argv, cfg, &quiet, NULL, NULL));
  if (!cfg->model.description[0])
    RTM_FAIL(RTM_ERR_CONFIG, "%s: makemodel needs model.description, the text file to build",
             rtm_config_origin(cfg, "model.description", where, sizeof where));
  if (!cfg->model.file[0])
    RTM_FAIL(RTM_ERR_CONFIG, "%s: makemodel needs model.file, the HDF5 file to write",
             rtm_config_origin(cfg, "model.file", where, sizeof where));
  RTM_TRY(claim_model_file(cfg));
  /* MODEL.h5.lock, held to the end: a second makemodel of the same file is refused before
   * it truncates the first's MODEL.h5.partial */
  RTM_TRY(lock_model_name(cfg->model.file, &lock));
  RTM_TRY(rtm_app_check_overwrite(cfg, cfg->model.file, "model.file"));
  RTM_TRY(refuse_run_files(cfg->model.file));
  RTM_TRY(read_text(cfg->model.description, &text));
  const rtm_io_volume_t volume = {
      .n = {cfg->grid.n[0], cfg->grid.n[1], cfg->grid.n[2]},
      .spacing_m = {cfg->grid.spacing_m[0], cfg->grid.spacing_m[1], cfg->grid.spacing_m[2]},
      .origin_m = {cfg->grid.origin_m[0], cfg->grid.origin_m[1], cfg->grid.origin_m[2]},
      .z_offset = 0,
      .nz_local = cfg->grid.n[2]};
  RTM_TRY(rtm_model_build(text, cfg->model.description, &volume, values));
  /* the file weighed against its disk before it is written (probe S, S2): its volumes and
   * 1 MB for HDF5's own */
  int volumes = 0;
  for (int i = 0; i < RTM_IO_PARAMETERS; ++i)
    volumes += values[i] != NULL;
  char dir[MODEL_PATH_MAX], stem[MODEL_PATH_MAX];
  int h5 = 0;
  RTM_TRY(model_file_parts(cfg->model.file, dir, stem, &h5));
  const double cells = (double)volume.n[0] * volume.n[1] * volume.n[2];
  RTM_TRY(rtm_app_check_disk(dir, 4.0 * volumes * cells + 1e6,
                             "free space there, or set model.file on a larger disk"));
  /* a signal during the build stops here, before the file is written (one during the write
   * lets it finish: the model is whole, or not there) */
  if (rtm_interrupted())
    RTM_FAIL(RTM_ERR_INTERRUPTED, "makemodel: stopped by %s before %s was written",
             rtm_interrupt_name(), cfg->model.file);
  /* without --force nothing that appeared at model.file meanwhile is replaced (probe E2) */
  RTM_TRY((cfg->output.overwrite ? rtm_io_write_model : rtm_io_write_model_new)(
      cfg->model.file, &volume, (const float *const *)values));
  rtm_log_info("makemodel: wrote %s (%d x %d x %d cells) from %s", cfg->model.file, volume.n[0],
               volume.n[1], volume.n[2], cfg->model.description);
  if (rtm_interrupted())
    rtm_log_info("makemodel: %s came while the model was written; it is whole",
                 rtm_interrupt_name());
fail:
  rtm_io_unlock_name(&lock);
  rtm_io_model_release(values);
  free(text);
  free(cfg);
  return rtm_status_exit_code(status);
}
