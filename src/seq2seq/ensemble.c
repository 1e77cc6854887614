/*
 * ensemble.c — decoding with an ensemble of M models (greedy and beam) and
 * n-best rescoring with another model (issue 14 part 6).
 *
 * The ensemble's step distribution is the mean of the models' log-softmax
 * outputs, log p(v) = (1/M) Σ_k log softmax(z_k)(v), as OpenNMT-py
 * (onmt/translate: EnsembleDecoder averages log_probs) and Marian (scorer
 * weights 1/M over log-softmax) do; it is not renormalised. Each model keeps
 * its own encoder output, decoder state and attention: the hypotheses' rows
 * move in every model at once (at_model_reorder with the same parents), and
 * the alignments come out per model.
 *
 * Dimension letters: M models, N rows (greedy), K beam width, S source
 * length, L maximum output length, V target vocabulary (model_internal.h has
 * the full table). The models are reached through decode.c's inference
 * interface only, as beam.c does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/beam_core.h"
#include "seq2seq/model_internal.h"

#define AT_ENSEMBLE_MAX 64

/* The checks every ensemble call makes: M models, none NULL, none a pointer
 * decoder, one target vocabulary size; src ids and lengths valid for each;
 * rows <= each max_batch, max_len within each Tcap. */
static attend_status check_models(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len,
                                  int N, int S, int rows, int max_len, const char *who, attend_error *err) {
    CHECK(models, err, ATTEND_ERR_NULL, "%s: models is NULL", who);
    CHECK(M >= 1 && M <= AT_ENSEMBLE_MAX, err, ATTEND_ERR_ARG, "%s: %d models, outside [1,%d]", who, M,
          AT_ENSEMBLE_MAX);
    for (int k = 0; k < M; k++) {
        const attend_model *m = models[k];
        CHECK(m, err, ATTEND_ERR_NULL, "%s: model %d is NULL", who, k + 1);
        CHECK(!at_model_points(m), err, ATTEND_ERR_ARG,
              "%s: model %d is a pointer model (%s decoder): an ensemble averages distributions over one target "
              "vocabulary", who, k + 1, attend_decoder_name(m->cfg.decoder));
        CHECK(!m->cfg.copy, err, ATTEND_ERR_ARG,
              "%s: model %d copies (config copy): its output space is each source's extended vocabulary, which "
              "an ensemble does not average", who, k + 1);
        CHECK(m->cfg.tgt_vocab == models[0]->cfg.tgt_vocab, err, ATTEND_ERR_ARG,
              "%s: model %d has a target vocabulary of %d ids, model 1 has %d", who, k + 1, m->cfg.tgt_vocab,
              models[0]->cfg.tgt_vocab);
        CHECK(rows <= m->cfg.max_batch, err, ATTEND_ERR_CAPACITY, "%s: model %d: %d rows exceed its max_batch=%d",
              who, k + 1, rows, m->cfg.max_batch);
        CHECK(max_len >= 1 && max_len <= m->Tcap, err, ATTEND_ERR_CAPACITY,
              "%s: model %d: max_len=%d outside [1, max_tgt_len+1 = %d]", who, k + 1, max_len, m->Tcap);
        for (int j = 0; j < k; j++)
            CHECK(models[j] != m, err, ATTEND_ERR_ARG,
                  "%s: models %d and %d are the same handle (each member needs its own activations: "
                  "attend_model_clone)", who, j + 1, k + 1);
        TRY(at_model_check_source(m, src, src_len, N, S, who, err));
    }
    return ATTEND_OK;
}

/* After every model ran step t for n rows: acc [n,V] = mean over models of
 * the step's logits z (zbar) and lse [n] = mean of their log-sum-exp, so
 * log p = zbar - lse (for one model: exactly z - lse, as beam.c computes it).
 * A value that is not finite in any model stays not finite. */
static void mean_logp(attend_model *const *models, int M, int t, int n, int S, double *acc, double *lse) {
    int V = models[0]->cfg.tgt_vocab;
    memset(acc, 0, (size_t)n * V * sizeof *acc);
    memset(lse, 0, (size_t)n * sizeof *lse);
    for (int k = 0; k < M; k++) {
        int W, is_logp;
        const attend_real *dist = at_model_step_dist(models[k], t, n, S, &W, &is_logp);
        for (int i = 0; i < n; i++) {
            const attend_real *z = dist + (size_t)i * V;
            double l = 0;
            if (!is_logp) {
                double mx = z[0], sum = 0;
                for (int v = 1; v < V; v++)
                    if (z[v] > mx) mx = z[v];
                for (int v = 0; v < V; v++) sum += exp((double)z[v] - mx);
                l = mx + log(sum);
            }
            for (int v = 0; v < V; v++) acc[(size_t)i * V + v] += (double)z[v];
            lse[i] += l;
        }
    }
    if (M > 1)
        for (int i = 0; i < n; i++) {
            for (int v = 0; v < V; v++) acc[(size_t)i * V + v] /= M;
            lse[i] /= M;
        }
}

