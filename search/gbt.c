/* gbt.c - gradient-boosted regression trees with histogram splits. Each tree
 * is complete to its depth: node k has children 2k+1 and 2k+2. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "search/gbt.h"

#define NBINS 32
#define MIN_LEAF 2

typedef struct tree_node {
    int feature;             /* -1: no split, everything goes left */
    int bin;                 /* left when the feature's bin <= bin */
} tree_node;

struct tess_gbt {
    int d, ntrees, depth;
    double rate, base;
    int fitted;              /* trees fitted */
    tree_node *nodes;        /* ntrees x (2^depth - 1) */
    double *leaves;          /* ntrees x 2^depth */
};

static int bin_of(double f) {
    int b = (int)(f * NBINS);
    return b < 0 ? 0 : b >= NBINS ? NBINS - 1 : b;
}

tess_gbt *tess_gbt_create(int nfeat, int ntrees, int depth, double rate) {
    tess_gbt *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->d = nfeat;
    m->ntrees = ntrees;
    m->depth = depth;
    m->rate = rate;
    m->nodes = calloc((size_t)ntrees * (size_t)((1 << depth) - 1), sizeof *m->nodes);
    m->leaves = calloc((size_t)ntrees * (size_t)(1 << depth), sizeof *m->leaves);
    if (!m->nodes || !m->leaves) {
        tess_gbt_destroy(m);
        return NULL;
    }
    return m;
}

void tess_gbt_destroy(tess_gbt *m) {
    if (!m) return;
    free(m->nodes);
    free(m->leaves);
    free(m);
}

/* Leaf index of a binned point in tree t. */
static int descend(const tess_gbt *m, int t, const unsigned char *bins) {
    const tree_node *nodes = m->nodes + (size_t)t * (size_t)((1 << m->depth) - 1);
    int k = 0;
    for (int level = 0; level < m->depth; level++) {
        const tree_node *nd = &nodes[k];
        bool right = nd->feature >= 0 && bins[nd->feature] > nd->bin;
        k = 2 * k + 1 + right;
    }
    return k - ((1 << m->depth) - 1);
}

/* Grows tree t on the residuals r, one level at a time with histograms. */
static void grow_tree(tess_gbt *m, int t, const unsigned char *bins, const double *r, int n, int *node,
                      double *sum, int *count) {
    int d = m->d, internal = (1 << m->depth) - 1;
    tree_node *nodes = m->nodes + (size_t)t * (size_t)internal;
    for (int i = 0; i < n; i++) node[i] = 0;
    for (int level = 0; level < m->depth; level++) {
        int first = (1 << level) - 1, width = 1 << level;
        size_t hist = (size_t)width * (size_t)d * NBINS;
        memset(sum, 0, hist * sizeof *sum);
        memset(count, 0, hist * sizeof *count);
        for (int i = 0; i < n; i++) {
            size_t base = (size_t)(node[i] - first) * (size_t)d * NBINS;
            for (int j = 0; j < d; j++) {
                sum[base + (size_t)j * NBINS + bins[(size_t)i * (size_t)d + (size_t)j]] += r[i];
                count[base + (size_t)j * NBINS + bins[(size_t)i * (size_t)d + (size_t)j]]++;
            }
        }
        for (int w = 0; w < width; w++) {
            tree_node *nd = &nodes[first + w];
            nd->feature = -1;
            nd->bin = NBINS;
            double best_gain = 1e-12;
            for (int j = 0; j < d; j++) {
                const double *s = sum + ((size_t)w * (size_t)d + (size_t)j) * NBINS;
                const int *c = count + ((size_t)w * (size_t)d + (size_t)j) * NBINS;
                double total = 0;
                int ntotal = 0;
                for (int b = 0; b < NBINS; b++) total += s[b], ntotal += c[b];
                double left = 0;
                int nleft = 0;
                for (int b = 0; b + 1 < NBINS; b++) {
                    left += s[b];
                    nleft += c[b];
                    int nright = ntotal - nleft;
                    if (nleft < MIN_LEAF || nright < MIN_LEAF || c[b] == 0) continue;
                    double right = total - left;
                    double gain = left * left / nleft + right * right / nright - total * total / ntotal;
                    if (gain > best_gain) {
                        best_gain = gain;
                        nd->feature = j;
                        nd->bin = b;
                    }
                }
            }
        }
        for (int i = 0; i < n; i++) {
            const tree_node *nd = &nodes[node[i]];
            bool right = nd->feature >= 0 && bins[(size_t)i * (size_t)d + (size_t)nd->feature] > nd->bin;
            node[i] = 2 * node[i] + 1 + right;
        }
    }
    /* leaves: mean residual, shrunk by the learning rate */
    int nleaves = 1 << m->depth;
    double *leaf = m->leaves + (size_t)t * (size_t)nleaves;
    memset(sum, 0, (size_t)nleaves * sizeof *sum);
    memset(count, 0, (size_t)nleaves * sizeof *count);
    for (int i = 0; i < n; i++) {
        sum[node[i] - internal] += r[i];
        count[node[i] - internal]++;
    }
    for (int k = 0; k < nleaves; k++) leaf[k] = count[k] ? m->rate * sum[k] / count[k] : 0;
}

tess_status tess_gbt_fit(tess_gbt *m, const double *x, const double *y, int n) {
    m->fitted = 0;
    if (n < 1) return tess_error(TESS_ERR_ARG, "gbt: no training points");
    int d = m->d;
    size_t hist = (size_t)(1 << (m->depth - 1)) * (size_t)d * NBINS;
    unsigned char *bins = malloc((size_t)n * (size_t)(d ? d : 1));
    double *r = malloc((size_t)n * sizeof *r), *sum = malloc((hist > 64 ? hist : 64) * sizeof *sum);
    int *node = malloc((size_t)n * sizeof *node), *count = malloc((hist > 64 ? hist : 64) * sizeof *count);
    tess_status st = TESS_OK;
    if (!bins || !r || !sum || !node || !count) {
        st = tess_error(TESS_ERR_NOMEM, "gbt: no memory for %d points", n);
    } else {
        m->base = 0;
        for (int i = 0; i < n; i++) m->base += y[i];
        m->base /= n;
        for (int i = 0; i < n; i++) {
            r[i] = y[i] - m->base;
            for (int j = 0; j < d; j++) bins[(size_t)i * (size_t)d + (size_t)j] = (unsigned char)bin_of(x[(size_t)i * (size_t)d + (size_t)j]);
        }
        int nleaves = 1 << m->depth;
        for (int t = 0; t < m->ntrees; t++) {
            grow_tree(m, t, bins, r, n, node, sum, count);
            const double *leaf = m->leaves + (size_t)t * (size_t)nleaves;
            for (int i = 0; i < n; i++) r[i] -= leaf[node[i] - (nleaves - 1)];
        }
        m->fitted = m->ntrees;
    }
    free(bins);
    free(r);
    free(sum);
    free(node);
    free(count);
    return st;
}

double tess_gbt_predict(const tess_gbt *m, const double *x) {
    unsigned char bins[64];
    for (int j = 0; j < m->d && j < 64; j++) bins[j] = (unsigned char)bin_of(x[j]);
    double v = m->base;
    int nleaves = 1 << m->depth;
    for (int t = 0; t < m->fitted; t++) v += m->leaves[(size_t)t * (size_t)nleaves + (size_t)descend(m, t, bins)];
    return v;
}
