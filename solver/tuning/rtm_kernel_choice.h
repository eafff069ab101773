/* rtm_kernel_choice.h - kernel.* = auto: the z-marching kernels' shape (halo, stages, tile,
 * zblock) for a GPU, an equation, a model precision and a grid size.
 *
 * Two sources, the first that knows the case wins:
 *   the tune cache   what `rtm3d tune` measured on this user's GPU, one INI section per
 *                    GPU name, compute capability, driver, equation, precision and size
 *                    class (rtm_kernel_cache_path: $RTM3D_CACHE_DIR, $XDG_CACHE_HOME/rtm3d
 *                    or ~/.cache/rtm3d, file kernels.ini);
 *   the table        the winners of the sweeps committed in kernel_table.csv (this folder)
 *                    (compiled in at configure time), by minimum compute capability,
 *                    equation, precision and size class; the nearest row serves a case no
 *                    row names (vti takes tti's rows where it has none, fp16 fp32's, a
 *                    size the nearest measured class), a row for the GPU's kind (a part of
 *                    its name) before one for any GPU where both are as near.
 * Plain C (no CUDA): the cuda backend fills the key from its device; tests run anywhere. */
#ifndef RTM_KERNEL_CHOICE_H
#define RTM_KERNEL_CHOICE_H

#include <stddef.h>

#include "rtm_config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char halo[RTM_CONFIG_NAME_MAX]; /* sync | ldgsts | tma */
  int stages, block[2], zblock;
} rtm_kernel_shape_t;

/* What a choice depends on. */
typedef struct {
  char gpu[256]; /* the device's name, as cudaGetDeviceProperties gives it */
  int cc;        /* compute capability, 10 x major + minor (90 for sm_90) */
  int driver;    /* cudaDriverGetVersion (13000 for 13.0) */
  rtm_equation_t equation;
  rtm_precision_t precision; /* memory.model_precision */
  int size_class;            /* rtm_kernel_size_class */
} rtm_kernel_key_t;

/* The edge of the power-of-two cube nearest the grid's cell count in log scale (320^3 is
 * class 256, 400^3 is 512: the border is 2^25.5 cells, about 362^3), clamped to 64 .. 2048. */
int rtm_kernel_size_class(const int n[3]);

/* "NVIDIA H100 80GB HBM3 | sm_90 | driver 13.0 | tti | fp32 | 512^3": the cache's section. */
void rtm_kernel_key_text(const rtm_kernel_key_t *key, char *text, size_t size);

/* "tma 3 64x4 64": halo, stages, tile, zblock, as the cache and the reports write them. */
void rtm_kernel_shape_text(const rtm_kernel_shape_t *shape, char *text, size_t size);
/* The inverse; 0 when `text` is not a valid shape (unknown halo, stages outside 1..4, a
 * tile outside 1..1024, a negative zblock). */
int rtm_kernel_shape_parse(const char *text, rtm_kernel_shape_t *shape);
/* The most kernel.stages the kernels of `halo` (sync, ldgsts, tma) have for `equation`: 4 for
 * iso's tma kernel, else 3 (sync has no stages). What tune tries and what auto may give. */
int rtm_kernel_max_stages(const char *halo, rtm_equation_t equation);

/* The table's row for `key` (always one: the table ends with rows for any GPU); `why`
 * (may be NULL) names it and where it was measured. */
void rtm_kernel_table_lookup(const rtm_kernel_key_t *key, rtm_kernel_shape_t *shape, char *why,
                             size_t size);
/* The table's rows, for rtm3d info and the tests. */
int rtm_kernel_table_rows(void);

/* The cache file: $RTM3D_CACHE_DIR/kernels.ini, else $XDG_CACHE_HOME/rtm3d/kernels.ini,
 * else $HOME/.cache/rtm3d/kernels.ini; 0 when none of them is set. */
int rtm_kernel_cache_path(char *path, size_t size);
/* 1 and the shape when the cache at `path` has the key's section with a valid shape; 0
 * when the file or the section is missing. A malformed section is ignored with a warning
 * naming the file and line (a cache never stops a run). `why` (may be NULL) says where
 * the shape came from and what it measured. */
int rtm_kernel_cache_lookup(const char *path, const rtm_kernel_key_t *key,
                            rtm_kernel_shape_t *shape, char *why, size_t size);
/* Writes the key's section (the shape, the MCells/s it reached, the date) into the cache at
 * `path`, replacing that section and keeping every other, through a temporary file and a
 * rename; creates the folder. RTM_OK or RTM_ERR_IO with a message. */
int rtm_kernel_cache_store(const char *path, const rtm_kernel_key_t *key,
                           const rtm_kernel_shape_t *shape, double mcells);

/* kernel.* of cfg with each auto replaced: from the cache at `cache_path` (NULL: none),
 * else from the table; explicit keys are kept. `why` says which ("explicit" when no key is
 * auto). */
void rtm_kernel_choose(const rtm_config_t *cfg, const rtm_kernel_key_t *key, const char *cache_path,
                       rtm_kernel_shape_t *shape, char *why, size_t size);

#ifdef __cplusplus
}
#endif

#endif
