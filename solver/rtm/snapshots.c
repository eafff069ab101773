/* Source snapshots (rtm_imaging.h): `count` dense interior slots in one allocation of the
 * memory.imaging strategy, fp32, binary16 or the codec's blocks (zfp,
 * solver/grid/rtm_codec.h, at `rate` bits a value), and the volumes get hands back as fp32
 * where the fields are. A binary16 slot holds x 2^e, e chosen from the snapshot's largest |x|
 * (rtm_half_scale_exponent, kept a slot where the fields are), so that a wavefield of any
 * amplitude keeps binary16's 11 bits instead of overflowing past 65504 or flushing below
 * 2^-24.
 *
 * Where the work happens, by the fields' memory (device) and the slots' memory:
 *   fields  slots   save                                 get
 *   host    host    pack loop (fp16: rtm_half_from_float)  fp32: the slot; fp16: convert
 *                                                          into the staging volume
 *   device  device  pack kernel (fp16: __float2half_rn)    fp32: the slot; fp16: convert
 *                                                          kernel into the staging volume
 *   device  host    fp32: a 2D copy a plane to the slot;   fp32: one copy into the staging;
 *                   fp16: pack kernel into a transfer      fp16: one copy into a transfer
 *                   buffer, one copy to the slot           buffer, convert kernel into the
 *                                                          staging
 * zfp goes as fp16 does, the codec's kernels (or codec.c on the host) in place of the
 * conversions, its blocks in a transfer buffer.
 * The staging volume (fp32, the fields' memory) exists only when get needs it; the two
 * transfer buffers (binary16 or blocks, device) only for fp16 and zfp host slots of a device.
 * Save never writes the staging volume, so the volume get returned stays valid until the next
 * get. Device work is queued on the legacy default stream (imaging_cuda.h) and is
 * asynchronous, page-locked ("pinned") host slots included; the transfer buffers' copies run
 * on a stream of their own (boundary_cuda.h's copies), beside the steps: slot k's through
 * buffer k % 2, and in the backward pass, whose gets come in descending slots, slot k - 1's
 * fetched while slot k is imaged. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary_cuda.h"
#include "imaging_cuda.h"
#include "imaging_impl.h"
#include "rtm_codec.h"
#include "rtm_half.h"
#include "rtm_imaging.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

/* Transfer buffers of fp16 and zfp host slots of a device: one is packed or imaged while the
 * other crosses PCIe. */
enum { TRANSFERS = 2 };

struct rtm_snapshots {
  rtm_grid_t grid;
  int device; /* the fields' memory: -1 host, else that CUDA device */
  int count;
  rtm_precision_t precision;
  int rate;                 /* zfp: bits a value */
  char format[48];          /* "fp32", "fp16", "zfp at 6 bits a value" */
  int host_slots_of_device; /* the slots are host memory, the fields device memory */
  size_t slot_bytes;
  rtm_allocation_t slots;    /* count x slot_bytes */
  rtm_allocation_t staging;  /* fp32 volume for get, when needed (read by blocks: at a get) */
  rtm_mem_ledger_t *ledger;  /* where a staging volume taken at a get is recorded */
  rtm_allocation_t transfer; /* TRANSFERS buffers of a slot on the device: fp16 and zfp host
                              * slots only */
  boundary_cuda_copies_t *copies; /* their copies' stream and events */
  int held[TRANSFERS];       /* handed out by a get, its reader queued after (released later) */
  int fetched[TRANSFERS];    /* the slot a buffer was fetched from, -1 for none */
  rtm_allocation_t scratch;  /* zfp on a device: the coder's working memory (rtm_codec.h) */
  rtm_allocation_t refused;  /* zfp on a device: each slot's first block holding a NaN or an
                              * infinity (uint64, RTM_CODEC_NO_BLOCK for none), checked when
                              * the backward pass starts (rtm_snapshots_get of the last slot) */
  rtm_allocation_t scales;   /* fp16: each slot's largest |x| as bits (uint32), where the
                              * fields are: the 2^e its binary16 values are scaled by */
};

