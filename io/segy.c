/* SEG-Y gathers through segyio (rtm_io.h, "SEG-Y"): a run file's shots exported, and SEG-Y
 * gathers read as rtm_io_gather_t, which is how migrate takes observed data from either
 * (rtm_io_shot_count and rtm_io_read_shot choose the format here; a run file's shots are
 * shot_gathers.c's).
 *
 * What rtm3d writes (SEG-Y rev 1, big-endian, fixed-length traces, no extended headers):
 *   text header   40 lines naming the run file, the field, the units and the header bytes
 *                 below (segyio stores it in EBCDIC);
 *   binary header sample interval (3217, microseconds), samples (3221), format 5 (3225,
 *                 IEEE float), metres (3255), revision 1 (3501), fixed length (3503),
 *                 traces per shot (3213);
 *   trace headers trace sequence (1, 5), shot number from 1 (9 field record, 17 energy
 *                 source point), receiver number within the shot from 1 (13), trace id 1
 *                 (29), offset: the horizontal source-receiver distance rounded to a metre
 *                 (37), receiver elevation -z (41) and source depth z (49) with elevation
 *                 scalar -1000 (69), source and receiver x, y (73, 77, 81, 85) with
 *                 coordinate scalar -1000 (71): millimetres, coordinate units 1 (89: length),
 *                 samples (115) and interval (117, microseconds).
 * Reading takes any such file: shots are the distinct field records (9) in the order they
 * first appear, or one shot when every trace has field record 0; positions through the
 * scalars (0 means 1, negative divides); samples in IBM or IEEE floats; the interval from the
 * binary header, else the first trace header. z of a receiver is minus its elevation. */
#define _POSIX_C_SOURCE 200809L /* open(O_EXCL | O_CLOEXEC), fstat, lstat, opendir */
#include "rtm_io.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtm_io_impl.h"
#include "rtm_status.h"

int rtm_segy_path(const char *path) {
  const char *dot = path ? strrchr(path, '.') : NULL;
  if (!dot) return 0;
  char ext[8] = "";
  for (int i = 0; i < 7 && dot[i + 1]; ++i)
    ext[i] = (char)tolower((unsigned char)dot[i + 1]);
  return strcmp(ext, "sgy") == 0 || strcmp(ext, "segy") == 0;
}

int rtm_segy_looks_like(const char *path) {
  unsigned char start[3600];
  /* never waiting: a FIFO would hold a plain open until a writer came, a device never end */
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat info;
  const int regular = fd >= 0 && fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  const int whole = regular && read(fd, start, sizeof start) == (ssize_t)sizeof start;
  if (fd >= 0) close(fd);
  /* the text header's first card ('C' in EBCDIC or ASCII), a sample format code 1-16 in
   * the binary header (bytes 3225-3226, big-endian or swapped) */
  if (!whole || (start[0] != 0xC3 && start[0] != 'C')) return 0;
  const int format = start[3224] << 8 | start[3225];
  return (format >= 1 && format <= 16) ||
         ((format & 255) == 0 && format >> 8 >= 1 && format >> 8 <= 16);
}

/* A file read as a run file because of its name that looks like SEG-Y (a probe: "not an
 * HDF5 file" alone, where the name was all that was wrong): refused saying so, in a build
 * that reads SEG-Y. Looked at where the shots are first counted (migrate's check, export),
 * not at every shot's read. */
static int refuse_unnamed_segy(const char *path) {
  if (!rtm_segy_available() || !rtm_segy_looks_like(path)) return RTM_OK;
  rtm_log_error("%s looks like a SEG-Y file (its text and binary headers), not HDF5: rtm3d "
                "reads SEG-Y gathers under a name ending in .sgy or .segy",
                path);
  return RTM_ERR_INPUT;
}

/* Observed shots in either format, SEG-Y or a run file (shot_gathers.c), chosen here so
 * that calls go one way: segy.c -> shot_gathers.c. */
int rtm_io_shot_count(const char *path, int *count) {
  *count = 0;
  if (rtm_segy_path(path)) return rtm_segy_shot_count(path, count);
  const int status = refuse_unnamed_segy(path);
  return status != RTM_OK ? status : rtm_h5_shot_count(path, count);
}

/* Shot `shot`'s gather of a SEG-Y file, its samples too or not (below, after segyio). */
static int segy_read(const char *path, int shot, int samples_too, rtm_io_gather_t *gather);

int rtm_io_read_shot(const char *path, int shot, const char *field, rtm_io_gather_t *gather) {
  memset(gather, 0, sizeof *gather);
  if (rtm_segy_path(path)) return segy_read(path, shot, 1, gather);
  return rtm_h5_read_shot(path, shot, field, 1, gather);
}

int rtm_io_read_shot_geometry(const char *path, int shot, const char *field,
                              rtm_io_gather_t *gather) {
  memset(gather, 0, sizeof *gather);
  if (rtm_segy_path(path)) return segy_read(path, shot, 0, gather);
  return rtm_h5_read_shot(path, shot, field, 0, gather);
}

int rtm_segy_read_shot(const char *path, int shot, rtm_io_gather_t *gather) {
  return segy_read(path, shot, 1, gather);
}

/* The dot of the extension of path's file name (rtm_io_extension), or NULL without one
 * (.hidden: .hidden_shot0, not _shot0.hidden). */
static const char *extension_of(const char *path) {
  const char *extension = rtm_io_extension(path);
  return extension[0] ? extension : NULL;
}

/* (rtm_io.h; path arithmetic alone, with or without segyio, as the two below) */
int rtm_segy_target_path(const char *path, int per_shot, int shot, char *out, size_t size) {
  int written;
  if (per_shot) {
    const char *dot = extension_of(path);
    const int stem = dot ? (int)(dot - path) : (int)strlen(path);
    written = snprintf(out, size, "%.*s_shot%d%s", stem, path, shot, dot ? dot : "");
  } else {
    written = snprintf(out, size, "%s", path);
  }
  if (written < 0 || (size_t)written >= size) {
    rtm_log_error("export: the path %s is too long", path);
    return RTM_ERR_USAGE;
  }
  return RTM_OK;
}

/* The names of OUT's per-shot set, STEM_shot<k>EXT in OUT's folder: k as rtm_segy_target_path
 * writes it (no sign, no leading zero) and EXT the same to the byte. */
typedef struct {
  char folder[RTM_CONFIG_PATH_MAX + 2];
  const char *stem, *extension;
  size_t stem_length;
} shot_pattern_t;

static void shot_pattern(const char *path, shot_pattern_t *pattern) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  const char *dot = extension_of(path);
  if (!slash)
    snprintf(pattern->folder, sizeof pattern->folder, ".");
  else
    snprintf(pattern->folder, sizeof pattern->folder, "%.*s",
             slash == path ? 1 : (int)(slash - path), path);
  pattern->stem = base;
  pattern->stem_length = dot ? (size_t)(dot - base) : strlen(base);
  pattern->extension = dot ? dot : "";
}

