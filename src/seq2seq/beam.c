/*
 * beam.c — beam search over the encoder–decoder, keeping each hypothesis's
 * attention history and reordering it with the hypothesis, so alignments come
 * out of beam search as they do out of greedy decoding.
 *
 * Dimension letters: K beam width, S source length, L maximum output length,
 * V vocabulary (model_internal.h has the full table). The model is reached
 * through its decoding interface (at_model_encode/step/step_logits,
 * at_model_replicate/reorder); its arena is only read for this step's logits
 * and attention weights.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/beam_core.h"
#include "seq2seq/model_internal.h"


/* The coverage penalty of Wu et al. 2016 (eq. 14): β Σ_j log(min(Σ_t α_tj, 1))
 * over a hypothesis's attention history hist [steps,S] and, when last != NULL,
 * one more step last [S]; the sum is floored at 1e-12 inside the log. */
static double coverage_penalty(double beta, const attend_real *hist, int steps, const attend_real *last, int S) {
    if (beta == 0) return 0;
    double cp = 0;
    for (int j = 0; j < S; j++) {
        double c = last ? (double)last[j] : 0;
        for (int t = 0; t < steps; t++) c += (double)hist[(size_t)t * S + j];
        cp += log(c < 1e-12 ? 1e-12 : c > 1 ? 1 : c);
    }
    return beta * cp;
}

attend_status attend_model_beam(attend_model *m, const int32_t *src, int S, int beam, int nbest, int max_len,
                                double alpha, int32_t *out, int32_t *out_len, double *score, attend_real *align,
                                int *n_out, attend_error *err) {
    attend_beam_options o = {alpha, 0};
    return attend_model_beam_opts(m, src, S, beam, nbest, max_len, &o, out, out_len, score, align, n_out, err);
}

