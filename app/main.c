/* rtm3d - command-line entry: dispatches to one file per subcommand. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "app.h"
#include "rtm_io.h"
#include "rtm_config.h"
#include "rtm_mpi.h"
#include "rtm_status.h"
#include "rtm_version.h"
#include "solver_io.h"

/* A command runs on one rank (run), or on every rank of an MPI launch (run_on_ranks, with
 * main's MPI context; one rank without a launcher). */
typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  int (*run_on_ranks)(int argc, char **argv, rtm_mpi_t *mpi);
  const char *summary;
} rtm_command_t;

static int cmd_help_config(int argc, char **argv);

static const rtm_command_t commands[] = {
    {"info", rtm_cmd_info, NULL, "devices, features and build options"},
    {"model", NULL, rtm_cmd_model, "forward modelling: snapshots and shot gathers"},
    {"migrate", NULL, rtm_cmd_migrate, "reverse-time migration of recorded gathers into an image"},
    {"bench", NULL, rtm_cmd_bench, "GPU kernel throughput beside the copy bandwidth (needs a GPU)"},
    {"tune", rtm_cmd_tune, NULL,
     "GPU kernel shape sweep, cached for kernel.* = auto (needs a GPU)"},
    {"accuracy", rtm_cmd_accuracy, NULL,
     "what the deck's spacing, dt and wavelet cost in accuracy"},
    {"validate", rtm_cmd_validate, NULL,
     "compare a run with a reference, exit 0 only within tolerance"},
    {"plot", rtm_cmd_plot, NULL, "PNG slice of a snapshot, image or gather"},
    {"export", rtm_cmd_export, NULL, "a run file's shot gathers as SEG-Y"},
    {"makemodel", rtm_cmd_makemodel, NULL, "an HDF5 model from a description: layers, boxes, ..."},
    {"help-config", cmd_help_config, NULL, "every configuration key: type, default, range, help"},
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d COMMAND [ARGS...]\n"
          "       rtm3d --version | --help | --help-config\n\n"
          "rtm3d propagates seismic waves through 3D volumes (8th order in space, leapfrog in\n"
          "time) on the CPU reference or CUDA backend, and writes HDF5 snapshots and gathers.\n\n"
          "commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
    fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf(out,
          "\n'rtm3d COMMAND --help' describes each command. Exit status: 0 success, 1 run-time\n"
          "failure or failed validation, 2 usage or configuration error; 130, 143 and others\n"
          "when a signal stopped the run (docs/failures.md, \"Exit status\").\n");
}

static void help_config_usage(FILE *out) {
  fprintf(out, "usage: rtm3d help-config [SECTION ...]\n\n"
               "Every configuration key with its type, default, range and meaning, one table a\n"
               "section; with SECTION (rtm or [rtm]; several allowed) only those sections. Lines\n"
               "are wrapped at $COLUMNS, else the terminal's width, else 80.\n");
}

/* $COLUMNS when it is a number, else the terminal's width when stdout is one, else 80. */
static int output_width(void) {
  const char *columns = getenv("COLUMNS");
  char *end = NULL;
  const long given = columns ? strtol(columns, &end, 10) : 0;
  if (columns && end != columns && *end == '\0' && given > 0 && given < 100000) return (int)given;
  struct winsize window;
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &window) == 0 && window.ws_col > 0)
    return window.ws_col;
  return 80;
}

static int cmd_help_config(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      help_config_usage(stdout);
      return 0;
    }
    if (argv[i][0] == '-') {
      rtm_log_error("help-config: unknown option '%s'", argv[i]);
      help_config_usage(stderr);
      return 2;
    }
  }
  const int status =
      rtm_config_print_schema(stdout, (const char *const *)argv + 1, argc - 1, output_width());
  return rtm_status_exit_code(status);
}

static char command_line[8192];

const char *rtm_app_command_line(void) {
  return command_line;
}

