/*
 * beam.c — the one beam search: over a list of scorers (Marian's BeamSearch
 * over scorers; one model is an ensemble of one), each step ranks the
 * hypotheses' continuations by the mean of the models' log-probabilities,
 * keeps each hypothesis's attention history in every model and reorders it
 * (and every model's decoder rows: at_model_reorder) with the hypothesis, so
 * alignments come out of beam search as they do out of greedy decoding. A
 * finished hypothesis is ranked by its log-probability / (length+1)^alpha
 * plus what the extensions add from its attention (at_ext_hyp_score; with
 * several models, from their mean attention). The decoder kind says what a
 * step's ids are (its candidates) and when a hypothesis ends (EOS, or after
 * the source's positions).
 *
 * Dimension letters: M models, K beam width, S source length, L maximum
 * output length, W a step's output width (state.h has the full table). The
 * models are reached through decode.h's interface; their arenas are only read
 * for this step's distribution and attention weights. The bookkeeping lives
 * in the first model's decoding scratch: nothing is allocated after warm-up.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/beam.h"
#include "seq2seq/beam_core.h"
#include "seq2seq/decode.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/extension.h"
#include "seq2seq/model.h"

/* the log-sum-exp of a row of logits z [W] */
static double row_lse(const attend_real *z, int W) {
    double mx = z[0], sum = 0;
    for (int v = 1; v < W; v++)
        if (z[v] > mx) mx = z[v];
    for (int v = 0; v < W; v++) sum += exp((double)z[v] - mx);
    return mx + log(sum);
}

/* What a finished hypothesis h (row h of a store of `rows` per model, L x S
 * each) gains from its attention: its first `steps` steps and, when t >= 0,
 * step t's weights of live row prow; with several models, their mean (into
 * mean [steps+1,S]). */
static double hyp_score(attend_model *const *models, int M, const attend_decode_options *o, const attend_real *store,
                        int rows, int h, int steps, int t, int prow, int live, int L, int S, attend_real *mean) {
    const attend_real *hist = store + (size_t)h * L * S, *last = NULL;
    if (M == 1) {
        if (t >= 0) last = models[0]->acts.weights + ((size_t)t * live + prow) * S;
        return at_ext_hyp_score(o, hist, steps, last, S);
    }
    for (size_t j = 0; j < (size_t)steps * S; j++) {
        double sum = 0;
        for (int k = 0; k < M; k++) sum += (double)store[((size_t)k * rows + h) * L * S + j];
        mean[j] = (attend_real)(sum / M);
    }
    if (t >= 0) {
        for (int j = 0; j < S; j++) {
            double sum = 0;
            for (int k = 0; k < M; k++) sum += (double)models[k]->acts.weights[((size_t)t * live + prow) * S + j];
            mean[(size_t)steps * S + j] = (attend_real)(sum / M);
        }
        last = mean + (size_t)steps * S;
    }
    return at_ext_hyp_score(o, mean, steps, last, S);
}

