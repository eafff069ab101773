/* Whole or partial numeric datasets read as float32, for `plot` and `validate`; and the check
 * of values read, for the readers that refuse what is not finite or beyond a bound. */
#include "rtm_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_io_impl.h"

#define DATASET_MAX_RANK 4

typedef struct {
  hid_t file, dataset, space;
  int rank;
  hsize_t dims[DATASET_MAX_RANK];
} open_dataset_t;

static void close_dataset(open_dataset_t *d) {
  rtm_h5_close(&d->space);
  rtm_h5_close(&d->dataset);
  rtm_h5_close(&d->file);
}

/* Opens name in path and checks that it is a numeric dataset of rank 1 to 4. */
static int open_dataset(const char *path, const char *name, open_dataset_t *d) {
  int status = RTM_OK;
  hid_t type = H5I_INVALID_HID;
  d->file = d->dataset = d->space = H5I_INVALID_HID;
  RTM_TRY(rtm_h5_open_read(path, "file", &d->file));
  int exists = rtm_h5_path_exists(d->file, name);
  if (exists <= 0) RTM_FAIL(RTM_ERR_INPUT, "%s has no dataset %s", path, name);
  RTM_H5_CHECK(d->dataset = H5Dopen2(d->file, name, H5P_DEFAULT), RTM_ERR_INPUT,
               "%s: %s is not a dataset", path, name);
  RTM_H5_CHECK(type = H5Dget_type(d->dataset), RTM_ERR_INPUT, "%s: dataset %s", path, name);
  H5T_class_t type_class = H5Tget_class(type);
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER)
    RTM_FAIL(RTM_ERR_INPUT, "%s: dataset %s is not numeric (float or integer)", path, name);
  RTM_H5_CHECK(d->space = H5Dget_space(d->dataset), RTM_ERR_INPUT, "%s: dataset %s", path, name);
  RTM_H5_CHECK(d->rank = H5Sget_simple_extent_ndims(d->space), RTM_ERR_INPUT, "%s: dataset %s",
               path, name);
  if (d->rank < 1 || d->rank > DATASET_MAX_RANK)
    RTM_FAIL(RTM_ERR_INPUT, "%s: dataset %s has rank %d; only ranks 1 to %d are supported", path,
             name, d->rank, DATASET_MAX_RANK);
  RTM_H5_CHECK(H5Sget_simple_extent_dims(d->space, d->dims, NULL), RTM_ERR_INPUT, "%s: dataset %s",
               path, name);
fail:
  rtm_h5_close(&type);
  if (status != RTM_OK) close_dataset(d);
  return status;
}

/* Reads the selection of d->space (count elements) into a new float array. */
static int read_selection(const char *path, const char *name, open_dataset_t *d, int rank,
                          const hsize_t *dims, rtm_dataset_t *dataset) {
  int status = RTM_OK;
  hid_t memory_space = H5I_INVALID_HID;
  size_t count = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] && count > (size_t)-1 / sizeof(float) / dims[i])
      RTM_FAIL(RTM_ERR_NOMEM, "%s: dataset %s is too large for memory", path, name);
    count *= (size_t)dims[i];
  }
  dataset->rank = rank;
  for (int i = 0; i < DATASET_MAX_RANK; ++i)
    dataset->dims[i] = i < rank ? (size_t)dims[i] : 1;
  dataset->data = malloc((count ? count : 1) * sizeof(float));
  if (!dataset->data)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory reading %s from %s (%zu values)", name, path, count);
  if (count > 0) {
    RTM_H5_CHECK(memory_space = H5Screate_simple(rank, dims, NULL), RTM_ERR_IO, "%s: %s", path,
                 name);
    RTM_H5_CHECK(
        H5Dread(d->dataset, H5T_NATIVE_FLOAT, memory_space, d->space, H5P_DEFAULT, dataset->data),
        RTM_ERR_INPUT, "%s: reading dataset %s (corrupt?)", path, name);
  }
fail:
  rtm_h5_close(&memory_space);
  if (status != RTM_OK) rtm_dataset_release(dataset);
  return status;
}