/* The shot number of `name` in the set, or -1 when the name is not of it. */
static long shot_of_name(const shot_pattern_t *pattern, const char *name) {
  if (strncmp(name, pattern->stem, pattern->stem_length) != 0) return -1;
  name += pattern->stem_length;
  if (strncmp(name, "_shot", 5) != 0) return -1;
  name += 5;
  long shot = 0;
  int digits = 0;
  for (; isdigit((unsigned char)*name) && digits < 10; ++name, ++digits)
    shot = 10 * shot + (*name - '0');
  if (digits == 0 || (digits > 1 && name[-digits] == '0')) return -1;
  return strcmp(name, pattern->extension) == 0 ? shot : -1;
}

int rtm_segy_per_shot_given(const char *path, char *given, size_t size) {
  const char *dot = extension_of(path), *end = dot ? dot : path + strlen(path);
  const char *digits = end;
  while (digits > path && isdigit((unsigned char)digits[-1]))
    --digits;
  if (digits == end || digits - path < 5 || strncmp(digits - 5, "_shot", 5) != 0) return -1;
  const int written =
      snprintf(given, size, "%.*s%s", (int)(digits - 5 - path), path, dot ? dot : "");
  if (written < 0 || (size_t)written >= size) return -1;
  shot_pattern_t pattern; /* the name as export would have written it: k without a leading 0 */
  shot_pattern(given, &pattern);
  const char *slash = strrchr(path, '/');
  return (int)shot_of_name(&pattern, slash ? slash + 1 : path);
}

#ifndef RTM3D_HAVE_SEGYIO

int rtm_segy_available(void) {
  return 0;
}

static int unavailable(const char *path) {
  rtm_log_error("%s: SEG-Y needs segyio, which this build lacks (install libsegyio-dev and "
                "configure again; rtm3d info says what the build has)",
                path);
  return RTM_ERR_UNSUPPORTED;
}

int rtm_segy_export(const char *h5_path, const char *field, const char *segy_path, int per_shot,
                    int overwrite) {
  (void)h5_path;
  (void)field;
  (void)per_shot;
  (void)overwrite;
  return unavailable(segy_path);
}

int rtm_segy_write(const char *h5_path, const char *named, const char *field, const char *path) {
  (void)h5_path;
  (void)named;
  (void)field;
  return unavailable(path);
}

int rtm_segy_shot_count(const char *path, int *count) {
  *count = 0;
  return unavailable(path);
}

int rtm_segy_written_from(const char *path, const char *h5_path) {
  (void)path;
  (void)h5_path;
  return 0;
}

static int segy_read(const char *path, int shot, int samples_too, rtm_io_gather_t *gather) {
  (void)shot;
  (void)samples_too;
  memset(gather, 0, sizeof *gather);
  return unavailable(path);
}

#else
#include <pthread.h>
#include <segyio/segy.h>

enum { TEXT_BYTES = 3200, BIN_BYTES = 400, HEADER_BYTES = 240, SCALE = 1000 };

int rtm_segy_available(void) {
  return 1;
}

static const char *segy_error(int code) {
  switch (code) {
  case SEGY_FOPEN_ERROR: return "cannot open";
  case SEGY_FSEEK_ERROR: return "seek failed";
  case SEGY_FREAD_ERROR: return "read failed (the file is shorter than its headers say?)";
  case SEGY_FWRITE_ERROR: return "write failed (disk full?)";
  case SEGY_INVALID_FIELD: return "invalid header field";
  case SEGY_TRACE_SIZE_MISMATCH: return "the file's size is not a whole number of traces";
  case SEGY_INVALID_ARGS: return "invalid arguments";
  default: return "segyio error";
  }
}

/* Runs a segyio call; on failure logs the context (printf-style), segyio's reason and the
 * system's (a full disk shows as a failed seek: segyio seeks before each trace, which writes
 * out what the stream holds), stores `code` in `status` and jumps to `fail`: RTM_ERR_IO where
 * rtm3d writes, RTM_ERR_INPUT where it reads (a damaged file is an input error, as a damaged
 * HDF5 file is). */
#define SEGY_CHECK(call, code, ...)                                                                \
  do {                                                                                             \
    errno = 0;                                                                                     \
    const int segy_err_ = (call);                                                                  \
    if (segy_err_ != SEGY_OK) {                                                                    \
      const int errno_ = errno;                                                                    \
      char segy_what_[2 * RTM_CONFIG_PATH_MAX];                                                    \
      snprintf(segy_what_, sizeof segy_what_, __VA_ARGS__);                                        \
      RTM_FAIL(code, "%s: %s%s%s%s", segy_what_, segy_error(segy_err_), errno_ ? " (" : "",        \
               errno_ ? strerror(errno_) : "", errno_ ? ")" : "");                                 \
    }                                                                                              \
  } while (0)
#define SEGY_WRITE(call, ...) SEGY_CHECK(call, RTM_ERR_IO, __VA_ARGS__)
#define SEGY_READ(call, ...) SEGY_CHECK(call, RTM_ERR_INPUT, __VA_ARGS__)

/* A length in metres as a header integer of millimetres; refused past int32. */
static int scaled(double metres, const char *path, const char *what, int32_t *out) {
  const double value = metres * SCALE;
  if (!(fabs(value) < 2147483647.0)) {
    rtm_log_error("%s: %s = %g m does not fit a SEG-Y header in millimetres (|value| < 2147 km)",
                  path, what, metres);
    return RTM_ERR_INPUT;
  }
  *out = (int32_t)lround(value);
  return RTM_OK;
}

static int set_header(char *header, const char *path, int trace, int shot, int receiver,
                      const double source_m[3], const double receiver_m[3], int samples,
                      int interval_us) {
  int status = RTM_OK;
  int32_t sx, sy, sz, gx, gy, gz;
  RTM_TRY(scaled(source_m[0], path, "source x", &sx));
  RTM_TRY(scaled(source_m[1], path, "source y", &sy));
  RTM_TRY(scaled(source_m[2], path, "source z", &sz));
  RTM_TRY(scaled(receiver_m[0], path, "receiver x", &gx));
  RTM_TRY(scaled(receiver_m[1], path, "receiver y", &gy));
  RTM_TRY(scaled(-receiver_m[2], path, "receiver elevation", &gz));
  const double offset = hypot(receiver_m[0] - source_m[0], receiver_m[1] - source_m[1]);
  memset(header, 0, HEADER_BYTES);
  const struct {
    int field;
    int32_t value;
  } fields[] = {
      {SEGY_TR_SEQ_LINE, trace + 1},
      {SEGY_TR_SEQ_FILE, trace + 1},
      {SEGY_TR_FIELD_RECORD, shot + 1},
      {SEGY_TR_NUMBER_ORIG_FIELD, receiver + 1},
      {SEGY_TR_ENERGY_SOURCE_POINT, shot + 1},
      {SEGY_TR_TRACE_ID, 1},
      {SEGY_TR_OFFSET, (int32_t)lround(offset)},
      {SEGY_TR_RECV_GROUP_ELEV, gz},
      {SEGY_TR_SOURCE_DEPTH, sz},
      {SEGY_TR_ELEV_SCALAR, -SCALE},
      {SEGY_TR_SOURCE_GROUP_SCALAR, -SCALE},
      {SEGY_TR_SOURCE_X, sx},
      {SEGY_TR_SOURCE_Y, sy},
      {SEGY_TR_GROUP_X, gx},
      {SEGY_TR_GROUP_Y, gy},
      {SEGY_TR_COORD_UNITS, 1},
      {SEGY_TR_SAMPLE_COUNT, samples},
      {SEGY_TR_SAMPLE_INTER, interval_us},
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i)
    SEGY_WRITE(segy_set_field(header, fields[i].field, fields[i].value), "%s: trace header byte %d",
               path, fields[i].field);
fail:
  return status;
}

