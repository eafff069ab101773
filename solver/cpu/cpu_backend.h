/* cpu_backend.h - private to the cpu backend (cpu_backend.c): the per-equation propagators
 * behind the one table rtm_backend_cpu, and the host helpers they share.
 *
 * cpu_backend.c owns what every equation does alike: the point sources and receivers, the
 * split of a step into regions, injection into every field of the new level, recording of
 * the fields the receivers ask for (p, q), and the rotation of the time levels. A physics
 * implements only the update of the new level over a range of local z planes, and says
 * where its fields are. iso_cpu.c (p_tt = v^2 lap p) and tti_cpu.c (the Fletcher-Du-Fowler
 * system for vti and tti) are the two physics. */
#ifndef RTM_CPU_BACKEND_H
#define RTM_CPU_BACKEND_H

#include <stddef.h>

#include "rtm_backend.h"

/* OpenMP splits the (z, y) rows of a sweep. Along a row (x) no cell depends on another, which
 * RTM_OMP_SIMD tells the compiler: restrict does not survive into OpenMP's outlined
 * functions, and without it the row loops are not vectorised. Each cell keeps its own
 * sequence of float operations, so the results do not change. */
#ifdef _OPENMP
#define RTM_OMP_ROWS _Pragma("omp parallel for collapse(2) schedule(static)")
#define RTM_OMP_SIMD _Pragma("omp simd")
#else
#define RTM_OMP_ROWS
#define RTM_OMP_SIMD
#endif

/* The row functions are compiled for the host's wider vector units as well as the baseline
 * x86-64 (SSE2) and the loader picks the widest the processor has (function
 * multi-versioning): AVX-512, FMA (with AVX's 256-bit floats), or the baseline. Every clone
 * gives the same floats: each cell's operations are IEEE float operations in the source's
 * order, its fused multiply-adds written as fmaf (exactly rounded: one instruction where
 * the processor has FMA3, a call into libm on the baseline, the same float), and the build's
 * -ffp-contract=off keeps the compiler from contracting any other multiply and add (GCC
 * does not under -std=c11, Clang would by default); the GPU kernels
 * round each operation the same way (iso: one thread of a 160^3 step went from 300-320 to
 * 520-570 MCells/s on the development machine's AVX-512 core). tti's rows keep their own
 * clones (RTM_FMA_CLONES in tti_cpu.c): AVX2 and AVX-512 clones of them measured no faster
 * there. */
#if defined(__x86_64__) && defined(__ELF__) && !defined(__AVX2__) &&                            \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8))
#define RTM_SIMD_CLONES __attribute__((target_clones("avx512f", "fma", "default")))
#else
#define RTM_SIMD_CLONES
#endif

typedef struct {
  const char *name;
  int field_count; /* 1: p; 2: p and q */
  int (*create)(const rtm_backend_desc_t *desc, void **state);
  /* Writes the new level over local planes [z_begin, z_end): forward p[n+1] over p[n-1]
   * (held by `previous`), backward p[n-1] over p[n+1] (held by `current`); p[n] is the
   * other level. Each cell comes out of the same expression whatever the range, so split
   * steps equal whole ones bit for bit. */
  void (*update)(void *state, long z_begin, long z_end, rtm_direction_t direction);
  /* The padded array of a field at a time level; NULL when the physics has no such field. */
  float *(*level)(void *state, rtm_field_t field, rtm_level_t level);
  /* current <-> previous, for every field */
  void (*rotate)(void *state);
  /* The damping profiles the update reads (rtm_cpu_copy_damping's allocation), for
   * set_damping to rewrite. */
  float *(*damping)(void *state);
  void (*destroy)(void *state);
} rtm_cpu_physics_t;

extern const rtm_cpu_physics_t rtm_cpu_physics_iso;
extern const rtm_cpu_physics_t rtm_cpu_physics_tti; /* vti and tti */

/* A host allocation recorded in the ledger (zeroed). */
int rtm_cpu_alloc(rtm_mem_ledger_t *ledger, size_t bytes, const char *label, rtm_allocation_t *out);

/* The damping profiles eta dt of the description, copied into one allocation: x [nx],
 * then y [ny], then z [nz global]; all zero without a boundary. */
int rtm_cpu_copy_damping(const rtm_backend_desc_t *desc, rtm_mem_ledger_t *ledger,
                         rtm_allocation_t *profiles, const float *eta_dt[3]);
/* Writes the profiles of `boundary` (zeros where it has none, or for NULL) into such an
 * allocation. */
void rtm_cpu_fill_damping(const rtm_grid_t *grid, const rtm_boundary_t *boundary, float *profiles);

#endif