/* What a store of these settings allocates; create and rtm_snapshots_bytes both follow it. */
typedef struct {
  const char *slots_strategy, *fields_strategy;
  int host_slots_of_device;
  size_t cells, slot_bytes, slots_bytes, staging_bytes, transfer_bytes, scales_bytes;
  size_t refused_bytes, scratch_bytes;
  int too_large; /* the byte count overflows size_t */
} snapshot_plan_t;

/* A zfp slot's volume: the interior of the rank's planes. */
static void codec_extent(const rtm_grid_t *grid, int n[3]) {
  n[0] = grid->n[0];
  n[1] = grid->n[1];
  n[2] = grid->nz_local;
}

static snapshot_plan_t plan_store(const rtm_grid_t *grid, int count, int device,
                                  const char *strategy, rtm_precision_t precision, int rate,
                                  rtm_snapshots_read_t read) {
  snapshot_plan_t plan;
  memset(&plan, 0, sizeof plan);
  plan.slots_strategy = rtm_imaging_strategy(strategy, device);
  plan.fields_strategy = device < 0 ? "host" : "device";
  plan.host_slots_of_device = device >= 0 && rtm_imaging_host_strategy(plan.slots_strategy);
  const int fp16 = precision == RTM_PRECISION_FP16, zfp = precision == RTM_PRECISION_ZFP;
  int n[3];
  codec_extent(grid, n);
  plan.cells = rtm_grid_interior_cells(grid);
  plan.slot_bytes =
      zfp ? rtm_codec_bytes(n, rate) : plan.cells * (fp16 ? sizeof(uint16_t) : sizeof(float));
  plan.too_large = count > 0 && plan.slot_bytes > SIZE_MAX / 2 / (size_t)count;
  plan.slots_bytes = plan.too_large ? SIZE_MAX : plan.slot_bytes * (size_t)(count > 0 ? count : 0);
  const int blocks_only = zfp && device >= 0 && read == RTM_SNAPSHOTS_BLOCKS;
  if ((fp16 || zfp || plan.host_slots_of_device) && !blocks_only)
    plan.staging_bytes = plan.cells * sizeof(float);
  if ((fp16 || zfp) && plan.host_slots_of_device) plan.transfer_bytes = TRANSFERS * plan.slot_bytes;
  if (fp16 && count > 0) plan.scales_bytes = (size_t)count * sizeof(uint32_t);
  if (zfp && device >= 0 && count > 0) {
    plan.refused_bytes = (size_t)count * sizeof(uint64_t);
    plan.scratch_bytes = rtm_codec_scratch_bytes(n);
  }
  return plan;
}

size_t rtm_snapshots_slot_bytes(const rtm_grid_t *grid, rtm_precision_t precision, int rate) {
  return plan_store(grid, 1, -1, "host", precision, rate, RTM_SNAPSHOTS_VOLUMES).slot_bytes;
}

size_t rtm_snapshots_bytes(const rtm_grid_t *grid, int count, int device, const char *strategy,
                           rtm_precision_t precision, int rate, rtm_snapshots_read_t read) {
  const snapshot_plan_t plan = plan_store(grid, count, device, strategy, precision, rate, read);
  if (plan.too_large) return SIZE_MAX;
  size_t bytes = rtm_imaging_taken_bytes(plan.slots_strategy, plan.slots_bytes);
  if (plan.staging_bytes)
    bytes += rtm_imaging_taken_bytes(plan.fields_strategy, plan.staging_bytes);
  if (plan.transfer_bytes) bytes += rtm_imaging_taken_bytes("device", plan.transfer_bytes);
  if (plan.scales_bytes) bytes += rtm_imaging_taken_bytes(plan.fields_strategy, plan.scales_bytes);
  if (plan.refused_bytes) bytes += rtm_imaging_taken_bytes("device", plan.refused_bytes);
  if (plan.scratch_bytes) bytes += rtm_imaging_taken_bytes("device", plan.scratch_bytes);
  return bytes;
}

