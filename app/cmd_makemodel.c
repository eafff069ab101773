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
          "  --quiet     errors alone\n");
}

static int read_text(const char *path, char **text) {
  int status = RTM_OK;
  FILE *f = fopen(path, "rb");
  *text = NULL;
  if (!f) RTM_FAIL(RTM_ERR_INPUT, "model.description = %s: cannot be read", path);
  if (fseek(f, 0, SEEK_END) != 0) RTM_FAIL(RTM_ERR_INPUT, "%s: cannot be read", path);
  const long size = ftell(f);
  if (size < 0 || size > (1L << 24))
    RTM_FAIL(RTM_ERR_INPUT, "%s: not a model description (%ld bytes)", path, size);
  rewind(f);
  *text = calloc((size_t)size + 1, 1);
  if (!*text) RTM_FAIL(RTM_ERR_NOMEM, "out of memory reading %s", path);
  if (fread(*text, 1, (size_t)size, f) != (size_t)size)
    RTM_FAIL(RTM_ERR_INPUT, "%s: cannot be read", path);
fail:
  if (f) fclose(f);
  return status;
}

int rtm_cmd_makemodel(int argc, char **argv) {
  int status = RTM_OK, quiet = 0;
  rtm_config_t *cfg = calloc(1, sizeof *cfg);
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
             cfg->path);
  if (!cfg->model.file[0])
    RTM_FAIL(RTM_ERR_CONFIG, "%s: makemodel needs model.file, the HDF5 file to write", cfg->path);
  RTM_TRY(rtm_app_check_overwrite(cfg, cfg->model.file));
  RTM_TRY(read_text(cfg->model.description, &text));
  const rtm_io_volume_t volume = {
      .n = {cfg->grid.n[0], cfg->grid.n[1], cfg->grid.n[2]},
      .spacing_m = {cfg->grid.spacing_m[0], cfg->grid.spacing_m[1], cfg->grid.spacing_m[2]},
      .origin_m = {cfg->grid.origin_m[0], cfg->grid.origin_m[1], cfg->grid.origin_m[2]},
      .z_offset = 0,
      .nz_local = cfg->grid.n[2]};
  RTM_TRY(rtm_model_build(text, cfg->model.description, &volume, values));
  RTM_TRY(rtm_io_write_model(cfg->model.file, &volume, (const float *const *)values));
  rtm_log_info("makemodel: wrote %s (%d x %d x %d cells) from %s", cfg->model.file, volume.n[0],
               volume.n[1], volume.n[2], cfg->model.description);
fail:
  rtm_io_model_release(values);
  free(text);
  free(cfg);
  return rtm_status_exit_code(status);
}