int rtm_io_read_dataset(const char *path, const char *name, rtm_dataset_t *dataset) {
  int status = RTM_OK;
  open_dataset_t d;
  memset(dataset, 0, sizeof *dataset);
  RTM_TRY(open_dataset(path, name, &d));
  RTM_H5_CHECK(H5Sselect_all(d.space), RTM_ERR_IO, "%s: %s", path, name);
  status = read_selection(path, name, &d, d.rank, d.dims, dataset);
  close_dataset(&d);
fail:
  return status;
}

int rtm_io_dataset_shape(const char *path, const char *name, int *rank, size_t dims[4]) {
  int status = RTM_OK;
  open_dataset_t d;
  *rank = -1; /* the file itself did not open (said once, by rtm_h5_open_read) */
  hid_t probe = H5I_INVALID_HID;
  RTM_TRY(rtm_h5_open_read(path, "file", &probe));
  rtm_h5_close(&probe);
  *rank = 0;
  RTM_TRY(open_dataset(path, name, &d));
  *rank = d.rank;
  for (int i = 0; i < DATASET_MAX_RANK; ++i)
    dims[i] = i < d.rank ? (size_t)d.dims[i] : 1;
  close_dataset(&d);
fail:
  return status;
}

/* Entries [first, first + count) along the first axis; `whole_rank` keeps that axis in the
 * result (rows of a volume), else a single entry loses it (one snapshot of a series). */
static int read_entries(const char *path, const char *name, size_t first, size_t count,
                        int whole_rank, rtm_dataset_t *dataset) {
  int status = RTM_OK;
  open_dataset_t d;
  memset(dataset, 0, sizeof *dataset);
  RTM_TRY(open_dataset(path, name, &d));
  if (d.rank < 2) {
    close_dataset(&d);
    RTM_FAIL(RTM_ERR_INPUT, "%s: dataset %s has rank 1: it has no entries to pick from", path,
             name);
  }
  if (d.dims[0] == 0) {
    close_dataset(&d);
    RTM_FAIL(RTM_ERR_INPUT, "%s: %s holds no entries (its first dimension is 0)", path, name);
  }
  if (count == 0) {
    close_dataset(&d);
    RTM_FAIL(RTM_ERR_INTERNAL, "%s: no entries of %s asked for", path, name);
  }
  if (first >= d.dims[0] || count > d.dims[0] - first) {
    close_dataset(&d);
    if (!whole_rank)
      RTM_FAIL(RTM_ERR_INPUT, "%s: index %zu is out of range for %s (0..%llu)", path, first, name,
               (unsigned long long)d.dims[0] - 1);
    RTM_FAIL(RTM_ERR_INPUT, "%s: entries %zu..%zu are out of range for %s (0..%llu)", path, first,
             first + count - 1, name, (unsigned long long)d.dims[0] - 1);
  }
  hsize_t start[DATASET_MAX_RANK] = {first, 0, 0, 0};
  hsize_t shape[DATASET_MAX_RANK] = {count, 1, 1, 1};
  for (int i = 1; i < d.rank; ++i)
    shape[i] = d.dims[i];
  if (H5Sselect_hyperslab(d.space, H5S_SELECT_SET, start, NULL, shape, NULL) < 0) {
    rtm_h5_report("H5Sselect_hyperslab", __FILE__, __LINE__, "%s: %s[%zu]", path, name, first);
    close_dataset(&d);
    RTM_FAIL(RTM_ERR_IO, "%s: cannot select %s[%zu..%zu]", path, name, first, first + count - 1);
  }
  status = whole_rank ? read_selection(path, name, &d, d.rank, shape, dataset)
                      : read_selection(path, name, &d, d.rank - 1, shape + 1, dataset);
  close_dataset(&d);
fail:
  return status;
}

int rtm_io_read_dataset_entry(const char *path, const char *name, size_t index,
                              rtm_dataset_t *dataset) {
  return read_entries(path, name, index, 1, 0, dataset);
}