/* The message every store that does not fit ends with: the three settings that shrink it. */
static void log_does_not_fit(const rtm_grid_t *grid, int count, const snapshot_plan_t *plan,
                             rtm_precision_t precision) {
  char size[64];
  if (plan->too_large)
    snprintf(size, sizeof size, "more bytes than this machine addresses");
  else
    snprintf(size, sizeof size, "%.3f GB", plan->slots_bytes / 1e9);
  rtm_log_error("%d source snapshots of %d x %d x %d cells (local z) in %s (%s in memory.imaging "
                "= %s, plus %.3f GB of staging) do not fit: raise rtm.imaging_step (fewer "
                "snapshots), %s, or choose another memory.imaging (pinned or host: host memory)",
                count, grid->n[0], grid->n[1], grid->nz_local, rtm_precision_name(precision), size,
                plan->slots_strategy,
                (plan->staging_bytes + plan->transfer_bytes + plan->scratch_bytes) / 1e9,
                precision == RTM_PRECISION_ZFP ? "a lower rtm.snapshot_rate (bits a value)"
                : precision == RTM_PRECISION_FP16
                    ? "rtm.snapshot_precision = zfp (rtm.snapshot_rate bits a value, 4: a quarter "
                      "of fp16's bytes)"
                    : "set rtm.snapshot_precision = fp16 (half the bytes) or zfp (4 bits a value "
                      "by default: an eighth)");
}

static int allocate_store(rtm_snapshots_t *store, const snapshot_plan_t *plan,
                          rtm_mem_ledger_t *ledger) {
  int status = RTM_OK;
  if (plan->too_large) return RTM_ERR_NOMEM;
  RTM_TRY(rtm_imaging_alloc(plan->slots_strategy, plan->slots_bytes, "snapshots", store->device,
                            ledger, &store->slots));
  if (plan->staging_bytes)
    RTM_TRY(rtm_imaging_alloc(plan->fields_strategy, plan->staging_bytes, "snapshots staging",
                              store->device, ledger, &store->staging));
  if (plan->transfer_bytes)
    RTM_TRY(rtm_imaging_alloc("device", plan->transfer_bytes, "snapshots transfer", store->device,
                              ledger, &store->transfer));
  if (plan->scales_bytes)
    RTM_TRY(rtm_imaging_alloc(plan->fields_strategy, plan->scales_bytes, "snapshot scales",
                              store->device, ledger, &store->scales));
  if (plan->refused_bytes)
    RTM_TRY(rtm_imaging_alloc("device", plan->refused_bytes, "snapshot checks", store->device,
                              ledger, &store->refused));
  if (plan->scratch_bytes)
    RTM_TRY(rtm_imaging_alloc("device", plan->scratch_bytes, "snapshot coder", store->device,
                              ledger, &store->scratch));
fail:
  return status;
}

int rtm_snapshots_create(const rtm_grid_t *grid, int count, int device, const char *strategy,
                         rtm_precision_t precision, int rate, rtm_snapshots_read_t read,
                         rtm_mem_ledger_t *ledger, rtm_snapshots_t **store) {
  int status = RTM_OK;
  rtm_snapshots_t *created = NULL;
  const snapshot_plan_t plan = plan_store(grid, count, device, strategy, precision, rate, read);
  *store = NULL;
  if (count < 1)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_snapshots_create: %d snapshots (at least 1)", count);
  if (precision != RTM_PRECISION_FP32 && precision != RTM_PRECISION_FP16 &&
      precision != RTM_PRECISION_ZFP)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_snapshots_create: unknown precision %d", (int)precision);
  if (precision == RTM_PRECISION_ZFP && (rate < RTM_CODEC_RATE_MIN || rate > RTM_CODEC_RATE_MAX))
    RTM_FAIL(RTM_ERR_CONFIG, "rtm.snapshot_rate = %d: %d to %d bits a value", rate,
             RTM_CODEC_RATE_MIN, RTM_CODEC_RATE_MAX);
  if (device < 0 && strcmp(plan.slots_strategy, "host") != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "memory.imaging (or memory.strategy) = %s: the cpu backend keeps its source "
             "snapshots in host memory: use host",
             plan.slots_strategy);
  created = calloc(1, sizeof *created);
  if (!created) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the snapshots' state");
  created->grid = *grid;
  created->device = device;
  created->count = count;
  created->precision = precision;
  created->rate = rate;
  rtm_snapshots_format_name(precision, rate, created->format, sizeof created->format);
  created->host_slots_of_device = plan.host_slots_of_device;
  created->slot_bytes = plan.slot_bytes;
  created->ledger = ledger;
  for (int b = 0; b < TRANSFERS; ++b)
    created->fetched[b] = -1;
  status = allocate_store(created, &plan, ledger);
  if (status == RTM_ERR_NOMEM) log_does_not_fit(grid, count, &plan, precision);
  RTM_TRY(status);
  if (plan.transfer_bytes) {
    RTM_TRY(rtm_imaging_cuda_use_device(device));
    RTM_TRY(boundary_cuda_copies_create(TRANSFERS, &created->copies));
  }
  *store = created;
  return RTM_OK;
fail:
  rtm_snapshots_destroy(created);
  return status;
}

