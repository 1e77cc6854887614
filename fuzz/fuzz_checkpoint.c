/*
 * fuzz_checkpoint.c — attend_trainer_resume_checked on hostile checkpoints:
 * the model file checks plus the training metadata ("attend.train" JSON, its
 * fingerprint of the data and options, the vocabularies), the optimizer
 * tensors (moments, state, order) and their values. A fixed small setup (the
 * same as fuzz/make_corpus.c's, so the seed checkpoints fit it) is made once;
 * each input is resumed into a fresh trainer. Invariants: a refused
 * checkpoint changes nothing (weights, step count, the caller's state); an
 * accepted one restores finite weights and a caller's state of at most 4096
 * bytes, and training two more steps from it works.
 */
#include "fuzz.h"

#include <math.h>

#include "attend.h"
#include "fuzz_setup.h"

static fuzz_setup g_setup;
static int g_ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    attend_error err;
    if (!g_ready) {
        FUZZ_CHECK(fuzz_setup_make(&g_setup, &err) == ATTEND_OK, "setup: %s", err.msg);
        g_ready = 1;
    }
    attend_trainer *tr = NULL;
    FUZZ_CHECK(fuzz_setup_trainer(&g_setup, &tr, &err) == ATTEND_OK, "trainer: %s", err.msg);
    attend_model *m = g_setup.model;
    size_t n = attend_model_param_count(m);
    attend_real *before = malloc(n * sizeof *before);
    memcpy(before, attend_model_params(m), n * sizeof *before);

    const char *path = fuzz_write_file(data, size);
    /* the checked resume: vocabularies compared too; odd-length inputs take
     * the --resume-anyway path, so the note and resume-despite-differences
     * run as well */
    attend_resume_options ro = {g_setup.vocab, g_setup.vocab, ATTEND_TOKENIZE_CHAR, (int)(size & 1)};
    attend_error note;
    attend_status st = attend_trainer_resume_checked(tr, path, &ro, &note, &err);
    if (st == ATTEND_OK && note.status != ATTEND_OK) {
        fuzz_check_message(note.msg, NULL);
        FUZZ_CHECK(strstr(note.msg, path) != NULL, "the note does not name the file: %s", note.msg);
        FUZZ_CHECK(note.status == ATTEND_ERR_FORMAT || (ro.anyway && note.status == ATTEND_ERR_ARG),
                   "note status %s: %s", attend_status_name(note.status), note.msg);
    }
    if (st != ATTEND_OK) {
        FUZZ_CHECK(st == ATTEND_ERR_FORMAT || st == ATTEND_ERR_ARG || st == ATTEND_ERR_ALLOC,
                   "status %s: %s", attend_status_name(st), err.msg);
        fuzz_check_message(err.msg, NULL);
        FUZZ_CHECK(strstr(err.msg, path) != NULL, "the message does not name the file: %s", err.msg);
        FUZZ_CHECK(!memcmp(before, attend_model_params(m), n * sizeof *before), "a refused resume changed the weights");
        FUZZ_CHECK(attend_trainer_steps(tr) == 0 && attend_trainer_skipped(tr) == 0, "a refused resume changed the step");
        FUZZ_CHECK(attend_trainer_caller_state(tr) == NULL, "a refused resume set the caller's state");
    } else {
        const attend_real *w = attend_model_params(m);
        for (size_t i = 0; i < n; i++) FUZZ_CHECK(isfinite(w[i]), "weight %zu is not finite after resume", i);
        const char *cs = attend_trainer_caller_state(tr); /* metadata attend.caller, as stored */
        FUZZ_CHECK(!cs || strlen(cs) <= 4096, "a caller's state of %zu bytes was accepted", cs ? strlen(cs) : 0);
        long s0 = attend_trainer_steps(tr);
        FUZZ_CHECK(s0 >= 0 && attend_trainer_skipped(tr) >= 0 && attend_trainer_skipped(tr) <= s0,
                   "resumed at step %ld with %ld skipped", s0, attend_trainer_skipped(tr));
        for (int k = 0; k < 2; k++) {
            attend_step_report r;
            st = attend_trainer_step(tr, &r, &err);
            FUZZ_CHECK(st == ATTEND_OK || st == ATTEND_ERR_NONFINITE, "step after resume: %s", err.msg);
        }
    }
    attend_trainer_free(tr);
    /* the next input starts from the same weights */
    memcpy(attend_model_params(m), before, n * sizeof *before);
    free(before);
    return 0;
}