/* ------------------------------------------------------------------ greedy */

attend_status attend_ensemble_greedy(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len,
                                     int N, int S, int max_len, int32_t *out, int32_t *out_len, attend_real *align,
                                     attend_error *err) {
    const char *who = "attend_ensemble_greedy";
    CHECK(src && src_len && out && out_len, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !src ? "src [N,S]" : !src_len ? "src_len [N]" : !out ? "out [N,max_len]" : "out_len [N]");
    TRY(check_models(models, M, src, src_len, N, S, N, max_len, who, err));
    int V = models[0]->cfg.tgt_vocab;
    size_t bytes = (size_t)N * V * sizeof(double) + (size_t)N * sizeof(double) + (size_t)N * sizeof(int32_t);
    char *mem = malloc(bytes);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    double *acc = (double *)(void *)mem;           /* [N,V] */
    double *lse = acc + (size_t)N * V;             /* [N] */
    int32_t *y = (int32_t *)(void *)(lse + N);     /* [N] previous tokens */
    for (int k = 0; k < M; k++) {
        at_model_begin_infer(models[k]);
        at_model_encode(models[k], src, src_len, N, S);
    }
    for (int n = 0; n < N; n++) {
        y[n] = ATTEND_BOS;
        out_len[n] = -1; /* still running */
        for (int t = 0; t < max_len; t++) out[(size_t)n * max_len + t] = ATTEND_PAD;
    }
    if (align) memset(align, 0, (size_t)M * N * max_len * S * sizeof *align);
    int running = N;
    for (int t = 0; t < max_len && running > 0; t++) {
        for (int k = 0; k < M; k++) {
            attend_model *m = models[k];
            uint8_t *active = m->active + (size_t)t * N;
            for (int n = 0; n < N; n++) active[n] = out_len[n] < 0;
            at_model_step(m, t, N, S, y, src, active, m->acts.step_feat, (size_t)m->F, 0);
        }
        mean_logp(models, M, t, N, S, acc, lse);
        for (int n = 0; n < N; n++) {
            if (out_len[n] >= 0) continue;
            const double *row = acc + (size_t)n * V;
            int best = 0;
            for (int v = 1; v < V; v++)
                if (row[v] > row[best]) best = v; /* argmax of zbar - lse: lse is one number per row */
            if (best == ATTEND_EOS) {
                out_len[n] = t;
                running--;
                continue;
            }
            out[(size_t)n * max_len + t] = best;
            if (align)
                for (int k = 0; k < M; k++)
                    if (at_model_attentive(models[k]))
                        memcpy(align + (((size_t)k * N + n) * max_len + t) * S,
                               models[k]->acts.weights + ((size_t)t * N + n) * S, (size_t)S * sizeof *align);
            y[n] = best;
        }
    }
    for (int n = 0; n < N; n++)
        if (out_len[n] < 0) out_len[n] = max_len;
    for (int k = 0; k < M; k++) at_model_end_infer(models[k]);
    free(mem);
    return at_ok(err);
}

/* -------------------------------------------------------------------- beam */