attend_status attend_model_beam_opts(attend_model *m, const int32_t *src, int S, int beam, int nbest, int max_len,
                                     const attend_beam_options *o, int32_t *out, int32_t *out_len, double *score,
                                     attend_real *align, int *n_out, attend_error *err) {
    const char *who = "attend_model_beam";
    double alpha = o ? o->alpha : 0, beta = o ? o->coverage_penalty : 0;
    CHECK(m && src && out && out_len && score && n_out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !out ? "out [nbest,max_len]" : !out_len ? "out_len [nbest]"
                                                  : !score ? "score [nbest]" : "n_out");
    CHECK(beam >= 1 && beam <= 64, err, ATTEND_ERR_ARG, "%s: beam width %d outside [1,64]", who, beam);
    CHECK(beam <= m->cfg.max_batch, err, ATTEND_ERR_CAPACITY,
          "%s: beam width %d exceeds the model's max_batch=%d (hypotheses are decoded as one batch)", who, beam,
          m->cfg.max_batch);
    CHECK(nbest >= 1 && nbest <= beam, err, ATTEND_ERR_ARG, "%s: nbest=%d outside [1, beam=%d]", who, nbest, beam);
    CHECK(max_len >= 1 && max_len <= m->Tcap, err, ATTEND_ERR_CAPACITY,
          "%s: max_len=%d outside [1, max_tgt_len+1 = %d]", who, max_len, m->Tcap);
    CHECK(isfinite(alpha) && alpha >= 0, err, ATTEND_ERR_ARG, "%s: length-normalisation alpha=%g must be >= 0", who,
          alpha);
    CHECK(isfinite(beta) && beta >= 0, err, ATTEND_ERR_ARG, "%s: coverage_penalty=%g must be >= 0", who, beta);
    CHECK(beta == 0 || at_model_attentive(m), err, ATTEND_ERR_ARG,
          "%s: coverage_penalty=%g with decoder %s, which has no attention", who, beta,
          attend_decoder_name(m->cfg.decoder));
    int32_t len1 = S;
    TRY(at_model_check_source(m, src, &len1, 1, S, who, err));
    /* a pointer decoder emits one source position per step and ends after S of
     * them (no EOS); its rows are log-probabilities over the S positions */
    int points = at_model_points(m);
    CHECK(!points || S <= max_len, err, ATTEND_ERR_CAPACITY,
          "%s: a pointer decoder emits src_len=%d positions, max_len is %d", who, S, max_len);
    m->fwd_ready = 0;

    int K = beam, F = m->F, L = max_len;
    int fin_cap = 3 * K;
    /* per-call bookkeeping, one allocation: live tokens [K,L] x2, live align [K,L,S] x2,
     * finished tokens [fin_cap,L], finished align [fin_cap,L,S], live scores, candidates */
    size_t n_tok = (size_t)K * L, n_al = (size_t)K * L * S, n_ftok = (size_t)fin_cap * L, n_fal = (size_t)fin_cap * L * S;
    size_t bytes = (2 * n_tok + n_ftok) * sizeof(int32_t) + (2 * n_al + n_fal) * sizeof(attend_real) +
                   (size_t)K * sizeof(double) + (size_t)2 * K * sizeof(at_beam_candidate) +
                   (size_t)fin_cap * sizeof(at_beam_finished) +
                   (size_t)K * sizeof(int) + (size_t)K * sizeof(int32_t) + (points ? (size_t)K * S * sizeof(int32_t) : 0) +
                   64;
    if (bytes > m->beam_bytes) { /* first use, or a longer / wider search than before */
        void *grown = malloc(bytes);
        CHECK(grown, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes of beam state", who, bytes);
        free(m->beam_mem);
        m->beam_mem = grown;
        m->beam_bytes = bytes;
    }
    char *mem = m->beam_mem;
    memset(mem, 0, bytes);
    char *cur = mem;
#define TAKE(ptr, type, count) (ptr = (type *)(void *)cur, cur += (count) * sizeof(type))
    attend_real *hal, *hal2, *fal;
    int32_t *htok, *htok2, *ftok, *y, *srcK = NULL;
    double *hscore;
    at_beam_candidate *cand;
    at_beam_finished *fin;
    int *parent;
    /* widest alignment first: doubles and structs, then attend_real, then 4-byte ints */
    TAKE(hscore, double, K);
    TAKE(cand, at_beam_candidate, 2 * K);
    TAKE(fin, at_beam_finished, fin_cap);
    TAKE(hal, attend_real, n_al);
    TAKE(hal2, attend_real, n_al);
    TAKE(fal, attend_real, n_fal);
    TAKE(htok, int32_t, n_tok);
    TAKE(htok2, int32_t, n_tok);
    TAKE(ftok, int32_t, n_ftok);
    TAKE(parent, int, K);
    TAKE(y, int32_t, K);
    if (points) TAKE(srcK, int32_t, (size_t)K * S); /* [K,S]: a pointer step looks its inputs up per row */
#undef TAKE
    if (points)
        for (int k = 0; k < K; k++) memcpy(srcK + (size_t)k * S, src, (size_t)S * sizeof *src);

    const at_acts *a = &m->acts; /* read: this step's logits and attention weights */
    at_model_begin_infer(m);
    at_model_encode(m, src, &len1, 1, S);
    at_model_replicate(m, K, S);
    int live = 1, nfin = 0;
    hscore[0] = 0;
    y[0] = points ? -1 : ATTEND_BOS;
    int attentive = at_model_attentive(m);
    for (int t = 0; t < L && live > 0 && nfin < K; t++) {
        at_model_step(m, t, live, S, y, points ? srcK : src, NULL, a->step_feat, (size_t)F, 0);
        int V, is_logp;
        const attend_real *dist = at_model_step_dist(m, t, live, S, &V, &is_logp);
        int ends = points && t + 1 == S; /* a pointer hypothesis is complete after S positions */
        /* best 2K (parent, token) continuations by total log-probability */
        int nc = 0;
        for (int i = 0; i < live; i++) {
            const attend_real *z = dist + (size_t)i * V;
            double lse = 0;
            if (!is_logp) {
                double mx = z[0], sum = 0;
                for (int v = 1; v < V; v++)
                    if (z[v] > mx) mx = z[v];
                for (int v = 0; v < V; v++) sum += exp((double)z[v] - mx);
                lse = mx + log(sum);
            }
            for (int v = 0; v < V; v++) {
                if (!points && (v == ATTEND_PAD || v == ATTEND_BOS)) continue;
                if (!isfinite((double)z[v])) continue; /* a masked (excluded) position */
                at_beam_offer(cand, &nc, 2 * K, hscore[i] + (double)z[v] - lse, i, v);
            }
        }
        int next = 0;
        for (int c = 0; c < nc && next < K; c++) {
            at_beam_candidate *cd = &cand[c];
            const attend_real *w = a->weights + ((size_t)t * live + cd->parent) * S;
            if ((!points && cd->token == ATTEND_EOS) || ends) {
                if (nfin >= fin_cap) continue;
                at_beam_finished *f = &fin[nfin];
                f->logp = cd->logp;
                f->len = ends ? t + 1 : t; /* EOS is not an output; a pointer's last position is */
                f->norm = cd->logp / pow((double)f->len + 1, alpha) +
                          coverage_penalty(beta, hal + (size_t)cd->parent * L * S, t, w, S);
                f->slot = nfin;
                memcpy(ftok + (size_t)nfin * L, htok + (size_t)cd->parent * L, (size_t)L * sizeof(int32_t));
                memcpy(fal + (size_t)nfin * L * S, hal + (size_t)cd->parent * L * S, (size_t)L * S * sizeof(attend_real));
                if (ends) {
                    ftok[(size_t)nfin * L + t] = cd->token;
                    if (attentive) memcpy(fal + ((size_t)nfin * L + t) * S, w, (size_t)S * sizeof(attend_real));
                }
                nfin++;
                continue;
            }
            /* a live continuation: copy the parent's history, then append this step */
            memcpy(htok2 + (size_t)next * L, htok + (size_t)cd->parent * L, (size_t)L * sizeof(int32_t));
            htok2[(size_t)next * L + t] = cd->token;
            memcpy(hal2 + (size_t)next * L * S, hal + (size_t)cd->parent * L * S, (size_t)L * S * sizeof(attend_real));
            if (attentive) memcpy(hal2 + ((size_t)next * L + t) * S, w, (size_t)S * sizeof(attend_real));
            parent[next] = cd->parent;
            hscore[next] = cd->logp;
            y[next] = cd->token;
            next++;
        }
        /* the decoder state rows s_{t+1} (and c, the kind's own) follow their hypotheses */
        at_model_reorder(m, t, parent, next, live);
        int32_t *ti = htok; htok = htok2; htok2 = ti;
        attend_real *ta = hal; hal = hal2; hal2 = ta;
        live = next;
        if (t == L - 1)
            for (int i = 0; i < live && nfin < fin_cap; i++) { /* unfinished at max_len */
                at_beam_finished *f = &fin[nfin];
                f->logp = hscore[i];
                f->len = L;
                f->norm = hscore[i] / pow((double)L + 1, alpha) + coverage_penalty(beta, hal + (size_t)i * L * S, L, NULL, S);
                f->slot = nfin;
                memcpy(ftok + (size_t)nfin * L, htok + (size_t)i * L, (size_t)L * sizeof(int32_t));
                memcpy(fal + (size_t)nfin * L * S, hal + (size_t)i * L * S, (size_t)L * S * sizeof(attend_real));
                nfin++;
            }
    }
    qsort(fin, (size_t)nfin, sizeof *fin, at_beam_cmp_finished);
    int n = nfin < nbest ? nfin : nbest;
    for (int i = 0; i < n; i++) {
        const at_beam_finished *f = &fin[i];
        for (int t = 0; t < L; t++)
            out[(size_t)i * L + t] = t < f->len ? ftok[(size_t)f->slot * L + t] : ATTEND_PAD;
        out_len[i] = f->len;
        score[i] = f->norm;
        if (align) {
            memcpy(align + (size_t)i * L * S, fal + (size_t)f->slot * L * S, (size_t)L * S * sizeof *align);
            for (int t = f->len; t < L; t++) memset(align + ((size_t)i * L + t) * S, 0, (size_t)S * sizeof *align);
        }
    }
    *n_out = n;
    at_model_end_infer(m);
    return at_ok(err);
}