/* The text header: 40 cards of 80 characters. */
static void text_header(char *text, const char *h5_path, const char *writer, const char *field,
                        int shots, int samples, int interval_us) {
  char card[96];
  const char *lines[40] = {0};
  char stored[8][96];
  snprintf(stored[2], sizeof stored[2], "written by rtm3d %s (segyio); SEG-Y rev 1", writer);
  snprintf(stored[0], sizeof stored[0], "rtm3d gathers of %.56s", h5_path);
  snprintf(stored[1], sizeof stored[1], "field %.8s, %d shot(s), %d samples of %d us, IEEE floats",
           field, shots, samples, interval_us);
  lines[0] = stored[0];
  lines[1] = stored[1];
  lines[2] = "positions in metres; coordinates and elevations scaled by 1/1000 (mm)";
  lines[3] = "bytes 9 and 17: shot from 1; 13: receiver within the shot from 1";
  lines[4] = "bytes 73, 77: source x, y; 81, 85: receiver x, y; 49: source depth z";
  lines[5] = "byte 41: receiver elevation = -z; 37: horizontal offset, whole metres";
  lines[6] = stored[2];
  lines[39] = "END TEXTUAL HEADER";
  memset(text, ' ', TEXT_BYTES);
  for (int i = 0; i < 40; ++i) {
    snprintf(card, sizeof card, "C%2d %-76.76s", i + 1, lines[i] ? lines[i] : "");
    memcpy(text + 80 * i, card, 80);
  }
}

/* The run file that text_header's first card names, `named` (up to 56 characters: a longer
 * path cut), is `h5_path` or its PATH.partial: the same file name, or where the card cut
 * the path the start of either as this run spells it. */
static int names_run_file(const char *named, const char *h5_path) {
  char partial[RTM_CONFIG_PATH_MAX + 16];
  const size_t length = strlen(named);
  snprintf(partial, sizeof partial, "%s.partial", h5_path);
  if (length == 56) /* cut: the start of the path */
    return strncmp(named, h5_path, length) == 0 || strncmp(named, partial, length) == 0;
  /* the whole path as the run spells it: a NAME.sgy exported from another folder's NAME.h5,
   * or named another way, is not taken for this run's (it stays, with a warning) */
  return strcmp(named, h5_path) == 0 || strcmp(named, partial) == 0;
}

/* Whether `path` is a regular file whose text header says rtm3d exported it (its first and
 * seventh cards), and, when it is, the run file its first card names (`named`, 64 bytes). */
static int written_by_rtm3d(const char *path, char *named) {
  /* "export" or "model" (its output.segy copy) after the writer */
  static const char gathers[] = "C 1 rtm3d gathers of ", writer[] = "C 7 written by rtm3d ";
  char text[SEGY_TEXT_HEADER_SIZE + 1];
  struct stat info;
  if (lstat(path, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < TEXT_BYTES) return 0;
  segy_file *fp = segy_open(path, "rb");
  if (!fp) return 0;
  const int read = segy_read_textheader(fp, text);
  segy_close(fp);
  if (read != SEGY_OK) return 0;
  text[TEXT_BYTES] = '\0';
  if (strncmp(text, gathers, sizeof gathers - 1) != 0 ||
      strncmp(text + 80 * 6, writer, sizeof writer - 1) != 0)
    return 0;
  /* the first card's rest, its padding dropped */
  snprintf(named, 64, "%.56s", text + sizeof gathers - 1);
  for (size_t n = strlen(named); n > 0 && named[n - 1] == ' '; --n)
    named[n - 1] = '\0';
  return 1;
}

int rtm_segy_written_from(const char *path, const char *h5_path) {
  char named[64];
  return written_by_rtm3d(path, named) && names_run_file(named, h5_path);
}

/* `file` as a message names it: the file the user asked for, not the PATH.partial or
 * PATH.partial.XXXXXX.EXT this run writes aside. */
static void shown_name(const char *file, char *shown, size_t size) {
  static const char suffix[] = ".partial";
  const char *partial = NULL;
  for (const char *at = strstr(file, suffix); at; at = strstr(at + 1, suffix))
    partial = at;
  const char *rest = partial ? partial + sizeof suffix - 1 : NULL;
  const int aside = partial && partial > file && (rest[0] == '\0' || rest[0] == '.');
  snprintf(shown, size, "%.*s", (int)(aside ? (size_t)(partial - file) : strlen(file)), file);
}

/* Shots [first, last) of the run file h5_file into `file`, an empty file this run made (it
 * is removed by the caller on failure); messages name both without their .partial. */
static int write_file(const char *h5_file, const char *named, const char *writer, const char *field,
                      const char *file, int first, int last) {
  int status = RTM_OK, interval_us = 0, samples = 0, trace = 0;
  char h5_path[RTM_CONFIG_PATH_MAX + 64], path[RTM_CONFIG_PATH_MAX + 64]; /* shown: cut to fit */
  shown_name(h5_file, h5_path, sizeof h5_path);
  shown_name(file, path, sizeof path);
  segy_file *fp = NULL;
  rtm_io_gather_t gather;
  char text[TEXT_BYTES], binary[BIN_BYTES], header[HEADER_BYTES];
  float *buffer = NULL;
  memset(&gather, 0, sizeof gather);
  for (int shot = first; shot < last; ++shot) {
    if (rtm_interrupted()) /* the caller removes the file this run made */
      RTM_FAIL(RTM_ERR_INTERRUPTED, "export: stopped by %s before shot %d of %s",
               rtm_interrupt_name(), shot, h5_path);
    RTM_TRY(rtm_io_read_shot(h5_file, shot, field, &gather));
    /* a damaged position is the run file's, not the SEG-Y's (probe X, X6: blamed on the
     * output, "does not fit" for a NaN) */
    for (int k = -1; k < gather.count; ++k) {
      const double *at = k < 0 ? gather.source_m : gather.receivers_m + 3 * (size_t)k;
      if (!isfinite(at[0]) || !isfinite(at[1]) || !isfinite(at[2])) {
        char who[48];
        snprintf(who, sizeof who, k < 0 ? "its source" : "receiver %d", k);
        RTM_FAIL(RTM_ERR_INPUT, "%s: shot %d: %s is at (%g, %g, %g) m: a position must be finite",
                 h5_path, shot, who, at[0], at[1], at[2]);
      }
    }
    if (shot == first) {
      const double us = gather.dt_s * 1e6;
      if (fabs(us - round(us)) > 1e-6 * us || round(us) < 1 || round(us) > 32767)
        RTM_FAIL(RTM_ERR_INPUT,
                 "%s: the gathers' sample interval %.9g s is not a whole number of "
                 "microseconds from 1 to 32767, as SEG-Y stores it (readers take its 16-bit "
                 "fields as signed): model again with output.trace_dt set to one (0.002, say)",
                 h5_path, gather.dt_s);
      if (gather.samples < 1)
        RTM_FAIL(RTM_ERR_INPUT, "%s: shot %d's gathers hold no samples: nothing to export", h5_path,
                 shot);
      if (gather.samples > 32767)
        RTM_FAIL(RTM_ERR_INPUT,
                 "%s: %d samples a trace; SEG-Y rev 1 holds at most 32767 as readers take its "
                 "16-bit fields (raise output.trace_dt)",
                 h5_path, gather.samples);
      interval_us = (int)round(us);
      samples = gather.samples;
      fp = segy_open(file, "r+b");
      if (!fp) RTM_FAIL(RTM_ERR_IO, "%s: cannot open the SEG-Y file for writing", path);
      text_header(text, named, writer, field, last - first, samples, interval_us);
      SEGY_WRITE(segy_write_textheader(fp, 0, text), "%s: text header", path);
      memset(binary, 0, sizeof binary);
      const struct {
        int field;
        int32_t value;
        /* traces per shot: a 16-bit field, 0 (unknown) where a plane has more */
      } fields[] = {{SEGY_BIN_TRACES, gather.count <= 32767 ? gather.count : 0},
                    {SEGY_BIN_INTERVAL, interval_us},
                    {SEGY_BIN_SAMPLES, samples},
                    {SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE},
                    {SEGY_BIN_MEASUREMENT_SYSTEM, 1},
                    {SEGY_BIN_TRACE_FLAG, 1},
                    {SEGY_BIN_EXT_HEADERS, 0}};
      for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i)
        SEGY_WRITE(segy_set_bfield(binary, fields[i].field, fields[i].value),
                   "%s: binary header byte %d", path, fields[i].field);
      /* revision 1: 0x0100 in the two bytes of segyio 1.8; a segyio that types 3501 as one
       * byte (the major revision) takes 1 */
      if (segy_set_bfield(binary, SEGY_BIN_SEGY_REVISION, 0x0100) != SEGY_OK)
        SEGY_WRITE(segy_set_bfield(binary, SEGY_BIN_SEGY_REVISION, 1), "%s: binary header byte %d",
                   path, SEGY_BIN_SEGY_REVISION);
      SEGY_WRITE(segy_write_binheader(fp, binary), "%s: binary header", path);
      SEGY_WRITE(segy_set_format(fp, SEGY_IEEE_FLOAT_4_BYTE), "%s: format", path);
      buffer = malloc((size_t)samples * sizeof *buffer);
      if (!buffer) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a trace of %d samples", samples);
    } else if (gather.samples != samples ||
               fabs(gather.dt_s * 1e6 - interval_us) > 1e-6 * interval_us) {
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: shot %d has %d samples of %g s, shot %d %d of %g s: one SEG-Y file holds "
               "one sample count and interval (export --per-shot writes a file a shot)",
               h5_path, shot, gather.samples, gather.dt_s, first, samples, interval_us * 1e-6);
    }
    const long trace0 = TEXT_BYTES + BIN_BYTES;
    const int bytes = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, samples);
    for (int r = 0; r < gather.count; ++r, ++trace) {
      RTM_TRY(set_header(header, path, trace, shot, r, gather.source_m,
                         gather.receivers_m + 3 * (size_t)r, samples, interval_us));
      SEGY_WRITE(segy_write_traceheader(fp, trace, header, trace0, bytes), "%s: trace %d header",
                 path, trace);
      memcpy(buffer, gather.traces + (size_t)r * samples, (size_t)samples * sizeof *buffer);
      SEGY_WRITE(segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, samples, buffer), "%s: trace %d", path,
                 trace);
      SEGY_WRITE(segy_writetrace(fp, trace, buffer, trace0, bytes), "%s: trace %d", path, trace);
    }
    rtm_io_gather_release(&gather);
  }
  if (fp && segy_flush(fp, false) != SEGY_OK) RTM_FAIL(RTM_ERR_IO, "%s: flush failed", path);
