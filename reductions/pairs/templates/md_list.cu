// md_list.cu - Verlet lists from cells (md_step.h). TPP threads share an
// atom: they test TPP consecutive candidates of a cell at once, and a ballot
// over the group places the neighbours found in the order the cells list
// them, as one thread walking the candidates would.
// Parameters defined above: N, M, S, NCELLS, REACH, RL2, ENTRY, BLOCK, TPP.

extern "C" __global__ void md_list_zero(const double *x, const int *cells, int *list, double *x0, int *most,
                                        double box)
{
    if (threadIdx.x == 0) *most = 0;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
md_list(const double *__restrict__ x, const int *__restrict__ cells, int *__restrict__ list,
        double *__restrict__ x0, int *__restrict__ most, double box)
{
    const long long t = (long long)blockIdx.x * BLOCK + threadIdx.x, i = t / TPP;
    if (i >= N) return;   // the whole group: TPP divides BLOCK
    const int lane = (int)(t % TPP), shift = (int)(threadIdx.x % 32) / TPP * TPP;
    const unsigned group = (TPP == 32 ? 0xffffffffu : (1u << TPP) - 1) << shift;
    const int *__restrict__ atoms = cells + NCELLS + 1;
    const double xi = x[3 * i], yi = x[3 * i + 1], zi = x[3 * i + 2];
    const long long c = md_cell_of(xi, yi, zi, box);
    const long long cx = c % S, cy = c / S % S, cz = c / (S * S);
    int k = 0;
    for (int dz = -REACH; dz <= REACH; dz++)
        for (int dy = -REACH; dy <= REACH; dy++)
            for (int dx = -REACH; dx <= REACH; dx++) {
                const long long o = (((cz + dz + S) % S) * S + (cy + dy + S) % S) * S + (cx + dx + S) % S;
                const int end = __ldg(cells + o + 1);
                for (int q0 = __ldg(cells + o); q0 < end; q0 += TPP) {
                    const int q = q0 + lane;
                    int j = -1;
                    bool near = false;
                    if (q < end) {
                        j = __ldg(atoms + q);
                        const double ex = md_min_image(xi - __ldg(x + 3 * j), box);
                        const double ey = md_min_image(yi - __ldg(x + 3 * j + 1), box);
                        const double ez = md_min_image(zi - __ldg(x + 3 * j + 2), box);
                        const double r2 = MD_ADD(MD_ADD(MD_MUL(ex, ex), MD_MUL(ey, ey)), MD_MUL(ez, ez));
                        near = j != i && r2 < RL2;
                    }
                    const unsigned found = __ballot_sync(group, near) >> shift;
                    const int slot = k + __popc(found & ((1u << lane) - 1));
                    if (near && slot < M) list[ENTRY(i, slot)] = j;
                    k += __popc(found);
                }
            }
    if (lane == 0) {
        list[i] = k < M ? k : (int)M;
        atomicMax(most, k);
    }
    for (int d = lane; d < 3; d += TPP) x0[3 * i + d] = x[3 * i + d];
}