/* argv joined by spaces, an argument with characters the shell reads quoted '...' */
static void remember_command_line(int argc, char **argv) {
  size_t used = 0;
  for (int i = 0; i < argc && used + 8 < sizeof command_line; ++i) {
    const char *a = argv[i];
    const int plain = a[0] && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-+=.,/:@%") == strlen(a);
    if (i) command_line[used++] = ' ';
    if (!plain) command_line[used++] = '\'';
    for (const char *c = a; *c && used + 6 < sizeof command_line; ++c) {
      if (*c == '\'' && !plain) { /* a quote inside quotes: '\'' */
        memcpy(command_line + used, "'\\''", 4);
        used += 4;
      } else {
        command_line[used++] = *c;
      }
    }
    if (!plain) command_line[used++] = '\'';
  }
  if (used >= sizeof command_line) used = sizeof command_line - 1;
  command_line[used] = '\0';
}

int rtm_app_load_config(int argc, char **argv, rtm_config_t *cfg, int *quiet, int *extra,
                        int *extra_count) {
  const int status = rtm_app_read_config(argc, argv, cfg, quiet, extra, extra_count);
  return status != RTM_OK ? status : rtm_config_validate(cfg);
}

int rtm_app_read_config(int argc, char **argv, rtm_config_t *cfg, int *quiet, int *extra,
                        int *extra_count) {
  const char *path = NULL;
  int status = RTM_OK, max_extra = extra_count ? *extra_count : 0, n_extra = 0;
  if (quiet) *quiet = 0;
  rtm_config_defaults(cfg);
  /* First pass: find the deck so that --set overrides apply on top of it in order. */
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--set") == 0) {
      ++i;
    } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
      if (quiet) *quiet = 1;
      rtm_log_set_quiet(1); /* errors alone */
    } else if (strcmp(argv[i], "--force") == 0) {
      continue; /* output.overwrite = true, applied after the deck below */
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      if (n_extra >= max_extra)
        RTM_FAIL(RTM_ERR_USAGE, "%s: unknown option '%s' (see 'rtm3d %s --help')", argv[0], argv[i],
                 argv[0]);
      extra[n_extra++] = i;
    } else if (!path) {
      path = argv[i];
    } else {
      RTM_FAIL(RTM_ERR_USAGE, "%s: more than one config file given ('%s' and '%s')", argv[0], path,
               argv[i]);
    }
  }
  if (!path)
    RTM_FAIL(RTM_ERR_USAGE, "%s: no config file given (see 'rtm3d %s --help')", argv[0], argv[0]);
  RTM_TRY(rtm_config_load(path, cfg));
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--force") == 0) cfg->output.overwrite = 1;
    if (strcmp(argv[i], "--set") != 0) continue;
    if (i + 1 >= argc) RTM_FAIL(RTM_ERR_USAGE, "--set needs section.key=value");
    RTM_TRY(rtm_config_set_option(cfg, argv[++i]));
  }
  if (extra_count) *extra_count = n_extra;
  return RTM_OK;
fail:
  return status;
}

/* FNV-1a of one line of the echo, below 2^32: a double holds it exactly. */
enum { DECK_LINES_MAX = 512 };

int rtm_app_split_groups(const rtm_config_t *cfg, rtm_mpi_t *mpi) {
  const int count = cfg->mpi.shot_groups, ranks = rtm_mpi_world_size(mpi);
  if (count >= 1 && ranks % count == 0) return rtm_mpi_split_groups(mpi, count);
  char where[RTM_CONFIG_ORIGIN_MAX];
  rtm_log_error("%s: mpi.shot_groups = %d does not divide the %d rank%s of this run into groups "
                "of one size: choose a divisor of the rank count, or start a multiple of %d "
                "ranks (mpirun -np N)",
                rtm_config_origin(cfg, "mpi.shot_groups", where, sizeof where), count, ranks,
                ranks == 1 ? "" : "s", count);
  return RTM_ERR_CONFIG;
}