fail:
  rtm_io_gather_release(&gather);
  free(buffer);
  if (fp && segy_close(fp) != SEGY_OK && status == RTM_OK) {
    rtm_log_error("%s: closing failed (disk full?)", path);
    status = RTM_ERR_IO;
  }
  return status;
}

/* ---- the files of an export ----
 * Each is written aside as PATH.partial.XXXXXX.EXT, a new name this run creates
 * (rtm_io_aside_create: never a file another process writes, so neither a killed export's
 * leftover nor a model run's PATH.partial blocks or takes over another), and renamed over
 * PATH once every file of the export is complete; a failure removes this run's files and
 * nothing else, so an earlier PATH stays as it was. */

/* PATH may be written: absent, or with overwrite a regular file (or a link to one); never a
 * device, a folder or a FIFO, which the rename would not replace but hide or break. */
/* `path` may be written: absent, or a regular file that --force lets us replace, and never
 * the run file being read (the same name, or the same device and inode through another
 * name or a link): --force would replace the input with its own export. */
static int check_target(const char *input, const char *path, int overwrite) {
  struct stat info, source;
  if (strcmp(input, path) == 0 || (stat(path, &info) == 0 && stat(input, &source) == 0 &&
                                   info.st_dev == source.st_dev && info.st_ino == source.st_ino)) {
    rtm_log_error("export: %s is the run file being exported, %s: choose another --segy name", path,
                  input);
    return RTM_ERR_USAGE;
  }
  /* a run's own names and files are never export's to write, --force or not: its lock,
   * journal, partials, links aside and resume state (probe F3: a stopped migration's state
   * replaced by SEG-Y, a held lock broken), its run file, sidecar and figures */
  const size_t length = strlen(path);
  const int run_name = rtm_io_run_bookkeeping_name(path);
  const int exists = lstat(path, &info) == 0;
  /* a SEG-Y rtm3d wrote from the run file beside it, NAME.h5, is that run's copy: replaced
   * only by an export of that same run file (probe G2: another run's gathers there) */
  char beside[RTM_CONFIG_PATH_MAX + 40];
  const int segy =
      length > 4 && strcmp(path + length - 4, ".sgy") == 0 &&
      (size_t)snprintf(beside, sizeof beside, "%.*s.h5", (int)(length - 4), path) < sizeof beside;
  struct stat run_file;
  const int other_run = exists && segy && S_ISREG(info.st_mode) &&
                        rtm_segy_written_from(path, beside) &&
                        !(stat(beside, &run_file) == 0 && stat(input, &source) == 0 &&
                          run_file.st_dev == source.st_dev && run_file.st_ino == source.st_ino);
  if (run_name || other_run ||
      (exists && S_ISREG(info.st_mode) &&
       (rtm_io_run_file_written(path) || rtm_png_written_by_rtm3d(path) ||
        rtm_xdmf_written_by_rtm3d(path) || rtm_report_written_by_rtm3d(path)))) {
    rtm_log_error("export: %s is %s of an rtm3d run (export writes SEG-Y beside a run, never "
                  "over its files or the names it keeps): choose another --segy name",
                  path, run_name ? "a name" : "a file");
    return RTM_ERR_USAGE;
  }
  if (stat(path, &info) != 0) return RTM_OK; /* absent: created */
  if (!S_ISREG(info.st_mode)) {
    rtm_log_error("export: %s is not a regular file (export writes and replaces files only)", path);
    return RTM_ERR_USAGE;
  }
  if (!overwrite) {
    rtm_log_error("export: %s exists; --force replaces it", path);
    return RTM_ERR_USAGE;
  }
  return RTM_OK;
}