static int check_slot(const rtm_snapshots_t *store, int slot, const char *what) {
  if (!store || slot < 0 || slot >= store->count) {
    rtm_log_error("%s: slot %d of a store of %d", what, slot, store ? store->count : 0);
    return RTM_ERR_INTERNAL;
  }
  return RTM_OK;
}

/* Slot address: the host pointer for host slots, the device pointer for device slots. */
static void *slot_at(const rtm_snapshots_t *store, int slot) {
  return (char *)store->slots.ptr + (size_t)slot * store->slot_bytes;
}

/* The interior's largest |x| as bits (rtm_half_scale_exponent): the bits' order is the
 * values' for non-negative floats. */
static uint32_t max_abs_bits_host(const rtm_grid_t *grid, const float *padded) {
  const long nx = grid->n[0], ny = grid->n[1], nz = grid->nz_local;
  uint32_t largest = 0;
#pragma omp parallel for collapse(2) schedule(static) reduction(max : largest)
  for (long iz = 0; iz < nz; ++iz)
    for (long iy = 0; iy < ny; ++iy) {
      const float *row = padded + rtm_grid_index(grid, 0, iy, iz);
      for (long ix = 0; ix < nx; ++ix) {
        uint32_t bits;
        memcpy(&bits, row + ix, sizeof bits);
        bits &= 0x7fffffffu;
        largest = bits > largest ? bits : largest;
      }
    }
  return largest;
}

/* Host fields, binary16 slot: each interior cell times 2^e (exact; e from the largest |x|,
 * *max_bits, so that the volume's range fits binary16's), rounded to nearest even. */
static void save_half_host(const rtm_grid_t *grid, const float *padded, uint16_t *dense,
                           uint32_t *max_bits) {
  const long nx = grid->n[0], ny = grid->n[1], nz = grid->nz_local;
  *max_bits = max_abs_bits_host(grid, padded);
  const float scale = rtm_half_power_of_two(rtm_half_scale_exponent(*max_bits));
  IMAGING_OMP_ROWS
  for (long iz = 0; iz < nz; ++iz)
    for (long iy = 0; iy < ny; ++iy) {
      const float *row = padded + rtm_grid_index(grid, 0, iy, iz);
      uint16_t *out = dense + ((size_t)iz * (size_t)ny + (size_t)iy) * (size_t)nx;
      for (long ix = 0; ix < nx; ++ix)
        out[ix] = rtm_half_from_float(row[ix] * scale);
    }
}

static void get_half_host(const rtm_grid_t *grid, const uint16_t *dense, uint32_t max_bits,
                          float *out) {
  const long nx = grid->n[0], ny = grid->n[1], nz = grid->nz_local;
  const float unscale = rtm_half_power_of_two(-rtm_half_scale_exponent(max_bits));
  IMAGING_OMP_ROWS
  for (long iz = 0; iz < nz; ++iz)
    for (long iy = 0; iy < ny; ++iy) {
      const size_t row = ((size_t)iz * (size_t)ny + (size_t)iy) * (size_t)nx;
      for (long ix = 0; ix < nx; ++ix)
        out[row + ix] = rtm_half_to_float(dense[row + ix]) * unscale;
    }
}

/* A zfp slot's block (the codec's number) that held a NaN or an infinity: said, naming its
 * first cell (global z), and RTM_ERR_NUMERIC. */
