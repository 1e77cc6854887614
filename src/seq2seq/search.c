/*
 * search.c — the public decoding entry (attend_decode): greedy decoding of N
 * sources (decode.c) or beam search of one (beam.c), by one model or an
 * ensemble, with one options struct (attend_decode_options).
 */
#include <math.h>
#include <string.h>

#include "seq2seq/beam.h"
#include "seq2seq/decode.h"
#include "seq2seq/search.h"


attend_status at_decode(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len, int N,
                            int S, const attend_decode_options *o, int32_t *out, int32_t *out_len, double *score,
                            attend_real *align, int *n_out, const char *who, attend_error *err) {
    if (o->beam == 0) {
        CHECK(src && src_len && out && out_len, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
              !src ? "src [N,S]" : !src_len ? "src_len [N]" : !out ? "out [N,max_len]" : "out_len [N]");
        TRY(at_decode_check(models, M, src, src_len, N, S, 0, o->max_len, o, who, err));
        TRY(at_decode_check_head(models, M, o->align_head, who, err));
        TRY(at_greedy(models, M, src, src_len, N, S, o->max_len, o->align_head, out, out_len, align, who, err));
        if (n_out) *n_out = N;
        return ATTEND_OK;
    }
    CHECK(src && out && out_len && score && n_out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !src ? "src [S]" : !out ? "out [nbest,max_len]" : !out_len ? "out_len [nbest]" : !score ? "score [nbest]"
                                                                                               : "n_out");
    CHECK(o->beam >= 1 && o->beam <= 64, err, ATTEND_ERR_ARG, "%s: beam width %d outside [1,64]", who, o->beam);
    CHECK(o->nbest >= 1 && o->nbest <= o->beam, err, ATTEND_ERR_ARG, "%s: nbest=%d outside [1, beam=%d]", who, o->nbest,
          o->beam);
    CHECK(isfinite(o->alpha) && o->alpha >= 0, err, ATTEND_ERR_ARG, "%s: length-normalisation alpha=%g must be >= 0",
          who, o->alpha);
    int32_t len1 = S;
    TRY(at_decode_check(models, M, src, src_len ? src_len : &len1, 1, S, o->beam, o->max_len, o, who, err));
    TRY(at_decode_check_head(models, M, o->align_head, who, err));
    return at_beam(models, M, src, S, o, out, out_len, score, align, n_out, who, err);
}

attend_status attend_decode(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len, int N,
                            int S, const attend_decode_options *o, int32_t *out, int32_t *out_len, double *score,
                            attend_real *align, int *n_out, attend_error *err) {
    const char *who = "attend_decode";
    CHECK(o, err, ATTEND_ERR_NULL, "%s: options are NULL", who);
    attend_decode_options d;
    TRY(at_options_read(&d, sizeof d, o, o->size, "attend_decode_options", who, err));
    CHECK(d.beam >= 0, err, ATTEND_ERR_ARG, "%s: beam=%d (0: greedy, K >= 1: beam search)", who, d.beam);
    if (d.beam > 0) {
        if (d.nbest == 0) d.nbest = 1;
        CHECK(N == 1, err, ATTEND_ERR_ARG, "%s: beam search decodes one source at a time (N=%d)", who, N);
        CHECK(!src_len || src_len[0] == S, err, ATTEND_ERR_ARG,
              "%s: beam search reads the whole source: src_len[0]=%d, S=%d", who, src_len ? (int)src_len[0] : S, S);
    } else { /* the extensions check their own beam options (at_ext_check_decode) */
        CHECK(d.nbest <= 1 && d.alpha == 0, err, ATTEND_ERR_ARG,
              "%s: nbest=%d, alpha=%g: options of beam search (beam=0 is greedy)", who, d.nbest, d.alpha);
    }
    return at_decode(models, M, src, src_len, N, S, &d, out, out_len, score, align, n_out, who, err);
}
