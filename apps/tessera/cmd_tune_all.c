/* cmd_tune_all.c - `tessera tune-all TASKS`: install-time tuning of a list
 * of tasks on this machine with one strategy, the budget shared by
 * priority, resumed from the records after a kill, ending with the device's
 * kernel library and a summary. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

#define DEFAULT_BUDGET 30
#define MAX_PRIORITY 1000

typedef enum task_state {
    TASK_PENDING, TASK_TUNED, TASK_SKIPPED, TASK_FAILED,
    TASK_INTERRUPTED,   /* Ctrl-C stopped its search: the next run resumes it */
    TASK_NOT_RUN        /* after a Ctrl-C, or once the time ran out */
} task_state;

static const char *const state_names[] = {"pending", "tuned", "skipped", "failed", "interrupted", "not run"};

/* One line of the task file, and what became of it. */
typedef struct list_task {
    int line;
    char op[128];                /* the operator with its attributes: "rmsnorm:eps=1e-6" */
    char shape_text[128];        /* normalized */
    int64_t shape[TESS_SHAPE_MAX];
    int ndim;
    char dtype[32];              /* "": f32 */
    char backend[16];            /* "": the best present */
    int priority;
    int share;                   /* evaluations its records should hold */
    int before;                  /* evaluations recorded before this run */
    tess_db_task rec;            /* its keys, and its records after the run */
    task_state state;
    char why[512];               /* a failure's message */
} list_task;

typedef struct task_list {
    list_task *tasks;
    int n, cap;
} task_list;

static void help(void) {
    printf("usage: tessera tune-all TASKS [--budget N] [--seconds S] [--strategy NAME] [--seed K]\n"
           "                              [-o LIBRARY.json] [--progress] [--db PATH]\n\n"
           "Tunes every task of the file TASKS on this machine with one strategy and writes\n"
           "the device's kernel library. Each line of TASKS is one task:\n\n"
           "    OP SHAPE [DTYPE] [BACKEND] [PRIORITY]      heat3d 256x256x256 f32 cpu 2\n\n"
           "OP may carry attributes (rmsnorm:eps=1e-6); DTYPE defaults to f32, BACKEND to\n"
           "the best present, PRIORITY (a positive integer) to 1; '#' starts a comment.\n"
           "A malformed line is a usage error naming it, and then nothing runs.\n\n"
           "  --budget     evaluations per unit of priority: a task of priority 2 gets\n"
           "               twice as many (default %d)\n"
           "  --seconds    a limit on the whole run, shared by priority among the tasks\n"
           "               still to tune (time a task leaves unused passes to the next)\n"
           "  --strategy   the search strategy of every task (see tessera strategies)\n"
           "  --seed       seed of the searches (default 1)\n"
           "  -o, --output write the kernel library of the tasks' device to this file (one\n"
           "               per device, named FILE.BACKEND.json, when the tasks use several)\n"
           "  --progress   show progress (on by default on a terminal): the task, the\n"
           "               evaluations done and the time left\n"
           "  --db         records database (default $TESSERA_DB or\n"
           "               $XDG_DATA_HOME/tessera/records.db)\n\n"
           "Resumable: a task whose records on this device already hold its share of\n"
           "evaluations is skipped, and one tuned in part gets what it still lacks, so a\n"
           "killed run continues where it stopped. A task that fails does not stop the\n"
           "others; the exit status is then 1. Ctrl-C stops after the candidates in flight\n"
           "of the current task (exit status 130), the library and the summary covering\n"
           "what was measured.\n",
           DEFAULT_BUDGET);
}

/* ---- the task file ------------------------------------------------------ */

/* Whether word is an item of the comma-separated list. */
static bool in_list(const char *list, const char *word) {
    size_t len = strlen(word);
    for (const char *b = list; (b = strstr(b, word)); b += len)
        if ((b == list || b[-1] == ',') && (b[len] == ',' || b[len] == '\0')) return true;
    return false;
}

