#define _POSIX_C_SOURCE 200809L /* strtok_r */
/* A model from a short description (rtm_model_builder.h). */
#include "rtm_model_builder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_status.h"

enum { MAX_PAIRS = 16, LINE_MAX_CHARS = 1024 };

/* One line: its keyword and name=value pairs, where it came from. */
typedef struct {
  const char *name; /* the description's name, for messages */
  int number;       /* line number */
  char text[LINE_MAX_CHARS];
  const char *keyword;
  const char *key[MAX_PAIRS], *value[MAX_PAIRS];
  int used[MAX_PAIRS]; /* read by the element: a key left unread is unknown */
  int pairs;
} line_t;

typedef struct {
  const rtm_io_volume_t *g;
  float *values[RTM_IO_PARAMETERS];
} model_t;

static const char *const parameter_keys[RTM_IO_PARAMETERS] = {"vp", "epsilon", "delta", "theta",
                                                              "phi"};

/* Splits `l->text` into the keyword and pairs; RTM_ERR_INPUT for a word without '='. */
static int split_line(line_t *l) {
  int status = RTM_OK;
  char *save = NULL;
  l->keyword = NULL;
  l->pairs = 0;
  for (char *word = strtok_r(l->text, " \t\r\n", &save); word;
       word = strtok_r(NULL, " \t\r\n", &save)) {
    if (!l->keyword) {
      l->keyword = word;
      continue;
    }
    char *eq = strchr(word, '=');
    if (!eq || eq == word)
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: '%s' is not name=value", l->name, l->number, word);
    if (l->pairs == MAX_PAIRS)
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: more than %d values on one line", l->name, l->number,
               MAX_PAIRS);
    *eq = '\0';
    l->key[l->pairs] = word;
    l->value[l->pairs] = eq + 1;
    l->used[l->pairs] = 0;
    ++l->pairs;
  }
fail:
  return status;
}

/* The value of `key` as numbers (count of them, comma-separated) within [lo, hi]; *found 0
 * when the line lacks it (an error when `required`). */
static int numbers(line_t *l, const char *key, int count, double lo, double hi, int required,
                   double *out, int *found) {
  int status = RTM_OK;
  *found = 0;
  for (int p = 0; p < l->pairs; ++p) {
    if (strcmp(l->key[p], key) != 0) continue;
    for (int q = p + 1; q < l->pairs; ++q)
      if (strcmp(l->key[q], key) == 0)
        RTM_FAIL(RTM_ERR_INPUT, "%s:%d: %s gives %s twice", l->name, l->number, l->keyword, key);
    l->used[p] = 1;
    const char *at = l->value[p];
    for (int k = 0; k < count; ++k) {
      char *end = NULL;
      out[k] = rtm_text_number(at, &end);
      if (end == at || !isfinite(out[k]) || (*end != '\0' && !(*end == ',' && k + 1 < count)))
        RTM_FAIL(RTM_ERR_INPUT, "%s:%d: %s %s = '%s': expected %d number%s%s", l->name, l->number,
                 l->keyword, key, l->value[p], count, count > 1 ? "s" : "",
                 count > 1 ? " separated by commas" : "");
      if (out[k] < lo || out[k] > hi)
        RTM_FAIL(RTM_ERR_INPUT, "%s:%d: %s %s = %.10g is outside [%g, %g]", l->name, l->number,
                 l->keyword, key, out[k], lo, hi); /* 89.9999999 not rounded to 80's side */
      at = end + 1;
    }
    *found = 1;
    return RTM_OK;
  }
  if (required) RTM_FAIL(RTM_ERR_INPUT, "%s:%d: %s needs %s=", l->name, l->number, l->keyword, key);
fail:
  return status;
}

/* The parameters a line sets: values[] and which it gives (vp required or not). */
static int parameters(line_t *l, int vp_required, double set[RTM_IO_PARAMETERS],
                      int given[RTM_IO_PARAMETERS]) {
  int status = RTM_OK;
  /* the ranges of the model.* keys, which the reader and the solver hold model files to */
  static const double lo[RTM_IO_PARAMETERS] = {1e-6, -0.49, -0.49, -180.0, -360.0};
  static const double hi[RTM_IO_PARAMETERS] = {20000.0, 2.0, 2.0, 180.0, 360.0};
  for (int k = 0; k < RTM_IO_PARAMETERS; ++k)
    RTM_TRY(numbers(l, parameter_keys[k], 1, lo[k], hi[k], k == RTM_IO_VP && vp_required, &set[k],
                    &given[k]));
fail:
  return status;
}

