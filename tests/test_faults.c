/*
 * test_faults.c — numerical faults and failing disks in training (issue 7,
 * docs/RELIABILITY.md): a non-finite loss or gradient skips the update and is
 * counted; attend_trainer_set_max_nonfinite stops a run after N in a row;
 * checkpoints and model files with NaN/Inf weights or moments are refused
 * (nothing written, the previous file untouched); a write that fails half-way
 * (a file-size limit standing in for a full disk) keeps the previous
 * checkpoint byte for byte and leaves no temporary file. The kill -9 test of
 * the command is tests/cli/crash_test.sh.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"
#include "../fuzz/fuzz_setup.h"

static char g_dir[256];

static const char *tmp_path(const char *name) {
    static char buf[4][600];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static unsigned char *read_bytes(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(len > 0 ? (size_t)len : 1);
    *n = fread(p, 1, (size_t)len, f);
    fclose(f);
    return p;
}

static int count_tmp_files(void) {
    DIR *d = opendir(g_dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

/* path holds exactly want [n] bytes */
static int same_file(const char *path, const unsigned char *want, size_t n) {
    size_t m;
    unsigned char *p = read_bytes(path, &m);
    int same = p && m == n && !memcmp(p, want, n);
    free(p);
    return same;
}

static int setup(fuzz_setup *s, attend_trainer **tr) {
    attend_error err;
    if (fuzz_setup_make(s, &err) || fuzz_setup_trainer(s, tr, &err)) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    return 1;
}

static float *weight(attend_model *m, const char *name, int i) {
    attend_model_tensor t;
    return attend_model_tensor_find(m, name, &t, NULL) == ATTEND_OK ? &t.data[i] : NULL;
}

/* A NaN weight makes every loss non-finite: each step is skipped (no update,
 * counted); with a limit of 3 the third in a row is an error naming the steps;
 * a good step resets the run. */
static void test_max_nonfinite(void) {
    fuzz_setup s;
    attend_trainer *tr = NULL;
    if (!setup(&s, &tr)) return;
    attend_error err;
    EXPECT(attend_trainer_set_max_nonfinite(tr, -1, &err) == ATTEND_ERR_ARG, "negative limit: %s", err.msg);
    EXPECT(attend_trainer_set_max_nonfinite(tr, 3, &err) == ATTEND_OK, "%s", err.msg);
    attend_step_report r;
    EXPECT(attend_trainer_step(tr, &r, &err) == ATTEND_OK && !r.skipped, "a good step: %s", err.msg);
    float *w = weight(s.model, "out.bias", 2), saved = *w;
    *w = NAN;
    size_t n = attend_model_param_count(s.model);
    attend_real *before = malloc(n * sizeof *before);
    memcpy(before, attend_model_params(s.model), n * sizeof *before);
    for (int k = 1; k <= 3; k++) {
        attend_status st = attend_trainer_step(tr, &r, &err);
        EXPECT(r.skipped == 1 && !isfinite(r.tf.loss) && isnan(r.opt.grad_norm), "step %ld: skipped %d loss %g", r.step,
               r.skipped, r.tf.loss);
        EXPECT(attend_trainer_nonfinite_run(tr) == k, "run %ld after %d", attend_trainer_nonfinite_run(tr), k);
        if (k < 3) EXPECT(st == ATTEND_OK, "step %d: %s", k, err.msg);
        else {
            printf("  %s\n", err.msg);
            EXPECT(st == ATTEND_ERR_NONFINITE && strstr(err.msg, "3 non-finite steps in a row (steps 2-4;") &&
                       strstr(err.msg, "the weights are those of step 1"),
                   "third in a row: %s %s", attend_status_name(st), err.msg);
        }
    }
    EXPECT(!memcmp(before, attend_model_params(s.model), n * sizeof *before), "a skipped step changed the weights");
    EXPECT(attend_trainer_steps(tr) == 4 && attend_trainer_skipped(tr) == 3, "steps %ld skipped %ld",
           attend_trainer_steps(tr), attend_trainer_skipped(tr));
    *w = saved;
    EXPECT(attend_trainer_step(tr, &r, &err) == ATTEND_OK && !r.skipped && attend_trainer_nonfinite_run(tr) == 0,
           "a good step after the run: %s", err.msg);
    /* no limit: the same fault goes on being skipped */
    EXPECT(attend_trainer_set_max_nonfinite(tr, 0, &err) == ATTEND_OK, "%s", err.msg);
    *w = INFINITY;
    for (int k = 0; k < 5; k++) EXPECT(attend_trainer_step(tr, &r, &err) == ATTEND_OK && r.skipped, "unlimited %d", k);
    EXPECT(attend_trainer_nonfinite_run(tr) == 5, "run %ld", attend_trainer_nonfinite_run(tr));
    *w = saved;
    free(before);
    attend_trainer_free(tr);
    fuzz_setup_free(&s);
}