attend_status attend_ensemble_beam(attend_model *const *models, int M, const int32_t *src, int S, int beam,
                                   int nbest, int max_len, double alpha, int32_t *out, int32_t *out_len,
                                   double *score, attend_real *align, int *n_out, attend_error *err) {
    const char *who = "attend_ensemble_beam";
    CHECK(src && out && out_len && score && n_out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !src ? "src [S]" : !out ? "out [nbest,max_len]" : !out_len ? "out_len [nbest]"
                                                           : !score ? "score [nbest]" : "n_out");
    CHECK(beam >= 1 && beam <= 64, err, ATTEND_ERR_ARG, "%s: beam width %d outside [1,64]", who, beam);
    CHECK(nbest >= 1 && nbest <= beam, err, ATTEND_ERR_ARG, "%s: nbest=%d outside [1, beam=%d]", who, nbest, beam);
    CHECK(isfinite(alpha) && alpha >= 0, err, ATTEND_ERR_ARG, "%s: length-normalisation alpha=%g must be >= 0", who,
          alpha);
    int32_t len1 = S;
    TRY(check_models(models, M, src, &len1, 1, S, beam, max_len, who, err));
    int K = beam, L = max_len, V = models[0]->cfg.tgt_vocab, fin_cap = 3 * K;
    /* one allocation: per model live align [K,L,S] x2 and finished align
     * [fin_cap,L,S]; live tokens [K,L] x2, finished tokens [fin_cap,L]; the
     * step's mean [K,V] and lse [K]; scores, candidates, parents, inputs */
    size_t n_al = (size_t)M * K * L * S, n_fal = (size_t)M * fin_cap * L * S;
    size_t n_tok = (size_t)K * L, n_ftok = (size_t)fin_cap * L;
    size_t bytes = ((size_t)K * V + 2 * (size_t)K) * sizeof(double) + (size_t)2 * K * sizeof(at_beam_candidate) +
                   (size_t)fin_cap * sizeof(at_beam_finished) + (2 * n_al + n_fal) * sizeof(attend_real) +
                   (2 * n_tok + n_ftok + (size_t)K) * sizeof(int32_t) + (size_t)K * sizeof(int);
    char *mem = calloc(1, bytes);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes of beam state", who, bytes);
    char *cur = mem;
#define TAKE(ptr, type, count) (ptr = (type *)(void *)cur, cur += (count) * sizeof(type))
    double *acc, *lse, *hscore;
    at_beam_candidate *cand;
    at_beam_finished *fin;
    attend_real *hal, *hal2, *fal;
    int32_t *htok, *htok2, *ftok, *y;
    int *parent;
    TAKE(acc, double, (size_t)K * V);
    TAKE(lse, double, K);
    TAKE(hscore, double, K);
    TAKE(cand, at_beam_candidate, 2 * K);
    TAKE(fin, at_beam_finished, fin_cap);
    TAKE(hal, attend_real, n_al);
    TAKE(hal2, attend_real, n_al);
    TAKE(fal, attend_real, n_fal);
    TAKE(htok, int32_t, n_tok);
    TAKE(htok2, int32_t, n_tok);
    TAKE(ftok, int32_t, n_ftok);
    TAKE(y, int32_t, K);
    TAKE(parent, int, K);
#undef TAKE
    /* alignment of model k, hypothesis h, step t in a store of `rows` hypotheses */
#define AL(base, rows, k, h, t) ((base) + ((((size_t)(k) * (rows) + (h)) * L + (t)) * S))
    for (int k = 0; k < M; k++) {
        at_model_begin_infer(models[k]);
        at_model_encode(models[k], src, &len1, 1, S);
        at_model_replicate(models[k], K, S);
    }
    int live = 1, nfin = 0;
    hscore[0] = 0;
    y[0] = ATTEND_BOS;
    for (int t = 0; t < L && live > 0 && nfin < K; t++) {
        for (int k = 0; k < M; k++)
            at_model_step(models[k], t, live, S, y, src, NULL, models[k]->acts.step_feat, (size_t)models[k]->F, 0);
        mean_logp(models, M, t, live, S, acc, lse);
        /* best 2K (parent, token) continuations by total log-probability (as beam.c) */
        int nc = 0;
        for (int i = 0; i < live; i++) {
            const double *z = acc + (size_t)i * V;
            for (int v = 0; v < V; v++) {
                if (v == ATTEND_PAD || v == ATTEND_BOS) continue;
                if (!isfinite(z[v])) continue;
                at_beam_offer(cand, &nc, 2 * K, hscore[i] + z[v] - lse[i], i, v);
            }
        }
        int next = 0;
        for (int c = 0; c < nc && next < K; c++) {
            const at_beam_candidate *cd = &cand[c];
            if (cd->token == ATTEND_EOS) {
                if (nfin >= fin_cap) continue;
                at_beam_finished *f = &fin[nfin];
                f->logp = cd->logp;
                f->len = t;
                f->norm = cd->logp / pow((double)f->len + 1, alpha);
                f->slot = nfin;
                memcpy(ftok + (size_t)nfin * L, htok + (size_t)cd->parent * L, (size_t)L * sizeof(int32_t));
                for (int k = 0; k < M; k++)
                    memcpy(AL(fal, fin_cap, k, nfin, 0), AL(hal, K, k, cd->parent, 0),
                           (size_t)L * S * sizeof(attend_real));
                nfin++;
                continue;
            }
            memcpy(htok2 + (size_t)next * L, htok + (size_t)cd->parent * L, (size_t)L * sizeof(int32_t));
            htok2[(size_t)next * L + t] = cd->token;
            for (int k = 0; k < M; k++) {
                memcpy(AL(hal2, K, k, next, 0), AL(hal, K, k, cd->parent, 0), (size_t)L * S * sizeof(attend_real));
                if (at_model_attentive(models[k]))
                    memcpy(AL(hal2, K, k, next, t), models[k]->acts.weights + ((size_t)t * live + cd->parent) * S,
                           (size_t)S * sizeof(attend_real));
            }
            parent[next] = cd->parent;
            hscore[next] = cd->logp;
            y[next] = cd->token;
            next++;
        }
        for (int k = 0; k < M; k++) at_model_reorder(models[k], t, parent, next, live);
        int32_t *ti = htok; htok = htok2; htok2 = ti;
        attend_real *ta = hal; hal = hal2; hal2 = ta;
        live = next;
        if (t == L - 1)
            for (int i = 0; i < live && nfin < fin_cap; i++) { /* unfinished at max_len */
                at_beam_finished *f = &fin[nfin];
                f->logp = hscore[i];
                f->len = L;
                f->norm = hscore[i] / pow((double)L + 1, alpha);
                f->slot = nfin;
                memcpy(ftok + (size_t)nfin * L, htok + (size_t)i * L, (size_t)L * sizeof(int32_t));
                for (int k = 0; k < M; k++)
                    memcpy(AL(fal, fin_cap, k, nfin, 0), AL(hal, K, k, i, 0), (size_t)L * S * sizeof(attend_real));
                nfin++;
            }
    }
    qsort(fin, (size_t)nfin, sizeof *fin, at_beam_cmp_finished);
    int n = nfin < nbest ? nfin : nbest;
    for (int i = 0; i < n; i++) {
        const at_beam_finished *f = &fin[i];
        for (int t = 0; t < L; t++) out[(size_t)i * L + t] = t < f->len ? ftok[(size_t)f->slot * L + t] : ATTEND_PAD;
        out_len[i] = f->len;
        score[i] = f->norm;
    }
    if (align) /* [M,nbest,L,S]: model k's hypotheses together; rows after the end zero */
        for (int k = 0; k < M; k++)
            for (int i = 0; i < n; i++) {
                const at_beam_finished *f = &fin[i];
                attend_real *dst = align + ((size_t)k * nbest + i) * L * S;
                memcpy(dst, AL(fal, fin_cap, k, f->slot, 0), (size_t)L * S * sizeof *align);
                for (int t = f->len; t < L; t++) memset(dst + (size_t)t * S, 0, (size_t)S * sizeof *align);
            }
#undef AL
    *n_out = n;
    for (int k = 0; k < M; k++) at_model_end_infer(models[k]);
    free(mem);
    return at_ok(err);
}