int rtm_io_read_dataset_depths(const char *path, const char *name, size_t first, size_t count,
                               rtm_dataset_t *dataset) {
  int status = RTM_OK;
  open_dataset_t d;
  memset(dataset, 0, sizeof *dataset);
  RTM_TRY(open_dataset(path, name, &d));
  const int last = d.rank - 1;
  if (count == 0 || first >= d.dims[last] || count > d.dims[last] - first) {
    close_dataset(&d);
    RTM_FAIL(RTM_ERR_INPUT, "%s: depths %zu..%zu are out of range for %s (0..%llu)", path, first,
             first + count - 1, name, (unsigned long long)d.dims[last] - 1);
  }
  hsize_t start[DATASET_MAX_RANK] = {0, 0, 0, 0}, shape[DATASET_MAX_RANK];
  for (int i = 0; i < d.rank; ++i)
    shape[i] = d.dims[i];
  start[last] = first;
  shape[last] = count;
  if (H5Sselect_hyperslab(d.space, H5S_SELECT_SET, start, NULL, shape, NULL) < 0) {
    rtm_h5_report("H5Sselect_hyperslab", __FILE__, __LINE__, "%s: %s", path, name);
    close_dataset(&d);
    RTM_FAIL(RTM_ERR_IO, "%s: cannot select depths %zu..%zu of %s", path, first, first + count - 1,
             name);
  }
  status = read_selection(path, name, &d, d.rank, shape, dataset);
  close_dataset(&d);
fail:
  return status;
}

int rtm_io_read_dataset_rows(const char *path, const char *name, size_t first, size_t count,
                             rtm_dataset_t *dataset) {
  return read_entries(path, name, first, count, 1, dataset);
}

void rtm_dataset_release(rtm_dataset_t *dataset) {
  if (!dataset) return;
  free(dataset->data);
  memset(dataset, 0, sizeof *dataset);
}

/* ---- values a reader refuses ---- */

/* Volumes (a 512^3 image: 0.15 s on one thread) are scanned on the OpenMP threads; smaller
 * arrays, such as a shot's gather read on the run's I/O thread beside the steps, on one. */
enum { PARALLEL_SCAN = 1 << 24 };

size_t rtm_io_find_bad_values(const float *values, size_t count, double limit, size_t *first) {
  size_t bad = 0, first_bad = count;
#ifdef _OPENMP
#pragma omp parallel for reduction(+ : bad) reduction(min : first_bad) schedule(static) \
    if (count >= PARALLEL_SCAN)
#endif
  for (size_t i = 0; i < count; ++i) {
    if (isfinite(values[i]) && (limit <= 0.0 || fabs(values[i]) <= limit)) continue;
    ++bad;
    if (i < first_bad) first_bad = i;
  }
  *first = first_bad;
  return bad;
}

int rtm_io_check_finite(const char *path, const char *name, const rtm_dataset_t *dataset,
                        size_t first_row) {
  size_t count = 1, first, index[DATASET_MAX_RANK] = {0};
  const int rank = dataset->rank >= 1 && dataset->rank <= DATASET_MAX_RANK ? dataset->rank : 1;
  for (int i = 0; i < DATASET_MAX_RANK; ++i) /* those past the rank are 1 */
    count *= dataset->dims[i];
  const size_t bad = rtm_io_find_bad_values(dataset->data, count, 0.0, &first);
  if (bad == 0) return RTM_OK;
  size_t rest = first;
  for (int i = rank - 1; i >= 0; --i) {
    index[i] = rest % dataset->dims[i];
    rest /= dataset->dims[i];
  }
  index[0] += first_row;
  char where[DATASET_MAX_RANK * 24 + 1] = "";
  for (int i = 0, used = 0; i < rank; ++i)
    used += snprintf(where + used, sizeof where - (size_t)used, "[%zu]", index[i]);
  rtm_log_error("%s: dataset %s holds %g at %s%s, the first of %zu non-finite value%s: the "
                "file is damaged",
                path, name, dataset->data[first], where, rank == 3 ? " (z, y, x)" : "", bad,
                bad == 1 ? "" : "s");
  return RTM_ERR_INPUT;
}

