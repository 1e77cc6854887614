/*
 * compare.c — two models side by side on a data set (Wiegreffe & Pinter
 * 2019's measurements): teacher-forced along each pair's reference, per
 * counted step (n,t), the Jensen–Shannon divergence between model a's and
 * model b's attention rows and the total variation distance between their
 * output distributions, with each model's cross-entropy and token accuracy.
 *   seed variance (W&P §3.2)  a = a model trained from another seed, b = the
 *                             base: how far attention moves for nothing;
 *   adversary (W&P §4)        a = the adversarially trained model, b = the
 *                             base: the JSD it reached against the TVD it paid;
 *   diagnostic (W&P §3.3)     frozen: a runs with b's attention as its own
 *                             (the frozen-attention extension), so its JSD is
 *                             0 and its accuracy is the transfer's result;
 *   uniform (W&P §3.1)        a = the uniform-attention model.
 * Both run through attend_forward: a's forward names b as its reference, so
 * b runs first on the same batch (at_model_forward), and the rows are read
 * from both models' activations. One allocation per call (the batch and two
 * rows of scratch), whatever the data's size.
 *
 * Dimension letters: S source positions, V target vocabulary.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/divergence.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/model.h"

static attend_status check_model(const attend_model *m, const char *name, const char *who, attend_error *err) {
    CHECK(m->dec->attentive && m->dec->vocabulary && !m->cfg.copy, err, ATTEND_ERR_ARG,
          "%s: model %s (decoder %s%s) needs attention and a plain output vocabulary", who, name, m->dec->name,
          m->cfg.copy ? ", copy" : "");
    return ATTEND_OK;
}

attend_status attend_model_compare(attend_model *a, attend_model *b, const attend_dataset *d, int batch_size,
                                   int max_pairs, int frozen, attend_compare_stats *out, attend_error *err) {
    const char *who = "attend_model_compare";
    CHECK(a && b && d && out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !a ? "model a" : !b ? "model b" : !d ? "data" : "out");
    CHECK(a != b, err, ATTEND_ERR_ARG, "%s: models a and b are the same handle (attend_model_clone for a copy)", who);
    TRY(check_model(a, "a", who, err));
    TRY(check_model(b, "b", who, err));
    CHECK(a->cfg.src_vocab == b->cfg.src_vocab && a->cfg.tgt_vocab == b->cfg.tgt_vocab, err, ATTEND_ERR_ARG,
          "%s: the models' vocabularies differ (%d/%d source, %d/%d target ids)", who, a->cfg.src_vocab,
          b->cfg.src_vocab, a->cfg.tgt_vocab, b->cfg.tgt_vocab);
    int cap = a->cfg.max_batch < b->cfg.max_batch ? a->cfg.max_batch : b->cfg.max_batch;
    CHECK(batch_size >= 1 && batch_size <= cap, err, ATTEND_ERR_CAPACITY,
          "%s: batch_size=%d outside [1, %d] (the smaller max_batch)", who, batch_size, cap);
    CHECK(frozen == 0 || frozen == 1, err, ATTEND_ERR_ARG, "%s: frozen=%d, must be 0 or 1", who, frozen);
    int total = attend_dataset_size(d);
    if (max_pairs > 0 && max_pairs < total) total = max_pairs;
    CHECK(total >= 1, err, ATTEND_ERR_ARG, "%s: no pairs to compare", who);
    memset(out, 0, sizeof *out);
    int S = attend_dataset_max_src_len(d), L = attend_dataset_max_tgt_len(d) + 1;
    int V = a->cfg.tgt_vocab, W = V > S ? V : S;

    attend_batch bt;
    TRY(attend_batch_alloc(&bt, batch_size, S > 0 ? S : 1, L, err));
    /* idx [batch_size] int, then two rows [W] of doubles */
    size_t idx_bytes = ((size_t)batch_size * sizeof(int) + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    unsigned char *mem = malloc(idx_bytes + 2 * (size_t)W * sizeof(double));
    if (!mem) {
        attend_batch_release(&bt);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    }
    int *idx = (int *)mem;
    double *ra = (double *)(mem + idx_bytes), *rb = ra + W;

    attend_forward_options fo;
    memset(&fo, 0, sizeof fo);
    fo.size = sizeof fo;
    fo.reference = b;
    fo.frozen_attention = frozen;
    attend_status st = ATTEND_OK;
    double js_sum = 0, js_sq = 0, tv_sum = 0, tv_sq = 0, ce_a = 0, ce_b = 0;
    long steps = 0, ok_a = 0, ok_b = 0;
    for (int start = 0; !st && start < total; start += batch_size) {
        int nb = total - start < batch_size ? total - start : batch_size;
        for (int i = 0; i < nb; i++) idx[i] = start + i;
        st = attend_batch_fill(&bt, d, idx, nb, 0, err);
        if (!st) st = attend_forward(a, &bt, &fo, NULL, err);
        if (st) break;
        int N = bt.N, Sb = bt.S, T = bt.T;
        for (int n = 0; n < N; n++)
            for (int t = 0; t < bt.tgt_len[n]; t++) {
                int y = bt.tgt_out[(size_t)n * T + t], wa, wb;
                const attend_real *la = a->dec->output_row(a, n, t, N, Sb, T, &wa);
                const attend_real *lb = b->dec->output_row(b, n, t, N, Sb, T, &wb);
                int best_a = 0, best_b = 0;
                for (int v = 0; v < V; v++) {
                    ra[v] = (double)la[v];
                    rb[v] = (double)lb[v];
                    if (ra[v] > ra[best_a]) best_a = v;
                    if (rb[v] > rb[best_b]) best_b = v;
                }
                double tv, js;
                at_logp_divergences(ra, rb, V, &tv, NULL, NULL);
                ce_a -= ra[y];
                ce_b -= rb[y];
                ok_a += best_a == y;
                ok_b += best_b == y;
                const attend_real *wa_row = a->acts.weights + ((size_t)t * N + n) * Sb;
                const attend_real *wb_row = b->acts.weights + ((size_t)t * N + n) * Sb;
                for (int j = 0; j < Sb; j++) {
                    ra[j] = (double)wa_row[j];
                    rb[j] = (double)wb_row[j];
                }
                at_prob_divergences(ra, rb, Sb, NULL, NULL, &js);
                js_sum += js;
                js_sq += js * js;
                tv_sum += tv;
                tv_sq += tv * tv;
                if (js > out->jsd_max) out->jsd_max = js;
                if (tv > out->tvd_max) out->tvd_max = tv;
                steps++;
            }
        out->pairs += nb;
    }
    free(mem);
    attend_batch_release(&bt);
    if (st) return st;
    double k = (double)steps;
    out->steps = (int)steps;
    out->jsd_mean = js_sum / k;
    out->tvd_mean = tv_sum / k;
    out->jsd_sd = sqrt(fmax(0, js_sq / k - out->jsd_mean * out->jsd_mean));
    out->tvd_sd = sqrt(fmax(0, tv_sq / k - out->tvd_mean * out->tvd_mean));
    out->loss_a = ce_a / k;
    out->loss_b = ce_b / k;
    out->acc_a = ok_a / k;
    out->acc_b = ok_b / k;
    return at_ok(err);
}
