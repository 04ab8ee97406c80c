/*
 * cuda_tensor_map.c - TMA descriptors (op.h: tess_tensor_map): the checks a
 * declaration passes (the rules of cuTensorMapEncodeTiled, so a bad one is
 * refused at load with a message instead of an opaque launch error), and
 * their encoding for a buffer's device address, kept per module so that
 * each address is encoded once.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cuda_internal.h"
#include "error.h"

#define BOX_MAX 256
#define STRIDE_LIMIT (UINT64_C(1) << 40)
#define DIM_LIMIT (UINT64_C(1) << 32)

static bool data_type(tess_dtype t, CUtensorMapDataType *out) {
    switch (t) {
    case TESS_F16: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; return true;
    case TESS_BF16: *out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; return true;
    case TESS_F32: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; return true;
    case TESS_F64: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; return true;
    case TESS_I32: *out = CU_TENSOR_MAP_DATA_TYPE_INT32; return true;
    case TESS_E4M3: *out = CU_TENSOR_MAP_DATA_TYPE_UINT8; return true;   /* bytes: the TMA does not convert */
    default: return false;
    }
}

static bool swizzle_mode(int bytes, CUtensorMapSwizzle *out) {
    switch (bytes) {
    case 0: *out = CU_TENSOR_MAP_SWIZZLE_NONE; return true;
    case 32: *out = CU_TENSOR_MAP_SWIZZLE_32B; return true;
    case 64: *out = CU_TENSOR_MAP_SWIZZLE_64B; return true;
    case 128: *out = CU_TENSOR_MAP_SWIZZLE_128B; return true;
    default: return false;
    }
}

tess_status tess_cuda_tensor_map_check(const tess_tensor_map *d, int index) {
    CUtensorMapDataType type;
    CUtensorMapSwizzle swizzle;
    if (d->buffer < 0) return tess_error(TESS_ERR_ARG, "tensor map %d: buffer index %d", index, d->buffer);
    if (!data_type(d->dtype, &type))
        return tess_error(TESS_ERR_ARG, "tensor map %d: dtype %d has no TMA element type", index, (int)d->dtype);
    if (d->rank < 1 || d->rank > 5)
        return tess_error(TESS_ERR_ARG, "tensor map %d: rank %d (1..5)", index, d->rank);
    if (!swizzle_mode(d->swizzle, &swizzle))
        return tess_error(TESS_ERR_ARG, "tensor map %d: swizzle %d (0, 32, 64 or 128 bytes)", index, d->swizzle);
    const uint64_t elem = tess_dtype_size(d->dtype);
    for (int i = 0; i < d->rank; i++) {
        if (d->dims[i] < 1 || d->dims[i] > DIM_LIMIT)
            return tess_error(TESS_ERR_ARG, "tensor map %d: dims[%d] = %llu (1..2^32)", index, i,
                              (unsigned long long)d->dims[i]);
        if (d->box[i] < 1 || d->box[i] > BOX_MAX)
            return tess_error(TESS_ERR_ARG, "tensor map %d: box[%d] = %u (1..%d)", index, i, d->box[i], BOX_MAX);
    }
    for (int i = 0; i + 1 < d->rank; i++) {
        /* stride i is between elements of dimension i + 1: at least the extent below it */
        uint64_t below = i == 0 ? d->dims[0] * elem : d->strides[i - 1] * d->dims[i];
        if (d->strides[i] % 16 != 0 || d->strides[i] >= STRIDE_LIMIT || d->strides[i] < below)
            return tess_error(TESS_ERR_ARG,
                              "tensor map %d: strides[%d] = %llu bytes (a multiple of 16, at least %llu, below 2^40)",
                              index, i, (unsigned long long)d->strides[i], (unsigned long long)below);
    }
    const uint64_t row = d->box[0] * elem;
    if (row % 16 != 0)
        return tess_error(TESS_ERR_ARG, "tensor map %d: box[0] = %u elements is %llu bytes (a multiple of 16)", index,
                          d->box[0], (unsigned long long)row);
    if (d->swizzle && row > (uint64_t)d->swizzle)
        return tess_error(TESS_ERR_ARG, "tensor map %d: box[0] = %llu bytes exceeds the %d-byte swizzle", index,
                          (unsigned long long)row, d->swizzle);
    return TESS_OK;
}

static tess_status encode(tess_cuda_context *c, const tess_tensor_map *d, int index, CUdeviceptr addr,
                          CUtensorMap *out) {
    if (addr % 16 != 0)
        return tess_error(TESS_ERR_ARG, "tensor map %d: buffer %d at 0x%llx is not 16-byte aligned", index, d->buffer,
                          (unsigned long long)addr);
    CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    data_type(d->dtype, &type);       /* both checked at load */
    swizzle_mode(d->swizzle, &swizzle);
    cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
    for (int i = 1; i < d->rank; i++)
        if (d->step[i] > 1) element_strides[i] = d->step[i];
    CUresult r = c->drv->cuTensorMapEncodeTiled(out, type, (cuuint32_t)d->rank, (void *)(uintptr_t)addr, d->dims,
                                                d->strides, d->box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "encoding tensor map %d (buffer %d)", index, d->buffer);
        return tess_cuda_fail(c->drv, r, TESS_ERR_ARG, what);
    }
    return TESS_OK;
}

tess_status tess_cuda_tensor_map_get(tess_cuda_context *c, tess_cuda_module *m, int index, CUdeviceptr addr,
                                     const CUtensorMap **out) {
    tess_cuda_tensor_map_entry *cache = m->encoded[index];
    int n = m->nencoded[index] < TESS_CUDA_TENSOR_MAP_CACHE ? m->nencoded[index] : TESS_CUDA_TENSOR_MAP_CACHE;
    for (int i = 0; i < n; i++)
        if (cache[i].addr == addr) {
            *out = &cache[i].map;
            return TESS_OK;
        }
    CUtensorMap map;
    tess_status st = encode(c, &m->tensor_map[index], index, addr, &map);
    if (st) return st;
    tess_cuda_tensor_map_entry *e = &cache[m->nencoded[index] % TESS_CUDA_TENSOR_MAP_CACHE];
    e->map = map;
    e->addr = addr;
    m->nencoded[index]++;
    *out = &e->map;
    return TESS_OK;
}