/* -------------------------------------------------------------- rescoring */

attend_status attend_model_rescore(attend_model *m, const int32_t *src, int S, const int32_t *hyp,
                                   const int32_t *hyp_len, int n, int max_len, int reverse, double *score,
                                   attend_error *err) {
    const char *who = "attend_model_rescore";
    CHECK(m && src && hyp && hyp_len && score, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !hyp ? "hyp [n,max_len]" : !hyp_len ? "hyp_len [n]" : "score [n]");
    CHECK(!at_model_points(m), err, ATTEND_ERR_ARG, "%s: a pointer model scores positions, not target tokens", who);
    CHECK(n >= 0 && max_len >= 1, err, ATTEND_ERR_ARG, "%s: n=%d, max_len=%d (want n >= 0, max_len >= 1)", who, n,
          max_len);
    CHECK(reverse == 0 || reverse == 1, err, ATTEND_ERR_ARG, "%s: reverse=%d must be 0 or 1", who, reverse);
    for (int i = 0; i < n; i++)
        CHECK(hyp_len[i] >= 0 && hyp_len[i] <= max_len, err, ATTEND_ERR_ARG,
              "%s: hypothesis %d has length %d outside [0, max_len=%d]", who, i, (int)hyp_len[i], max_len);
    int32_t *rev = NULL;
    if (reverse) {
        rev = malloc((size_t)max_len * sizeof *rev);
        CHECK(rev, err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    }
    attend_status st = ATTEND_OK;
    attend_error inner = {0};
    int i = 0;
    for (; i < n; i++) {
        const int32_t *h = hyp + (size_t)i * max_len;
        int T = hyp_len[i];
        if (reverse) {
            for (int t = 0; t < T; t++) rev[t] = h[T - 1 - t];
            h = rev;
        }
        double lp = 0;
        st = attend_model_score(m, src, S, h, T, &lp, NULL, &inner);
        if (st != ATTEND_OK) break;
        score[i] = lp / (double)(T + 1);
    }
    free(rev);
    if (st != ATTEND_OK) return at_fail(err, st, "%s: hypothesis %d: %s", who, i, inner.msg);
    return at_ok(err);
}