/* ---- listing ---- */

typedef struct {
  char **names;
  int count, capacity;
} name_list_t;

static int add_name(name_list_t *list, const char *name) {
  if (list->count == list->capacity) {
    int capacity = list->capacity ? 2 * list->capacity : 8;
    char **grown = realloc(list->names, (size_t)capacity * sizeof *grown);
    if (!grown) return RTM_ERR_NOMEM;
    list->names = grown;
    list->capacity = capacity;
  }
  size_t size = strlen(name) + 1;
  char *copy = malloc(size);
  if (!copy) return RTM_ERR_NOMEM;
  memcpy(copy, name, size);
  list->names[list->count++] = copy;
  return RTM_OK;
}

/* 1 when path names a numeric dataset. */
static int is_numeric_dataset(hid_t file, const char *path) {
  int result = 0;
  hid_t object = H5I_INVALID_HID, type = H5I_INVALID_HID;
  if (rtm_h5_path_exists(file, path) <= 0) return 0;
  object = H5Oopen(file, path, H5P_DEFAULT);
  if (object >= 0 && H5Iget_type(object) == H5I_DATASET) {
    type = H5Dget_type(object);
    H5T_class_t type_class = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    result = type_class == H5T_FLOAT || type_class == H5T_INTEGER;
  }
  rtm_h5_close(&type);
  rtm_h5_close(&object);
  H5Eclear2(H5E_DEFAULT);
  return result;
}

/* 1 when path names an object (a group or a dataset). */
static int is_object(hid_t file, const char *path) {
  return rtm_h5_path_exists(file, path) > 0;
}

/* *holds = test(file, name) of the file at `path`, said of the file only when it does not
 * open. */
static int file_holds(const char *path, const char *name, int (*test)(hid_t, const char *),
                      int *holds) {
  int status = RTM_OK;
  hid_t file = H5I_INVALID_HID;
  *holds = 0;
  RTM_TRY(rtm_h5_open_read(path, "file", &file));
  *holds = test(file, name);
fail:
  rtm_h5_close(&file);
  return status;
}

int rtm_io_dataset_exists(const char *path, const char *name, int *exists) {
  return file_holds(path, name, is_object, exists);
}

int rtm_io_numeric_dataset_exists(const char *path, const char *name, int *exists) {
  return file_holds(path, name, is_numeric_dataset, exists);
}

static int list_group(hid_t file, const char *path, const char *group_name, name_list_t *list) {
  int status = RTM_OK;
  hid_t group = H5I_INVALID_HID;
  H5G_info_t info;
  char name[512], full[1024];
  if (rtm_h5_path_exists(file, group_name) <= 0) return RTM_OK;
  RTM_H5_CHECK(group = H5Gopen2(file, group_name, H5P_DEFAULT), RTM_ERR_INPUT,
               "%s: %s is not a group", path, group_name);
  RTM_H5_CHECK(H5Gget_info(group, &info), RTM_ERR_INPUT, "%s: group %s", path, group_name);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t length;
    RTM_H5_CHECK(length = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name,
                                             sizeof name, H5P_DEFAULT),
                 RTM_ERR_INPUT, "%s: listing %s", path, group_name);
    if ((size_t)length >= sizeof name) continue; /* no name of ours is this long */
    if (strcmp(group_name, "/traces") == 0 && strcmp(name, "receivers") == 0) continue;
    snprintf(full, sizeof full, "%s/%s", strcmp(group_name, "/") == 0 ? "" : group_name, name);
    if (is_numeric_dataset(file, full) && add_name(list, full) != RTM_OK)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory listing %s", path);
  }
fail:
  rtm_h5_close(&group);
  return status;
}

/* The gathers of a many-shot file, /shots/<k>/traces/<field>, in shot order: k below its
 * shot_count and below the number of entries of /shots (a damaged count lists no more); and
 * a migration's images of single shots, /shots/<k>/image (rtm.shot_images; probe Q, Q3:
 * validate passed a file whose /shots/1/image was doubled). */
