/*
 * decode.c — decoding through the model: one scorer or several (an
 * ensemble; one model is an ensemble of one), checked alike; a step's output
 * distribution; the beam's generic replication and reordering of rows; the
 * decoding scratch; greedy decoding; forced scoring. beam.c searches
 * through this interface; search.c is the public entry to both.
 *
 * An ensemble's step distribution is the mean of the models' log-softmax
 * outputs, log p(v) = (1/M) Σ_k log softmax(z_k)(v), as OpenNMT-py
 * (onmt/translate: EnsembleDecoder averages log_probs) and Marian (scorer
 * weights 1/M over log-softmax) do; it is not renormalised. Each model keeps
 * its own encoder output, decoder state and attention: the hypotheses' rows
 * move in every model at once, and the alignments come out per model.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/decode.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/encoder.h"
#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/extension.h"
#include "seq2seq/model.h"

#define AT_ENSEMBLE_MAX 64

/* ------------------------------------------------------------------ checks */

attend_status at_decode_check(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len, int N,
                              int S, int beam, int max_len, const attend_decode_options *o, const char *who,
                              attend_error *err) {
    CHECK(models, err, ATTEND_ERR_NULL, "%s: models is NULL", who);
    CHECK(M >= 1 && M <= AT_ENSEMBLE_MAX, err, ATTEND_ERR_ARG, "%s: %d models, outside [1,%d]", who, M,
          AT_ENSEMBLE_MAX);
    for (int k = 0; k < M; k++) {
        const attend_model *m = models[k];
        CHECK(m, err, ATTEND_ERR_NULL, "%s: model %d is NULL", who, k + 1);
        const at_decoder_ops *d0 = models[0]->dec;
        CHECK(m->dec->vocabulary == d0->vocabulary, err, ATTEND_ERR_ARG,
              "%s: model %d is %s pointer model (%s decoder) and model 1 is %s: an ensemble averages distributions "
              "over one output space", who, k + 1, m->dec->vocabulary ? "not a" : "a", m->dec->name,
              d0->vocabulary ? "not" : "one");
        CHECK(!m->dec->vocabulary || m->cfg.tgt_vocab == models[0]->cfg.tgt_vocab, err, ATTEND_ERR_ARG,
              "%s: model %d has a target vocabulary of %d ids, model 1 has %d", who, k + 1, m->cfg.tgt_vocab,
              models[0]->cfg.tgt_vocab);
        if (beam > 0 && M == 1)
            CHECK(beam <= m->cfg.max_batch, err, ATTEND_ERR_CAPACITY,
                  "%s: beam width %d exceeds the model's max_batch=%d (hypotheses are decoded as one batch)", who,
                  beam, m->cfg.max_batch);
        else if (beam > 0)
            CHECK(beam <= m->cfg.max_batch, err, ATTEND_ERR_CAPACITY, "%s: model %d: %d rows exceed its max_batch=%d",
                  who, k + 1, beam, m->cfg.max_batch);
        for (int j = 0; j < k; j++)
            CHECK(models[j] != m, err, ATTEND_ERR_ARG,
                  "%s: models %d and %d are the same handle (each member needs its own activations: "
                  "attend_model_clone)", who, j + 1, k + 1);
        TRY(at_model_check_source(m, src, src_len, N, S, who, err));
        if (M == 1)
            CHECK(max_len >= 1 && max_len <= m->Tcap, err, ATTEND_ERR_CAPACITY,
                  "%s: max_len=%d outside [1, max_tgt_len+1 = %d]", who, max_len, m->Tcap);
        else
            CHECK(max_len >= 1 && max_len <= m->Tcap, err, ATTEND_ERR_CAPACITY,
                  "%s: model %d: max_len=%d outside [1, max_tgt_len+1 = %d]", who, k + 1, max_len, m->Tcap);
        TRY(m->dec->check_decode(m, src_len, N, max_len, who, err));
    }
    return at_ext_check_decode(models, M, o, who, err);
}

