/*
 * g2p_files.c — what the files of `attend g2p` share (g2p_files.h): finding
 * the model and the dictionary, reading a dictionary, loading a model or the
 * members of an ensemble.
 */
#define _XOPEN_SOURCE 700 /* realpath; POSIX.1-2008 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attend.h"
#include "cli.h"
#include "ensemble.h"
#include "g2p_files.h"

/* ------------------------------------------------------- finding files */

int g2p_file_exists(const char *path) {
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The directory of the running executable (resolved) into buf; 0 when unknown. */
static int exe_dir(char *buf, size_t cap) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = '\0';
    return snprintf(buf, cap, "%s", exe) < (int)cap;
}

/*
 * Where the shipped files are looked for, after --model/--dict and the
 * environment variable (issue 30): first the copy installed with this attend,
 * <prefix>/share/attend/NAME for <prefix>/bin/attend; then the source tree's
 * copy, but only when this attend runs from the build directory it was built
 * in (ATTEND_BUILD_DIR, from CMakeLists.txt), so an installed or moved attend
 * never reads the build's source tree. `attend g2p --help` prints the list.
 */
typedef struct {
    char path[PATH_MAX + 64];
    const char *what; /* how it was found, for --help and the message */
    int searched;     /* 0: not a candidate here (why says so) */
} g2p_place;