static int list_shots(hid_t file, const char *path, name_list_t *list) {
  int status = RTM_OK, present = 0;
  double shot_count = 0.0;
  hid_t shots = H5I_INVALID_HID;
  H5G_info_t info;
  char context[1100], group_name[64];
  snprintf(context, sizeof context, "file %s", path);
  RTM_TRY(rtm_h5_read_attr_doubles(file, context, "shot_count", 1, "the number of shots",
                                   &shot_count, &present));
  if (rtm_h5_path_exists(file, "/shots") <= 0) goto fail;
  RTM_H5_CHECK(shots = H5Gopen2(file, "/shots", H5P_DEFAULT), RTM_ERR_INPUT,
               "%s: /shots is not a group", path);
  RTM_H5_CHECK(H5Gget_info(shots, &info), RTM_ERR_INPUT, "%s: group /shots", path);
  for (hsize_t k = 0; k < info.nlinks; ++k) {
    snprintf(group_name, sizeof group_name, "/shots/%llu/traces", (unsigned long long)k);
    if (present && (double)k < shot_count) RTM_TRY(list_group(file, path, group_name, list));
    snprintf(group_name, sizeof group_name, "/shots/%llu/image", (unsigned long long)k);
    if (is_numeric_dataset(file, group_name) && add_name(list, group_name) != RTM_OK)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory listing %s", path);
  }
fail:
  rtm_h5_close(&shots);
  return status;
}

int rtm_io_list_datasets(const char *path, char ***names, int *count) {
  int status = RTM_OK;
  hid_t file = H5I_INVALID_HID;
  name_list_t list = {NULL, 0, 0};
  *names = NULL;
  *count = 0;
  RTM_TRY(rtm_h5_open_read(path, "file", &file));
  RTM_TRY(list_group(file, path, "/snapshots", &list));
  RTM_TRY(list_group(file, path, "/traces", &list));
  RTM_TRY(list_shots(file, path, &list));
  RTM_TRY(list_group(file, path, "/gathers", &list)); /* a migration's CIP gathers */
  RTM_TRY(list_group(file, path, "/", &list)); /* volumes at the root: a model's /vp, ... */
  *names = list.names;
  *count = list.count;
  list.names = NULL;
  list.count = 0;
fail:
  for (int i = 0; i < list.count; ++i)
    free(list.names[i]);
  free(list.names);
  rtm_h5_close(&file);
  return status;
}

int rtm_io_read_receiver_line(const char *path, const char *gather, size_t nrec, char *axis,
                              double *first_m, double *step_m) {
  int status = RTM_OK;
  hid_t file = H5I_INVALID_HID;
  char parent[1024], candidate[1100];
  double *r = NULL; /* [nrec][3] */
  hsize_t dims[2] = {0, 0};
  *axis = 0;
  *first_m = *step_m = 0.0;
  if (nrec < 2) return RTM_OK;
  RTM_TRY(rtm_h5_open_read(path, "file", &file));
  snprintf(parent, sizeof parent, "%s", gather);
  for (int up = 0; up < 2 && !r; ++up) { /* beside it, then a level up */
    char *slash = strrchr(parent, '/');
    if (!slash) break;
    *slash = '\0';
    snprintf(candidate, sizeof candidate, "%s/receivers", parent);
    if (rtm_h5_path_exists(file, candidate) > 0)
      RTM_TRY(rtm_h5_read_array(file, path, candidate, H5T_NATIVE_DOUBLE, sizeof(double), 2, dims,
                                (void **)&r));
  }
  if (!r || dims[0] != nrec || dims[1] != 3) goto fail;
  for (int a = 0; a < 2 && !*axis; ++a) { /* along x, then y */
    const int b = 1 - a;
    const double step = r[3 + a] - r[a];
    int line = fabs(step) > 1e-3;
    for (size_t i = 1; i < nrec && line; ++i)
      line = r[3 * i + b] == r[b] && r[3 * i + 2] == r[2] &&
             fabs(r[3 * i + a] - (r[a] + step * (double)i)) <= 1e-4 * fabs(step) * i + 1e-3;
    if (!line) continue;
    *axis = "xy"[a];
    *first_m = r[a];
    *step_m = step;
  }
fail:
  free(r);
  rtm_h5_close(&file);
  return status;
}

