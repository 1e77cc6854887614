/*
 * g2p_files.c — what the files of `attend g2p` share (g2p_files.h): finding
 * the model and the dictionary, reading a dictionary, loading a model or the
 * members of an ensemble.
 */
#define _POSIX_C_SOURCE 200809L
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

/* dir of the running executable + "/../" + rel into buf; 0 when unknown. */
static int beside_exe(char *buf, size_t cap, const char *rel) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = '\0';
    return snprintf(buf, cap, "%s/../%s", exe, rel) < (int)cap;
}

/*
 * The file to use: the option, else the environment variable, else the
 * source tree's copy (compile definition ATTEND_G2P_SOURCE_DIR from CMakeLists.txt), else
 * next to the executable (../rel_build for a build directory in the source
 * tree, ../rel_install for an installed one). NULL with a message when none.
 */
static const char *find_file(const char *cmd, const char *given, const char *env, const char *compiled,
                             const char *rel_build, const char *rel_install, const char *what, char *buf,
                             size_t cap) {
    if (given) return given;
    const char *e = getenv(env);
    if (e && *e) return e;
    if (compiled && g2p_file_exists(compiled)) return compiled;
    if (beside_exe(buf, cap, rel_build) && g2p_file_exists(buf)) return buf;
    if (beside_exe(buf, cap, rel_install) && g2p_file_exists(buf)) return buf;
    fprintf(stderr, "attend %s: no %s found: give %s, set %s, or %s\n", cmd, what,
            !strcmp(what, "model") ? "--model PATH" : "--dict PATH", env,
            !strcmp(what, "model") ? "train one with `attend g2p train`"
                                   : "fetch CMUdict with tools/get_cmudict.sh");
    return NULL;
}

#ifdef ATTEND_G2P_SOURCE_DIR
#define COMPILED_MODEL ATTEND_G2P_SOURCE_DIR "/models/" G2P_MODEL_NAME
#define COMPILED_DICT ATTEND_G2P_SOURCE_DIR "/data/g2p/" G2P_DICT_NAME
#else
#define COMPILED_MODEL NULL
#define COMPILED_DICT NULL
#endif

const char *g2p_find_model(const char *cmd, const char *given, char *buf, size_t cap) {
    return find_file(cmd, given, "ATTEND_G2P_MODEL", COMPILED_MODEL, "models/" G2P_MODEL_NAME,
                     "share/attend/" G2P_MODEL_NAME, "model", buf, cap);
}

const char *g2p_find_dict(const char *cmd, const char *given, char *buf, size_t cap) {
    return find_file(cmd, given, "ATTEND_G2P_DICT", COMPILED_DICT, "data/g2p/" G2P_DICT_NAME,
                     "share/attend/" G2P_DICT_NAME, "dictionary", buf, cap);
}

int g2p_read_dict(const char *cmd, const char *path, int skip, int keep_stress, attend_g2p_dict **d) {
    attend_error err = {0};
    attend_g2p_options o = {keep_stress, skip};
    if (attend_g2p_dict_read(d, path, &o, &err)) return cli_lib_fail(cmd, &err);
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(*d, &in);
    if (in.skipped) fprintf(stderr, "attend %s: skipped %d odd line%s (first: %s)\n", cmd, in.skipped,
                            in.skipped == 1 ? "" : "s", in.first_skipped);
    if (in.words == 0) {
        fprintf(stderr, "attend %s: %s: no entries\n", cmd, path);
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
            fprintf(stderr, "attend %s: out of memory\n", cmd);
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

