// gemm_common.cuh - what every CUDA GEMM path shares: the operand and
// output types and their conversions (through PTX, so no header is
// needed), element loads of A (the im2col view of x for a convolution) and
// B, the tile order, and the epilogue. Defined by the generator above this
// text: IN_BF16 / IN_F16 / IN_E4M3 / IN_F32 / IN_F64, OUT_ the same but E4M3, ACC_T; GM GN
// GK A_TRANS B_TRANS; ALPHA BETA HAS_C; EPI_BIAS EPI_GELU EPI_SILU; C_PTR and
// BIAS_PTR (the kernel's parameters, or null); TILE_M BN GROUP_M (tiles of
// GROUP_M rows of tiles are visited together, so their B columns stay in
// L2); CONV with IMG_H IMG_W CH FS STRIDE PAD OUT_P OUT_Q, and for a
// convolution read in windows CONV_WINDOW with TILE_W TILE_H TILE_N IMAGES
// TILES_P TILES_Q (gemm_wgmma.cu).

typedef ACC_T acc_t;

#if IN_BF16
typedef unsigned short in_t;
__device__ __forceinline__ acc_t in_to_acc(in_t v) { return __uint_as_float((unsigned)v << 16); }
#elif IN_F16
typedef unsigned short in_t;
__device__ __forceinline__ acc_t in_to_acc(in_t v)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}
#elif IN_E4M3
typedef unsigned char in_t;
// fp8 e4m3: 1 sign, 4 exponent (bias 7), 3 mantissa bits; S.1111.111 is NaN
__device__ __forceinline__ acc_t in_to_acc(in_t v)
{
    const unsigned e = (v >> 3) & 15, m = v & 7;
    const float mag = e == 15 && m == 7 ? __int_as_float(0x7fc00000)
                      : e ? __uint_as_float((e + 120) << 23 | m << 20) : (float)m * 0.001953125f;
    return v & 0x80 ? -mag : mag;
}
#elif IN_F32
typedef float in_t;
__device__ __forceinline__ acc_t in_to_acc(in_t v) { return v; }
#else
typedef double in_t;
__device__ __forceinline__ acc_t in_to_acc(in_t v) { return v; }
#endif

#if OUT_BF16
typedef unsigned short out_t;
__device__ __forceinline__ acc_t out_to_acc(out_t v) { return __uint_as_float((unsigned)v << 16); }
__device__ __forceinline__ out_t acc_to_out(acc_t v)
{
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(v));
    return r;
}
#elif OUT_F16
typedef unsigned short out_t;
__device__ __forceinline__ acc_t out_to_acc(out_t v)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}
__device__ __forceinline__ out_t acc_to_out(acc_t v)
{
    unsigned short r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(v));
    return r;
}
#elif OUT_F32
typedef float out_t;
__device__ __forceinline__ acc_t out_to_acc(out_t v) { return v; }
__device__ __forceinline__ out_t acc_to_out(acc_t v) { return v; }
#else
typedef double out_t;
__device__ __forceinline__ acc_t out_to_acc(out_t v) { return v; }
__device__ __forceinline__ out_t acc_to_out(acc_t v) { return v; }
#endif

#if CONV
// Where row m, columns k..k+n of the im2col view start in x, or -1 in the padding.
__device__ __forceinline__ long long conv_offset(long long m, long long k)
{
    const long long img = m / (OUT_P * OUT_Q), p = m / OUT_Q % OUT_P, q = m % OUT_Q;
    const long long r = k / (FS * CH), s = k / CH % FS, c = k % CH;
    const long long y = p * STRIDE - PAD + r, x = q * STRIDE - PAD + s;
    if (y < 0 || y >= IMG_H || x < 0 || x >= IMG_W) return -1;
    return ((img * IMG_H + y) * IMG_W + x) * CH + c;
}
#endif