static int read_gather_source(const char *path, const char *gather, double source_m[3],
                              int *found) {
  int status = RTM_OK;
  hid_t file = H5I_INVALID_HID, group = H5I_INVALID_HID;
  char parent[1024], candidate[1100];
  double *source = NULL;
  hsize_t dims[1] = {0};
  *found = 0;
  snprintf(parent, sizeof parent, "%s", gather);
  char *slash = strrchr(parent, '/');
  if (!slash || slash == parent) return RTM_OK; /* a dataset at the root: no shot's */
  *slash = '\0';                                /* the gather's group: /traces, /shots/<k>/traces */
  RTM_TRY(rtm_h5_open_read(path, "file", &file));
  if (rtm_h5_path_exists(file, parent) > 0) {
    RTM_H5_CHECK(group = H5Oopen(file, parent, H5P_DEFAULT), RTM_ERR_INPUT, "%s: %s", path, parent);
    RTM_TRY(
        rtm_h5_read_attr_doubles(group, path, "source", 3, "x, y, z in metres", source_m, found));
  }
  slash = strrchr(parent, '/');
  if (*found || !slash || slash == parent) goto fail;
  *slash = '\0'; /* /shots/<k> */
  snprintf(candidate, sizeof candidate, "%s/source", parent);
  if (rtm_h5_path_exists(file, candidate) <= 0) goto fail;
  RTM_TRY(rtm_h5_read_array(file, path, candidate, H5T_NATIVE_DOUBLE, sizeof(double), 1, dims,
                            (void **)&source));
  /* a damaged position is no position (probe W, W2: validate passed it by) */
  if (dims[0] != 3)
    RTM_FAIL(RTM_ERR_INPUT, "%s: %s holds %llu values: x, y, z in metres expected", path, candidate,
             (unsigned long long)dims[0]);
  memcpy(source_m, source, 3 * sizeof *source);
  *found = 1;
fail:
  free(source);
  rtm_h5_close(&group);
  rtm_h5_close(&file);
  return status;
}

int rtm_io_read_gather_source(const char *path, const char *gather, double source_m[3],
                              int *found) {
  const int status = read_gather_source(path, gather, source_m, found);
  if (status != RTM_OK || !*found) return status;
  for (int a = 0; a < 3; ++a)
    if (!isfinite(source_m[a])) {
      rtm_log_error("%s: the source of %s is at (%g, %g, %g) m: a position must be finite", path,
                    gather, source_m[0], source_m[1], source_m[2]);
      return RTM_ERR_INPUT;
    }
  return RTM_OK;
}

