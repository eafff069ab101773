/* rtm_imaging.h - solver/rtm: the pieces of reverse-time migration that work on whole fields
 * where the backend keeps them (rtm_field_view_t: host memory for cpu, device memory for
 * cuda), so that nothing crosses to the host per step:
 *
 *   image        I(x) += S(x, t) R(x, t) and the source illumination L(x) += S(x, t)^2 over
 *                the interior cells, accumulated in float in the fields' memory; read back
 *                dense [nz_local][ny][nx]; the zero-lag cross-correlation imaging condition.
 *   snapshots    the source wavefield stored every imaging step of the forward pass: slots
 *                of dense interior volumes (fp32, or binary16 to halve the bytes) held by a
 *                memory strategy (memory.imaging: device, vmm, vmm-compressed, managed,
 *                pinned, host), given back in the backward pass as fp32.
 *   injection    the receiver-side point operator that makes back-propagation the adjoint
 *                of forward modelling with recording (below).
 *   filters      on the dense image at the end: illumination compensation, Laplacian.
 *
 * Where a volume is laid out: a view's padded array (rtm_grid_t strides, origin_index) or a
 * dense interior array; rtm_layout_t says which, so that one accumulation serves a snapshot
 * (dense) and a reconstructed field (padded) alike. Work on device memory runs on the legacy
 * default stream (ordered after the backends' queued steps, see rtm_field_view_t) and is
 * asynchronous: reading an image back synchronises.
 *
 * The adjoint pairing (iso, absorbing layer included). The forward leapfrog of the
 * backends is, per step, u[n+1] = A u[n] + B u[n-1] + P^T s[n] with A = D (2 + V L),
 * B = -D (1 - E), D = (1 + E)^-1, V = dt^2 v^2, E = eta dt (diagonal), L the symmetric
 * 8th-order Laplacian, P^T the source taps; recording is d[n] = R u[n]. Its adjoint runs
 * backward in time, lambda[n] = A^T lambda[n+1] + B lambda[n+2] + R^T d[n], and
 * chi = D V lambda obeys chi[n] = A chi[n+1] + B chi[n+2] + D V R^T d[n]: the same forward
 * kernel, stepped over the time-reversed gather, with the receiver taps' weights multiplied
 * by dt^2 v^2 / (1 + eta dt) at each tap. rtm_adjoint_receivers builds those taps; the
 * image correlates S = u with that chi (chi = dt^2 v^2 lambda outside the absorbing layer).
 * vti/tti use the same weights with vp: not an exact adjoint there. */
#ifndef RTM_IMAGING_H
#define RTM_IMAGING_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_memory.h"
#include "rtm_mpi.h"
#include "rtm_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How an array of the local grid is laid out: element of interior cell (ix, iy, iz_local)
 * at origin + iz stride_z + iy stride_y + ix. */
typedef struct {
  long long origin, stride_y, stride_z;
} rtm_layout_t;

/* The padded layout of the grid (a field view), and the dense [nz_local][ny][nx] one. */
rtm_layout_t rtm_layout_padded(const rtm_grid_t *grid);
rtm_layout_t rtm_layout_dense(const rtm_grid_t *grid);

/* ---- image and illumination ---- */
typedef struct rtm_image rtm_image_t;

/* Zeroed image and illumination, dense over the grid's interior, in the memory of `device`
 * (-1: host, the cpu backend's fields; else that CUDA device) through `strategy` (a memory
 * strategy name, e.g. rtm_config_strategy_for(cfg, "imaging")), recorded in the ledger as
 * "image" and "illumination". */
int rtm_image_create(const rtm_grid_t *grid, int device, const char *strategy,
                     rtm_mem_ledger_t *ledger, rtm_image_t **image);
/* image += source * receiver, illumination += source^2 over the interior cells (or the box
 * rtm_image_keep_interior leaves); each volume where the image is, laid out as its layout
 * says. In float, each cell one fused multiply-add per term in this order, the same on host
 * and device. */
int rtm_image_accumulate(rtm_image_t *image, const float *source, rtm_layout_t source_layout,
                         const float *receiver, rtm_layout_t receiver_layout);
/* From here on rtm_image_accumulate adds only the box `width` cells in from every face of
 * the whole grid (its x faces moved out to a multiple of 4 cells, so that the device's rows
 * stay whole float4s): the non-absorbing interior, where alone a migration's image means
 * anything (rtm_migration_read zeroes the rest), without reading and writing the layer's
 * cells at each imaging step. 0: every cell (the default). */