/* A file this run made, known by device and inode: removed only while that name is still
 * it. `state`: 0 none, 1 written as `partial`, 2 renamed to its target. */
typedef struct {
  char partial[2 * RTM_CONFIG_PATH_MAX + 96]; /* the target, .partial.XXXXXX, its extension */
  dev_t device;
  ino_t inode;
  int state;
} made_file_t;

static int create_partial(const char *path, made_file_t *made) {
  struct stat info;
  const int status = rtm_io_aside_create(path, made->partial, sizeof made->partial);
  if (status != RTM_OK) return status;
  const int fd = open(made->partial, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &info) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    rtm_log_error("export: %s: %s", made->partial, strerror(error));
    remove(made->partial); /* made a moment ago under a new name: this run's */
    return RTM_ERR_IO;
  }
  close(fd);
  made->device = info.st_dev;
  made->inode = info.st_ino;
  made->state = 1;
  return RTM_OK;
}

static void remove_made(const char *name, made_file_t *made) {
  struct stat info;
  if (made->state && lstat(name, &info) == 0 && info.st_dev == made->device &&
      info.st_ino == made->inode)
    remove(name);
  made->state = 0;
}

/* Files of an earlier, larger set beside the one of `shots` files at `path`: the regular
 * files of the set's names with k >= shots that rtm3d exported (never another name, a link,
 * a folder or a file of the set's name that is no export). With `remove_them` each is
 * removed (--force replaces the set), else the first is refused. */
static int earlier_shot_files(const char *path, int shots, int remove_them) {
  int status = RTM_OK;
  shot_pattern_t pattern;
  char name[2 * RTM_CONFIG_PATH_MAX + 8];
  struct stat info;
  shot_pattern(path, &pattern);
  DIR *folder = opendir(pattern.folder);
  if (!folder) return RTM_OK; /* none: nothing of a set there */
  for (struct dirent *entry; (entry = readdir(folder)) != NULL;) {
    const long shot = shot_of_name(&pattern, entry->d_name);
    if (shot < shots) continue;
    snprintf(name, sizeof name, "%s/%s", pattern.folder, entry->d_name);
    char named[64];
    if (lstat(name, &info) != 0 || !S_ISREG(info.st_mode)) continue;
    if (!written_by_rtm3d(name, named)) { /* a file of that name rtm3d did not export */
      if (remove_them)
        rtm_log_warning("export: %s has a name of the set but is no SEG-Y file rtm3d "
                        "exported: it stays",
                        name);
      continue;
    }
    if (!remove_them)
      RTM_FAIL(RTM_ERR_USAGE,
               "export: %s exists (of a set of more shots); --force replaces the set", name);
    if (remove(name) == 0)
      rtm_log_info("export: removed %s, shot %ld of an earlier set of more shots", name, shot);
    else
      rtm_log_warning("export: %s, of an earlier set of more shots, stays: %s", name,
                      strerror(errno));
  }
fail:
  closedir(folder);
  return status;
}

/* File k of an export: its name (rtm_segy_target_path), a link there followed to the file it
 * leads to (rtm_io_output_target: that file replaced, the link kept), into `target`, whose
 * room (RTM_CONFIG_PATH_MAX) refuses a longer path (exit 2) before anything is made. */
typedef char export_target_t[RTM_CONFIG_PATH_MAX];

static int export_target(const char *segy_path, int per_shot, int k, export_target_t target) {
  char name[RTM_CONFIG_PATH_MAX + 32];
  const int status = rtm_segy_target_path(segy_path, per_shot, k, name, sizeof name);
  return status != RTM_OK ? status
                          : rtm_io_output_target(name, "export:", target, sizeof(export_target_t));
}

/* Two of the export's files that are one file, through links (a probe: e_shot0.sgy and
 * e_shot1.sgy linked to F.sgy, exit 0 with shot 0 lost): refused. Only a link can make
 * two names one file, so only the targets reached through one are compared. */
static int refuse_shared_targets(const char *segy_path, int per_shot, int files,
                                 export_target_t *targets) {
  char name[RTM_CONFIG_PATH_MAX + 32];
  for (int k = 0; k < files; ++k) {
    struct stat info;
    if (rtm_segy_target_path(segy_path, per_shot, k, name, sizeof name) != RTM_OK ||
        strcmp(name, targets[k]) == 0 || stat(targets[k], &info) != 0)
      continue; /* not through a link */
    for (int j = 0; j < files; ++j) {
      struct stat other;
      if (j == k || stat(targets[j], &other) != 0 || other.st_dev != info.st_dev ||
          other.st_ino != info.st_ino)
        continue;
      rtm_log_error("export: %s leads to %s, the file of shot %d's name as well: each shot's "
                    "file must be a file of its own",
                    name, targets[k], j);
      return RTM_ERR_USAGE;
    }
  }
  return RTM_OK;
}

int rtm_segy_export(const char *h5_path, const char *field, const char *segy_path, int per_shot,
                    int overwrite) {
  int status = RTM_OK, shots = 0, files = 0;
  made_file_t *made = NULL;
  export_target_t *targets = NULL; /* each file's target, resolved once */
  char stamp[160], now[160];
  if (!rtm_io_file_stamp(h5_path, stamp, sizeof stamp))
    RTM_FAIL(RTM_ERR_INPUT, "cannot read %s: %s", h5_path, strerror(errno));
  RTM_TRY(rtm_io_shot_count(h5_path, &shots));
  files = per_shot ? shots : 1;
  targets = calloc((size_t)files, sizeof *targets);
  made = calloc((size_t)files, sizeof *made);
  if (!targets || !made) RTM_FAIL(RTM_ERR_NOMEM, "export: out of memory for %d files", files);
  for (int k = 0; k < files; ++k) {
    RTM_TRY(export_target(segy_path, per_shot, k, targets[k]));
    RTM_TRY(check_target(h5_path, targets[k], overwrite));
  }
  if (per_shot) RTM_TRY(refuse_shared_targets(segy_path, per_shot, files, targets));
  if (per_shot && !overwrite) RTM_TRY(earlier_shot_files(segy_path, shots, 0));
  for (int k = 0; k < files; ++k) {
    RTM_TRY(create_partial(targets[k], &made[k]));
    RTM_TRY(write_file(h5_path, h5_path, "export", field, made[k].partial, per_shot ? k : 0,
                       per_shot ? k + 1 : shots));
  }
  /* the shots read from one file (probe S, S1: a run renamed over it during an export, as
   * model --force does at its end, gave a SEG-Y of two runs' shots, exit 0) */
  if (!rtm_io_file_stamp(h5_path, now, sizeof now) || strcmp(now, stamp) != 0)
    RTM_FAIL(RTM_ERR_IO,
             "export: %s changed while it was exported (its inode, size, mtime or ctime): the "
             "shots read may come from two files, so nothing is written; export again once it "
             "is final",
             h5_path);
  for (int k = 0; k < files; ++k) /* on the disk before their names say they are complete */
    RTM_TRY(rtm_io_sync_file(made[k].partial));
  for (int k = 0; k < files; ++k) {
    const char *path = targets[k];
    /* without --force nothing that appeared at the target while this export ran is
     * replaced (it was absent when checked): another export, a model run's SEG-Y, a user */
    if ((overwrite ? rename(made[k].partial, path)
                   : rtm_io_rename_noreplace(made[k].partial, path)) != 0) {
      if (!overwrite && errno == EEXIST)
        RTM_FAIL(RTM_ERR_IO,
                 "export: %s appeared while this export ran (another export, a run or a user "
                 "wrote it): it is left as it is and this export's files are removed; export "
                 "again, with --force to replace it",
                 path);
      RTM_FAIL(RTM_ERR_IO,
               "export: cannot rename %s to %s: %s (the files of this export are removed)",
               made[k].partial, path, strerror(errno));
    }
    made[k].state = 2;
  }
  if (per_shot && overwrite) RTM_TRY(earlier_shot_files(segy_path, shots, 1));
fail:
  for (int k = 0; status != RTM_OK && made && k < files; ++k) /* this run's files alone */
    if (made[k].state) remove_made(made[k].state == 2 ? targets[k] : made[k].partial, &made[k]);
  /* the messages above name the target: whether an earlier file there was touched */
  if (status != RTM_OK && made) {
    struct stat info;
    const int earlier = targets[0][0] && stat(targets[0], &info) == 0;
    rtm_log_info("export: nothing exported%s",
                 earlier ? "; the files there before stay as they were" : "");
  }
  free(made);
  free(targets);
  return status;
}