/* A key the element did not read is unknown. */
static int check_all_used(const line_t *l) {
  for (int p = 0; p < l->pairs; ++p)
    if (!l->used[p]) {
      rtm_log_error("%s:%d: %s has no key '%s'", l->name, l->number, l->keyword, l->key[p]);
      return RTM_ERR_INPUT;
    }
  return RTM_OK;
}

static double coordinate(const rtm_io_volume_t *g, int axis, int i) {
  return g->origin_m[axis] + i * g->spacing_m[axis];
}

/* Calls `apply` for every node with its coordinates. */
#define FOR_EACH_NODE(g, body)                                                                     \
  for (int iz = 0; iz < (g)->n[2]; ++iz)                                                           \
    for (int iy = 0; iy < (g)->n[1]; ++iy)                                                         \
      for (int ix = 0; ix < (g)->n[0]; ++ix) {                                                     \
        const size_t at =                                                                          \
            ((size_t)iz * (size_t)(g)->n[1] + (size_t)iy) * (size_t)(g)->n[0] + (size_t)ix;        \
        const double x = coordinate((g), 0, ix), y = coordinate((g), 1, iy),                       \
                     z = coordinate((g), 2, iz);                                                   \
        (void)x;                                                                                   \
        (void)y;                                                                                   \
        body                                                                                       \
      }

static void set_given(model_t *m, size_t at, const double set[], const int given[]) {
  for (int k = 0; k < RTM_IO_PARAMETERS; ++k)
    if (given[k]) m->values[k][at] = (float)set[k];
}

static int background(model_t *m, line_t *l) {
  int status = RTM_OK, given[RTM_IO_PARAMETERS], has_gradient = 0;
  double set[RTM_IO_PARAMETERS], gradient = 0.0;
  RTM_TRY(parameters(l, 1, set, given));
  RTM_TRY(numbers(l, "gradient", 1, -100.0, 100.0, 0, &gradient, &has_gradient));
  RTM_TRY(check_all_used(l));
  const rtm_io_volume_t *g = m->g;
  FOR_EACH_NODE(g, {
    set_given(m, at, set, given);
    m->values[RTM_IO_VP][at] = (float)(set[RTM_IO_VP] + gradient * (z - g->origin_m[2]));
  })
fail:
  return status;
}

static int layer(model_t *m, line_t *l) {
  int status = RTM_OK, given[RTM_IO_PARAMETERS], found = 0;
  double set[RTM_IO_PARAMETERS], depth = 0.0, dip = 0.0, azimuth = 0.0, gradient = 0.0;
  RTM_TRY(parameters(l, 1, set, given));
  RTM_TRY(numbers(l, "depth", 1, -1e7, 1e7, 1, &depth, &found));
  RTM_TRY(numbers(l, "dip", 1, -80.0, 80.0, 0, &dip, &found));
  RTM_TRY(numbers(l, "azimuth", 1, -360.0, 360.0, 0, &azimuth, &found));
  RTM_TRY(numbers(l, "gradient", 1, -100.0, 100.0, 0, &gradient, &found));
  RTM_TRY(check_all_used(l));
  const rtm_io_volume_t *g = m->g;
  const double pi = 3.14159265358979323846, slope = tan(dip * pi / 180.0);
  const double ax = cos(azimuth * pi / 180.0), ay = sin(azimuth * pi / 180.0);
  const double xc = g->origin_m[0] + 0.5 * (g->n[0] - 1) * g->spacing_m[0];
  const double yc = g->origin_m[1] + 0.5 * (g->n[1] - 1) * g->spacing_m[1];
  FOR_EACH_NODE(g, {
    const double plane = depth + slope * ((x - xc) * ax + (y - yc) * ay);
    if (z > plane) {
      set_given(m, at, set, given);
      m->values[RTM_IO_VP][at] = (float)(set[RTM_IO_VP] + gradient * (z - plane));
    }
  })
fail:
  return status;
}