static int in_build_dir(void) {
#if defined(ATTEND_BUILD_DIR)
    char d[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
    return exe_dir(d, sizeof d) && realpath(d, a) && realpath(ATTEND_BUILD_DIR, b) && !strcmp(a, b);
#else
    return 0;
#endif
}

#ifdef ATTEND_G2P_SOURCE_DIR
#define SOURCE_DIR ATTEND_G2P_SOURCE_DIR
#else
#define SOURCE_DIR NULL
#endif

/* places [2]: the installed copy, the source tree's (rel_src: "models/NAME"). */
static void g2p_places(const char *name, const char *rel_src, g2p_place *places) {
    char d[PATH_MAX];
    memset(places, 0, 2 * sizeof *places);
    places[0].what = "installed with this attend";
    if (exe_dir(d, sizeof d)) {
        char *slash = strrchr(d, '/');
        if (slash) *slash = '\0'; /* <prefix>/bin -> <prefix> */
        snprintf(places[0].path, sizeof places[0].path, "%s/share/attend/%s", d, name);
        places[0].searched = 1;
    }
    if (SOURCE_DIR && in_build_dir()) {
        snprintf(places[1].path, sizeof places[1].path, "%s/%s", SOURCE_DIR, rel_src);
        places[1].what = "the source tree: this attend runs from its build directory";
        places[1].searched = 1;
    } else {
        snprintf(places[1].path, sizeof places[1].path, "the source tree's %s", rel_src);
        places[1].what = "not searched: this attend is not in its build directory";
    }
}

/* The file to use: the option, else the environment variable, else the first
 * of g2p_places that exists (into buf [cap]). NULL with a message when none. */
static const char *find_file(const char *cmd, const char *given, const char *env, const char *name,
                             const char *rel_src, const char *what, char *buf, size_t cap) {
    if (given) return given;
    const char *e = getenv(env);
    if (e && *e) return e;
    g2p_place places[2];
    g2p_places(name, rel_src, places);
    for (int i = 0; i < 2; i++) {
        if (places[i].searched && g2p_file_exists(places[i].path) && strlen(places[i].path) < cap) {
            memcpy(buf, places[i].path, strlen(places[i].path) + 1);
            return buf;
        }
    }
    cli_error(cmd, "no %s found (looked in %s%s%s): give %s, set %s, or %s", what,
              places[0].searched ? places[0].path : "<prefix>/share/attend",
              places[1].searched ? " and " : "", places[1].searched ? places[1].path : "",
              !strcmp(what, "model") ? "--model PATH" : "--dict PATH", env,
              !strcmp(what, "model") ? "train one with `attend g2p train`"
                                     : "fetch CMUdict with tools/get_cmudict.sh");
    return NULL;
}

const char *g2p_find_model(const char *cmd, const char *given, char *buf, size_t cap) {
    return find_file(cmd, given, "ATTEND_G2P_MODEL", G2P_MODEL_NAME, "models/" G2P_MODEL_NAME, "model", buf, cap);
}

const char *g2p_find_dict(const char *cmd, const char *given, char *buf, size_t cap) {
    return find_file(cmd, given, "ATTEND_G2P_DICT", G2P_DICT_NAME, "data/g2p/" G2P_DICT_NAME, "dictionary", buf,
                     cap);
}

void g2p_search_help(FILE *f, int model) {
    const char *env = model ? "ATTEND_G2P_MODEL" : "ATTEND_G2P_DICT";
    const char *e = getenv(env);
    g2p_place places[2];
    g2p_places(model ? G2P_MODEL_NAME : G2P_DICT_NAME, model ? "models/" G2P_MODEL_NAME : "data/g2p/" G2P_DICT_NAME,
               places);
    fprintf(f, "Where the %s is looked for, in order (the first that exists is used):\n  %s PATH\n", model ? "model" : "dictionary",
            model ? "--model" : "--dict");
    if (e && *e) fprintf(f, "  $%s = %s  (%s)\n", env, e, g2p_file_exists(e) ? "found" : "not found");
    else fprintf(f, "  $%s  (not set)\n", env);
    for (int i = 0; i < 2; i++)
        fprintf(f, "  %s  (%s%s)\n", places[i].path, places[i].what,
                !places[i].searched ? "" : g2p_file_exists(places[i].path) ? ": found" : ": not found");
}

int g2p_read_dict(const char *cmd, const char *path, int skip, int keep_stress, attend_g2p_dict **d) {
    attend_error err = {0};
    attend_g2p_options o = {keep_stress, skip};
    if (attend_g2p_dict_read(d, path, &o, &err)) return cli_lib_fail(cmd, &err);
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(*d, &in);
    if (in.skipped) cli_error(cmd, "skipped %d odd line%s (first: %s)", in.skipped,
                            in.skipped == 1 ? "" : "s", in.first_skipped);
    if (in.words == 0) {
        cli_error(cmd, "%s: no entries", path);
        return 1;
    }
    return 0;
}

/* Loads a G2P model with capacities (0 = the file's). */
int g2p_load_model(const char *cmd, const char *path, int batch, int max_src, int max_tgt, attend_model **m,
                    attend_vocab **gv, attend_vocab **pv) {
    attend_error err = {0};
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = batch;
    cap.max_src_len = max_src;
    cap.max_tgt_len = max_tgt;
    if (attend_g2p_model_load(m, path, &cap, gv, pv, &err)) return cli_lib_fail(cmd, &err);
    return 0;
}

void g2p_models_free(g2p_models *e) {
    for (int k = 0; k < e->M; k++) attend_model_free(e->ms[k]);
    attend_vocab_free(e->gv);
    attend_vocab_free(e->pv);
    free(e->list);
    memset(e, 0, sizeof *e);
}

int g2p_models_open(const char *cmd, const char *spec, g2p_models *e) {
    memset(e, 0, sizeof *e);
    if (spec && strchr(spec, ',')) {
        if (!(e->list = strdup(spec))) {
            cli_oom(cmd, "the model list");
            return 1;
        }
        for (char *tok = e->list, *next; tok; tok = next) {
            next = strchr(tok, ',');
            if (next) *next++ = '\0';
            if (!*tok || e->M == CLI_ENSEMBLE_MAX) {
                int empty = !*tok;
                e->M = 0;
                g2p_models_free(e);
                return cli_usage_error(cmd, empty ? "--model %s: an empty path in the list"
                                                  : "--model %s: more than %d models",
                                       spec, CLI_ENSEMBLE_MAX);
            }
            e->paths[e->M++] = tok;
        }
    } else {
        const char *path = g2p_find_model(cmd, spec, e->found, sizeof e->found);
        if (!path) return 1;
        e->paths[e->M++] = path;
    }
    /* each member at batch 1: its trained lengths, and the ensemble check */
    int rc = 0, M = e->M;
    e->M = 0; /* no model handle held yet */
    attend_model *m = NULL;
    if ((rc = g2p_load_model(cmd, e->paths[0], 1, 0, 0, &m, &e->gv, &e->pv))) goto fail;
    e->cfg = *attend_model_get_config(m);
    attend_model_free(m);
    cli_member first = {e->paths[0], e->cfg, e->gv, e->pv, ATTEND_TOKENIZE_CHAR};
    for (int k = 1; rc == 0 && k < M; k++) {
        cli_member b = {e->paths[k], {0}, NULL, NULL, ATTEND_TOKENIZE_CHAR};
        attend_model *mk = NULL;
        if ((rc = g2p_load_model(cmd, e->paths[k], 1, 0, 0, &mk, &b.sv, &b.tv))) break;
        b.cfg = *attend_model_get_config(mk);
        attend_model_free(mk);
        rc = cli_ensemble_check(cmd, &first, &b, k + 1);
        if (b.cfg.max_src_len > e->cfg.max_src_len) e->cfg.max_src_len = b.cfg.max_src_len;
        if (b.cfg.max_tgt_len > e->cfg.max_tgt_len) e->cfg.max_tgt_len = b.cfg.max_tgt_len;
        attend_vocab_free(b.sv);
        attend_vocab_free(b.tv);
    }
    if (rc) goto fail;
    e->M = M;
    return 0;
fail:
    g2p_models_free(e);
    return rc;
}

int g2p_models_load(const char *cmd, g2p_models *e, int batch, int max_src, int max_tgt) {
    for (int k = 0; k < e->M; k++) {
        attend_vocab *gk = NULL, *pk = NULL; /* checked equal by g2p_models_open */
        int rc = g2p_load_model(cmd, e->paths[k], batch, max_src, max_tgt, &e->ms[k], &gk, &pk);
        attend_vocab_free(gk);
        attend_vocab_free(pk);
        if (rc) return rc;
    }
    return 0;
}