/* align_head: 0, or a head (1..heads) of every model's multi-head decoder */
attend_status at_decode_check_head(attend_model *const *models, int M, int head, const char *who, attend_error *err) {
    CHECK(head >= 0, err, ATTEND_ERR_ARG, "%s: align_head=%d (0: the decoder's alignments, h >= 1: head h)", who, head);
    if (head == 0) return ATTEND_OK;
    for (int k = 0; k < M; k++) {
        const attend_model *m = models[k];
        CHECK(m->dec->head_aligns, err, ATTEND_ERR_ARG,
              "%s: align_head=%d needs a decoder with multi-head attention (transformer), but model %d has decoder %s",
              who, head, k + 1, m->dec->name);
        CHECK(head <= m->cfg.heads, err, ATTEND_ERR_ARG, "%s: align_head=%d outside [1, heads=%d] of model %d", who,
              head, m->cfg.heads, k + 1);
    }
    return ATTEND_OK;
}

/* ---------------------------------------------------------- the interface */

const attend_real *at_model_step_dist(attend_model *m, int t, int N, int S, int *W, int *logp) {
    return m->dec->dist(m, t, N, S, W, logp);
}

void at_model_replicate(attend_model *m, int K, int S) {
    if (m->dec->replicate) m->dec->replicate(m, K, S);
    at_rows_replicate(m, K, S);
}

void at_model_reorder(attend_model *m, int t, const int *parent, int n, int live) {
    at_rows_reorder(m, t, parent, n, live, m->step_S);
}

void *at_decode_scratch(attend_model *m, size_t bytes, const char *who, attend_error *err) {
    if (bytes > m->scratch_bytes) { /* first use, or a longer / wider search than before */
        void *grown = malloc(bytes);
        if (!grown) {
            at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes of decoding state", who, bytes);
            return NULL;
        }
        free(m->scratch);
        m->scratch = grown;
        m->scratch_bytes = bytes;
    }
    return m->scratch;
}

/* ------------------------------------------------------------------ greedy */

/* Rows per thread of one greedy block. Every step reads each row's whole decoding state (the encoder's states
 * and attention keys; a transformer decoder's key/value caches, ~43 KB a row at width 64, 2 layers, 20 source
 * and 22 target positions): at batch 256 that is ~11 MB a step, more than the caches keep between steps; 64
 * rows a thread are ~2.7 MB. attend_bench greedy --batch 256, AVX2, 2026-12-03 (docs/PERFORMANCE.md, "The
 * transformer decoder ..."): one thread, medians of 5, transformer 3 033 -> 3 760 seqs/s, Bahdanau 3 282 ->
 * 3 772; two threads, blocks of 128 against one of 256, transformer 4 700-5 000 -> 5 450-5 600. */
#define AT_GREEDY_ROWS_PER_THREAD 64

/* Greedy decoding of rows [n0, n0 + N) of the caller's batch of N_all (src, src_len and the outputs are the whole
 * batch's; the models see a batch of N) */
