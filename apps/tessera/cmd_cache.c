/* cmd_cache.c - `tessera cache [info]` and `tessera cache clean [--keep SIZE]`:
 * the compiled-kernel cache's size, and keeping it in bounds. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void help(void) {
    printf("usage: tessera cache [info]\n"
           "       tessera cache clean [--keep SIZE]\n\n"
           "Compiled kernels are kept by a hash of source, options and compiler version in\n"
           "$TESSERA_CACHE, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera: about 17 KB\n"
           "per CPU kernel, a few tens of KB per CUDA cubin, so each tuning run adds some.\n\n"
           "info   the cache's directory, its kernel files and their size (creates nothing)\n"
           "clean  removes kernel files, least recently used first, until at most SIZE remain\n"
           "       (default 0: all; SIZE in bytes, or with a K, M or G suffix, as in 500M)\n");
}

/* "500M" -> 500 MiB; false when malformed. */
static bool parse_size(const char *text, int64_t *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    const char *units = "KMG";
    double scale = 1;
    if (*end && end[1] == '\0' && strchr(units, *end)) {
        for (const char *u = units; u <= strchr(units, *end); u++) scale *= 1024;
        end++;
    }
    if (errno || end == text || *end || !(v >= 0) || v * scale > 9e18) return false;
    *out = (int64_t)(v * scale);
    return true;
}

static void format_size(int64_t bytes, char *buf, size_t len) {
    if (bytes >= 1 << 30) snprintf(buf, len, "%.1f GiB", (double)bytes / (1 << 30));
    else if (bytes >= 1 << 20) snprintf(buf, len, "%.1f MiB", (double)bytes / (1 << 20));
    else snprintf(buf, len, "%.1f KiB", (double)bytes / 1024);
}

int cmd_cache(int argc, char **argv) {
    static const struct option options[] = {{"keep", required_argument, 0, 'k'},
                                            {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *keep_text = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case 'k': keep_text = optarg; break;
        case 'h': help(); return EXIT_OK;
        case ':': return cli_usage_error("cache", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("cache", "unknown option '%s'", argv[optind - 1]);
        }
    }
    const char *action = optind < argc ? argv[optind] : "info";
    bool clean = strcmp(action, "clean") == 0;
    if (!clean && strcmp(action, "info") != 0)
        return cli_usage_error("cache", "unknown action '%s' (info or clean)", action);
    if (optind + 1 < argc) return cli_usage_error("cache", "unexpected argument '%s'", argv[optind + 1]);
    int64_t keep = 0;
    if (keep_text && !clean) return cli_usage_error("cache", "--keep belongs to cache clean");
    if (keep_text && !parse_size(keep_text, &keep))
        return cli_usage_error("cache", "--keep expects a size such as 500M, not '%s'", keep_text);
    tess_cache_info removed, kept;
    tess_status st = clean ? tess_cache_clean(keep, &removed, &kept) : tess_cache_info_get(&kept);
    if (st) return cli_fail_status(st);
    char size[32], gone[32];
    format_size(kept.bytes, size, sizeof size);
    if (!clean) {
        printf("compile cache %s: %lld kernel %s, %s\n", kept.dir, (long long)kept.files,
               cli_plural(kept.files, "file", "files"), size);
        return EXIT_OK;
    }
    format_size(removed.bytes, gone, sizeof gone);
    printf("compile cache %s: removed %lld %s (%s), kept %lld (%s)\n", kept.dir, (long long)removed.files,
           cli_plural(removed.files, "file", "files"), gone, (long long)kept.files, size);
    return EXIT_OK;
}
