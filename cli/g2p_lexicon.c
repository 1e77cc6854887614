/*
 * g2p_lexicon.c — the lexicon of `attend g2p` (issue 29; docs/G2P.md,
 * "Lexicon first"): which file, the compact cache in the user's cache
 * directory, and the checks against the model's phonemes. The library does
 * the work (src/tasks/g2p_lexicon.c); this file finds files and prints.
 */
#define _XOPEN_SOURCE 700 /* realpath, mkdir */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attend.h"
#include "cli.h"
#include "g2p_files.h"

#define DEBIAN_CMUDICT "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
#define STRESS_DICT_NAME "cmudict-stress.dict"

void g2p_lexicon_close(g2p_lexicon *l) {
    attend_g2p_lexicon_free(l->lx);
    l->lx = NULL;
}

/* 1 when the file starts with the lexicon file form's magic. */
static int is_file_form(const char *path) {
    unsigned char head[6] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && !memcmp(head, "ATTLEX", 6);
}

/* The cache file of lexicon text `path` read with these flags, into buf
 * [cap]: $XDG_CACHE_HOME/attend/lexicon-HASH.bin (else ~/.cache/attend/...),
 * HASH from the file's real path and the flags; the directory is created.
 * 0 when there is no usable cache directory (the lexicon stays in memory). */
static int cache_path(const char *path, int stress, int skip, char *buf, size_t cap) {
    char real[PATH_MAX], dir[PATH_MAX];
    if (!realpath(path, real)) return 0;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') {
        if (mkdir(xdg, 0755) != 0 && errno != EEXIST) return 0;
        if (snprintf(dir, sizeof dir, "%s/attend", xdg) >= (int)sizeof dir) return 0;
    } else if (home && *home == '/') {
        if (snprintf(dir, sizeof dir, "%s/.cache", home) >= (int)sizeof dir) return 0;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) return 0;
        if (snprintf(dir, sizeof dir, "%s/.cache/attend", home) >= (int)sizeof dir) return 0;
    } else {
        return 0;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return 0;
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
    for (const char *c = real; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ (unsigned char)('0' + stress)) * 1099511628211ull;
    h = (h ^ (unsigned char)('0' + skip)) * 1099511628211ull;
    return snprintf(buf, cap, "%s/lexicon-%016llx.bin", dir, (unsigned long long)h) < (int)cap;
}

/* Loads the lexicon text `path` through the cache (a cached copy whose stamp
 * matches the file's size and modification time, else the text, then a new
 * cached copy: written only when the cache directory is writable). */
static int load_text(const char *cmd, const char *path, int stress, int skip, g2p_lexicon *l) {
    attend_error err = {0};
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "attend %s: lexicon %s: %s\n", cmd, path, strerror(errno));
        return 1;
    }
    int64_t mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    if (cache_path(path, stress, skip, l->cache, sizeof l->cache)) {
        attend_g2p_lexicon *c = NULL;
        if (attend_g2p_lexicon_load(&c, l->cache, &err) == ATTEND_OK) {
            attend_g2p_lexicon_info in;
            attend_g2p_lexicon_get_info(c, &in);
            if (in.source_size == (int64_t)sb.st_size && in.source_mtime_ns == mtime) {
                l->lx = c;
                l->cached = 1;
                return 0;
            }
        }
        attend_g2p_lexicon_free(c); /* stale, damaged or absent: rebuilt below */
    } else {
        l->cache[0] = '\0';
    }
    attend_g2p_options o = {stress, skip};
    attend_g2p_dict_info di;
    if (attend_g2p_lexicon_read(&l->lx, path, &o, &di, &err)) {
        if (err.status == ATTEND_ERR_FORMAT && !skip)
            fprintf(stderr, "attend %s: lexicon %s (--skip-malformed skips such lines)\n", cmd, err.msg);
        else
            fprintf(stderr, "attend %s: lexicon: %s\n", cmd, err.msg);
        return 1;
    }
    if (di.skipped)
        fprintf(stderr, "attend %s: lexicon: skipped %d malformed line%s (first: %s)\n", cmd, di.skipped,
                di.skipped == 1 ? "" : "s", di.first_skipped);
    if (l->cache[0] && attend_g2p_lexicon_save(l->lx, l->cache, &err) == ATTEND_OK) l->cached = 2;
    return 0;
}

int g2p_lexicon_open(const char *cmd, const char *given, int none, int skip, const attend_vocab *pv,
                     g2p_lexicon *l) {
    memset(l, 0, sizeof *l);
    if (none) return 0;
    int stress = attend_g2p_vocab_has_stress(pv), explicit_ = 1;
    const char *env = getenv("ATTEND_G2P_LEXICON");
    if (given) {
        l->how = "--lexicon";
    } else if (env && *env) {
        if (!strcmp(env, "none")) return 0;
        given = env;
        l->how = "$ATTEND_G2P_LEXICON";
    } else {
        explicit_ = 0;
        char looked[2 * PATH_MAX + 256];
        if (!stress && g2p_file_exists(DEBIAN_CMUDICT)) {
            given = DEBIAN_CMUDICT;
            l->how = "Debian's pocketsphinx-en-us";
        } else if ((given = stress ? g2p_find_shipped(STRESS_DICT_NAME, "data/g2p/" STRESS_DICT_NAME, l->path,
                                                      sizeof l->path, looked, sizeof looked)
                                   : g2p_find_shipped(G2P_DICT_NAME, "data/g2p/" G2P_DICT_NAME, l->path,
                                                      sizeof l->path, looked, sizeof looked))) {
            l->how = "shipped";
        } else {
            fprintf(stderr,
                    "attend %s: note: no lexicon found (looked in %s%s%s): every word comes from the model; "
                    "%s, give --lexicon FILE, or --no-lexicon to silence this\n",
                    cmd, stress ? "" : DEBIAN_CMUDICT, stress || !looked[0] ? "" : ", ", looked,
                    stress ? "a stress model needs a CMUdict with stress (sh tools/get_cmudict.sh --stress)"
                           : "install Debian's pocketsphinx-en-us (or run sh tools/get_cmudict.sh)");
            return 0;
        }
    }
    if (given != l->path) snprintf(l->path, sizeof l->path, "%s", given);
    int rc;
    if (is_file_form(l->path)) {
        attend_error err = {0};
        rc = attend_g2p_lexicon_load(&l->lx, l->path, &err) ? cli_lib_fail(cmd, &err) : 0;
    } else {
        rc = load_text(cmd, l->path, stress, skip, l);
    }
    if (rc) return rc;
    attend_error err = {0};
    if (attend_g2p_lexicon_check_phonemes(l->lx, pv, l->path, &err)) {
        if (!explicit_) { /* a default lexicon that does not fit the model: the model alone, with a note */
            fprintf(stderr, "attend %s: note: lexicon not used: %s\n", cmd, err.msg);
            g2p_lexicon_close(l);
            return 0;
        }
        fprintf(stderr, "attend %s: lexicon (%s): %s (or --no-lexicon)\n", cmd, l->how, err.msg);
        g2p_lexicon_close(l);
        return 1;
    }
    return 0;
}