static attend_status greedy_rows(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len,
                                 int N_all, int n0, int N, int S, int max_len, int align_head, int32_t *out,
                                 int32_t *out_len, attend_real *align, const char *who, attend_error *err) {
    src += (size_t)n0 * S, src_len += n0, out += (size_t)n0 * max_len, out_len += n0;
    attend_model *m0 = models[0];
    const at_decoder_ops *dec = m0->dec;
    /* the widest a step's row can be: an extension's output space, Vt + S at most */
    size_t W = (size_t)m0->V + (size_t)S;
    size_t bytes = (size_t)N * sizeof(int32_t) + 8 + (M > 1 ? (size_t)N * W * sizeof(double) : 0);
    char *mem = at_decode_scratch(m0, bytes, who, err);
    if (!mem) return err ? err->status : ATTEND_ERR_ALLOC;
    int32_t *y = (int32_t *)(void *)mem;                                         /* [N] previous tokens */
    double *acc = (double *)(void *)(mem + ((size_t)N * sizeof(int32_t) + 7) / 8 * 8); /* [N,W] the models' mean */
    for (int k = 0; k < M; k++) {
        at_model_infer(models[k]); /* decoding reuses the activation buffers */
        models[k]->run.align_head = align_head;
        at_model_encode(models[k], src, src_len, N, S);
    }
    for (int n = 0; n < N; n++) {
        y[n] = dec->start;
        out_len[n] = -1; /* -1 = still running */
        for (int t = 0; t < max_len; t++) out[(size_t)n * max_len + t] = ATTEND_PAD;
    }
    if (align)
        for (int k = 0; k < M; k++)
            memset(align + ((size_t)k * N_all + n0) * max_len * S, 0, (size_t)N * max_len * S * sizeof *align);
    int running = N;
    for (int t = 0; t < max_len && running > 0; t++) {
        const attend_real *row0 = NULL;
        int Wd = 0, is_logp;
        for (int k = 0; k < M; k++) {
            attend_model *m = models[k];
            uint8_t *active = m->active + (size_t)t * N;
            for (int n = 0; n < N; n++) active[n] = out_len[n] < 0;
            at_model_step(m, t, N, S, y, src, active, m->acts.step_feat, (size_t)m->F, 0);
            const attend_real *dist = at_model_step_dist(m, t, N, S, &Wd, &is_logp);
            if (M == 1) {
                row0 = dist;
                continue;
            }
            /* the argmax of the mean log-softmax is that of the mean of z: each log-sum-exp is one number per row */
            for (size_t i = 0; i < (size_t)N * Wd; i++) acc[i] = (k ? acc[i] : 0) + (double)dist[i];
        }
        if (M > 1)
            for (size_t i = 0; i < (size_t)N * Wd; i++) acc[i] /= M;
        for (int n = 0; n < N; n++) {
            if (out_len[n] >= 0) continue;
            int best = 0;
            if (M == 1) {
                const attend_real *row = row0 + (size_t)n * Wd;
                for (int v = 1; v < Wd; v++)
                    if (row[v] > row[best]) best = v;
            } else {
                const double *row = acc + (size_t)n * Wd;
                for (int v = 1; v < Wd; v++)
                    if (row[v] > row[best]) best = v;
            }
            int fin = dec->finish(t, best, src_len[n]);
            if (fin == 1) { /* EOS: not an output */
                out_len[n] = t;
                running--;
                continue;
            }
            out[(size_t)n * max_len + t] = best;
            if (align)
                for (int k = 0; k < M; k++)
                    if (models[k]->dec->attentive || models[k]->dec->aligns)
                        memcpy(align + (((size_t)k * N_all + n0 + n) * max_len + t) * S,
                               models[k]->acts.weights + ((size_t)t * N + n) * S, (size_t)S * sizeof *align);
            y[n] = best;
            if (fin == 2) {
                out_len[n] = t + 1;
                running--;
            }
        }
    }
    for (int n = 0; n < N; n++)
        if (out_len[n] < 0) out_len[n] = max_len;
    return at_ok(err);
}

/* A batch is decoded in blocks of rows, each from encoding to its last step. Every row's tokens and weights
 * are its own: the blocks change no token (test_greedy_blocks; a Bahdanau row's weights can move by an ulp
 * with the batch size, as before, from the GEMM path its keys' product takes). The first block is the
 * largest: the scratch and the activations grow there, so a later block cannot fail half-way. */
attend_status at_greedy(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len, int N, int S,
                        int max_len, int align_head, int32_t *out, int32_t *out_len, attend_real *align,
                        const char *who, attend_error *err) {
    const int block = AT_GREEDY_ROWS_PER_THREAD * attend_threads();
    for (int n0 = 0; n0 < N; n0 += block)
        TRY(greedy_rows(models, M, src, src_len, N, n0, N - n0 < block ? N - n0 : block, S, max_len, align_head, out,
                        out_len, align, who, err));
    return at_ok(err);
}

/* ------------------------------------------------------------ forced score */