static int box(model_t *m, line_t *l) {
  int status = RTM_OK, given[RTM_IO_PARAMETERS], found = 0;
  double set[RTM_IO_PARAMETERS], range[3][2];
  RTM_TRY(parameters(l, 0, set, given));
  for (int a = 0; a < 3; ++a) {
    const char key[2] = {"xyz"[a], '\0'};
    RTM_TRY(numbers(l, key, 2, -1e7, 1e7, 1, range[a], &found));
    if (range[a][1] < range[a][0])
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: box %s = %g,%g: the second below the first", l->name,
               l->number, key, range[a][0], range[a][1]);
  }
  RTM_TRY(check_all_used(l));
  /* a box that sets nothing is a mistake, not a model (probe S, S4: one given in km, or
   * with no property, left the background as it was, exit 0) */
  int properties = 0;
  for (int k = 0; k < RTM_IO_PARAMETERS; ++k)
    properties += given[k];
  if (!properties)
    RTM_FAIL(RTM_ERR_INPUT, "%s:%d: box sets no property (vp, epsilon, delta, theta or phi)",
             l->name, l->number);
  size_t nodes = 0;
  FOR_EACH_NODE(m->g, {
    if (x >= range[0][0] && x <= range[0][1] && y >= range[1][0] && y <= range[1][1] &&
        z >= range[2][0] && z <= range[2][1]) {
      set_given(m, at, set, given);
      ++nodes;
    }
  })
  const rtm_io_volume_t *g = m->g;
  if (nodes == 0)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s:%d: box x %g..%g, y %g..%g, z %g..%g m holds no node of the grid (x %g..%g, "
             "y %g..%g, z %g..%g m, every %g, %g, %g m)",
             l->name, l->number, range[0][0], range[0][1], range[1][0], range[1][1], range[2][0],
             range[2][1], g->origin_m[0], coordinate(g, 0, g->n[0] - 1), g->origin_m[1],
             coordinate(g, 1, g->n[1] - 1), g->origin_m[2], coordinate(g, 2, g->n[2] - 1),
             g->spacing_m[0], g->spacing_m[1], g->spacing_m[2]);
fail:
  return status;
}

static int diffractor(model_t *m, line_t *l) {
  int status = RTM_OK, given[RTM_IO_PARAMETERS], found = 0;
  double set[RTM_IO_PARAMETERS], p[3], radius = 0.0;
  RTM_TRY(parameters(l, 1, set, given));
  for (int a = 0; a < 3; ++a) {
    const char key[2] = {"xyz"[a], '\0'};
    RTM_TRY(numbers(l, key, 1, -1e7, 1e7, 1, &p[a], &found));
  }
  RTM_TRY(numbers(l, "radius", 1, 1e-9, 1e7, 1, &radius, &found));
  RTM_TRY(check_all_used(l));
  const rtm_io_volume_t *g = m->g;
  /* a centre farther than its radius from the grid would be clamped onto an edge node below:
   * refused instead (a typo in a coordinate, not a model) */
  double outside2 = 0.0;
  for (int a = 0; a < 3; ++a) {
    const double lo = g->origin_m[a], hi = g->origin_m[a] + (g->n[a] - 1) * g->spacing_m[a];
    const double d = p[a] < lo ? lo - p[a] : p[a] > hi ? p[a] - hi : 0.0;
    outside2 += d * d;
  }
  if (outside2 > radius * radius)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s:%d: diffractor at (%g, %g, %g) m with radius %g m lies outside the grid "
             "(x %g..%g, y %g..%g, z %g..%g m)",
             l->name, l->number, p[0], p[1], p[2], radius, g->origin_m[0],
             g->origin_m[0] + (g->n[0] - 1) * g->spacing_m[0], g->origin_m[1],
             g->origin_m[1] + (g->n[1] - 1) * g->spacing_m[1], g->origin_m[2],
             g->origin_m[2] + (g->n[2] - 1) * g->spacing_m[2]);
  /* the nearest node at least, so that a point smaller than a cell is still there */
  size_t nearest = 0;
  double best = INFINITY;
  FOR_EACH_NODE(g, {
    const double r2 = (x - p[0]) * (x - p[0]) + (y - p[1]) * (y - p[1]) + (z - p[2]) * (z - p[2]);
    if (r2 <= radius * radius) set_given(m, at, set, given);
    if (r2 < best) {
      best = r2;
      nearest = at;
    }
  })
  set_given(m, nearest, set, given);
fail:
  return status;
}