void rtm_image_keep_interior(rtm_image_t *image, int width);
/* While deferred (1), the accumulations add the image alone (rtm_image_accumulate and a
 * step's request; rtm_image_accumulate_blocks refuses), the illumination being added later
 * from the stored source volumes by rtm_image_illuminate, which reads each once instead of
 * reading and writing the illumination at every imaging step. */
void rtm_image_defer_illumination(rtm_image_t *image, int deferred);
/* illumination += s_k^2 for k = count - 1 down to 0, s_k the dense interior volume at
 * first + k stride where the image is (stride >= its cells), one fused multiply-add each in
 * that order: the floats that accumulating S(n) for the slots' times, the last first as a
 * backward pass does, gives (inside rtm_image_keep_interior's box; this pass fills the layer
 * too, which a migration zeroes when it reads). */
int rtm_image_illuminate(rtm_image_t *image, const float *first, size_t stride, int count);
/* The same accumulation with the source as a zfp snapshot's device blocks and the coder's
 * scratch (rtm_snapshots_device_blocks): decoded and imaged in one pass (device images only; the
 * same floats as decoding into a volume, then rtm_image_accumulate, inside the box of
 * rtm_image_keep_interior: this pass images the layer too). */
int rtm_image_accumulate_blocks(rtm_image_t *image, const void *blocks, int rate, void *scratch,
                                const float *receiver, rtm_layout_t receiver_layout);
/* The same accumulation taken by a backend's next step (rtm_backend_t's image_next_step,
 * device images only): fills *request with `source` in `source_layout` and the image's
 * volumes, after ordering the device's legacy stream behind a pending hold or clear, so
 * that a step queued next finds them ready. RTM_ERR_UNSUPPORTED for a host image. */
int rtm_image_step_request(rtm_image_t *image, const float *source, rtm_layout_t source_layout,
                           rtm_step_image_t *request);
/* Both volumes back to the host, dense [nz_local][ny][nx] (either may be NULL). Waits for
 * the queued accumulations, and for a hold's copy (rtm_image_hold). */
int rtm_image_read(rtm_image_t *image, float *image_dense, float *illumination_dense);
/* Starts copying both volumes as they stand after the queued accumulations to the host,
 * dense (either may be NULL), and returns: on a device the copy runs behind the work queued
 * later (page-locked arrays let it run alongside; later accumulations and clears wait for
 * it); on the host it is done before returning. The arrays hold the copy once
 * rtm_image_hold_wait returns. */
int rtm_image_hold(rtm_image_t *image, float *image_dense, float *illumination_dense);
int rtm_image_hold_wait(rtm_image_t *image);
/* Zeroes both for the next shot (each shot's sums leave the device at its end; a device's
 * volumes are zeroed behind a hold's copy, where they are next used). */
int rtm_image_clear(rtm_image_t *image);
void rtm_image_destroy(rtm_image_t *image);

/* ---- subsurface-offset gathers ---- */
/* The extended imaging condition I(x, h) += S(x - h, t) R(x + h, t) for horizontal lags
 * h = (hx, hy), |hx|, |hy| <= lags cells, at common-image points (CIPs): vertical lines at
 * the cells (first[0] + i step[0], first[1] + j step[1]), i < count[0], j < count[1],
 * numbered cip = j count[0] + i, and every depth. An element whose x - h or x + h lies in
 * the absorbing layer (`layer` cells inside every face, where S is not the forward pass's),
 * or whose depth does, is never accumulated: it stays zero, as the image does there.
 *
 * Layout: dense [ncip][nh][nh][nz_local], nh = 2 lags + 1, lag index hy + lags, then
 * hx + lags, depth fastest (the rank's planes under z-slabs: the lags are horizontal, so
 * each rank's planes need nothing of its neighbours'). Each element takes one fused
 * multiply-add a call, fmaf(S, R, I), in the order of the calls: a device kernel with one
 * thread an element gives the same floats. */
typedef struct {
  int lags;
  int first[2], step[2], count[2]; /* x, y: global cell indices of the CIP lines */
  int layer;                       /* boundary.width */
} rtm_gather_plan_t;

/* The plan of rtm.offset_lags = lags, rtm.cip_x_step, rtm.cip_y_step on `grid` with an
 * absorbing layer of `layer` cells: the lines every step cells across the non-absorbing
 * interior, centred in it (at least one, in its middle). Lags whose 2 lags + 1 cells do not
 * fit across the interior in x or y are RTM_ERR_CONFIG naming rtm.offset_lags. */
int rtm_gather_plan_make(const rtm_grid_t *grid, int layer, int lags, int step_x, int step_y,
                         rtm_gather_plan_t *plan);
