/*
 * cuda_module.c - loading a cubin, its resource metrics, and running its
 * launches.
 *
 * Kernel ABI (op.h): every launch receives one device pointer per buffer,
 * in the operator's buffer order, then the scalars by value, then the
 * tensor maps by value (encoded for the buffers' addresses). A launch with
 * a cluster shape goes through cuLaunchKernelEx. A launch or execution error (illegal
 * address, misaligned access, too many resources) becomes TESS_ERR_RUNTIME
 * with the CUDA error's name; after a fault the context is unusable, and
 * the runner replaces the process.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "error.h"

/* Kernel arguments at most: CUDA's 32 KB of parameters hold far more, this
 * bounds the stack arrays of one launch. */
#define PARAMS_MAX 256

/* A block's shared memory above this, static and dynamic together, needs an
 * explicit opt-in per function (of its dynamic size). */
#define DEFAULT_DYNAMIC_SMEM_LIMIT (48 * 1024)

static int func_attribute(const tess_cuda_driver *drv, CUfunction fn, CUfunction_attribute a) {
    int v = -1;
    if (drv->cuFuncGetAttribute(&v, a, fn) != CUDA_SUCCESS) return -1;
    return v;
}

/* A cluster's extent in dimension i (0 in the declaration: 1). */
static unsigned cluster_dim(const tess_launch *l, int i) { return l->cluster[i] ? l->cluster[i] : 1; }

static bool has_cluster(const tess_launch *l) { return l->cluster[0] || l->cluster[1] || l->cluster[2]; }

/* Portable clusters have at most this many blocks; larger ones need an opt-in per function. */
#define PORTABLE_CLUSTER_BLOCKS 8

/* The grid is made of whole clusters. */
static tess_status check_cluster(const tess_launch *l) {
    for (int i = 0; i < 3; i++)
        if (l->grid[i] % cluster_dim(l, i) != 0)
            return tess_error(TESS_ERR_ARG, "kernel '%.64s': grid %ux%ux%u is not a multiple of its cluster %ux%ux%u",
                              l->entry, l->grid[0], l->grid[1], l->grid[2], cluster_dim(l, 0), cluster_dim(l, 1),
                              cluster_dim(l, 2));
    return TESS_OK;
}

/* Checks the parts of a source the launches depend on, before loading anything. */
static tess_status check_source(const tess_kernel_source *src) {
    if (src->nlaunches < 1 || src->nlaunches > TESS_MAX_LAUNCHES)
        return tess_error(TESS_ERR_ARG, "cuda load: %d launches (1..%d)", src->nlaunches, TESS_MAX_LAUNCHES);
    if (src->nscalars < 0 || src->nscalars > TESS_MAX_SCALARS || src->ntensor_maps < 0 ||
        src->ntensor_maps > TESS_MAX_TENSOR_MAPS)
        return tess_error(TESS_ERR_ARG, "cuda load: %d scalars (at most %d), %d tensor maps (at most %d)",
                          src->nscalars, TESS_MAX_SCALARS, src->ntensor_maps, TESS_MAX_TENSOR_MAPS);
    tess_status st = TESS_OK;
    for (int i = 0; i < src->ntensor_maps && !st; i++) st = tess_cuda_tensor_map_check(&src->tensor_map[i], i);
    for (int i = 0; i < src->nlaunches && !st; i++) st = check_cluster(&src->launch[i]);
    return st;
}

