/* agent.c - the default strategy: a multi-armed bandit that gives each
 * batch's slots to the two model-based techniques (bayes: a Gaussian process
 * that extrapolates smooth trends; model: boosted trees that learn
 * interactions and failing regions) by how often each recently proposed a
 * config among the best tenth (a bandit in the manner of OpenTuner's). Both
 * share one experience pool and its cost model; priors from similar tasks
 * pre-train the cost model. While the models have too little data, a run
 * that starts from measured configs (the template's default, which the
 * search loop measures first) spends its first batches on a local search:
 * the configs nearest to the best one so far. A default is a good guess whose
 * neighbours are better guesses than random ones.
 * Genetic and annealing search, slower to learn on every recorded space,
 * are left to their own strategies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "search/search.h"
#include "search/technique.h"

#define NTECH 2
#define WINDOW 24             /* recent outcomes a technique is judged on */
#define EXPLORE 0.3           /* weight of the bandit's exploration term */
#define MAX_PENDING 4096
#define MAX_RANK 256          /* cap on the "best tenth" */
#define PRIOR_WINS 3          /* each arm's belief before any outcome: 3 in 6 */
#define PRIOR_USES 6
/* Until this many observations every slot goes to the Gaussian process (the
 * first arm), the most sample-efficient technique while data is scarce (on
 * pnpoly the cost model's early share doubled the evaluations to 5%); with
 * priors from similar tasks that the target's first measurements confirmed
 * (tess_pool_has_priors) the cost model is ready early, but the source
 * may still mislead, so it gets every other slot and the others stay with the
 * cold opening (the GP, random draws before the GP has data): between two
 * recordings of heat3d4 512^3 whose optimum moved, a first batch all of the
 * priors' picks took 35.5 and 36 evaluations to 5% against 25 and 23 cold,
 * halved 33 and 26.5 (medians of 40 runs). Sharing
 * from 12 on instead of 24 took the two heat3d4 recordings from 29.5 and 27
 * to 25 and 23 evaluations to 5% (medians of 40 runs), pnpoly and
 * dedispersion unchanged within their spread. */
#define GP_FIRST 12
/* When the run starts from measured configs (the template's default in
 * tuning, warm starts), slots go to the local search around the best so far
 * until the models share: on the H200 recordings it needs fewer evaluations
 * to 1% than the Gaussian process in those slots (mean of four 20-run
 * medians, heat3d 256^3: 22 instead of 36; varcoef3d: 10 instead of 35).
 * The best of a few random configs is a poorer centre (on pnpoly it took a third more evaluations to
 * 5%): a run that starts from nothing goes straight to the models. */
#define LOCAL_UNTIL 24

typedef struct arm {
    const tess_technique_ops *ops;
    double prior_wins, prior_uses;   /* belief before any outcome */
    void *state;
    unsigned char outcome[WINDOW];   /* 1: the proposal ranked among the best tenth */
    int nout, next;
    int pending;              /* slots proposed and not yet observed */
} arm;

typedef struct pending {
    tess_config c;
    int arm;
} pending;

typedef struct agent {
    tess_pool *pool;
    void *local;              /* tess_technique_local's state */
    arm arms[NTECH];
    pending *wait;
    int nwait;
    int total;                /* outcomes credited */
    bool started, seeded;     /* proposed before; had observations at its first proposal */
    int rank[MAX_RANK];
} agent;

static void agent_destroy(void *state) {
    agent *g = state;
    if (!g) return;
    for (int k = 0; k < NTECH; k++)
        if (g->arms[k].state) g->arms[k].ops->destroy(g->arms[k].state);
    if (g->local) tess_technique_local.destroy(g->local);
    free(g->wait);
    tess_pool_destroy(g->pool);
    free(g);
}

static tess_status agent_create(const tess_space *s, const tess_strategy_options *o, void **state) {
    *state = NULL;
    agent *g = calloc(1, sizeof *g);
    if (!g) return tess_error(TESS_ERR_NOMEM, "agent: no memory");
    static const tess_technique_ops *const techniques[NTECH] = {
        &tess_technique_bayes, &tess_technique_model};
    tess_status st = tess_pool_create(s, o, &g->pool);
    g->wait = malloc(MAX_PENDING * sizeof *g->wait);
    if (!st && !g->wait) st = tess_error(TESS_ERR_NOMEM, "agent: no memory");
    if (!st) st = tess_technique_local.create(g->pool, &g->local);
    for (int k = 0; k < NTECH && !st; k++) {
        g->arms[k].ops = techniques[k];
        g->arms[k].prior_wins = PRIOR_WINS;
        g->arms[k].prior_uses = PRIOR_USES;
        st = techniques[k]->create(g->pool, &g->arms[k].state);
    }
    if (st) {
        agent_destroy(g);
        return tess_error_context(st, "creating strategy 'agent'");
    }
    *state = g;
    return TESS_OK;
}

/* Upper confidence bound of an arm's rate of new bests; slots already given
 * out in this batch count as uses without a win, so a batch spreads out. */
static double arm_score(const agent *g, const arm *a) {
    int wins = 0;
    for (int i = 0; i < a->nout; i++) wins += a->outcome[i];
    int uses = a->nout + a->pending;
    double rate = (wins + a->prior_wins) / (uses + a->prior_uses);
    return rate + EXPLORE * sqrt(log(g->total + 2.0) / (uses + 1.0));
}

