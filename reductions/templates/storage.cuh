// storage.cuh - after core/templates/storage.cuh in a generated CUDA
// kernel of this family: the VEC-wide vector of the storage type that one
// load moves. Defined by the generator above: STORAGE_BYTES, VEC.

// VEC consecutive elements, aligned to their size (up to 16 bytes): one load.
struct __align__(VEC * STORAGE_BYTES) vec_t {
    storage_t v[VEC];
};

__device__ __forceinline__ void unpack_vec(const vec_t &u, float f[VEC])
{
#pragma unroll
    for (int k = 0; k < VEC; ++k) f[k] = to_float(u.v[k]);
}

__device__ __forceinline__ void load_vec(const storage_t *p, float f[VEC])
{
    unpack_vec(*reinterpret_cast<const vec_t *>(p), f);
}

__device__ __forceinline__ vec_t pack_vec(const float f[VEC])
{
    vec_t u;
#pragma unroll
    for (int k = 0; k < VEC; ++k) u.v[k] = from_float(f[k]);
    return u;
}

__device__ __forceinline__ void store_vec(storage_t *p, const float f[VEC])
{
    *reinterpret_cast<vec_t *>(p) = pack_vec(f);
}