/* Whether word is one of the backends some operator generates code for. */
static bool is_backend(const char *word) {
    tess_op_info op;
    for (int i = 0; tess_op_info_at(i, &op) == TESS_OK; i++)
        if (in_list(op.backends, word)) return true;
    return false;
}

static bool is_priority(const char *word) { return strspn(word, "0123456789") == strlen(word); }

/* Parses the words of one line into t; false with the reason in why. */
static bool parse_task(char **words, int nwords, list_task *t, char *why, size_t len) {
    if (nwords < 2) {
        snprintf(why, len, "expected OP SHAPE [DTYPE] [BACKEND] [PRIORITY], got only '%s'", words[0]);
        return false;
    }
    if (nwords > 5) {
        snprintf(why, len, "expected at most 5 words (OP SHAPE DTYPE BACKEND PRIORITY), got %d", nwords);
        return false;
    }
    tess_op_info op;
    if (tess_op_info_find(words[0], &op) != TESS_OK || tess_shape_from_text(words[1], t->shape, &t->ndim) != TESS_OK) {
        snprintf(why, len, "%s", tess_errmsg());
        return false;
    }
    if (strlen(words[0]) >= sizeof t->op) {
        snprintf(why, len, "operator text of %zu characters (at most %zu)", strlen(words[0]), sizeof t->op - 1);
        return false;
    }
    snprintf(t->op, sizeof t->op, "%s", words[0]);
    tess_shape_to_text(t->shape, t->ndim, t->shape_text, sizeof t->shape_text);
    t->priority = 1;
    /* DTYPE, BACKEND and PRIORITY are each optional, in that order: a word
     * is the priority if it is a number, a backend if one has that name. */
    enum { NONE, DTYPE, BACKEND, PRIORITY } last = NONE;
    static const char *const word_names[] = {"", "dtype", "backend", "priority"};
    for (int i = 2; i < nwords; i++) {
        const char *w = words[i];
        int kind = is_priority(w) ? PRIORITY : is_backend(w) ? BACKEND : DTYPE;
        if (kind <= (int)last) {
            snprintf(why, len, "'%s' after the %s: the order is OP SHAPE [DTYPE] [BACKEND] [PRIORITY]", w,
                     word_names[last]);
            return false;
        }
        last = kind;
        if (kind == DTYPE && strlen(w) >= sizeof t->dtype) {
            snprintf(why, len, "dtype '%.40s...' too long", w);
            return false;
        }
        if (kind == DTYPE) snprintf(t->dtype, sizeof t->dtype, "%s", w);
        if (kind == BACKEND) snprintf(t->backend, sizeof t->backend, "%s", w);
        if (kind == PRIORITY &&
            (strlen(w) > 4 || (t->priority = (int)strtol(w, NULL, 10)) < 1 || t->priority > MAX_PRIORITY)) {
            snprintf(why, len, "priority '%s' is not an integer in 1..%d", w, MAX_PRIORITY);
            return false;
        }
    }
    if (t->backend[0] && !in_list(op.backends, t->backend)) {
        snprintf(why, len, "operator %s has no %s code generator (it has %s)", op.name, t->backend, op.backends);
        return false;
    }
    /* the whole task, as the operator checks it: attributes, extents, dtype */
    if (tess_op_counts(t->op, t->shape, t->ndim, t->dtype[0] ? t->dtype : NULL, NULL, NULL, NULL) != TESS_OK) {
        snprintf(why, len, "%s", tess_errmsg());
        return false;
    }
    return true;
}

/* Reads the task file; an exit code (a malformed line: EXIT_USAGE, naming
 * it, with nothing kept). */