static inline int rtm_gather_plan_cips(const rtm_gather_plan_t *plan) {
  return plan->count[0] * plan->count[1];
}
/* The cell indices along x and y of CIP `cip`'s line (cip = j count[0] + i). */
static inline void rtm_gather_plan_cip(const rtm_gather_plan_t *plan, int cip, int *x, int *y) {
  *x = plan->first[0] + cip % plan->count[0] * plan->step[0];
  *y = plan->first[1] + cip / plan->count[0] * plan->step[1];
}
/* Floats of the gathers over nz planes: ncip x (2 lags + 1)^2 x nz. */
static inline size_t rtm_gather_plan_cells(const rtm_gather_plan_t *plan, int nz) {
  const size_t nh = 2 * (size_t)plan->lags + 1;
  return (size_t)rtm_gather_plan_cips(plan) * nh * nh * (size_t)nz;
}

typedef struct rtm_gathers rtm_gathers_t;

/* Zeroed gathers of this rank's planes, in host memory (device < 0: the cpu backend's
 * fields) or in that CUDA device's beside its fields (accumulated by gathers_kernel,
 * imaging_cuda.cu, the host loop's floats), recorded in the ledger as "gathers" (and, on a
 * device, the held steps' "gathers: R held", "gathers: S held"); memory that cannot be had
 * is RTM_ERR_NOMEM naming rtm.offset_lags. sources_stay: the caller promises that each
 * step's S stays as it is, where it is, until the steps held are added (a store's fp32
 * volumes, read in a backward pass): a device then holds three steps' R and reads their S
 * in place, adding four steps a pass, else it copies one step's S and R and adds two. */
int rtm_gathers_create(const rtm_grid_t *grid, const rtm_gather_plan_t *plan, int device,
                       int sources_stay, rtm_mem_ledger_t *ledger, rtm_gathers_t **gathers);
/* One imaging step: gathers += S(x - h) R(x + h), each volume laid out as its layout says.
 * On a device the steps are held (R copied, so the caller may change it; S too, unless the
 * sources stay) and added with the pass's last one, in one pass over the gathers. */
int rtm_gathers_accumulate(rtm_gathers_t *gathers, const float *source, rtm_layout_t source_layout,
                           const float *receiver, rtm_layout_t receiver_layout);
/* The steps held added now (a shot's end); nothing to do on the host. */
int rtm_gathers_flush(rtm_gathers_t *gathers);
/* Device memory the gathers hold imaging steps in beside their sums, dense fields of the
 * rank's planes on a device (device >= 0): three where the sources stay, else two; none on
 * the host. */
size_t rtm_gathers_held_bytes(const rtm_grid_t *grid, int device, int sources_stay);
/* The gathers as they stand, dense (rtm_gather_plan_cells of nz_local floats), the steps
 * held added first. */
int rtm_gathers_read(rtm_gathers_t *gathers, float *dense);
/* rtm_gathers_read started without waiting: on a device the copy into `dense` (page-locked
 * for it to run alongside) goes on behind what is queued next, and rtm_gathers_hold_wait
 * (any thread) returns once it holds what rtm_gathers_read would give; `dense` must not be
 * touched in between. On the host it is rtm_gathers_read. */
int rtm_gathers_hold(rtm_gathers_t *gathers, float *dense);
int rtm_gathers_hold_wait(rtm_gathers_t *gathers);
/* Zero for the next shot; on a device after a hold's copy, where the values are next used. */
int rtm_gathers_clear(rtm_gathers_t *gathers);
void rtm_gathers_destroy(rtm_gathers_t *gathers);

/* ---- angle gathers (angle_gathers.c) ---- */
/* CIP c's subsurface-offset gather at offset + c offset_stride, [2 lags + 1][nz] (half-offset
 * h = (k - lags) dh_m, depths dz_m apart), to its angle gather at angle + c angles nz,
 * [angles][nz], incidence angles 0 to max_angle_deg (< 90) evenly, through the (kz, kh)
 * domain (Sava and Fomel 2003: tan theta = -kh / kz, both signs averaged): the line
 * z = z0 + h tan(theta) of one shot's reflection at theta maps to theta, and a gather
 * focused at h = 0 gives its depth trace at every angle. FFTW on the host, one plan for
 * all; not thread-safe (FFTW's planner). */
int rtm_angle_gathers(const float *offset, size_t offset_stride, int cips, int lags, int nz,
                      double dz_m, double dh_m, int angles, double max_angle_deg, float *angle);