int rtm_app_check_same_deck(const rtm_config_t *cfg, rtm_mpi_t *mpi) {
  int status = RTM_OK;
  char *text = NULL;
  double *mine = NULL, *first = NULL;
  const int rank = rtm_mpi_world_rank(mpi);
  if (rtm_mpi_world_size(mpi) == 1) return RTM_OK;
  text = rtm_config_echo_string(cfg);
  mine = calloc(DECK_LINES_MAX, sizeof *mine);
  first = calloc(DECK_LINES_MAX, sizeof *first);
  if (!text || !mine || !first) RTM_FAIL(RTM_ERR_NOMEM, "out of memory comparing the ranks' decks");
  /* each line's hash, the line count last; rank 0's to every rank (a sum of its alone);
   * comments hash to 0 (the echo's first names the deck's path, which may differ) */
  int lines = 0;
  for (const char *line = text; *line && lines < DECK_LINES_MAX - 1; ++lines) {
    const size_t length = strcspn(line, "\n");
    mine[lines] = line[0] == '#' ? 0.0 : rtm_app_text_hash(line, length);
    line += length + (line[length] == '\n');
  }
  mine[DECK_LINES_MAX - 1] = lines;
  if (rank == 0) memcpy(first, mine, DECK_LINES_MAX * sizeof *first);
  RTM_TRY(rtm_mpi_world_allreduce(mpi, first, DECK_LINES_MAX, RTM_MPI_SUM));
  double differs = 0.0;
  const char *line = text, *section = "", *section_end = section;
  for (int k = 0; k < DECK_LINES_MAX && differs == 0.0; ++k) {
    const size_t length = strcspn(line, "\n");
    if (line[0] == '[' && length > 2 && line[length - 1] == ']') {
      section = line + 1;
      section_end = line + length - 1;
    }
    if (mine[k] != first[k]) {
      differs = 1.0;
      if (k < lines)
        rtm_log_error("rank %d's deck differs from rank 0's at %.*s%s%.*s (the deck and --set "
                      "options it was started with)",
                      rank, (int)(section_end - section), section, *section ? "." : "", (int)length,
                      line);
      else
        rtm_log_error("rank %d's deck differs from rank 0's (the deck and --set options it was "
                      "started with)",
                      rank);
    }
    line += length + (line[length] == '\n');
  }
  RTM_TRY(rtm_mpi_world_allreduce(mpi, &differs, 1, RTM_MPI_MAX));
  if (differs != 0.0) {
    status = RTM_ERR_CONFIG; /* rank 0 says it once; the ranks that differ said where */
    if (rank == 0)
      rtm_log_error("the ranks were started with different decks or --set options (the lines "
                    "above name the first key that differs): start every rank with the same, "
                    "or the run would mix them");
  }
fail:
  free(text);
  free(mine);
  free(first);
  return status;
}

/* The command's arguments with every "--name=value" as "--name" "value", so that each
 * option of each command takes both forms (its parser sees the second). *count gets the
 * new count; NULL when out of memory. The names it allocates are listed in `names` (a
 * command may reorder its arguments), freed by free_split_options. */
typedef struct {
  char **args, **names;
  int name_count;
} split_options_t;

static char **split_long_options(int argc, char **argv, int *count, split_options_t *split) {
  char **out = split->args = malloc((2 * (size_t)argc + 1) * sizeof *out);
  split->names = malloc(((size_t)argc + 1) * sizeof *split->names);
  split->name_count = 0;
  int n = 0;
  if (!out || !split->names) return NULL;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i], *eq = strchr(a, '=');
    if (i >= 2 && a[0] == '-' && a[1] == '-' && eq && eq > a + 2) {
      char *name = malloc((size_t)(eq - a) + 1);
      if (!name) return NULL;
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = '\0';
      split->names[split->name_count++] = name;
      out[n++] = name;
      out[n++] = (char *)eq + 1;
    } else {
      out[n++] = argv[i];
    }
  }
  out[n] = NULL;
  *count = n;
  return out;
}

static void free_split_options(split_options_t *split) {
  for (int k = 0; k < split->name_count; ++k)
    free(split->names[k]);
  free(split->names);
  free(split->args);
}

/* What a command printed to the standard output reached it: a table or a verdict there (rtm3d
 * accuracy > report.txt on a full disk) is the command's result, and one lost is a failure,
 * said on stderr (probe V, V1); `code` otherwise. */
static int stdout_checked(int code) {
  errno = 0;
  if (fflush(stdout) == 0 && !ferror(stdout)) return code;
  rtm_log_error("cannot write to the standard output%s%s: what the command printed there is "
                "lost",
                errno ? ": " : "", errno ? strerror(errno) : "");
  return code ? code : 1;
}