int rtm_segy_write(const char *h5_path, const char *named, const char *field, const char *path) {
  int status = RTM_OK, shots = 0;
  RTM_TRY(rtm_io_shot_count(h5_path, &shots));
  FILE *f = fopen(path, "wb");
  if (!f || fclose(f) != 0) RTM_FAIL(RTM_ERR_IO, "cannot create %s: %s", path, strerror(errno));
  RTM_TRY(write_file(h5_path, named, "model", field, path, 0, shots));
fail:
  return status;
}

/* ---- reading ---- */

/* A file's traces by shot: built once and kept while the file is as it was, since the check
 * before a run reads every shot's headers and the run then each shot's traces (a scan of
 * every trace's field record at each read made S shots of N traces S x N header reads: 200
 * shots of 200 traces took 15 s before the first step, a probe). Immutable once built,
 * shared by reference count under `index_lock`; the one last built is kept. */
typedef struct {
  int references;
  char key[RTM_CONFIG_PATH_MAX + 200]; /* the path and its stamp (rtm_io_file_stamp) */
  int shots;
  int *shot_records;   /* [shots]: the field records in the order they first appear */
  int *shot_first;     /* [shots + 1]: shot k is traces_by_shot[shot_first[k] .. [k + 1]) */
  int *traces_by_shot; /* [traces]: the trace numbers grouped by shot, each in file order */
} trace_index_t;

static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;
static trace_index_t *kept_index;

static void index_free(trace_index_t *index) {
  if (!index) return;
  free(index->shot_records);
  free(index->shot_first);
  free(index->traces_by_shot);
  free(index);
}

static void index_release(trace_index_t *index) {
  if (!index) return;
  pthread_mutex_lock(&index_lock);
  const int last = --index->references == 0;
  pthread_mutex_unlock(&index_lock);
  if (last) index_free(index);
}

/* An open file and what its headers say. */
typedef struct {
  segy_file *fp;
  int format, samples, traces, bytes;
  long trace0;
  double dt_s;
  trace_index_t *index;
} reader_t;

static void reader_close(reader_t *r) {
  if (r->fp) segy_close(r->fp);
  index_release(r->index);
  memset(r, 0, sizeof *r);
}

typedef struct {
  int record, trace;
} record_trace_t;

static int by_record_then_trace(const void *a, const void *b) {
  const record_trace_t *x = a, *y = b;
  if (x->record != y->record) return x->record < y->record ? -1 : 1;
  return (x->trace > y->trace) - (x->trace < y->trace);
}

/* A shot's run of pairs in the sorted list: its first trace and where its pairs lie. */
typedef struct {
  int first_trace, start, count;
} shot_span_t;

static int by_first_trace(const void *a, const void *b) {
  const shot_span_t *x = a, *y = b;
  return (x->first_trace > y->first_trace) - (x->first_trace < y->first_trace);
}

/* `index` from the field records of r's traces (trace byte 9): the distinct records in the
 * order of their first traces, found by sorting (n log n: a file of a record a trace, 100 000
 * traces, took minutes compared pair by pair), and each one's traces in file order. */
static int index_build(const char *path, reader_t *r, trace_index_t *index) {
  int status = RTM_OK;
  const size_t traces = (size_t)r->traces;
  int *records = malloc((traces + 1) * sizeof *records);
  record_trace_t *pairs = malloc((traces + 1) * sizeof *pairs);
  shot_span_t *spans = malloc((traces + 1) * sizeof *spans);
  index->traces_by_shot = malloc((traces + 1) * sizeof *index->traces_by_shot);
  if (!records || !pairs || !spans || !index->traces_by_shot)
    RTM_FAIL(RTM_ERR_NOMEM, "%s: out of memory for the shots of %d traces", path, r->traces);
  if (r->traces > 0)
    SEGY_READ(segy_field_forall(r->fp, SEGY_TR_FIELD_RECORD, 0, r->traces, 1, records, r->trace0,
                                r->bytes),
              "%s: field records (trace byte 9)", path);
  for (int t = 0; t < r->traces; ++t)
    pairs[t] = (record_trace_t){records[t], t};
  qsort(pairs, traces, sizeof *pairs, by_record_then_trace);
  int shots = 0;
  for (int t = 0; t < r->traces; ++t) {
    if (t == 0 || pairs[t].record != pairs[t - 1].record)
      spans[shots++] = (shot_span_t){pairs[t].trace, t, 0};
    ++spans[shots - 1].count;
  }
  qsort(spans, (size_t)shots, sizeof *spans, by_first_trace);
  index->shot_records = malloc(((size_t)shots + 1) * sizeof *index->shot_records);
  index->shot_first = malloc(((size_t)shots + 1) * sizeof *index->shot_first);
  if (!index->shot_records || !index->shot_first)
    RTM_FAIL(RTM_ERR_NOMEM, "%s: out of memory for the shots of %d traces", path, r->traces);
  int placed = 0;
  for (int k = 0; k < shots; ++k) {
    index->shot_records[k] = pairs[spans[k].start].record;
    index->shot_first[k] = placed;
    for (int i = 0; i < spans[k].count; ++i)
      index->traces_by_shot[placed++] = pairs[spans[k].start + i].trace;
  }
  index->shot_first[shots] = placed;
  index->shots = shots;
fail:
  free(records);
  free(pairs);
  free(spans);
  return status;
}