/* ---- sums over the shots (host) ---- */
/* The image and the illumination summed over the shots: each shot's volume (summed in float
 * where the fields are, in one order) is added on the host to a compensated sum, a float
 * pair (hi, lo) whose value hi + lo carries about 48 bits, so that the shots' order, how
 * they are split among shot groups and when the groups' sums meet change the final float
 * (the pair rounded once) only where a cell's sum lies within about 2^-48 of its magnitude
 * of a float's rounding boundary. The pair is two float volumes, saved as they are: a run
 * resumed from them goes on bit for bit. */
/* (hi, lo) := the pair rtm_sums_add makes of a first shot from zeros, (0 + shot, 0); shot
 * NULL: (0, 0). Over the threads, which share the first touch of fresh pages too. */
void rtm_sums_start(float *hi, float *lo, const float *shot, size_t cells);
/* (hi, lo) += shot, cell by cell (TwoSum, then the pair renormalised). */
void rtm_sums_add(float *hi, float *lo, const float *shot, size_t cells);
/* (hi, lo) += (other_hi, other_lo), cell by cell: another group's sums. */
void rtm_sums_merge(float *hi, float *lo, const float *other_hi, const float *other_lo,
                    size_t cells);
/* out := hi + lo rounded once to float (out may be hi). */
void rtm_sums_round(float *out, const float *hi, const float *lo, size_t cells);
/* out := the pair rtm_sums_add would make of (hi, lo) and shot, rounded as rtm_sums_round
 * does, the pair left as it is (out may be shot); hi and lo NULL: the pair rtm_sums_start
 * makes of shot. The last shot's sum taken without touching the sums. */
void rtm_sums_add_round(float *out, const float *hi, const float *lo, const float *shot,
                        size_t cells);

/* ---- source snapshots ---- */
typedef struct rtm_snapshots rtm_snapshots_t;

/* How the backward pass reads a store: volumes through rtm_snapshots_get, or, zfp where the
 * fields are on a device, only its blocks, imaged where they lie (rtm_snapshots_device_blocks:
 * a tti or vti migration without gathers). A store read by its blocks holds no fp32 staging
 * volume (4 GB less at 1000^3); a get still works, taking the volume then. */
typedef enum { RTM_SNAPSHOTS_VOLUMES = 0, RTM_SNAPSHOTS_BLOCKS } rtm_snapshots_read_t;

/* `count` slots of the grid's interior in the memory `strategy` gives (device ones on
 * `device`; "host" and "pinned" in host memory), each dense fp32 or, with fp16, binary16
 * (rounded to nearest even; 2 bytes a cell), or with zfp the codec's blocks at
 * `rate` bits a value (rtm_codec_bytes; `rate` is read for zfp alone). The fp16 and zfp
 * stores and any store not in the fields' memory (host slots for a cuda backend) keep one
 * fp32 staging volume beside the fields for get, but for `read` RTM_SNAPSHOTS_BLOCKS (zfp on a
 * device). Slots are recorded in the ledger as
 * "snapshots". A store that does not fit is RTM_ERR_NOMEM naming rtm.imaging_step,
 * rtm.snapshot_precision and memory.imaging; a zfp rate outside 1 .. 32 is RTM_ERR_CONFIG. */
int rtm_snapshots_create(const rtm_grid_t *grid, int count, int device, const char *strategy,
                         rtm_precision_t precision, int rate, rtm_snapshots_read_t read,
                         rtm_mem_ledger_t *ledger, rtm_snapshots_t **store);
/* Bytes of one slot alone. */
size_t rtm_snapshots_slot_bytes(const rtm_grid_t *grid, rtm_precision_t precision, int rate);
/* Bytes the store would take (slots, staging, and on a device the codec's scratch and checks),
 * for the preflight estimate. */
size_t rtm_snapshots_bytes(const rtm_grid_t *grid, int count, int device, const char *strategy,
                           rtm_precision_t precision, int rate, rtm_snapshots_read_t read);
/* Slot `slot` := the interior of a field view (padded, in the fields' memory). */
int rtm_snapshots_save(rtm_snapshots_t *store, int slot, const rtm_field_view_t *view);
/* Slot `slot` as a dense fp32 volume in device memory that a step may write itself (the
 * store's slots are fp32 on the device), else NULL. */
float *rtm_snapshots_device_slot(rtm_snapshots_t *store, int slot);
/* The slots as fp32 volumes where the fields are (a host store of the cpu backend, a device
 * store of a GPU's), in place: *first the first slot's dense volume, *stride the floats from
 * one slot to the next; returns how many. 0 where they are not (fp16, zfp, a GPU's slots in
 * host memory): their volumes are made one at a time by rtm_snapshots_get. */