static int refused_block(const rtm_snapshots_t *store, int slot, size_t block) {
  int n[3], origin[3];
  codec_extent(&store->grid, n);
  rtm_codec_block_origin(n, block, origin);
  rtm_log_error("the source snapshot in slot %d holds a NaN or an infinity in the 4 x 4 x 4 "
                "cells from (ix %d, iy %d, iz %d): the wavefield is not finite",
                slot, origin[0], origin[1], origin[2] + store->grid.z_offset);
  return RTM_ERR_NUMERIC;
}

/* Host fields, a zfp slot: the interior's blocks at the store's rate. A block that holds a
 * NaN or an infinity is refused (refused_block). */
static int save_codec_host(rtm_snapshots_t *store, int slot, const float *padded) {
  const rtm_grid_t *grid = &store->grid;
  int n[3];
  size_t refused = RTM_CODEC_NO_BLOCK;
  codec_extent(grid, n);
  const int status =
      rtm_codec_compress(padded + rtm_grid_index(grid, 0, 0, 0), n, (size_t)grid->stride_y,
                         (size_t)grid->stride_z, store->rate, slot_at(store, slot), &refused);
  if (status == RTM_ERR_NUMERIC && refused != RTM_CODEC_NO_BLOCK)
    return refused_block(store, slot, refused);
  return status;
}

/* Slot `slot`'s largest |x| bits, in the fields' memory. */
static uint32_t *scale_of(const rtm_snapshots_t *store, int slot) {
  return (uint32_t *)store->scales.ptr + slot;
}

/* Transfer buffer b, a slot's bytes. */
static void *transfer_of(const rtm_snapshots_t *store, int b) {
  return (char *)store->transfer.ptr + (size_t)b * store->slot_bytes;
}

/* The buffers gets handed out are released: their readers, queued on the legacy stream since,
 * come before any copy into them. */
static int release_held(rtm_snapshots_t *store) {
  int status = RTM_OK;
  for (int b = 0; b < TRANSFERS; ++b)
    if (store->held[b]) {
      RTM_TRY(boundary_cuda_release(store->copies, b));
      store->held[b] = 0;
    }
fail:
  return status;
}

/* Host slots of a device, fp16 or zfp: slot `slot`'s buffer for the legacy stream to pack
 * into (`pack` queues it), then its copy to the host slot, on the copy stream. The buffer
 * then holds the slot's bytes, as a fetch would have left it (slot k always passes through
 * buffer k % 2, so no other buffer's bytes can be the slot's old ones). */
static int save_through(rtm_snapshots_t *store, int slot, int (*pack)(void *context, void *buffer),
                        void *context) {
  int status = RTM_OK;
  const int b = slot % TRANSFERS;
  RTM_TRY(release_held(store));
  store->fetched[b] = -1;
  RTM_TRY(boundary_cuda_acquire(store->copies, b));
  RTM_TRY(pack(context, transfer_of(store, b)));
  RTM_TRY(boundary_cuda_release(store->copies, b));
  RTM_TRY(boundary_cuda_copy(store->copies, b, slot_at(store, slot), transfer_of(store, b),
                             store->slot_bytes));
  store->fetched[b] = slot;
fail:
  return status;
}

/* Slot `slot`'s bytes copied into its transfer buffer on the copy stream, after the buffer's
 * last release, unless the buffer holds them already. */
static int fetch_into(rtm_snapshots_t *store, int slot) {
  int status = RTM_OK;
  const int b = slot % TRANSFERS;
  if (store->fetched[b] == slot) return RTM_OK;
  store->fetched[b] = -1; /* until the copy is queued */
  RTM_TRY(boundary_cuda_copy(store->copies, b, transfer_of(store, b), slot_at(store, slot),
                             store->slot_bytes));
  store->fetched[b] = slot;
fail:
  return status;
}

/* Host slots of a device, fp16 or zfp: slot `slot`'s bytes in its transfer buffer for the
 * legacy stream's reader the caller queues next (released at the store's next save or get):
 * fetched by the get before, which fetches slot - 1 ahead (into the other buffer) for the
 * backward pass's descending gets, or now. */
