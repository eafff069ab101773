/* app.h - the subcommands of rtm3d. Each takes the arguments after its name and returns
 * a process exit status (0 ok, 1 run-time failure, 2 usage or config error); those that
 * run on every rank of an MPI launch (model, migrate, bench) also take main's MPI context
 * (rtm_mpi_init). The app parses, sets up, runs and reports; it holds no numerics. */
#ifndef RTM_APP_H
#define RTM_APP_H

#include "rtm_config.h"
#include "rtm_mpi.h"

int rtm_cmd_info(int argc, char **argv);
int rtm_cmd_model(int argc, char **argv, rtm_mpi_t *mpi);
int rtm_cmd_migrate(int argc, char **argv, rtm_mpi_t *mpi);
int rtm_cmd_bench(int argc, char **argv, rtm_mpi_t *mpi);
int rtm_cmd_tune(int argc, char **argv);
int rtm_cmd_export(int argc, char **argv);
int rtm_cmd_validate(int argc, char **argv);
/* The deck's grid spacing, dt and wavelet on a homogeneous medium against the exact solution,
 * without and with time.dispersion_correction (cmd_accuracy.c). */
int rtm_cmd_accuracy(int argc, char **argv);
int rtm_cmd_plot(int argc, char **argv);
int rtm_cmd_makemodel(int argc, char **argv);
/* `rtm3d bench --traces ...` (cmd_bench_traces.c): the trace pipeline alone, graph vs streams.
 * argv as for rtm_cmd_bench; a "--traces" among the arguments is skipped. */
int rtm_cmd_bench_traces(int argc, char **argv);
/* rtm3d bench under an MPI launcher with several ranks (cmd_bench_mpi.c): the deck across
 * z-slabs with the exchange overlapped, blocking and off, against rank 0 alone on the whole
 * volume: aggregate MCells/s, parallel efficiency, the share of the exchange hidden. */
int rtm_cmd_bench_mpi(int argc, char **argv, rtm_mpi_t *mpi);

/* Shared by the subcommands that take CONFIG [--set k=v ...] [--quiet]: loads the deck,
 * applies the overrides in order and validates. Returns a status (rtm_status.h). Options
 * it does not know are left for the caller: their indexes go to extra[], count in
 * *extra_count (extra may be NULL when none are allowed). */
int rtm_app_load_config(int argc, char **argv, rtm_config_t *cfg, int *quiet, int *extra,
                        int *extra_count);
/* rtm_app_load_config without the validation: for a command that sets keys of its own
 * before the deck is checked (accuracy), which then calls rtm_config_validate. */
int rtm_app_read_config(int argc, char **argv, rtm_config_t *cfg, int *quiet, int *extra,
                        int *extra_count);
/* Every rank's deck (with its --set options) against rank 0's, by the hash of each line of
 * the echo: a rank that differs names its first line that does, and every rank returns
 * RTM_ERR_CONFIG (issue 32, M1: ranks with different decks mixed them into a wrong result
 * with exit 0). Collective over every rank; RTM_OK at once on one. */
int rtm_app_check_same_deck(const rtm_config_t *cfg, rtm_mpi_t *mpi);
/* The ranks split into cfg's mpi.shot_groups (rtm_mpi_split_groups), a count that does not
 * divide the ranks refused first, the message naming the deck's line or --set (the same on
 * every rank). Collective. */
int rtm_app_split_groups(const rtm_config_t *cfg, rtm_mpi_t *mpi);

/* Address space PLplot, cairo and pango take to draw a figure beside a run, which they
 * abort the process without (ulimit -v: GLib-ERROR, SIGSEGV) rather than fail: plot and
 * migrate's figures ask this much left first (a 40^3 migration aborted with 164 MB left). */
#define RTM_APP_FIGURE_ADDRESS_SPACE ((size_t)256 << 20)

/* The command line that started this process (each argument quoted where the shell would
 * need it), for the run file and the report. */
const char *rtm_app_command_line(void);

#endif