static void fill_metrics(const tess_cuda_context *c, const tess_cuda_module *m,
                         tess_kernel_metrics *metrics) {
    const tess_cuda_driver *drv = c->drv;
    CUfunction fn = m->fn[0];
    const tess_launch *l = &m->launch[0];
    metrics->registers = func_attribute(drv, fn, CU_FUNC_ATTRIBUTE_NUM_REGS);
    metrics->smem_static = func_attribute(drv, fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    metrics->smem_dynamic = (int)l->shared_bytes;
    metrics->local_bytes = func_attribute(drv, fn, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    metrics->power_w = -1;
    metrics->occupancy = -1;
    int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
    int blocks = 0;
    if (threads > 0 && c->warp_size > 0 && c->max_threads_per_sm > 0 &&
        drv->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, l->shared_bytes) ==
            CUDA_SUCCESS) {
        int warps_per_block = (threads + c->warp_size - 1) / c->warp_size;
        metrics->occupancy = (double)(blocks * warps_per_block) /
                             (double)(c->max_threads_per_sm / c->warp_size);
    }
}

tess_status tess_cuda_load(void *ctx, const tess_blob *bin, const tess_kernel_source *src,
                           void **module, tess_kernel_metrics *metrics) {
    tess_cuda_context *c = ctx;
    const tess_cuda_driver *drv = c->drv;
    *module = NULL;
    tess_status st = check_source(src);
    if (st) return st;
    if (!bin->data || bin->size == 0) return tess_error(TESS_ERR_ARG, "cuda load: empty binary");
    st = tess_cuda_bind(c);
    if (st) return st;
    /* the encoded tensor maps inside need CUtensorMap's alignment */
    tess_cuda_module *m = aligned_alloc(_Alignof(tess_cuda_module), sizeof *m);
    if (!m) return tess_error(TESS_ERR_NOMEM, "cuda module");
    memset(m, 0, sizeof *m);
    CUresult r = drv->cuModuleLoadData(&m->module, bin->data);
    if (r != CUDA_SUCCESS) {
        free(m);
        return tess_cuda_fail(drv, r, TESS_ERR_RUNTIME, "loading the cubin");
    }
    m->nlaunches = src->nlaunches;
    m->nscalars = src->nscalars;
    memcpy(m->scalar, src->scalar, sizeof m->scalar);
    m->ntensor_maps = src->ntensor_maps;
    memcpy(m->tensor_map, src->tensor_map, sizeof m->tensor_map);
    for (int i = 0; i < src->nlaunches && !st; i++) {
        const tess_launch *l = &src->launch[i];
        m->launch[i] = *l;
        char what[128];
        snprintf(what, sizeof what, "kernel '%.64s'", l->entry);
        r = drv->cuModuleGetFunction(&m->fn[i], m->module, l->entry);
        if (r != CUDA_SUCCESS) {
            st = tess_cuda_fail(drv, r, TESS_ERR_RUNTIME, what);
            break;
        }
        const int static_bytes = func_attribute(drv, m->fn[i], CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
        if (l->shared_bytes + (unsigned)(static_bytes > 0 ? static_bytes : 0) > DEFAULT_DYNAMIC_SMEM_LIMIT) {
            r = drv->cuFuncSetAttribute(m->fn[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)l->shared_bytes);
            if (r != CUDA_SUCCESS) st = tess_cuda_fail(drv, r, TESS_ERR_RUNTIME, what);
        }
        if (!st && cluster_dim(l, 0) * cluster_dim(l, 1) * cluster_dim(l, 2) > PORTABLE_CLUSTER_BLOCKS) {
            r = drv->cuFuncSetAttribute(m->fn[i], CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
            if (r != CUDA_SUCCESS) st = tess_cuda_fail(drv, r, TESS_ERR_RUNTIME, what);
        }
    }
    if (st) {
        drv->cuModuleUnload(m->module);
        free(m);
        return st;
    }
    if (metrics) fill_metrics(c, m, metrics);
    *module = m;
    return TESS_OK;
}

void tess_cuda_unload(void *ctx, void *module) {
    tess_cuda_context *c = ctx;
    tess_cuda_module *m = module;
    if (!m) return;
    if (tess_cuda_bind(c) == TESS_OK) c->drv->cuModuleUnload(m->module);
    tess_error_clear();
    free(m);
}

static CUresult launch(const tess_cuda_driver *drv, CUfunction fn, const tess_launch *l, CUstream stream,
                       void **params) {
    if (!has_cluster(l))
        return drv->cuLaunchKernel(fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                                   l->shared_bytes, stream, params, NULL);
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster_dim(l, 0);
    attr.value.clusterDim.y = cluster_dim(l, 1);
    attr.value.clusterDim.z = cluster_dim(l, 2);
    CUlaunchConfig cfg = {.gridDimX = l->grid[0], .gridDimY = l->grid[1], .gridDimZ = l->grid[2],
                          .blockDimX = l->block[0], .blockDimY = l->block[1], .blockDimZ = l->block[2],
                          .sharedMemBytes = l->shared_bytes, .hStream = stream, .attrs = &attr, .numAttrs = 1};
    return drv->cuLaunchKernelEx(&cfg, fn, params, NULL);
}

tess_status tess_cuda_launch_all(tess_cuda_context *c, tess_cuda_module *m, void *const *dbufs, int nbufs,
                                 CUstream stream) {
    if (nbufs < 0 || nbufs > PARAMS_MAX - m->nscalars - m->ntensor_maps)
        return tess_error(TESS_ERR_ARG,
                          "cuda launch: %d buffers, %d scalars and %d tensor maps (at most %d arguments)", nbufs,
                          m->nscalars, m->ntensor_maps, PARAMS_MAX);
    /* the ABI of op.h: one pointer per buffer, the scalars by value, then the tensor maps by value */
    CUdeviceptr ptr[PARAMS_MAX];
    void *params[PARAMS_MAX];
    for (int b = 0; b < nbufs; b++) {
        ptr[b] = (CUdeviceptr)(uintptr_t)dbufs[b];
        params[b] = &ptr[b];
    }
    for (int i = 0; i < m->nscalars; i++) params[nbufs + i] = (void *)&m->scalar[i].value;
    for (int i = 0; i < m->ntensor_maps; i++) {
        int b = m->tensor_map[i].buffer;
        if (b >= nbufs)
            return tess_error(TESS_ERR_ARG, "cuda launch: tensor map %d is of buffer %d, but %d buffers were given",
                              i, b, nbufs);
        const CUtensorMap *map;
        tess_status st = tess_cuda_tensor_map_get(c, m, i, ptr[b], &map);
        if (st) return st;
        params[nbufs + m->nscalars + i] = (void *)map;
    }
    for (int i = 0; i < m->nlaunches; i++) {
        const tess_launch *l = &m->launch[i];
        CUresult r = launch(c->drv, m->fn[i], l, stream, params);
        if (r != CUDA_SUCCESS) {
            char what[200];
            snprintf(what, sizeof what, "launching '%.64s' (grid %ux%ux%u, block %ux%ux%u, cluster %ux%ux%u)",
                     l->entry, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                     l->cluster[0], l->cluster[1], l->cluster[2]);
            return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, what);
        }
    }
    return TESS_OK;
}

tess_status tess_cuda_run(void *ctx, void *module, void *const *dbufs, int nbufs) {
    tess_cuda_context *c = ctx;
    tess_cuda_module *m = module;
    tess_status st = tess_cuda_bind(c);
    if (!st) st = tess_cuda_launch_all(c, m, dbufs, nbufs, c->stream);
    if (st) return st;
    CUresult r = c->drv->cuStreamSynchronize(c->stream);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "running '%.64s'", m->launch[0].entry);
        return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, what);
    }
    return TESS_OK;
}