static int fetch_slot(rtm_snapshots_t *store, int slot, void **buffer) {
  int status = RTM_OK;
  const int b = slot % TRANSFERS;
  RTM_TRY(release_held(store));
  RTM_TRY(fetch_into(store, slot));
  RTM_TRY(boundary_cuda_acquire(store->copies, b));
  store->held[b] = 1;
  *buffer = transfer_of(store, b);
  if (slot > 0) RTM_TRY(fetch_into(store, slot - 1));
fail:
  return status;
}

typedef struct {
  rtm_snapshots_t *store;
  int slot;
  const float *d_padded;
} pack_job_t;

static int pack_codec(void *context, void *buffer) {
  const pack_job_t *job = context;
  const rtm_snapshots_t *store = job->store;
  return rtm_imaging_cuda_compress(rtm_imaging_extent(&store->grid), job->d_padded,
                                   rtm_layout_padded(&store->grid), store->rate, buffer,
                                   store->scratch.ptr, (uint64_t *)store->refused.ptr + job->slot);
}

static int pack_half(void *context, void *buffer) {
  const pack_job_t *job = context;
  const rtm_snapshots_t *store = job->store;
  return rtm_imaging_cuda_pack_half(rtm_imaging_extent(&store->grid), job->d_padded,
                                    rtm_layout_padded(&store->grid), buffer,
                                    scale_of(store, job->slot));
}

static int save_device(rtm_snapshots_t *store, int slot, const float *d_padded) {
  int status = RTM_OK;
  const rtm_imaging_extent_t extent = rtm_imaging_extent(&store->grid);
  const rtm_layout_t layout = rtm_layout_padded(&store->grid);
  void *destination = slot_at(store, slot);
  pack_job_t job = {store, slot, d_padded};
  RTM_TRY(rtm_imaging_cuda_use_device(store->device));
  if (store->precision == RTM_PRECISION_FP32) {
    if (store->host_slots_of_device)
      RTM_TRY(rtm_imaging_cuda_pack_to_host(extent, d_padded, layout, destination));
    else
      RTM_TRY(rtm_imaging_cuda_pack(extent, d_padded, layout, destination));
  } else if (store->host_slots_of_device) {
    RTM_TRY(save_through(store, slot,
                         store->precision == RTM_PRECISION_ZFP ? pack_codec : pack_half, &job));
  } else if (store->precision == RTM_PRECISION_ZFP) {
    RTM_TRY(pack_codec(&job, destination));
  } else {
    RTM_TRY(pack_half(&job, destination));
  }
fail:
  return status;
}

int rtm_snapshots_volumes(const rtm_snapshots_t *store, const float **first, size_t *stride) {
  *first = NULL;
  *stride = 0;
  if (store->precision != RTM_PRECISION_FP32 || store->host_slots_of_device || store->count <= 0)
    return 0;
  *first = store->slots.ptr;
  *stride = store->slot_bytes / sizeof(float);
  return store->count;
}

float *rtm_snapshots_device_slot(rtm_snapshots_t *store, int slot) {
  const float *first = NULL;
  size_t stride = 0;
  if (store->device < 0 || rtm_snapshots_volumes(store, &first, &stride) == 0 ||
      check_slot(store, slot, "rtm_snapshots_device_slot") != RTM_OK)
    return NULL;
  return slot_at(store, slot);
}

int rtm_snapshots_save(rtm_snapshots_t *store, int slot, const rtm_field_view_t *view) {
  int status = RTM_OK;
  RTM_TRY(check_slot(store, slot, "rtm_snapshots_save"));
  if (!view || !view->padded || (view->device < 0) != (store->device < 0) ||
      (view->device >= 0 && view->device != store->device))
    RTM_FAIL(RTM_ERR_INTERNAL,
             "rtm_snapshots_save: a field view of device %d for a store of "
             "the fields of device %d",
             view ? view->device : -2, store->device);
  if (store->device >= 0) return save_device(store, slot, view->padded);
  if (store->precision == RTM_PRECISION_FP32)
    rtm_grid_pack(&store->grid, view->padded, slot_at(store, slot));
  else if (store->precision == RTM_PRECISION_ZFP)
    RTM_TRY(save_codec_host(store, slot, view->padded));
  else
    save_half_host(&store->grid, view->padded, slot_at(store, slot), scale_of(store, slot));
fail:
  return status;
}

