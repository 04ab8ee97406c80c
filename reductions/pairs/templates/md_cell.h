/* md_cell.h - the cell of an atom and the minimum image, as md_step.h
 * defines them, rounded step by step (no contractions into fused
 * multiply-adds) so that every kernel draws the list radius's edge exactly
 * where the float64 reference does. Embedded in the generated C and CUDA
 * kernels, which define MD_FN, MD_MUL, MD_ADD and MD_SUB first, and S. */

MD_FN long long md_cell_of(double x, double y, double z, double box)
{
    long long c[3] = {(long long)(x / box * (double)S), (long long)(y / box * (double)S),
                      (long long)(z / box * (double)S)};
    for (int d = 0; d < 3; d++) c[d] = c[d] < 0 ? 0 : c[d] >= S ? S - 1 : c[d];
    return (c[2] * S + c[1]) * S + c[0];
}

/* Positions lie in [0, box), so a separation is within one box of its
 * minimum image: a comparison and one rounded addition, not a division. */
MD_FN double md_min_image(double d, double box)
{
    return d > 0.5 * box ? MD_SUB(d, box) : d < -0.5 * box ? MD_ADD(d, box) : d;
}