// Element (m, k) of A, 0 outside it.
__device__ __forceinline__ acc_t load_a(const in_t *A, long long m, long long k)
{
    if (m >= GM || k >= GK) return 0;
#if CONV
    const long long at = conv_offset(m, k);
    return at < 0 ? (acc_t)0 : in_to_acc(A[at]);
#else
    return in_to_acc(A[A_TRANS ? k * GM + m : m * GK + k]);
#endif
}

// Element (k, n) of B, 0 outside it.
__device__ __forceinline__ acc_t load_b(const in_t *B, long long k, long long n)
{
    if (n >= GN || k >= GK) return 0;
    return in_to_acc(B[B_TRANS ? n * GK + k : k * GN + n]);
}

#ifndef TILE_M
#define TILE_M BM   // rows of D per tile (a cluster's blocks together, where the generator says)
#endif
#ifndef TILES_M
// rows of tiles; the generator counts them where they are not TILE_M rows of D (a convolution's pixel tiles)
#define TILES_M ((GM + TILE_M - 1) / TILE_M)
#endif

// The tile of D (TILE_M x BN) numbered `b`, GROUP_M rows of tiles at a time (m0: TILE_M times its row of tiles).
__device__ __forceinline__ void tile_coords(unsigned b, long long *m0, long long *n0)
{
    const unsigned tiles_m = TILES_M, tiles_n = (GN + BN - 1) / BN;
    const unsigned per_group = GROUP_M * tiles_n, first = b / per_group * GROUP_M;
    const unsigned rows = tiles_m - first < GROUP_M ? tiles_m - first : GROUP_M;
    *m0 = (long long)(first + b % per_group % rows) * TILE_M;
    *n0 = (long long)(b % per_group / rows) * BN;
}

#if CONV_WINDOW
// A convolution read in windows (the wgmma path): block tile bt holds BM output pixels of TILE_N images,
// TILE_H rows of TILE_W each. Its first image and the first row and column of its TILE_H x TILE_W.
struct pixel_tile {
    int img, p0, q0;
};

__device__ __forceinline__ pixel_tile pixel_tile_of(unsigned bt)
{
    pixel_tile px;
    px.img = (int)(bt / (TILES_P * TILES_Q)) * TILE_N;
    px.p0 = (int)(bt / TILES_Q % TILES_P) * TILE_H;
    px.q0 = (int)(bt % TILES_Q) * TILE_W;
    return px;
}

// The row of D of row r of block tile bt: GM (nothing stored) outside the image or past the last one.
__device__ __forceinline__ long long window_row(unsigned bt, int r)
{
    const pixel_tile px = pixel_tile_of(bt);
    const int img = px.img + r / (TILE_W * TILE_H), p = px.p0 + r % (TILE_W * TILE_H) / TILE_W, q = px.q0 + r % TILE_W;
    return img < IMAGES && p < OUT_P && q < OUT_Q ? ((long long)img * OUT_P + p) * OUT_Q + q : GM;
}
#endif

// epilogue(ALPHA acc + BETA C(m, n)), the value of D(m, n) before its conversion to out_t.
__device__ __forceinline__ acc_t epilogue_value(const out_t *Cm, const out_t *bias, long long m, long long n, acc_t acc)
{
    acc_t v = (acc_t)ALPHA * acc;
#if HAS_C
    v += (acc_t)BETA * out_to_acc(Cm[m * GN + n]);
#endif
#if EPI_BIAS
    v += out_to_acc(bias[n]);
#elif EPI_GELU
    v = (acc_t)0.5 * v * ((acc_t)1 + erf(v * (acc_t)0.70710678118654752440));
#elif EPI_SILU
    v = v / ((acc_t)1 + exp(-v));
#endif
    (void)Cm, (void)bias, (void)m, (void)n;
    return v;
}

// D(m, n) = epilogue(ALPHA acc + BETA C(m, n)), when (m, n) is inside D.
__device__ __forceinline__ void store_d(out_t *D, const out_t *Cm, const out_t *bias, long long m, long long n, acc_t acc)
{
    if (m >= GM || n >= GN) return;
    D[m * GN + n] = acc_to_out(epilogue_value(Cm, bias, m, n, acc));
}