/* r->index: the one kept when it was built from this file as it is now (`stamp`), else built
 * and kept in its place (not kept when the file could not be stamped). */
static int index_shots(const char *path, const char *stamp, reader_t *r) {
  char key[sizeof kept_index->key];
  const int keyed =
      stamp[0] && (size_t)snprintf(key, sizeof key, "%s\t%s", path, stamp) < sizeof key;
  pthread_mutex_lock(&index_lock);
  if (keyed && kept_index && strcmp(kept_index->key, key) == 0) {
    ++kept_index->references;
    r->index = kept_index;
  }
  pthread_mutex_unlock(&index_lock);
  if (r->index) return RTM_OK;
  trace_index_t *index = calloc(1, sizeof *index);
  if (!index) {
    rtm_log_error("%s: out of memory for the shots of %d traces", path, r->traces);
    return RTM_ERR_NOMEM;
  }
  const int status = index_build(path, r, index);
  if (status != RTM_OK) {
    index_free(index);
    return status;
  }
  index->references = 1; /* the reader's */
  r->index = index;
  if (!keyed) return RTM_OK; /* read, not kept */
  snprintf(index->key, sizeof index->key, "%s", key);
  pthread_mutex_lock(&index_lock);
  trace_index_t *earlier = kept_index;
  ++index->references; /* the cache's */
  kept_index = index;
  pthread_mutex_unlock(&index_lock);
  index_release(earlier);
  return RTM_OK;
}

/* r->dt_s from the binary header's interval (byte 3217) and the first trace's (byte 117), as
 * segyio's segy_sample_interval reads them: the one that is set, or both when they agree.
 * Both unset, or set and different, is refused naming the values. */
static int sample_interval(const char *path, reader_t *r, const char *binary) {
  int status = RTM_OK;
  char header[HEADER_BYTES];
  int32_t binary_us = 0, trace_us = 0;
  SEGY_READ(segy_get_bfield(binary, SEGY_BIN_INTERVAL, &binary_us), "%s: binary header byte 3217",
            path);
  if (r->traces > 0) {
    SEGY_READ(segy_traceheader(r->fp, 0, header, r->trace0, r->bytes), "%s: trace 0 header", path);
    SEGY_READ(segy_get_field(header, SEGY_TR_SAMPLE_INTER, &trace_us), "%s: trace 0 byte 117",
              path);
  }
  /* segyio reads the 16-bit intervals as signed */
  if (binary_us < 0) binary_us += 65536;
  if (trace_us < 0) trace_us += 65536;
  if (binary_us == 0 && trace_us == 0)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: no sample interval (binary header byte 3217 and trace 0's byte 117 are 0)", path);
  if (binary_us != 0 && trace_us != 0 && binary_us != trace_us)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: the sample intervals disagree: %d us in the binary header (byte 3217), %d us "
             "in trace 0's header (byte 117)",
             path, (int)binary_us, (int)trace_us);
  r->dt_s = (binary_us ? binary_us : trace_us) * 1e-6;
fail:
  return status;
}

/* A file named .sgy that is HDF5 (its signature at byte 0): said as such, not as a SEG-Y
 * file's odd sample format (a probe: "sample format 0 (binary header byte 3225)"). */
static int refuse_hdf5(const char *path) {
  static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char start[8];
  FILE *file = fopen(path, "rb");
  const int hdf5 = file && fread(start, 1, sizeof start, file) == sizeof start &&
                   memcmp(start, signature, sizeof start) == 0;
  if (file) fclose(file);
  if (!hdf5) return RTM_OK;
  rtm_log_error("%s is an HDF5 file, not SEG-Y, though its name ends in .sgy: give it a name "
                "ending in .h5, or the SEG-Y file meant",
                path);
  return RTM_ERR_INPUT;
}

static int reader_open(const char *path, reader_t *r) {
  int status = RTM_OK;
  char binary[BIN_BYTES], stamp[160] = "";
  memset(r, 0, sizeof *r);
  /* a FIFO would hold the open for ever waiting for a writer; a device never ends */
  RTM_TRY(rtm_h5_check_input_path(path, "SEG-Y file"));
  RTM_TRY(refuse_hdf5(path));
  rtm_io_file_stamp(path, stamp, sizeof stamp); /* before the open: a change after it is new */
  r->fp = segy_open(path, "rb");
  if (!r->fp) RTM_FAIL(RTM_ERR_INPUT, "%s: cannot open the SEG-Y file: %s", path, strerror(errno));
  SEGY_READ(segy_binheader(r->fp, binary), "%s: binary header", path);
  r->format = segy_format(binary);
  r->samples = segy_samples(binary);
  if (r->samples < 0) r->samples += 65536; /* segyio reads the 16-bit count as signed */
  r->trace0 = segy_trace0(binary);
  /* the code's bytes the other way round (5 read as 1280): a little-endian file, which the
   * standard's big-endian headers of every other field would misread too */
  if (r->format == SEGY_IEEE_FLOAT_4_BYTE << 8 || r->format == SEGY_IBM_FLOAT_4_BYTE << 8)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: sample format %d (binary header byte 3225) is %d with its bytes swapped: the "
             "file is little-endian; rtm3d reads big-endian SEG-Y, the standard's byte order "
             "(convert it, for example with segyio or Seismic Unix's segyread/segywrite)",
             path, r->format, r->format >> 8);
  if (r->format != SEGY_IEEE_FLOAT_4_BYTE && r->format != SEGY_IBM_FLOAT_4_BYTE)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: sample format %d (binary header byte 3225); rtm3d reads 1 (IBM float) and 5 "
             "(IEEE float)",
             path, r->format);
  if (r->samples <= 0 || r->trace0 < TEXT_BYTES + BIN_BYTES)
    RTM_FAIL(RTM_ERR_INPUT, "%s: %d samples a trace, traces from byte %ld: not a SEG-Y file?", path,
             r->samples, r->trace0);
  SEGY_READ(segy_set_format(r->fp, r->format), "%s: format", path);
  r->bytes = segy_trsize(r->format, r->samples);
  SEGY_READ(segy_traces(r->fp, &r->traces, r->trace0, r->bytes), "%s: counting traces", path);
  RTM_TRY(sample_interval(path, r, binary));
  RTM_TRY(index_shots(path, stamp, r));
  return RTM_OK;
fail:
  reader_close(r);
  return status;
}

/* Shot k: the k-th distinct field record in order of first appearance. */
static int shot_record(const reader_t *r, int shot, int *record, int *shots) {
  *shots = r->index->shots;
  if (shot < 0 || shot >= r->index->shots) return 0;
  *record = r->index->shot_records[shot];
  return 1;
}

int rtm_segy_shot_count(const char *path, int *count) {
  int status = RTM_OK, record = 0;
  reader_t r;
  *count = 0;
  RTM_TRY(reader_open(path, &r));
  shot_record(&r, 0, &record, count);
  if (*count == 0) RTM_FAIL(RTM_ERR_INPUT, "%s: no traces", path);
fail:
  reader_close(&r);
  return status;
}

static double unscale(int32_t value, int32_t scalar) {
  if (scalar > 0) return (double)value * scalar;
  if (scalar < 0) return (double)value / -scalar;
  return (double)value;
}