/* Ranks sharing a node, each with OpenMP's default of every core, take turns on them: their
 * set-up, the host's sums and filters (two ranks of a 32-core host, one a GPU: a 512^3 set-up
 * 0.80 s against 0.51 s with 16 threads each), the cpu backend's steps (issue 32, D9). Without
 * OMP_NUM_THREADS each rank takes its share of the job's cores on the node (its I/O thread
 * too: io_worker.c); a value given is kept. */
static void share_node_cores(const rtm_mpi_t *mpi) {
#ifdef _OPENMP
  const int ranks = rtm_mpi_local_size(mpi);
  const long cores = rtm_app_job_cpus(); /* a batch job's cpuset, not the whole host */
  const char *given = getenv("OMP_NUM_THREADS");
  if (ranks < 2 || cores < 1 || (given && given[0])) return;
  if ((long)omp_get_max_threads() * ranks > cores)
    omp_set_num_threads(cores / ranks > 1 ? (int)(cores / ranks) : 1);
#else
  (void)mpi;
#endif
}

/* Descriptors 0, 1 and 2 each held open: a program started with one closed (`>&- 2>&-`)
 * would have its next open take it, and an output file opened as descriptor 2 took the
 * progress lines into its data (a probe: a 100-shot model's gathers damaged, exit 0). A
 * closed one becomes /dev/null opened for reading, so that writes to it fail as they did
 * (stdout's checks still report a lost output) and no file of the run takes its place.
 * False where one cannot be held. */
static int hold_standard_descriptors(void) {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = open("/dev/null", O_RDONLY);
    if (held != fd) {
      if (held >= 0) close(held);
      return 0;
    }
  }
  return 1;
}

int main(int argc, char **argv) {
  if (!hold_standard_descriptors()) return 2;
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *name = argv[1];
  rtm_ignore_file_size_signal(); /* every command writes through checked writes */
  rtm_io_startup();
  remember_command_line(argc, argv);
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return stdout_checked(0);
  }
  if (strcmp(name, "--version") == 0) {
    printf("rtm3d %s (%s)\n", RTM3D_VERSION, RTM3D_GIT_REVISION);
    return stdout_checked(0);
  }
  if (strcmp(name, "--help-config") == 0)
    return stdout_checked(cmd_help_config(argc - 1, argv + 1));
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
    if (strcmp(name, commands[i].name) == 0) {
      /* under an MPI launcher every rank runs the command; a rank that fails takes the
       * others down with it rather than leave them waiting in a collective */
      rtm_mpi_t *mpi = NULL;
      if (rtm_mpi_init(&argc, &argv, &mpi) != RTM_OK) return 1;
      share_node_cores(mpi);
      const int ranks = rtm_mpi_world_size(mpi);
      /* the long-running commands stop between steps on SIGINT, SIGTERM or SIGHUP, cleaning
       * up (rtm_interrupt_install) */
      if (strcmp(name, "model") == 0 || strcmp(name, "migrate") == 0 ||
          strcmp(name, "accuracy") == 0 || strcmp(name, "makemodel") == 0 ||
          strcmp(name, "export") == 0 || (strcmp(name, "bench") == 0 && ranks > 1))
        rtm_interrupt_install(); /* (bench on one rank times kernels: a signal ends it) */
      if (ranks > 1 && !commands[i].run_on_ranks) {
        rtm_log_error("rtm3d %s under an MPI launcher with %d ranks: only 'rtm3d model', "
                      "'migrate' and 'bench' run across ranks (z-slabs); run %s on one rank",
                      name, ranks, name);
        rtm_mpi_abort(mpi, 2);
        rtm_mpi_finalize(mpi);
        return 2;
      }
      int count = 0;
      split_options_t split = {0};
      char **args = split_long_options(argc, argv, &count, &split);
      if (!args) {
        free_split_options(&split);
        rtm_log_error("out of memory reading the command line");
        rtm_mpi_abort(mpi, 1);
        return 1;
      }
      const int code = stdout_checked(commands[i].run_on_ranks
                                          ? commands[i].run_on_ranks(count - 1, args + 1, mpi)
                                          : commands[i].run(count - 1, args + 1));
      free_split_options(&split);
      if (code != 0) rtm_mpi_abort(mpi, code);
      rtm_mpi_finalize(mpi);
      return code;
    }
  rtm_log_error("unknown command '%s' (see 'rtm3d --help')", name);
  return 2;
}