static int anomaly(model_t *m, line_t *l) {
  int status = RTM_OK, found = 0;
  double p[3], sigma = 0.0, dvp = 0.0;
  for (int a = 0; a < 3; ++a) {
    const char key[2] = {"xyz"[a], '\0'};
    RTM_TRY(numbers(l, key, 1, -1e7, 1e7, 1, &p[a], &found));
  }
  RTM_TRY(numbers(l, "sigma", 1, 1e-9, 1e7, 1, &sigma, &found));
  RTM_TRY(numbers(l, "dvp", 1, -20000.0, 20000.0, 1, &dvp, &found));
  RTM_TRY(check_all_used(l));
  FOR_EACH_NODE(m->g, {
    const double r2 = (x - p[0]) * (x - p[0]) + (y - p[1]) * (y - p[1]) + (z - p[2]) * (z - p[2]);
    m->values[RTM_IO_VP][at] += (float)(dvp * exp(-r2 / (2.0 * sigma * sigma)));
  })
fail:
  return status;
}

int rtm_model_build(const char *text, const char *name, const rtm_io_volume_t *volume,
                    float *values[RTM_IO_PARAMETERS]) {
  int status = RTM_OK, lines = 0, have_background = 0;
  model_t m = {.g = volume};
  line_t *l = calloc(1, sizeof *l);
  const size_t cells = (size_t)volume->n[0] * (size_t)volume->n[1] * (size_t)volume->n[2];
  for (int k = 0; k < RTM_IO_PARAMETERS; ++k) {
    values[k] = NULL;
    m.values[k] = calloc(cells, sizeof(float));
    if (!m.values[k]) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a model of %zu cells", cells);
  }
  if (!l) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  if (strncmp(text, "\xEF\xBB\xBF", 3) == 0) text += 3; /* a UTF-8 byte order mark */
  for (const char *at = text; *at;) {
    const char *end = strchr(at, '\n');
    const size_t length = end ? (size_t)(end - at) : strlen(at);
    ++lines;
    if (length >= LINE_MAX_CHARS)
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: a line longer than %d characters", name, lines,
               LINE_MAX_CHARS - 1);
    memset(l, 0, sizeof *l);
    l->name = name;
    l->number = lines;
    memcpy(l->text, at, length);
    char *hash = strchr(l->text, '#');
    if (hash) *hash = '\0';
    at = end ? end + 1 : at + length;
    RTM_TRY(split_line(l));
    if (!l->keyword) continue;
    if (strcmp(l->keyword, "background") == 0) {
      if (have_background) RTM_FAIL(RTM_ERR_INPUT, "%s:%d: a second background", name, lines);
      RTM_TRY(background(&m, l));
      have_background = 1;
      continue;
    }
    static const struct {
      const char *keyword;
      int (*build)(model_t *, line_t *);
    } elements[] = {
        {"layer", layer}, {"box", box}, {"diffractor", diffractor}, {"anomaly", anomaly}};
    size_t k = 0;
    while (k < sizeof elements / sizeof elements[0] && strcmp(l->keyword, elements[k].keyword))
      ++k;
    /* unknown is said as such wherever it stands (a probe: "foo before the background") */
    if (k == sizeof elements / sizeof elements[0])
      RTM_FAIL(RTM_ERR_INPUT,
               "%s:%d: unknown element '%s' (known: background, layer, box, diffractor, anomaly)",
               name, lines, l->keyword);
    if (!have_background)
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: %s before the background (it comes first: background vp=...)",
               name, lines, l->keyword);
    RTM_TRY(elements[k].build(&m, l));
  }
  if (!have_background) RTM_FAIL(RTM_ERR_INPUT, "%s: no background vp=... line", name);
  const size_t nx = (size_t)volume->n[0], plane = nx * (size_t)volume->n[1];
  for (size_t i = 0; i < cells; ++i)
    if (!(m.values[RTM_IO_VP][i] > 0.0f) || m.values[RTM_IO_VP][i] > 20000.0f)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: vp = %g at [z=%zu][y=%zu][x=%zu]: the gradients and anomalies "
               "take it outside (0, 20000] m/s, the range a model file must keep",
               name, m.values[RTM_IO_VP][i], i / plane, i % plane / nx, i % nx);
  for (int k = 0; k < RTM_IO_PARAMETERS; ++k) {
    values[k] = m.values[k];
    m.values[k] = NULL;
  }
fail:
  for (int k = 0; k < RTM_IO_PARAMETERS; ++k)
    free(m.values[k]);
  free(l);
  return status;
}