int rtm_snapshots_volumes(const rtm_snapshots_t *store, const float **first, size_t *stride);
/* Slot `slot`'s codec blocks in device memory (copied to the transfer buffer first where the
 * slots are on the host), their rate and the coder's scratch (rtm_cuda_codec.h), where the
 * store is zfp for a device; else
 * RTM_ERR_UNSUPPORTED, nothing said. The first call of the backward pass (its last slot)
 * checks every slot's compression, as rtm_snapshots_get does. Valid until the next call. */
int rtm_snapshots_device_blocks(rtm_snapshots_t *store, int slot, const void **blocks, int *rate,
                                void **scratch);
/* Slot `slot` as fp32 in the fields' memory: the slot itself when it is fp32 there, else
 * converted or copied into the staging volume (valid until the next get). Layout: dense. */
int rtm_snapshots_get(rtm_snapshots_t *store, int slot, const float **volume);
/* The slots' format in words: "fp32", "fp16", "zfp at 6 bits a value" (of a store, or of a
 * precision and rate: `rate` read for zfp alone). */
const char *rtm_snapshots_format(const rtm_snapshots_t *store);
void rtm_snapshots_format_name(rtm_precision_t precision, int rate, char *text, size_t size);
/* How far slot `slot` lies from the field it was saved from (`view`, unchanged since): the
 * relative L2 difference of get's volume from the view's interior, over the slab's ranks
 * (grid->mpi), 0 for a field of zeros. Summed where the fields live (a device's volumes do not
 * cross PCIe, zfp's blocks are decoded as they are summed, no volume of them; a host store
 * packs one volume for the while); waits for the queued work. */
int rtm_snapshots_round_trip(rtm_snapshots_t *store, int slot, const rtm_field_view_t *view,
                             double *relative_l2);
void rtm_snapshots_destroy(rtm_snapshots_t *store);

/* ---- the adjoint receiver taps ---- */
/* Copies receivers (their positions and taps) into *adjoint with each tap weight multiplied
 * by dt^2 v^2 / (1 + eta dt) at its cell (v = vp; eta dt from the boundary's profiles,
 * eta_dt[x] + eta_dt[y] + eta_dt[z] as the backends add them; none without a boundary). */
int rtm_adjoint_receivers(const rtm_points_t *receivers, const rtm_grid_t *grid,
                          const rtm_model_t *model, const rtm_boundary_t *boundary, double dt_s,
                          rtm_points_t *adjoint);

/* ---- filters of the final image (host, dense) ---- */
/* image[i] /= illumination[i] + eps max(illumination), eps relative (rtm.illumination_eps);
 * on z-slabs the max is the whole volume's: collective over the ranks that share the slabs
 * (`mpi`'s; NULL: one rank). */
int rtm_image_compensate(rtm_mpi_t *mpi, float *image, const float *illumination, size_t cells,
                         double eps);
/* image := -lap(image), the 8th-order Laplacian with the grid's spacings, which keeps the
 * reflectors and removes the low-wavenumber backscatter of the cross-correlation, over the
 * box `width` cells in from every face of the grid (the non-absorbing interior, where the
 * image means something; 0: the whole volume) with the image mirrored (even) across the
 * box's faces, so that its edge, where the image stops, rings no false reflector; zero
 * outside the box. `image` is this rank's slab (grid's z-range); `scratch` holds nz_local
 * + 2 R planes of it (rtm_image_laplacian_scratch_cells). Collective over the ranks that
 * share the slabs (the R planes past each cut come from the neighbour). */
int rtm_image_laplacian(const rtm_grid_t *grid, int width, float *image, float *scratch);
/* The same in parts, so that planes filtered can be written while the rest are: _begin
 * copies the slab and its neighbours' planes into scratch (collective, as above), then
 * _planes filters the slab's planes [z_begin, z_end) (local indices) from scratch, in any
 * order; over every plane the floats of rtm_image_laplacian. */
int rtm_image_laplacian_begin(const rtm_grid_t *grid, const float *image, float *scratch);
void rtm_image_laplacian_planes(const rtm_grid_t *grid, int width, float *image,
                                const float *scratch, int z_begin, int z_end);
static inline size_t rtm_image_laplacian_scratch_cells(const rtm_grid_t *grid) {
  return (size_t)grid->n[0] * (size_t)grid->n[1] * (size_t)(grid->nz_local + 2 * RTM_RADIUS);
}

#ifdef __cplusplus
}
#endif

#endif
