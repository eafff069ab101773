/* rtm3d export RUN.h5 --segy OUT.sgy: a run file's shot gathers as SEG-Y for the field's
 * tools (io/segy.c says which header bytes hold what). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "rtm_io.h"
#include "rtm_status.h"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: rtm3d export RUN.h5 --segy OUT.sgy [--field p|q] [--per-shot] [--force] [--quiet]\n\n"
      "Writes the shot gathers of a run file (rtm3d model's /traces, or every shot of a\n"
      "many-shot run) as SEG-Y rev 1: IEEE floats, the sample interval and count, shot\n"
      "and receiver numbers, source and receiver x, y (bytes 73-88) and depths (49, and\n"
      "41 as elevation -z) in millimetres through the scalars (69, 71), offsets (37).\n"
      "rtm3d migrate reads such a file as rtm.observed (a .sgy or .segy name), and so\n"
      "do other SEG-Y readers (segyio, Seismic Unix's segyread, ...).\n\n"
      "  --segy OUT.sgy  the SEG-Y file (all shots, numbered from 1 in bytes 9 and 17)\n"
      "  --per-shot      one file a shot instead: OUT_shot0.sgy, OUT_shot1.sgy, ...\n"
      "  --field NAME    the recorded field (default p; q for vti/tti runs that kept it)\n"
      "  --force         replace an existing OUT; with --per-shot the whole set: files of an\n"
      "                  earlier, larger set (OUT_shot<k>.sgy with k past this run's shots,\n"
      "                  regular files of exactly that name and no other) are removed\n"
      "  --quiet, -q     print only errors\n\n"
      "Each file is written aside as OUT.partial.XXXXXX.sgy, a new name of this run's, and\n"
      "renamed over OUT once all are complete: a failure leaves an earlier OUT as it was\n"
      "and no partial file. A target that is not a regular file (a device, a folder) is\n"
      "refused, and so is, --force or not, a run's name or file (NAME.lock, .commit,\n"
      ".partial, .resume.h5, .replaced, a run file, its sidecar or report, a figure\n"
      "rtm3d drew, or NAME.sgy written from another NAME.h5 than the one exported).\n"
      "SEG-Y stores the interval in whole microseconds: gathers at another interval are\n"
      "refused (model with output.trace_dt = 0.002, say). Exit 0 on success, 1 on a\n"
      "failure, 2 for usage errors, refused targets and unreadable or damaged input (a\n"
      "NaN sample, say).\n");
}

int rtm_cmd_export(int argc, char **argv) {
  int status = RTM_OK, per_shot = 0, force = 0, field_given = 0;
  const char *input = NULL, *segy = NULL, *field = "p";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--segy") == 0 || strcmp(a, "--field") == 0) {
      if (i + 1 >= argc) RTM_FAIL(RTM_ERR_USAGE, "export: %s needs a value", a);
      /* an option where the value should be (--segy --quiet) is a value forgotten, not a
       * file to write under the option's name */
      if (strncmp(argv[i + 1], "--", 2) == 0)
        RTM_FAIL(RTM_ERR_USAGE,
                 "export: %s needs a value, and '%s' is an option (a file of that name: "
                 "%s ./%s)",
                 a, argv[i + 1], a, argv[i + 1]);
      const char **value = strcmp(a, "--segy") == 0 ? &segy : &field;
      if (*value && (value == &segy || field_given))
        RTM_FAIL(RTM_ERR_USAGE, "export: %s is given twice: give it once", a);
      field_given |= value == &field;
      *value = argv[++i];
    } else if (strcmp(a, "--per-shot") == 0) {
      per_shot = 1;
    } else if (strcmp(a, "--force") == 0) {
      force = 1;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) { /* as the other commands */
      rtm_log_set_quiet(1);
    } else if (a[0] == '-') {
      RTM_FAIL(RTM_ERR_USAGE, "export: unknown option '%s' (see rtm3d export --help)", a);
    } else if (!input) {
      input = a;
    } else {
      RTM_FAIL(RTM_ERR_USAGE, "export: one run file, not '%s' too", a);
    }
  }
  if (!input) RTM_FAIL(RTM_ERR_USAGE, "export: no run file (see rtm3d export --help)");
  if (!segy || !segy[0]) RTM_FAIL(RTM_ERR_USAGE, "export: say where: --segy OUT.sgy");
  if (segy[strlen(segy) - 1] == '/')
    RTM_FAIL(RTM_ERR_USAGE, "export: --segy %s names a folder: give a file name", segy);
  /* a field is p or q (a run records no other), said as a usage error before any file */
  if (strcmp(field, "p") != 0 && strcmp(field, "q") != 0)
    RTM_FAIL(RTM_ERR_USAGE, "export: --field %s: a run records p, and q for vti/tti", field);
  int shots = 0;
  RTM_TRY(rtm_io_shot_count(input, &shots));
  RTM_TRY(rtm_segy_export(input, field, segy, per_shot, force));
  if (per_shot) { /* the files it wrote, by name (a probe: "wrote OUT", a name never written) */
    char first[2 * RTM_CONFIG_PATH_MAX + 32], last[sizeof first];
    RTM_TRY(rtm_segy_target_path(segy, 1, 0, first, sizeof first));
    RTM_TRY(rtm_segy_target_path(segy, 1, shots - 1, last, sizeof last));
    rtm_log_info("export: wrote %s%s%s: %d shot%s of %s from %s, one file a shot", first,
                 shots > 1 ? " to " : "", shots > 1 ? last : "", shots, shots == 1 ? "" : "s",
                 field, input);
  } else {
    rtm_log_info("export: wrote %s: %d shot%s of %s from %s", segy, shots, shots == 1 ? "" : "s",
                 field, input);
  }
fail:
  return rtm_status_exit_code(status);
}