tess_status tess_cuda_run_async(void *ctx, void *module, void *const *dbufs, int nbufs, void *stream) {
    tess_cuda_context *c = ctx;
    tess_status st = tess_cuda_bind(c);
    return st ? st : tess_cuda_launch_all(c, module, dbufs, nbufs, (CUstream)stream);
}

tess_status tess_cuda_set_scalar(void *ctx, void *module, int index, const tess_scalar *value) {
    (void)ctx;
    tess_cuda_module *m = module;
    if (index < 0 || index >= m->nscalars || value->type != m->scalar[index].type)
        return tess_error(TESS_ERR_ARG, "cuda kernel: no scalar %d of type %d (it has %d scalars)", index,
                          (int)value->type, m->nscalars);
    m->scalar[index].value = value->value;
    return TESS_OK;
}

tess_status tess_cuda_load_own_module(tess_cuda_context *c, const char *source, const char *what,
                                      const char *min_arch, CUmodule *out) {
    tess_device dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.arch, sizeof dev.arch, "%s", c->arch);
    tess_kernel_source src = {.code = (char *)source, .nlaunches = 1, };
    snprintf(src.min_arch, sizeof src.min_arch, "%s", min_arch);
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = tess_cuda_compile(&dev, &src, &bin, &log);
    free(log);
    if (st) return tess_error_context(st, "compiling %s", what);
    CUresult r = c->drv->cuModuleLoadData(out, bin.data);
    tess_blob_free(&bin);
    if (r != CUDA_SUCCESS) {
        char msg[128];
        snprintf(msg, sizeof msg, "loading %s", what);
        return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, msg);
    }
    return TESS_OK;
}