/* Writers refuse non-finite state: nothing is written and the previous file stays. */
static void test_save_refuses_nonfinite(void) {
    fuzz_setup s;
    attend_trainer *tr = NULL;
    if (!setup(&s, &tr)) return;
    attend_error err;
    const char *ck = tmp_path("ck.safetensors"), *mf = tmp_path("model.safetensors");
    attend_trainer_step(tr, NULL, &err);
    EXPECT(attend_trainer_save(tr, ck, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_save(s.model, mf, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    size_t nck, nmf;
    unsigned char *ck0 = read_bytes(ck, &nck), *mf0 = read_bytes(mf, &nmf);
    float *w = weight(s.model, "decoder.weight_hh", 7), saved = *w;
    *w = NAN;
    attend_status st = attend_trainer_save(tr, ck, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &err);
    printf("  %s\n", err.msg);
    EXPECT(st == ATTEND_ERR_NONFINITE && strstr(err.msg, "tensor 'decoder.weight_hh' element 7 is nan"),
           "checkpoint with a NaN weight: %s %s", attend_status_name(st), err.msg);
    *w = -INFINITY;
    st = attend_model_save(s.model, mf, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &err);
    EXPECT(st == ATTEND_ERR_NONFINITE && strstr(err.msg, "element 7 is -inf"), "model with -Inf: %s", err.msg);
    *w = saved;
    EXPECT(same_file(ck, ck0, nck) && same_file(mf, mf0, nmf), "a refused save changed the previous file");
    EXPECT(count_tmp_files() == 0, "a refused save left a temporary file");
    free(ck0);
    free(mf0);
    attend_trainer_free(tr);
    fuzz_setup_free(&s);
}

/* A full disk half-way through a checkpoint: RLIMIT_FSIZE below the file's
 * size makes write() fail with EFBIG (SIGXFSZ ignored), as ENOSPC would. */
static void test_full_disk_keeps_previous(void) {
    fuzz_setup s;
    attend_trainer *tr = NULL;
    if (!setup(&s, &tr)) return;
    attend_error err;
    const char *ck = tmp_path("disk.safetensors");
    attend_trainer_step(tr, NULL, &err);
    EXPECT(attend_trainer_save(tr, ck, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    size_t n;
    unsigned char *before = read_bytes(ck, &n);
    attend_trainer_step(tr, NULL, &err);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)(n / 2);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    int limited = setrlimit(RLIMIT_FSIZE, &lim) == 0;
    attend_status st = attend_trainer_save(tr, ck, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    EXPECT(limited, "could not set a file-size limit");
    printf("  %s: %s\n", attend_status_name(st), err.msg);
    EXPECT(st == ATTEND_ERR_IO && strstr(err.msg, "cannot write") && strstr(err.msg, ".tmp.") &&
               strstr(err.msg, "File too large"),
           "%s: %s", attend_status_name(st), err.msg);
    EXPECT(same_file(ck, before, n), "the previous checkpoint changed");
    EXPECT(count_tmp_files() == 0, "the temporary file was left");
    /* and it still resumes */
    attend_trainer *tr2 = NULL;
    EXPECT(fuzz_setup_trainer(&s, &tr2, &err) == ATTEND_OK && attend_trainer_resume(tr2, ck, &err) == ATTEND_OK &&
               attend_trainer_steps(tr2) == 1,
           "resume from the kept checkpoint: %s", err.msg);
    attend_trainer_free(tr2);
    free(before);
    attend_trainer_free(tr);
    fuzz_setup_free(&s);
}

int main(void) {
    const char *t = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/attend-test-faults-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(g_dir)) return 1;
    RUN(test_max_nonfinite);
    RUN(test_save_refuses_nonfinite);
    RUN(test_full_disk_keeps_previous);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return harness_summary();
}