/* Trace t of the file, receiver k of shot `shot` (field record `record`), into `samples`:
 * a trace marked dead or dummy (not live) read as silence; a sample NaN, Inf or beyond
 * RTM_IO_SAMPLE_LIMIT an input error naming it. */
static int read_samples(const reader_t *r, const char *path, int shot, int record, int t, int k,
                        int live, float *samples) {
  int status = RTM_OK;
  SEGY_READ(segy_readtrace(r->fp, t, samples, r->trace0, r->bytes), "%s: trace %d", path, t);
  SEGY_READ(segy_to_native(r->format, r->samples, samples), "%s: trace %d", path, t);
  /* a trace marked dead (2) or dummy (3), bytes 29-30, records nothing (probe S, S3: its
   * samples were migrated as a live trace's, exit 0): read as silence, its receiver kept */
  if (!live) memset(samples, 0, (size_t)r->samples * sizeof *samples);
  size_t first;
  const size_t bad =
      rtm_io_find_bad_values(samples, (size_t)r->samples, RTM_IO_SAMPLE_LIMIT, &first);
  if (bad > 0)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: shot %d (field record %d), receiver %d, sample %zu (from 0; trace %d of the "
             "file) is %g, the first of %zu such sample%s in the trace: recorded samples are "
             "finite and below %g in magnitude (a damaged file?)",
             path, shot, record, k, first, t, samples[first], bad, bad == 1 ? "" : "s",
             RTM_IO_SAMPLE_LIMIT);
fail:
  return status;
}

static int segy_read(const char *path, int shot, int samples_too, rtm_io_gather_t *gather) {
  int status = RTM_OK, record = 0, shots = 0, count = 0, dead = 0;
  reader_t r;
  char header[HEADER_BYTES];
  memset(gather, 0, sizeof *gather);
  RTM_TRY(reader_open(path, &r));
  if (shot < 0 || !shot_record(&r, shot, &record, &shots))
    RTM_FAIL(RTM_ERR_INPUT,
             "%s holds %d shot%s (distinct field records, trace byte 9): there "
             "is no shot %d",
             path, shots, shots == 1 ? "" : "s", shot);
  const int *shot_traces = r.index->traces_by_shot + r.index->shot_first[shot];
  count = r.index->shot_first[shot + 1] - r.index->shot_first[shot];
  gather->count = count;
  gather->samples = r.samples;
  gather->dt_s = r.dt_s;
  gather->receivers_m = malloc((size_t)count * 3 * sizeof *gather->receivers_m);
  if (samples_too) gather->traces = malloc((size_t)count * r.samples * sizeof *gather->traces);
  if (!gather->receivers_m || (samples_too && !gather->traces))
    RTM_FAIL(RTM_ERR_NOMEM, "%s: out of memory for %d traces", path, count);
  for (int k = 0; k < count; ++k) {
    const int t = shot_traces[k];
    int32_t v[15];
    static const int fields[15] = {SEGY_TR_SOURCE_X,
                                   SEGY_TR_SOURCE_Y,
                                   SEGY_TR_SOURCE_DEPTH,
                                   SEGY_TR_GROUP_X,
                                   SEGY_TR_GROUP_Y,
                                   SEGY_TR_RECV_GROUP_ELEV,
                                   SEGY_TR_SOURCE_GROUP_SCALAR,
                                   SEGY_TR_ELEV_SCALAR,
                                   SEGY_TR_COORD_UNITS,
                                   SEGY_TR_SAMPLE_COUNT,
                                   SEGY_TR_SAMPLE_INTER,
                                   SEGY_TR_LAG_A,
                                   SEGY_TR_LAG_B,
                                   SEGY_TR_DELAY_REC_TIME,
                                   SEGY_TR_TRACE_ID};
    SEGY_READ(segy_traceheader(r.fp, t, header, r.trace0, r.bytes), "%s: trace %d header", path, t);
    for (int i = 0; i < 15; ++i)
      SEGY_READ(segy_get_field(header, fields[i], &v[i]), "%s: trace %d byte %d", path, t,
                fields[i]);
    /* a trace's own count and interval (bytes 115, 117; 0: not set), read as unsigned 16-bit
     * values, must be the file's: rtm3d reads every trace with the file's */
    const int32_t count_here = v[9] < 0 ? v[9] + 65536 : v[9];
    const int32_t us_here = v[10] < 0 ? v[10] + 65536 : v[10];
    if (count_here != 0 && count_here != r.samples)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: trace %d holds %d samples (byte 115), the file %d (binary header byte "
               "3221): rtm3d reads traces of one length",
               path, t, (int)count_here, r.samples);
    if (us_here != 0 && fabs(us_here * 1e-6 - r.dt_s) > 1e-9)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: trace %d's sample interval is %d us (byte 117), the file's %g us: rtm3d reads "
               "traces of one interval",
               path, t, (int)us_here, r.dt_s * 1e6);
    /* rtm3d's gathers start at the shot: a trace that says it starts later or earlier
     * (probe R, R5: a delay of 14 ms migrated as none gave an image 101% off, exit 0) is
     * refused rather than read as if it did not */
    static const char *const times[3] = {"lag time A", "lag time B", "delay recording time"};
    for (int i = 0; i < 3; ++i)
      if (v[11 + i] != 0)
        RTM_FAIL(RTM_ERR_INPUT,
                 "%s: trace %d: %s %d ms (byte %d); rtm3d reads traces whose first sample is "
                 "at the shot: shift the samples to start there and set the field to 0",
                 path, t, times[i], (int)v[11 + i], fields[11 + i]);
    if (v[8] != 0 && v[8] != 1)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: trace %d: coordinate units %d (byte 89); rtm3d reads lengths (1) only", path, t,
               v[8]);
    const double source[3] = {unscale(v[0], v[6]), unscale(v[1], v[6]), unscale(v[2], v[7])};
    if (k == 0)
      memcpy(gather->source_m, source, sizeof source);
    else if (memcmp(gather->source_m, source, sizeof source) != 0)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: trace %d of shot %d (field record %d) has its source at (%g, %g, %g) m, the "
               "shot's first trace at (%g, %g, %g) m",
               path, t, shot, record, source[0], source[1], source[2], gather->source_m[0],
               gather->source_m[1], gather->source_m[2]);
    double *receiver = gather->receivers_m + 3 * (size_t)k;
    receiver[0] = unscale(v[3], v[6]);
    receiver[1] = unscale(v[4], v[6]);
    receiver[2] = -unscale(v[5], v[7]);
    if (samples_too) {
      const int live = v[14] != 2 && v[14] != 3;
      RTM_TRY(
          read_samples(&r, path, shot, record, t, k, live, gather->traces + (size_t)k * r.samples));
      dead += !live;
    }
  }
  if (dead > 0)
    rtm_log_info("%s: shot %d (field record %d): %d of its %d traces are marked dead or dummy "
                 "(trace identification code 2 or 3, bytes 29-30) and are read as silent",
                 path, shot, record, dead, count);
fail:
  reader_close(&r);
  if (status != RTM_OK) rtm_io_gather_release(gather);
  return status;
}
#endif