attend_status attend_model_score(attend_model *m, const int32_t *src, int S, const int32_t *tgt, int T, double *logp,
                                 attend_real *align, attend_error *err) {
    const char *who = "attend_model_score";
    CHECK(m && src && tgt && logp, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !tgt ? "tgt [T]" : "logp");
    int lo = 1 - m->dec->eos; /* a sequence without EOS has at least one step */
    CHECK(T >= lo && T <= m->cfg.max_tgt_len, err, ATTEND_ERR_CAPACITY,
          "%s: target length %d outside [%d, max_tgt_len=%d]", who, T, lo, m->cfg.max_tgt_len);
    CHECK(S >= 1 && S <= m->cfg.max_src_len, err, ATTEND_ERR_CAPACITY, "%s: source length %d outside [1, %d]", who, S,
          m->cfg.max_src_len);
    int steps = T + m->dec->eos;
    /* the one-row batch lives in its own part of the id arena (score_ids),
     * which at_model_forward copies from; nothing is allocated */
    int32_t *mem = m->score_ids;
    attend_batch b;
    memset(&b, 0, sizeof b);
    b.N = 1;
    b.S = S;
    b.T = steps;
    b.src = mem;
    b.src_len = b.src + S;
    b.tgt_in = b.src_len + 1;
    b.tgt_out = b.tgt_in + steps;
    b.tgt_len = b.tgt_out + steps;
    memcpy(b.src, src, (size_t)S * sizeof *src);
    b.src_len[0] = S;
    b.tgt_len[0] = steps;
    for (int t = 0; t < steps; t++) {
        b.tgt_in[t] = t == 0 ? m->dec->start : tgt[t - 1];
        b.tgt_out[t] = t < T ? tgt[t] : ATTEND_EOS;
    }
    /* forced scoring: no training switch, decoding's hard choices */
    at_run run;
    memset(&run, 0, sizeof run);
    run.scoring = 1;
    attend_tf_stats st;
    attend_status rc = at_model_forward(m, &b, &run, &st, err);
    if (rc == ATTEND_OK) {
        *logp = -st.loss * st.tokens;
        if (align) {
            if (!m->dec->attentive && !m->dec->aligns) memset(align, 0, (size_t)steps * S * sizeof *align);
            else /* weights are [T,N,S] with N = 1 */
                memcpy(align, m->acts.weights, (size_t)steps * S * sizeof *align);
        }
    }
    return rc;
}

attend_status attend_model_encoder_attention(attend_model *m, const int32_t *src, int S, int layer, int head,
                                             attend_real *out, attend_error *err) {
    const char *who = "attend_model_encoder_attention";
    CHECK(m && src && out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !m ? "model" : !src ? "src [S]" : "out [S,S]");
    CHECK(m->enc->self_weights, err, ATTEND_ERR_ARG,
          "%s: encoder %s has no self-attention (the transformer encoder has)", who,
          attend_encoder_name(m->cfg.encoder));
    int L = m->cfg.enc_layers > 0 ? m->cfg.enc_layers : 1, H = m->cfg.heads;
    CHECK(layer >= 1 && layer <= L, err, ATTEND_ERR_ARG, "%s: layer=%d outside [1, enc_layers=%d]", who, layer, L);
    CHECK(head >= 0 && head <= H, err, ATTEND_ERR_ARG, "%s: head=%d outside [0 (the heads' mean), heads=%d]", who,
          head, H);
    int32_t len = S;
    TRY(at_model_check_source(m, src, &len, 1, S, who, err));
    at_model_infer(m);
    at_encoder_forward(m, src, &len, 1, S);
    const attend_real *P = m->enc->self_weights(m, layer - 1, 1, S); /* [1,H,S,S] */
    CHECK(P, err, ATTEND_ERR_CAPACITY, "%s: no attention weights for layer %d", who, layer);
    size_t grid = (size_t)S * S;
    for (size_t k = 0; k < grid; k++) {
        if (head) {
            out[k] = P[(size_t)(head - 1) * grid + k];
            continue;
        }
        double sum = 0;
        for (int h = 0; h < H; h++) sum += P[(size_t)h * grid + k];
        out[k] = (attend_real)(sum / H);
    }
    return ATTEND_OK;
}
