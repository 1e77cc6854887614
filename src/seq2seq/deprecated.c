/*
 * deprecated.c — the old names of the public API, each a thin wrapper of the
 * function that replaced it (include/attend/seq2seq.h marks them): the
 * forward with options set on the model, greedy and beam search of one model
 * or an ensemble (attend_decode), resuming without or with a fingerprint
 * check (attend_trainer_restore).
 */
#include <string.h>

#include "seq2seq/decode.h"
#include "seq2seq/model.h"
#include "seq2seq/search.h"

attend_status attend_model_forward(attend_model *m, const attend_batch *b, attend_tf_stats *stats,
                                   attend_error *err) {
    CHECK(m && b, err, ATTEND_ERR_NULL, "attend_model_forward: %s is NULL", !m ? "model" : "batch");
    at_run run;
    memset(&run, 0, sizeof run);
    run.o = m->defaults; /* the deprecated setters' options */
    return at_model_forward(m, b, &run, stats, err);
}

static attend_decode_options greedy_options(int max_len) {
    attend_decode_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.max_len = max_len;
    return o;
}

static attend_decode_options beam_options(int beam, int nbest, int max_len, double alpha, double coverage_penalty) {
    attend_decode_options o = greedy_options(max_len);
    o.beam = beam;
    o.nbest = nbest;
    o.alpha = alpha;
    o.coverage_penalty = coverage_penalty;
    return o;
}

attend_status attend_model_greedy(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S,
                                  int max_len, int32_t *out, int32_t *out_len, attend_real *align, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_greedy: model is NULL");
    attend_decode_options o = greedy_options(max_len);
    return at_decode(&m, 1, src, src_len, N, S, &o, out, out_len, NULL, align, NULL, "attend_model_greedy", err);
}

attend_status attend_model_beam(attend_model *m, const int32_t *src, int S, int beam, int nbest, int max_len,
                                double alpha, int32_t *out, int32_t *out_len, double *score, attend_real *align,
                                int *n_out, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_beam: model is NULL");
    attend_decode_options o = beam_options(beam, nbest, max_len, alpha, 0);
    return at_decode(&m, 1, src, NULL, 1, S, &o, out, out_len, score, align, n_out, "attend_model_beam", err);
}

attend_status attend_model_beam_opts(attend_model *m, const int32_t *src, int S, int beam, int nbest, int max_len,
                                     const attend_beam_options *bo, int32_t *out, int32_t *out_len, double *score,
                                     attend_real *align, int *n_out, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_beam: model is NULL");
    attend_decode_options o = beam_options(beam, nbest, max_len, bo ? bo->alpha : 0, bo ? bo->coverage_penalty : 0);
    return at_decode(&m, 1, src, NULL, 1, S, &o, out, out_len, score, align, n_out, "attend_model_beam", err);
}

attend_status attend_ensemble_greedy(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len,
                                     int N, int S, int max_len, int32_t *out, int32_t *out_len, attend_real *align,
                                     attend_error *err) {
    attend_decode_options o = greedy_options(max_len);
    return at_decode(models, M, src, src_len, N, S, &o, out, out_len, NULL, align, NULL, "attend_ensemble_greedy", err);
}

attend_status attend_ensemble_beam(attend_model *const *models, int M, const int32_t *src, int S, int beam, int nbest,
                                   int max_len, double alpha, int32_t *out, int32_t *out_len, double *score,
                                   attend_real *align, int *n_out, attend_error *err) {
    attend_decode_options o = beam_options(beam, nbest, max_len, alpha, 0);
    return at_decode(models, M, src, NULL, 1, S, &o, out, out_len, score, align, n_out, "attend_ensemble_beam", err);
}