attend_status at_beam(attend_model *const *models, int M, const int32_t *src, int S, const attend_decode_options *o,
                      int32_t *out, int32_t *out_len, double *score, attend_real *align, int *n_out, const char *who,
                      attend_error *err) {
    attend_model *m0 = models[0];
    const at_decoder_ops *dec = m0->dec;
    int K = o->beam, L = o->max_len, fin_cap = 3 * K;
    double alpha = o->alpha;
    size_t W = (size_t)m0->V + (size_t)S; /* the widest a step's row can be */
    /* one block: the step's mean [K,W] and lse [K]; scores, candidates, finished; per model live
     * alignments [K,L,S] x2 and finished [fin_cap,L,S]; a mean history [L+1,S]; live tokens [K,L] x2,
     * finished [fin_cap,L]; parents, inputs, the source per row [K,S] */
    size_t n_al = (size_t)M * K * L * S, n_fal = (size_t)M * fin_cap * L * S;
    size_t n_tok = (size_t)K * L, n_ftok = (size_t)fin_cap * L;
    size_t bytes = ((size_t)K * W + 2 * (size_t)K) * sizeof(double) + (size_t)2 * K * sizeof(at_beam_candidate) +
                   (size_t)fin_cap * sizeof(at_beam_finished) +
                   (2 * n_al + n_fal + (size_t)(L + 1) * S) * sizeof(attend_real) +
                   (2 * n_tok + n_ftok + (size_t)K + (size_t)K * S) * sizeof(int32_t) + (size_t)K * sizeof(int) + 64;
    char *mem = at_decode_scratch(m0, bytes, who, err);
    if (!mem) return err ? err->status : ATTEND_ERR_ALLOC;
    memset(mem, 0, bytes);
    char *cur = mem;
#define TAKE(ptr, type, count) (ptr = (type *)(void *)cur, cur += (count) * sizeof(type))
    double *acc, *lse, *hscore;
    at_beam_candidate *cand;
    at_beam_finished *fin;
    attend_real *hal, *hal2, *fal, *mean;
    int32_t *htok, *htok2, *ftok, *y, *srcK;
    int *parent;
    /* widest alignment first: doubles and structs, then attend_real, then 4-byte ints */
    TAKE(acc, double, (size_t)K * W);
    TAKE(lse, double, K);
    TAKE(hscore, double, K);
    TAKE(cand, at_beam_candidate, 2 * K);
    TAKE(fin, at_beam_finished, fin_cap);
    TAKE(hal, attend_real, n_al);
    TAKE(hal2, attend_real, n_al);
    TAKE(fal, attend_real, n_fal);
    TAKE(mean, attend_real, (size_t)(L + 1) * S);
    TAKE(htok, int32_t, n_tok);
    TAKE(htok2, int32_t, n_tok);
    TAKE(ftok, int32_t, n_ftok);
    TAKE(y, int32_t, K);
    TAKE(srcK, int32_t, (size_t)K * S); /* [K,S]: a step looks a row's inputs up in its own source row */
    TAKE(parent, int, K);
#undef TAKE
    /* alignment of model k, hypothesis h, step t in a store of `rows` hypotheses */
#define AL(base, rows, k, h, t) ((base) + ((((size_t)(k) * (rows) + (h)) * L + (t)) * S))
    for (int k = 0; k < K; k++) memcpy(srcK + (size_t)k * S, src, (size_t)S * sizeof *src);
    int32_t len1 = S;
    for (int k = 0; k < M; k++) {
        at_model_infer(models[k]);
        models[k]->run.align_head = o->align_head;
        at_model_encode(models[k], src, &len1, 1, S);
        at_model_replicate(models[k], K, S);
    }
    int live = 1, nfin = 0;
    hscore[0] = 0;
    y[0] = dec->start;
    for (int t = 0; t < L && live > 0 && nfin < K; t++) {
        const attend_real *dist0 = NULL;
        int V = 0, is_logp = 0;
        for (int k = 0; k < M; k++) {
            attend_model *m = models[k];
            at_model_step(m, t, live, S, y, srcK, NULL, m->acts.step_feat, (size_t)m->F, 0);
            const attend_real *dist = at_model_step_dist(m, t, live, S, &V, &is_logp);
            if (M == 1) {
                dist0 = dist;
                continue;
            }
            /* acc [live,V] = the mean of the models' rows, lse [live] the mean of their log-sum-exp:
             * log p = acc − lse, not renormalised */
            for (int i = 0; i < live; i++) {
                const attend_real *z = dist + (size_t)i * V;
                for (int v = 0; v < V; v++) acc[(size_t)i * V + v] = (k ? acc[(size_t)i * V + v] : 0) + (double)z[v];
                lse[i] = (k ? lse[i] : 0) + (is_logp ? 0 : row_lse(z, V));
            }
        }
        if (M > 1)
            for (int i = 0; i < live; i++) {
                for (int v = 0; v < V; v++) acc[(size_t)i * V + v] /= M;
                lse[i] /= M;
            }
        /* best 2K (parent, token) continuations by total log-probability */
        int nc = 0;
        for (int i = 0; i < live; i++) {
            double l = M > 1 ? lse[i] : is_logp ? 0 : row_lse(dist0 + (size_t)i * V, V);
            for (int v = 0; v < V; v++) {
                double z = M > 1 ? acc[(size_t)i * V + v] : (double)dist0[(size_t)i * V + v];
                if (!dec->candidate(v)) continue;
                if (!isfinite(z)) continue; /* an impossible id (a masked position) */
                at_beam_offer(cand, &nc, 2 * K, hscore[i] + z - l, i, v);
            }
        }
        int next = 0;
        for (int c = 0; c < nc && next < K; c++) {
            const at_beam_candidate *cd = &cand[c];
            int end = dec->finish(t, cd->token, S); /* 1: EOS (not an output); 2: the last output */
            if (end) {
                if (nfin >= fin_cap) continue;
                at_beam_finished *f = &fin[nfin];
                f->logp = cd->logp;
                f->len = end == 2 ? t + 1 : t;
                f->norm = cd->logp / pow((double)f->len + 1, alpha) + hyp_score(models, M, o, hal, K, cd->parent, t, t, cd->parent, live, L, S, mean);
                f->slot = nfin;
                memcpy(ftok + (size_t)nfin * L, htok + (size_t)cd->parent * L, (size_t)L * sizeof(int32_t));
                for (int k = 0; k < M; k++) {
                    memcpy(AL(fal, fin_cap, k, nfin, 0), AL(hal, K, k, cd->parent, 0), (size_t)L * S * sizeof(attend_real));
                    if (end == 2 && (models[k]->dec->attentive || models[k]->dec->aligns))
                        memcpy(AL(fal, fin_cap, k, nfin, t), models[k]->acts.weights + ((size_t)t * live + cd->parent) * S,
                               (size_t)S * sizeof(attend_real));
                }
                if (end == 2) ftok[(size_t)nfin * L + t] = cd->token;
                nfin++;
                continue;
            }
            /* a live continuation: copy the parent's history, then append this step */
            memcpy(htok2 + (size_t)next * L, htok + (size_t)cd->parent * L, (size_t)L * sizeof(int32_t));
            htok2[(size_t)next * L + t] = cd->token;
            for (int k = 0; k < M; k++) {
                memcpy(AL(hal2, K, k, next, 0), AL(hal, K, k, cd->parent, 0), (size_t)L * S * sizeof(attend_real));
                if (models[k]->dec->attentive || models[k]->dec->aligns)
                    memcpy(AL(hal2, K, k, next, t), models[k]->acts.weights + ((size_t)t * live + cd->parent) * S,
                           (size_t)S * sizeof(attend_real));
            }
            parent[next] = cd->parent;
            hscore[next] = cd->logp;
            y[next] = cd->token;
            next++;
        }
        /* every model's decoder rows of step t+1 follow their hypotheses */
        for (int k = 0; k < M; k++) at_model_reorder(models[k], t, parent, next, live);
        int32_t *ti = htok;
        htok = htok2;
        htok2 = ti;
        attend_real *ta = hal;
        hal = hal2;
        hal2 = ta;
        live = next;
        if (t == L - 1)
            for (int i = 0; i < live && nfin < fin_cap; i++) { /* unfinished at max_len */
                at_beam_finished *f = &fin[nfin];
                f->logp = hscore[i];
                f->len = L;
                f->norm = hscore[i] / pow((double)L + 1, alpha) + hyp_score(models, M, o, hal, K, i, L, -1, 0, live, L, S, mean);
                f->slot = nfin;
                memcpy(ftok + (size_t)nfin * L, htok + (size_t)i * L, (size_t)L * sizeof(int32_t));
                for (int k = 0; k < M; k++)
                    memcpy(AL(fal, fin_cap, k, nfin, 0), AL(hal, K, k, i, 0), (size_t)L * S * sizeof(attend_real));
                nfin++;
            }
    }
    qsort(fin, (size_t)nfin, sizeof *fin, at_beam_cmp_finished);
    int n = nfin < o->nbest ? nfin : o->nbest;
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
                attend_real *dst = align + ((size_t)k * o->nbest + i) * L * S;
                memcpy(dst, AL(fal, fin_cap, k, f->slot, 0), (size_t)L * S * sizeof *align);
                for (int t = f->len; t < L; t++) memset(dst + (size_t)t * S, 0, (size_t)S * sizeof *align);
            }
#undef AL
    *n_out = n;
    return at_ok(err);
}