/* zfp on a device: refuses the store when a slot's compression met a block holding a NaN or
 * an infinity (stored as zeros), naming the first such slot and block; one read of the
 * slots' words, once the forward pass has saved them all. */
static int check_refused(const rtm_snapshots_t *store) {
  int status = RTM_OK;
  uint64_t *words = malloc((size_t)store->count * sizeof *words);
  if (!words) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the snapshots' checks");
  RTM_TRY(rtm_imaging_cuda_read(words, store->refused.ptr, (size_t)store->count * sizeof *words));
  for (int slot = 0; slot < store->count && status == RTM_OK; ++slot)
    if (words[slot] != (uint64_t)RTM_CODEC_NO_BLOCK)
      status = refused_block(store, slot, (size_t)words[slot]);
fail:
  free(words);
  return status;
}

/* A zfp slot's blocks in device memory: the slot itself, or copied to the transfer buffer
 * where the slots are on the host; the backward pass's first (the last slot) checks every
 * slot's compression first. */
static int device_blocks(rtm_snapshots_t *store, int slot, const void **blocks) {
  int status = RTM_OK;
  if (slot == store->count - 1) RTM_TRY(check_refused(store));
  *blocks = slot_at(store, slot);
  if (store->host_slots_of_device) {
    void *buffer = NULL;
    RTM_TRY(fetch_slot(store, slot, &buffer));
    *blocks = buffer;
  }
fail:
  return status;
}

int rtm_snapshots_device_blocks(rtm_snapshots_t *store, int slot, const void **blocks, int *rate,
                                void **scratch) {
  int status = RTM_OK;
  *blocks = NULL;
  if (store->device < 0 || store->precision != RTM_PRECISION_ZFP) return RTM_ERR_UNSUPPORTED;
  RTM_TRY(check_slot(store, slot, "rtm_snapshots_device_blocks"));
  RTM_TRY(rtm_imaging_cuda_use_device(store->device));
  RTM_TRY(device_blocks(store, slot, blocks));
  *rate = store->rate;
  *scratch = store->scratch.ptr;
fail:
  return status;
}

static int get_device(rtm_snapshots_t *store, int slot, const float **volume) {
  int status = RTM_OK;
  const size_t cells = rtm_grid_interior_cells(&store->grid);
  const void *source = slot_at(store, slot);
  RTM_TRY(rtm_imaging_cuda_use_device(store->device));
  if (!store->staging.ptr && store->precision == RTM_PRECISION_ZFP) /* a store read by blocks */
    RTM_TRY(rtm_imaging_alloc("device", cells * sizeof(float), "snapshots staging", store->device,
                              store->ledger, &store->staging));
  float *staging = store->staging.ptr;
  if (store->precision == RTM_PRECISION_ZFP) {
    const void *blocks = NULL;
    RTM_TRY(device_blocks(store, slot, &blocks));
    RTM_TRY(rtm_imaging_cuda_decompress(rtm_imaging_extent(&store->grid), blocks, store->rate,
                                        store->scratch.ptr, staging));
    *volume = staging;
  } else if (store->host_slots_of_device) {
    if (store->precision == RTM_PRECISION_FP32) {
      RTM_TRY(rtm_imaging_cuda_copy(staging, source, store->slot_bytes));
    } else {
      void *buffer = NULL;
      RTM_TRY(fetch_slot(store, slot, &buffer));
      RTM_TRY(rtm_imaging_cuda_unpack_half(buffer, staging, cells, scale_of(store, slot)));
    }
    *volume = staging;
  } else if (store->precision == RTM_PRECISION_FP32) {
    *volume = source;
  } else {
    RTM_TRY(rtm_imaging_cuda_unpack_half(source, staging, cells, scale_of(store, slot)));
    *volume = staging;
  }
fail:
  return status;
}