int rtm_io_read_axes(const char *path, const char *name, long index, rtm_io_axes_t *axes) {
  int status = RTM_OK;
  open_dataset_t d;
  double *times = NULL;
  memset(axes, 0, sizeof *axes);
  RTM_TRY(open_dataset(path, name, &d));
  RTM_TRY(rtm_h5_read_attr_doubles(d.file, path, "spacing", 3, "metres", axes->spacing_m,
                                   &axes->has_grid));
  if (axes->has_grid)
    RTM_TRY(rtm_h5_read_attr_doubles(d.file, path, "origin", 3, "metres", axes->origin_m,
                                     &axes->has_origin));
  /* the axes of a figure and the grid validate compares: a damaged spacing or origin drew a
   * blank figure (probe W, W5) */
  for (int a = 0; axes->has_grid && a < 3; ++a)
    if (!(axes->spacing_m[a] > 0.0 && isfinite(axes->spacing_m[a]) &&
          fabs(axes->origin_m[a]) <= RTM_IO_ORIGIN_CELLS * axes->spacing_m[a]))
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: attributes spacing (%g, %g, %g) and origin (%g, %g, %g) m: the spacing must be "
               "finite and > 0, the origin finite and within 2^29 spacings of 0 (as the decks')",
               path, axes->spacing_m[0], axes->spacing_m[1], axes->spacing_m[2], axes->origin_m[0],
               axes->origin_m[1], axes->origin_m[2]);
  RTM_TRY(
      rtm_h5_read_attr_doubles(d.dataset, path, "dt", 1, "seconds", &axes->dt_s, &axes->has_dt));
  /* a figure's time axis and --gain agc's window are built on dt: zero, a negative, NaN or
   * Inf is a damaged file, not a gather to draw in samples */
  if (axes->has_dt && !(axes->dt_s > 0.0 && isfinite(axes->dt_s)))
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: dataset %s: attribute dt is %g: the sample interval must be finite and > 0 "
             "seconds",
             path, name, axes->dt_s);
  if (index >= 0 && d.rank >= 1 && H5Aexists(d.dataset, "times") > 0) {
    times = malloc(((size_t)d.dims[0] + 1) * sizeof *times);
    if (!times) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the times of %s", name);
    RTM_TRY(rtm_h5_read_attr_doubles(d.dataset, path, "times", (size_t)d.dims[0], "seconds", times,
                                     &axes->has_time));
    if (axes->has_time && (size_t)index < (size_t)d.dims[0]) axes->time_s = times[index];
    if (axes->has_time && !isfinite(axes->time_s)) /* a title "t = nan s" (probe X, X2) */
      RTM_FAIL(RTM_ERR_INPUT, "%s: dataset %s: attribute times[%ld] is %g: a time must be finite",
               path, name, index, axes->time_s);
  }
fail:
  free(times);
  close_dataset(&d);
  return status;
}

typedef struct {
  rtm_io_attribute_t *list;
  int count, failed;
} attribute_walk_t;

/* H5Aiterate2's visit: a numeric attribute of up to 2^20 values read as doubles. */
static herr_t visit_attribute(hid_t object, const char *name, const H5A_info_t *info, void *data) {
  (void)info;
  attribute_walk_t *walk = data;
  hid_t attribute = H5Aopen(object, name, H5P_DEFAULT);
  if (attribute < 0) return -1;
  hid_t type = H5Aget_type(attribute), space = H5Aget_space(attribute);
  const H5T_class_t type_class = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  herr_t result = 0;
  if ((type_class == H5T_INTEGER || type_class == H5T_FLOAT) && points >= 0 && points <= 1 << 20) {
    rtm_io_attribute_t *grown = realloc(walk->list, (size_t)(walk->count + 1) * sizeof *grown);
    double *values = malloc(((size_t)points + 1) * sizeof *values);
    if (grown) walk->list = grown;
    if (!grown || !values || H5Aread(attribute, H5T_NATIVE_DOUBLE, values) < 0) {
      free(values);
      walk->failed = 1;
      result = -1;
    } else {
      rtm_io_attribute_t *a = &walk->list[walk->count++];
      snprintf(a->name, sizeof a->name, "%s", name);
      a->count = (size_t)points;
      a->values = values;
    }
  }
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  H5Aclose(attribute);
  return result;
}

int rtm_io_read_numeric_attributes(const char *path, const char *name,
                                   rtm_io_attribute_t **attributes, int *count) {
  int status = RTM_OK;
  open_dataset_t d;
  attribute_walk_t walk = {NULL, 0, 0};
  *attributes = NULL;
  *count = 0;
  RTM_TRY(open_dataset(path, name, &d));
  hsize_t at = 0;
  if (H5Aiterate2(d.dataset, H5_INDEX_NAME, H5_ITER_INC, &at, visit_attribute, &walk) < 0)
    status = walk.failed ? RTM_ERR_NOMEM : RTM_ERR_INPUT;
  close_dataset(&d);
  if (status != RTM_OK) {
    rtm_log_error("%s: the attributes of dataset %s cannot be read", path, name);
    rtm_io_attributes_release(walk.list, walk.count);
    return status;
  }
  *attributes = walk.list;
  *count = walk.count;
fail:
  return status;
}

void rtm_io_attributes_release(rtm_io_attribute_t *attributes, int count) {
  for (int i = 0; i < count; ++i)
    free(attributes[i].values);
  free(attributes);
}