/* Lets arm a propose up to want configs at out, noting them as pending. */
static tess_status arm_propose(agent *g, int a, tess_config *out, int want, int *got) {
    *got = 0;
    tess_status st = g->arms[a].ops->propose(g->arms[a].state, g->pool, out, want, got);
    for (int i = 0; !st && i < *got; i++) {
        if (g->nwait < MAX_PENDING) g->wait[g->nwait++] = (pending){out[i], a};
        g->arms[a].pending++;
    }
    return st;
}

/* Reorders the arms' shares, each best first, into rounds (one config of
 * each arm, the bandit's favourite first), so that a batch evaluated in
 * order meets every arm's best pick early. */
static void interleave(tess_config *out, const int *from, const int *got, const int *order) {
    int total = 0;
    for (int a = 0; a < NTECH; a++) total += got[a];
    tess_config *copy = malloc((size_t)(total ? total : 1) * sizeof *copy);
    if (!copy) return;   /* the order is a courtesy; the batch stays valid */
    int base = from[0];
    memcpy(copy, out + base, (size_t)total * sizeof *copy);
    for (int i = 0, k = 0; k < total; i++)
        for (int j = 0; j < NTECH; j++) {
            int a = order[j];
            if (i < got[a]) out[base + k++] = copy[from[a] - base + i];
        }
    free(copy);
}

static tess_status agent_propose(void *state, tess_config *out, int max, int *n) {
    agent *g = state;
    int k = 0;
    if (!g->started) g->started = true, g->seeded = g->pool->n > 0;
    if (k < max && g->seeded && g->pool->n < LOCAL_UNTIL) {
        int got = 0;
        tess_status st = tess_technique_local.propose(g->local, g->pool, out + k, max - k, &got);
        if (st) return st;
        k += got;
    }
    /* deal the remaining slots one by one to the best-scoring arm; while
     * outcomes are few the equal priors and the pending slots share them evenly */
    int slots[NTECH] = {0}, order[NTECH];
    double score[NTECH];
    for (int a = 0; a < NTECH; a++) score[a] = arm_score(g, &g->arms[a]), order[a] = a;
    if (score[1] > score[0]) order[0] = 1, order[1] = 0;
    bool opening = g->pool->n < GP_FIRST, hedged = opening && tess_pool_has_priors(g->pool);
    for (int s = k; s < max; s++) {
        if (opening) {
            int a = hedged ? (s - k) % 2 : 0;
            slots[a]++;
            g->arms[a].pending++;
            continue;
        }
        int best = 0;
        double best_score = -1;
        for (int a = 0; a < NTECH; a++) {
            double sc = arm_score(g, &g->arms[a]);
            if (sc > best_score) best_score = sc, best = a;
        }
        slots[best]++;
        g->arms[best].pending++;
    }
    for (int a = 0; a < NTECH; a++) g->arms[a].pending -= slots[a];
    int from[NTECH], got[NTECH];
    for (int a = 0; a < NTECH; a++) {
        from[a] = k;
        int want = slots[a] < max - k ? slots[a] : max - k;
        tess_status st = want > 0 ? arm_propose(g, a, out + k, want, &got[a]) : TESS_OK;
        if (st) return st;
        if (want <= 0) got[a] = 0;
        k += got[a];
    }
    interleave(out, from, got, order);
    /* slots a technique could not fill go to the others in order, then to
     * random; in a hedged opening the GP's go to random, as they do cold */
    while (hedged && k < max && tess_pool_random(g->pool, &out[k])) k++;
    for (int a = 0; a < NTECH && k < max; a++) {
        int more = 0;
        tess_status st = arm_propose(g, a, out + k, max - k, &more);
        if (st) return st;
        k += more;
    }
    while (k < max && tess_pool_random(g->pool, &out[k])) k++;
    *n = k;
    return TESS_OK;
}

/* Whether observation i ranks among the fastest tenth seen so far (a new
 * best always does): a denser signal than new bests alone. */
static bool among_best(agent *g, int i) {
    tess_pool *pool = g->pool;
    if (pool->status[i] != TESS_RESULT_OK) return false;
    int k = pool->nok / 10 > 1 ? pool->nok / 10 : 1;
    if (k > MAX_RANK) k = MAX_RANK;
    int n = tess_pool_top(pool, k, g->rank);
    return n > 0 && pool->time_ms[i] <= pool->time_ms[g->rank[n - 1]];
}

static tess_status agent_observe(void *state, const tess_config *c, tess_outcome status, double time_ms) {
    agent *g = state;
    int i = tess_pool_observe(g->pool, c, status, time_ms);
    if (i < 0) return tess_error(TESS_ERR_NOMEM, "agent: no memory for an observation");
    for (int a = 0; a < NTECH; a++)
        if (g->arms[a].ops->observe) g->arms[a].ops->observe(g->arms[a].state, g->pool, i);
    /* credit the arm that proposed c */
    for (int w = 0; w < g->nwait; w++) {
        if (!tess_config_equal(&g->wait[w].c, c)) continue;
        arm *a = &g->arms[g->wait[w].arm];
        a->pending--;
        a->outcome[a->next] = among_best(g, i);
        a->next = (a->next + 1) % WINDOW;
        if (a->nout < WINDOW) a->nout++;
        g->total++;
        g->wait[w] = g->wait[--g->nwait];
        break;
    }
    return TESS_OK;
}

const tess_strategy_ops tess_search_agent = {
    "agent", "bandit over bayes and model sharing one pool and cost model",
    agent_create, agent_propose, agent_observe, agent_destroy};
