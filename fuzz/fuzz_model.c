/*
 * fuzz_model.c — attend_model_load on hostile model files: the safetensors
 * layer, the metadata (format, configuration JSON, vocabularies, tokenizer),
 * the configuration's bounds against the file, and every tensor's name, dtype,
 * shape and finiteness. The input is the file. Invariants: a refused file
 * returns no model and no vocabularies and a message naming the path; a loaded
 * model has a configuration that passes attend_model_config_check, vocabularies
 * of the configured sizes and finite weights, decodes one short input, and
 * saves and loads back to the same weights.
 */
#include "fuzz.h"

#include <math.h>

#include "attend.h"

static void exercise(attend_model *m, attend_vocab *sv, attend_vocab *tv, attend_tokenizer tok, const char *path) {
    const attend_model_config *c = attend_model_get_config(m);
    attend_error err;
    FUZZ_CHECK(attend_model_config_check(c, &err) == ATTEND_OK, "loaded config: %s", err.msg);
    FUZZ_CHECK(attend_vocab_size(sv) == c->src_vocab, "source vocabulary %d vs %d", attend_vocab_size(sv), c->src_vocab);
    int pointer = c->decoder == ATTEND_DECODER_POINTER;
    FUZZ_CHECK(pointer ? tv == NULL : tv != NULL && attend_vocab_size(tv) == c->tgt_vocab, "target vocabulary");
    const attend_real *w = attend_model_params(m);
    size_t n = attend_model_param_count(m);
    for (size_t i = 0; i < n; i++) FUZZ_CHECK(isfinite(w[i]), "weight %zu is not finite", i);
    /* one greedy decode of a short source */
    int32_t src[3] = {4, 4, 4}, out[8], out_len[1], src_len[1];
    src_len[0] = c->max_src_len < 3 ? c->max_src_len : 3;
    int max_len = pointer ? src_len[0] : (c->max_tgt_len < 8 ? c->max_tgt_len : 8);
    attend_status st = attend_model_greedy(m, src, src_len, 1, src_len[0], max_len, out, out_len, NULL, &err);
    FUZZ_CHECK(st == ATTEND_OK, "greedy on a loaded model: %s", err.msg);
    /* save and load back */
    char again[600];
    snprintf(again, sizeof again, "%s.again", path);
    st = attend_model_save(m, again, sv, tv, tok, &err);
    FUZZ_CHECK(st == ATTEND_OK, "saving a loaded model: %s", err.msg);
    attend_model *m2 = NULL;
    attend_model_config cap = *c; /* the capacities in use, which may be the caller's */
    st = attend_model_load(&m2, again, &cap, NULL, NULL, NULL, &err);
    FUZZ_CHECK(st == ATTEND_OK, "loading a saved model: %s", err.msg);
    FUZZ_CHECK(attend_model_param_count(m2) == n && !memcmp(attend_model_params(m2), w, n * sizeof *w),
               "weights differ after save and load");
    attend_model_free(m2);
    remove(again);
}

static void load(const char *path, const attend_model_config *cap) {
    attend_model *m = (attend_model *)(uintptr_t)1;
    attend_vocab *sv = (attend_vocab *)(uintptr_t)1, *tv = (attend_vocab *)(uintptr_t)1;
    attend_tokenizer tok = ATTEND_TOKENIZE_CHAR;
    attend_error err;
    attend_status st = attend_model_load(&m, path, cap, &sv, &tv, &tok, &err);
    if (st != ATTEND_OK) {
        FUZZ_CHECK(m == NULL && sv == NULL && tv == NULL, "refused, but something was returned");
        FUZZ_CHECK(st == ATTEND_ERR_FORMAT || st == ATTEND_ERR_CAPACITY || st == ATTEND_ERR_ALLOC,
                   "status %s: %s", attend_status_name(st), err.msg);
        fuzz_check_message(err.msg, NULL);
        FUZZ_CHECK(strstr(err.msg, path) != NULL,
                   "the message does not name the file: %s", err.msg);
        return;
    }
    exercise(m, sv, tv, tok, path);
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write_file(data, size);
    load(path, NULL); /* the file's own capacities */
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = 2;
    cap.max_src_len = 5;
    cap.max_tgt_len = 5;
    load(path, &cap); /* the caller's */
    return 0;
}