int rtm_snapshots_get(rtm_snapshots_t *store, int slot, const float **volume) {
  int status = RTM_OK;
  *volume = NULL;
  RTM_TRY(check_slot(store, slot, "rtm_snapshots_get"));
  if (store->device >= 0) return get_device(store, slot, volume);
  if (store->precision == RTM_PRECISION_FP32) {
    *volume = slot_at(store, slot);
  } else if (store->precision == RTM_PRECISION_ZFP) {
    int n[3];
    codec_extent(&store->grid, n);
    RTM_TRY(rtm_codec_decompress(slot_at(store, slot), n, store->rate, store->staging.ptr,
                                 (size_t)n[0], (size_t)n[0] * (size_t)n[1]));
    *volume = store->staging.ptr;
  } else {
    get_half_host(&store->grid, slot_at(store, slot), *scale_of(store, slot), store->staging.ptr);
    *volume = store->staging.ptr;
  }
fail:
  return status;
}

void rtm_snapshots_format_name(rtm_precision_t precision, int rate, char *text, size_t size) {
  if (precision == RTM_PRECISION_ZFP)
    snprintf(text, size, "zfp at %d bit%s a value", rate, rate == 1 ? "" : "s");
  else
    snprintf(text, size, "%s", rtm_precision_name(precision));
}

const char *rtm_snapshots_format(const rtm_snapshots_t *store) {
  return store->format;
}

int rtm_snapshots_round_trip(rtm_snapshots_t *store, int slot, const rtm_field_view_t *view,
                             double *relative_l2) {
  int status = RTM_OK;
  const rtm_grid_t *grid = &store->grid;
  const size_t cells = rtm_grid_interior_cells(grid);
  const float *volume = NULL;
  float *original = NULL;
  double sums[2] = {0.0, 0.0}; /* the difference's squares, the field's */
  *relative_l2 = 0.0;
  if (store->device >= 0 && store->precision == RTM_PRECISION_ZFP) { /* no volume decoded */
    const void *blocks = NULL;
    void *scratch = NULL;
    int rate = 0;
    RTM_TRY(rtm_snapshots_device_blocks(store, slot, &blocks, &rate, &scratch));
    RTM_TRY(rtm_imaging_cuda_difference_blocks(rtm_imaging_extent(grid), view->padded,
                                               rtm_layout_padded(grid), blocks, rate, scratch,
                                               sums));
  } else if (store->device >= 0) { /* on the device: no copy of the volumes crosses PCIe */
    RTM_TRY(rtm_snapshots_get(store, slot, &volume));
    RTM_TRY(rtm_imaging_cuda_difference(rtm_imaging_extent(grid), view->padded,
                                        rtm_layout_padded(grid), volume, sums));
  } else {
    RTM_TRY(rtm_snapshots_get(store, slot, &volume));
    original = malloc(cells * sizeof *original);
    if (!original) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for a snapshot's round-trip error");
    rtm_grid_pack(grid, view->padded, original);
#pragma omp parallel for reduction(+ : sums[:2]) schedule(static)
    for (size_t i = 0; i < cells; ++i) {
      const double d = (double)volume[i] - (double)original[i];
      sums[0] += d * d;
      sums[1] += (double)original[i] * (double)original[i];
    }
  }
  if (grid->mpi) RTM_TRY(rtm_mpi_allreduce(grid->mpi, sums, 2, RTM_MPI_SUM));
  *relative_l2 = sums[1] > 0.0 ? sqrt(sums[0] / sums[1]) : 0.0;
fail:
  free(original);
  return status;
}

void rtm_snapshots_destroy(rtm_snapshots_t *store) {
  if (!store) return;
  /* Queued packs, copies and conversions still use the slots and buffers. */
  if (store->device >= 0 && store->slots.ptr &&
      rtm_imaging_cuda_use_device(store->device) == RTM_OK)
    (void)rtm_imaging_cuda_synchronize();
  boundary_cuda_copies_destroy(store->copies); /* waits for its copies */
  rtm_mem_free(&store->scales);
  rtm_mem_free(&store->refused);
  rtm_mem_free(&store->scratch);
  rtm_mem_free(&store->transfer);
  rtm_mem_free(&store->staging);
  rtm_mem_free(&store->slots);
  free(store);
}