static int read_tasks(const char *path, task_list *list) {
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "tessera: error: cannot open %s: %s\n", path, strerror(errno));
        return EXIT_FAIL;
    }
    char *text = NULL;
    size_t size = 0;
    int rc = EXIT_OK;
    for (int line = 1; rc == EXIT_OK && getline(&text, &size, in) != -1; line++) {
        text[strcspn(text, "#")] = '\0';
        char *words[6], *save = NULL;
        int nwords = 0;
        for (char *w = strtok_r(text, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
            if (nwords < 6) words[nwords++] = w;
            else nwords++;
        if (nwords == 0) continue;
        if (list->n == list->cap) {
            int cap = list->cap ? 2 * list->cap : 16;
            list_task *grown = realloc(list->tasks, (size_t)cap * sizeof *grown);
            if (!grown) {
                rc = cli_fail("out of memory reading the task list");
                break;
            }
            list->tasks = grown;
            list->cap = cap;
        }
        list_task *t = &list->tasks[list->n];
        memset(t, 0, sizeof *t);
        t->line = line;
        char why[1024];
        if (!parse_task(words, nwords, t, why, sizeof why))
            rc = cli_usage_error("tune-all", "%s:%d: %s", path, line, why);
        else
            list->n++;
    }
    if (rc == EXIT_OK && ferror(in)) rc = cli_fail("cannot read the task list");
    if (rc == EXIT_OK && list->n == 0) rc = cli_usage_error("tune-all", "%s holds no task", path);
    free(text);
    fclose(in);
    return rc;
}

/* ---- progress ----------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What the progress line shows: the task being tuned among those to tune,
 * and the whole run's time (given, or estimated from the evaluations so far). */
typedef struct run_progress {
    const char *task;
    int index, count;
    double start_s, seconds;   /* seconds: the run's limit, 0 if none */
    int done_before;           /* evaluations of this run before the current task */
    int still_to_run;          /* evaluations planned after the current task */
    bool terminal;             /* overwrite one line, else a line per result */
} run_progress;

static void show_progress(int done, int budget, double best_ms, double elapsed_s, void *user) {
    (void)elapsed_s;
    const run_progress *p = user;
    double run_s = now_s() - p->start_s;
    int evaluated = p->done_before + done, planned = evaluated + (budget - done) + p->still_to_run;
    char left[48];
    if (p->seconds > 0)
        snprintf(left, sizeof left, "%.0f s left", p->seconds > run_s ? p->seconds - run_s : 0.0);
    else
        snprintf(left, sizeof left, "about %.0f s left", run_s / evaluated * (planned - evaluated));
    char best[32] = "none yet";
    if (isfinite(best_ms)) snprintf(best, sizeof best, "%.4g ms", best_ms);
    fprintf(stderr, "%s  [task %d/%d] %s: %d/%d evaluated, best %s; %s%s", p->terminal ? "\r" : "", p->index,
            p->count, p->task, done, budget, best, left, p->terminal ? "   " : "\n");
    fflush(stderr);
}

/* ---- tuning ------------------------------------------------------------- */

static void fail_task(list_task *t, const char *why) {
    t->state = TASK_FAILED;
    snprintf(t->why, sizeof t->why, "%s", why);
}

/* Looks each task up in the records: its keys, what it holds, and whether
 * that already makes its share (skipped, saying so). */
static void plan(tess_context *ctx, task_list *list, int budget) {
    for (int i = 0; i < list->n; i++) {
        list_task *t = &list->tasks[i];
        t->share = budget * t->priority;
        if (tess_db_task_get(ctx, t->op, t->shape, t->ndim, t->dtype[0] ? t->dtype : NULL,
                             t->backend[0] ? t->backend : NULL, &t->rec) != TESS_OK) {
            fail_task(t, tess_errmsg());
            continue;
        }
        t->before = t->rec.evaluations;
        if (t->before >= t->share) {
            t->state = TASK_SKIPPED;
            fprintf(stderr, "skipping %s: its records on %s already hold %d %s (its share: %d)\n",
                    t->rec.task, t->rec.device, t->before, cli_plural(t->before, "evaluation", "evaluations"),
                    t->share);
        } else if (t->before > 0) {
            fprintf(stderr, "resuming %s: %d of its %d evaluations are recorded\n", t->rec.task, t->before,
                    t->share);
        }
    }
}

/* Tunes the tasks still pending, in the file's order. */
static void tune_pending(tess_context *ctx, task_list *list, const tess_tune_options *base, bool show) {
    run_progress p = {.start_s = now_s(), .seconds = base->seconds, .terminal = isatty(STDERR_FILENO)};
    int weight_left = 0;
    for (int i = 0; i < list->n; i++)
        if (list->tasks[i].state == TASK_PENDING) {
            p.count++;
            p.still_to_run += list->tasks[i].share - list->tasks[i].before;
            weight_left += list->tasks[i].priority;
        }
    for (int i = 0; i < list->n; i++) {
        list_task *t = &list->tasks[i];
        if (t->state != TASK_PENDING) continue;
        double left_s = base->seconds - (now_s() - p.start_s);
        if (cli_interrupted() || (base->seconds > 0 && left_s <= 0)) {
            t->state = TASK_NOT_RUN;
            snprintf(t->why, sizeof t->why, cli_interrupted() ? "stopped by Ctrl-C" : "the time ran out");
            continue;
        }
        tess_tune_options opt = *base;
        opt.budget = t->share - t->before;
        /* a resumed task searches from another seed, not over its own steps again */
        opt.seed = base->seed + (uint64_t)t->before;
        if (base->seconds > 0) opt.seconds = left_s * t->priority / weight_left;
        weight_left -= t->priority;
        p.task = t->rec.task;
        p.index++;
        p.still_to_run -= opt.budget;
        opt.progress = show ? show_progress : NULL;
        opt.progress_user = &p;
        tess_tune_report report;
        tess_status st = tess_tune(ctx, t->op, t->shape, t->ndim, t->dtype[0] ? t->dtype : NULL,
                                   t->backend[0] ? t->backend : NULL, &opt, &report);
        if (show && p.terminal) fprintf(stderr, "\n");
        if (st) {
            fail_task(t, tess_errmsg());
            continue;
        }
        p.done_before += report.evaluations;
        if (tess_db_task_get(ctx, t->op, t->shape, t->ndim, t->dtype[0] ? t->dtype : NULL,
                             t->backend[0] ? t->backend : NULL, &t->rec) != TESS_OK)
            fail_task(t, tess_errmsg());
        else if (t->rec.ok == 0)
            fail_task(t, "no candidate ran correctly");
        else
            t->state = cli_interrupted() ? TASK_INTERRUPTED : TASK_TUNED;
    }
}

/* ---- the library and the summary ---------------------------------------- */

/* The devices the tasks have records on, in the list's order (borrowed
 * from it); their number. */
static int record_devices(const task_list *list, const char **devices, int cap) {
    int n = 0;
    for (int i = 0; i < list->n; i++) {
        const tess_db_task *r = &list->tasks[i].rec;
        bool seen = r->evaluations == 0;
        for (int d = 0; d < n && !seen; d++) seen = strcmp(devices[d], r->device) == 0;
        if (!seen && n < cap) devices[n++] = r->device;
    }
    return n;
}

/* The kernel library of each of those devices: to output itself for one
 * device, with the backend before output's extension for several
 * (lib.cpu.json, lib.cuda.json). An exit code. */
static int export_libraries(tess_context *ctx, const char *const *devices, int ndevices, const char *output) {
    if (ndevices == 0) {
        fprintf(stderr, "tessera: error: no task has records, so there is no library to write to %s\n", output);
        return EXIT_FAIL;
    }
    const char *dot = strrchr(output, '.'), *slash = strrchr(output, '/');
    int stem = (int)(dot && (!slash || dot > slash) ? (size_t)(dot - output) : strlen(output));
    int rc = EXIT_OK;
    for (int d = 0; d < ndevices; d++) {
        char path[4096];
        if (ndevices == 1)
            snprintf(path, sizeof path, "%s", output);
        else
            snprintf(path, sizeof path, "%.*s.%.*s%s", stem, output, (int)strcspn(devices[d], ":"), devices[d],
                     output + stem);
        if (cli_export(ctx, path, NULL, devices[d], true) != EXIT_OK) rc = EXIT_FAIL;
    }
    return rc;
}

static void print_summary(const task_list *list, const char *const *devices, int ndevices) {
    for (int d = 0; d < ndevices; d++) printf("device %s\n", devices[d]);
    printf("%-40s %11s %12s  %s\n", "task", "evaluations", "best ms", "state");
    for (int i = 0; i < list->n; i++) {
        const list_task *t = &list->tasks[i];
        char name[TESS_KEY_LEN + 160], best[32] = "-";
        if (t->rec.task[0])
            snprintf(name, sizeof name, "%s", t->rec.task);
        else
            snprintf(name, sizeof name, "%s %s", t->op, t->shape_text);
        if (isfinite(t->rec.best_ms) && t->rec.ok) snprintf(best, sizeof best, "%.4g", t->rec.best_ms);
        printf("%-40s %11d %12s  %s\n", name, t->rec.evaluations, best, state_names[t->state]);
    }
    for (int i = 0; i < list->n; i++) {
        const list_task *t = &list->tasks[i];
        if (t->why[0]) printf("  line %d (%s %s): %s\n", t->line, t->op, t->shape_text, t->why);
    }
}

static bool strategy_known(const char *name) {
    tess_strategy_info si;
    for (int i = 0; tess_strategy_info_at(i, &si) == TESS_OK; i++)
        if (strcmp(si.name, name) == 0) return true;
    return false;
}

int cmd_tune_all(int argc, char **argv) {
    static const struct option options[] = {
        {"budget", required_argument, 0, 'n'}, {"seconds", required_argument, 0, 'T'},
        {"strategy", required_argument, 0, 'S'}, {"seed", required_argument, 0, 'k'},
        {"output", required_argument, 0, 'o'}, {"progress", no_argument, 0, 'p'},
        {"db", required_argument, 0, 'd'},     {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    tess_tune_options opt = tess_tune_options_default();
    long budget = DEFAULT_BUDGET, v;
    const char *db = NULL, *output = NULL;
    bool progress = isatty(STDERR_FILENO);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (!cli_parse_int("tune-all", "--budget", optarg, 1, 100000000, &budget)) return EXIT_USAGE;
            break;
        case 'T':
            if (!cli_parse_double("tune-all", "--seconds", optarg, 0.001, &opt.seconds)) return EXIT_USAGE;
            break;
        case 'k':
            if (!cli_parse_int("tune-all", "--seed", optarg, 0, 2147483647, &v)) return EXIT_USAGE;
            opt.seed = (uint64_t)v;
            break;
        case 'S': opt.strategy = optarg; break;
        case 'o': output = optarg; break;
        case 'p': progress = true; break;
        case 'd': db = optarg; break;
        case 'h': help(); return EXIT_OK;
        case ':': return cli_usage_error("tune-all", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("tune-all", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("tune-all", optind == argc ? "missing the task list" : "expected one task list");
    tess_status st = tess_init();
    if (st) return cli_fail_status(st);
    if (opt.strategy && !strategy_known(opt.strategy))
        return cli_usage_error("tune-all", "unknown strategy '%s' (see tessera strategies)", opt.strategy);
    if (output && tess_output_check(output) != TESS_OK) return cli_fail_status(TESS_ERR_IO);
    task_list list = {0};
    int rc = read_tasks(argv[optind], &list);
    tess_context *ctx = NULL;
    if (rc == EXIT_OK && (st = tess_open(&ctx, db))) rc = cli_fail_status(st);
    if (rc != EXIT_OK) {
        free(list.tasks);
        return rc;
    }
    plan(ctx, &list, (int)budget);
    cli_catch_interrupt(&opt);
    tune_pending(ctx, &list, &opt, progress);
    signal(SIGINT, SIG_DFL);
    const char *devices[16] = {0};
    int ndevices = record_devices(&list, devices, (int)(sizeof devices / sizeof devices[0]));
    if (output) rc = export_libraries(ctx, devices, ndevices, output);
    print_summary(&list, devices, ndevices);
    tess_close(ctx);
    for (int i = 0; i < list.n; i++)
        if (list.tasks[i].state == TASK_FAILED) rc = EXIT_FAIL;
    free(list.tasks);
    return cli_interrupted() ? EXIT_INTERRUPTED : rc;
}
