/*
 * test_combos.c — decoding with the model features together (dec_layers,
 * coverage, copy with extended ids, monotonic, sparsemax/entmax15), after 40
 * training steps with dropout, guided alignment and the coverage loss on the
 * reverse task. For each combination:
 *   - beam width 1 gives greedy's tokens and attention weights;
 *   - every beam hypothesis (width 3) has attend_model_score's log-probability
 *     and forced alignment for the same tokens (monotonic: both run the hard
 *     process) — beam's reorder must carry every feature's per-row state;
 *   - a save / load round trip decodes identically;
 *   - beam_opts' score with length normalisation and the coverage penalty is
 *     the one computed from the forced alignment (EOS step included);
 *   - an ensemble of the model and its clone searches as the model (copy
 *     models: refused naming copy);
 *   - greedy of a padded batch == greedy of each source alone;
 *   - scheduled sampling with p = 1 feeds greedy's tokens (the loss of
 *     teacher forcing with greedy's inputs), with coverage, sparse normalisers
 *     and two decoder layers;
 *   - after int8 quantization the decoding checks (batched greedy, beam 1 ==
 *     greedy, beam == forced scoring, the penalty, the ensemble) still hold
 *     on the quantized model.
 * test_combos_f64.c checks the gradients of the same combinations.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"

enum { MAXL = 9, BEAM = 3, NSRC = 4 };

static int hyps_checked, ext_seen; /* of the current combination: the checks ran on something */

/* the reverse task; with copy the target vocabulary lacks the last two
 * symbols, so they are written as extended ids Vt + j (j: first position of
 * the symbol in the source) */
static attend_dataset *make_data(attend_vocab **vocab, int copy, int *Vt) {
    attend_task_config tc = {ATTEND_TASK_REVERSE, 6, 2, 6, 96, 11};
    attend_dataset *d = NULL, *out = NULL;
    attend_error err;
    EXPECT(attend_dataset_task(&d, vocab, &tc, &err) == ATTEND_OK, "%s", err.msg);
    int V = attend_vocab_size(*vocab);
    *Vt = copy ? V - 2 : V;
    attend_dataset_create(&out, NULL);
    for (int i = 0; i < attend_dataset_size(d); i++) {
        const int32_t *s, *t;
        int sl, tl;
        attend_dataset_get(d, i, &s, &sl, &t, &tl, NULL);
        int32_t tt[16], links[32];
        for (int j = 0; j < tl; j++) {
            tt[j] = t[j];
            if (t[j] >= *Vt) {
                int first = 0;
                while (s[first] != t[j]) first++;
                tt[j] = *Vt + first;
            }
            links[2 * j] = sl - 1 - j;
            links[2 * j + 1] = j;
        }
        attend_dataset_add(out, s, sl, tt, tl, NULL);
        attend_dataset_set_alignment(out, i, links, tl, NULL);
    }
    attend_dataset_free(d);
    return out;
}

typedef struct {
    int32_t tok[BEAM][MAXL], len[BEAM];
    double score[BEAM];
    attend_real align[BEAM][MAXL][8];
    int n;
} beam_out;

static int run_beam(attend_model *m, const int32_t *src, int S, int width, beam_out *o, const char *what) {
    attend_error err;
    memset(o, 0, sizeof *o);
    attend_real *al = calloc((size_t)width * MAXL * S, sizeof *al);
    int ok = attend_model_beam(m, src, S, width, width, MAXL, 0, &o->tok[0][0], o->len, o->score, al, &o->n, &err) ==
             ATTEND_OK;
    EXPECT(ok, "%s: beam: %s", what, err.msg);
    for (int k = 0; k < width; k++)
        for (int t = 0; t < MAXL; t++)
            for (int j = 0; j < S; j++) o->align[k][t][j] = al[((size_t)k * MAXL + t) * S + j];
    /* out is [nbest, max_len]: rows are MAXL apart, which tok[BEAM][MAXL] matches */
    free(al);
    return ok;
}

/* greedy of the NSRC sources as one padded batch == one source at a time (each
 * row keeps its own coverage, monotonic position, copy map and stops alone) */
static void check_batched(attend_model *m, const attend_dataset *d, const char *what) {
    enum { SB = 8 };
    int32_t src[NSRC * SB] = {0}, sl[NSRC], out[NSRC * MAXL], ol[NSRC];
    attend_real al[NSRC * MAXL * SB];
    attend_error err;
    for (int i = 0; i < NSRC; i++) {
        const int32_t *x, *y;
        int xl, yl;
        attend_dataset_get(d, i, &x, &xl, &y, &yl, NULL);
        memcpy(src + i * SB, x, (size_t)xl * sizeof *x);
        sl[i] = xl;
    }
    EXPECT(attend_model_greedy(m, src, sl, NSRC, SB, MAXL, out, ol, al, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    for (int i = 0; i < NSRC; i++) {
        int32_t o1[MAXL], l1;
        attend_real a1[MAXL * SB];
        int S = sl[i];
        EXPECT(attend_model_greedy(m, src + i * SB, &S, 1, S, MAXL, o1, &l1, a1, &err) == ATTEND_OK, "%s: %s", what,
               err.msg);
        EXPECT(l1 == ol[i] && !memcmp(o1, out + i * MAXL, (size_t)l1 * sizeof *o1),
               "%s: source %d: greedy in a batch (%d tokens) differs from alone (%d)", what, i, ol[i], l1);
        double worst = 0;
        for (int t = 0; t < l1 && l1 == ol[i]; t++)
            for (int j = 0; j < SB; j++)
                worst = fmax(worst, fabs((double)al[((size_t)i * MAXL + t) * SB + j] - (j < S ? (double)a1[t * S + j] : 0)));
        EXPECT(worst < 1e-5, "%s: source %d: batched greedy's weights differ from alone by %g", what, i, worst);
    }
}

static void check_decoding(attend_model *m, const attend_dataset *d, int Vt, const char *what) {
    attend_error err;
    check_batched(m, d, what);
    for (int i = 0; i < NSRC; i++) {
        const int32_t *src, *tgt;
        int S, T;
        attend_dataset_get(d, i, &src, &S, &tgt, &T, NULL);
        int32_t g[MAXL], glen;
        attend_real galign[MAXL * 8];
        EXPECT(attend_model_greedy(m, src, &S, 1, S, MAXL, g, &glen, galign, &err) == ATTEND_OK, "%s: greedy: %s",
               what, err.msg);
        beam_out b1, b3;
        if (!run_beam(m, src, S, 1, &b1, what) || !run_beam(m, src, S, BEAM, &b3, what)) return;
        /* width 1 == greedy */
        EXPECT(b1.n == 1 && b1.len[0] == glen && !memcmp(b1.tok[0], g, (size_t)glen * sizeof *g),
               "%s: source %d: beam 1 (%d tokens) differs from greedy (%d)", what, i, b1.len[0], glen);
        for (int t = 0; t < glen && b1.len[0] == glen; t++)
            for (int j = 0; j < S; j++)
                EXPECT(fabs((double)b1.align[0][t][j] - (double)galign[t * S + j]) < 1e-5,
                       "%s: source %d step %d pos %d: beam 1 weight %g, greedy %g", what, i, t, j,
                       (double)b1.align[0][t][j], (double)galign[t * S + j]);
        /* beam hypotheses == forced scoring of their tokens */
        for (int k = 0; k < b3.n; k++) {
            int L = b3.len[k];
            if (L >= MAXL) continue; /* cut at max_len: no EOS step to score */
            for (int t = 0; t < L; t++)
                EXPECT(b3.tok[k][t] >= 4 && b3.tok[k][t] < Vt + S, "%s: hyp %d token %d = %d", what, k, t,
                       b3.tok[k][t]);
            hyps_checked++;
            for (int t = 0; t < L; t++) ext_seen += b3.tok[k][t] >= Vt;
            double lp;
            attend_real fa[(MAXL + 1) * 8];
            EXPECT(attend_model_score(m, src, S, b3.tok[k], L, &lp, fa, &err) == ATTEND_OK, "%s: score: %s", what,
                   err.msg);
            EXPECT(fabs(lp - b3.score[k]) < 1e-4 * (1 + fabs(lp)), "%s: source %d hyp %d: beam score %.7g, forced %.7g",
                   what, i, k, b3.score[k], lp);
            int rows = L; /* beam zeroes the EOS step's row (beam.c) */
            double worst = 0;
            for (int t = 0; t < rows; t++)
                for (int j = 0; j < S; j++)
                    worst = fmax(worst, fabs((double)b3.align[k][t][j] - (double)fa[t * S + j]));
            EXPECT(worst < 1e-5, "%s: source %d hyp %d (len %d): beam alignment vs forced differs by %g", what, i, k, L,
                   worst);
        }
        /* the coverage penalty and length normalisation (attend_model_beam_opts) from the forced
         * alignment of each finished hypothesis, its EOS step included */
        attend_beam_options bo = {0.6, 0.4};
        int32_t pt[BEAM * MAXL], pl[BEAM];
        double ps[BEAM];
        int pn = 0;
        EXPECT(attend_model_beam_opts(m, src, S, BEAM, BEAM, MAXL, &bo, pt, pl, ps, NULL, &pn, &err) == ATTEND_OK,
               "%s: beam_opts: %s", what, err.msg);
        for (int k = 0; k < pn; k++) {
            if (pl[k] >= MAXL) continue;
            double lp;
            attend_real fa[(MAXL + 1) * 8];
            if (attend_model_score(m, src, S, pt + k * MAXL, pl[k], &lp, fa, &err) != ATTEND_OK) {
                EXPECT(0, "%s: score: %s", what, err.msg);
                continue;
            }
            double pen = 0;
            for (int j = 0; j < S; j++) {
                double c = 0;
                for (int t = 0; t <= pl[k]; t++) c += fa[t * S + j];
                pen += log(fmax(fmin(c, 1), 1e-12));
            }
            double want = lp / pow(pl[k] + 1, bo.alpha) + bo.coverage_penalty * pen;
            EXPECT(fabs(ps[k] - want) < 1e-4 * (1 + fabs(want)), "%s: source %d hyp %d: penalised score %.7g, from "
                   "the forced alignment %.7g", what, i, k, ps[k], want);
        }
        /* an ensemble of the model and its clone: the same mean, so the same search */
        attend_model *cl = NULL;
        EXPECT(attend_model_clone(&cl, m, &err) == ATTEND_OK, "%s: clone: %s", what, err.msg);
        if (cl && attend_model_get_config(m)->copy) { /* refused: no common output space to average */
            attend_model *pair[2] = {m, cl};
            int32_t et[BEAM * MAXL], el[BEAM];
            double es[BEAM];
            int en = 0;
            EXPECT(attend_ensemble_beam(pair, 2, src, S, BEAM, BEAM, MAXL, 0, et, el, es, NULL, &en, &err) ==
                           ATTEND_ERR_ARG && strstr(err.msg, "copy"), "%s: ensemble of copy models: %s", what, err.msg);
            attend_model_free(cl);
        } else if (cl) {
            attend_model *pair[2] = {m, cl};
            int32_t et[BEAM * MAXL], el[BEAM];
            double es[BEAM];
            int en = 0;
            EXPECT(attend_ensemble_beam(pair, 2, src, S, BEAM, BEAM, MAXL, 0, et, el, es, NULL, &en, &err) == ATTEND_OK,
                   "%s: ensemble beam: %s", what, err.msg);
            EXPECT(en == b3.n, "%s: ensemble beam found %d, the model %d", what, en, b3.n);
            for (int k = 0; k < en && k < b3.n; k++)
                EXPECT(el[k] == b3.len[k] && !memcmp(et + k * MAXL, b3.tok[k], (size_t)el[k] * sizeof *et) &&
                           fabs(es[k] - b3.score[k]) < 1e-4 * (1 + fabs(es[k])),
                       "%s: source %d hyp %d: ensemble of two copies differs (%.7g vs %.7g)", what, i, k, es[k],
                       b3.score[k]);
            int32_t eg[MAXL], egl;
            EXPECT(attend_ensemble_greedy(pair, 2, src, &S, 1, S, MAXL, eg, &egl, NULL, &err) == ATTEND_OK &&
                       egl == glen && !memcmp(eg, g, (size_t)glen * sizeof *g),
                   "%s: source %d: ensemble greedy of two copies differs: %s", what, i, err.msg);
            attend_model_free(cl);
        }
    }
}

/* greedy and beam outputs of the first NSRC sources, for comparing models */
static void decode_all(attend_model *m, const attend_dataset *d, int32_t *g, int32_t *glen, beam_out *b,
                       const char *what) {
    attend_error err;
    for (int i = 0; i < NSRC; i++) {
        const int32_t *src, *tgt;
        int S, T;
        attend_dataset_get(d, i, &src, &S, &tgt, &T, NULL);
        EXPECT(attend_model_greedy(m, src, &S, 1, S, MAXL, g + i * MAXL, glen + i, NULL, &err) == ATTEND_OK,
               "%s: greedy: %s", what, err.msg);
        run_beam(m, src, S, BEAM, b + i, what);
    }
}

static void check_combo(const char *what, attend_model_config cfg) {
    attend_vocab *v = NULL;
    int Vt;
    attend_dataset *d = make_data(&v, cfg.copy, &Vt);
    cfg.src_vocab = attend_vocab_size(v);
    cfg.tgt_vocab = Vt;
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 7, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    oc.clip_norm = 1;
    if (m) EXPECT(attend_trainer_create(&tr, m, &oc, d, 16, 3, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_train_options o = {0};
    o.dropout = 0.1;
    o.guided_alignment = 0.5;
    o.coverage_loss = cfg.coverage ? 0.3 : 0;
    if (tr) EXPECT(attend_trainer_set_options(tr, &o, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    double first = 0, last = 0;
    for (int s = 0; tr && s < 40; s++) {
        attend_step_report r;
        if (attend_trainer_step(tr, &r, &err) != ATTEND_OK) {
            EXPECT(0, "%s: step %d: %s", what, s, err.msg);
            break;
        }
        if (s == 0) first = r.tf.loss;
        last = r.tf.loss;
    }
    EXPECT(last < first, "%s: training loss %g -> %g", what, first, last);
    attend_trainer_free(tr);
    if (!m) goto out;

    hyps_checked = ext_seen = 0;
    check_decoding(m, d, Vt, what);
    EXPECT(hyps_checked >= NSRC, "%s: only %d finished hypotheses to check", what, hyps_checked);
    printf("  %s: %d hypotheses checked, %d extended ids emitted, loss %.3f -> %.3f\n", what, hyps_checked,
           ext_seen, first, last);

    /* save / load decodes identically (the copy map comes back from the vocabularies) */
    char dir[256], path[300];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/attend-test-combos-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    attend_vocab *tv = v;
    if (cfg.copy) { /* the target vocabulary: all but the last two symbols */
        attend_vocab_create(&tv, NULL);
        for (int id = 4; id < Vt; id++) {
            const char *w = attend_vocab_token(v, id);
            attend_vocab_add(tv, w, strlen(w), NULL, NULL);
        }
        EXPECT(attend_vocab_size(tv) == Vt, "%s: target vocabulary %d, want %d", what, attend_vocab_size(tv), Vt);
        EXPECT(attend_model_set_copy_map(m, v, tv, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    }
    EXPECT(attend_model_save(m, path, v, tv, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s: save: %s", what, err.msg);
    attend_model *m2 = NULL;
    EXPECT(attend_model_load(&m2, path, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "%s: load: %s", what, err.msg);
    int32_t g1[NSRC * MAXL], l1[NSRC], g2[NSRC * MAXL], l2[NSRC];
    static beam_out b1[NSRC], b2[NSRC];
    decode_all(m, d, g1, l1, b1, what);
    if (m2) {
        decode_all(m2, d, g2, l2, b2, what);
        for (int i = 0; i < NSRC; i++) {
            EXPECT(l1[i] == l2[i] && !memcmp(g1 + i * MAXL, g2 + i * MAXL, (size_t)l1[i] * sizeof *g1),
                   "%s: source %d: greedy differs after load", what, i);
            EXPECT(b1[i].n == b2[i].n, "%s: source %d: beam count differs after load", what, i);
            for (int k = 0; k < b1[i].n && k < b2[i].n; k++)
                EXPECT(b1[i].len[k] == b2[i].len[k] &&
                           !memcmp(b1[i].tok[k], b2[i].tok[k], (size_t)b1[i].len[k] * sizeof(int32_t)) &&
                           b1[i].score[k] == b2[i].score[k],
                       "%s: source %d hyp %d differs after load (score %.9g vs %.9g)", what, i, k, b1[i].score[k],
                       b2[i].score[k]);
        }
        /* int8: decoding runs, beam 1 still equals greedy, hypotheses still score as forced */
        EXPECT(attend_model_quantize(m2, ATTEND_DTYPE_I8, &err) == ATTEND_OK, "%s: quantize: %s", what, err.msg);
        char qwhat[160];
        snprintf(qwhat, sizeof qwhat, "%s (int8)", what);
        check_decoding(m2, d, Vt, qwhat);
        attend_model_free(m2);
    }
    unlink(path);
    rmdir(dir);
    if (tv != v) attend_vocab_free(tv);
out:
    attend_model_free(m);
    attend_dataset_free(d);
    attend_vocab_free(v);
}

static attend_model_config base(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score) {
    attend_model_config c = {cell, dec, score, 0, 0, 8, 6, 1, 12, 8, 16, 8, MAXL, 2, 0, 0, 0,
                             ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    return c;
}

static void test_coverage_copy(void) {
    attend_model_config c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.coverage = 1;
    c.copy = 1;
    check_combo("L2+coverage+copy gru/bahdanau", c);
    c.cell = ATTEND_CELL_LSTM;
    c.decoder = ATTEND_DECODER_LUONG;
    check_combo("L2+coverage+copy lstm/luong", c);
}

static void test_monotonic_copy(void) {
    attend_model_config c = base(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL);
    c.monotonic = 1;
    c.copy = 1;
    check_combo("L2+monotonic+copy lstm/luong/general", c);
    c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.monotonic = 1;
    c.coverage = 1;
    check_combo("L2+monotonic+coverage gru/bahdanau", c);
}

static void test_normalizers(void) {
    attend_model_config c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    c.coverage = 1;
    check_combo("L2+sparsemax+coverage gru/bahdanau", c);
    c = base(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_DOT);
    c.normalizer = ATTEND_NORMALIZER_ENTMAX15;
    c.copy = 1;
    check_combo("L2+entmax15+copy lstm/luong/dot", c);
}

/* Scheduled sampling with p = 1 on a combination: every input after BOS is
 * the model's own argmax of the step before, which (softmax-free weights,
 * coverage, two layers and all) is what greedy decoding feeds; so the
 * trainer's loss is the teacher-forced loss with greedy's tokens as inputs
 * (test_sampling.c's check, here with the features on). */
static void check_sampling(const char *what, attend_model_config cfg) {
    attend_vocab *v = NULL;
    int Vt;
    attend_dataset *data = make_data(&v, 0, &Vt);
    cfg.src_vocab = cfg.tgt_vocab = Vt;
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 5, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) goto out;
    enum { N = 6, S = 8, L = MAXL, T = 6 };
    int32_t src[N * S] = {0}, sl[N], out[N * L], ol[N];
    for (int n = 0; n < N; n++) {
        const int32_t *x, *y;
        int xl, yl;
        attend_dataset_get(data, n, &x, &xl, &y, &yl, NULL);
        memcpy(src + n * S, x, (size_t)xl * sizeof *x);
        sl[n] = xl;
    }
    EXPECT(attend_model_greedy(m, src, sl, N, S, L, out, ol, NULL, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t tgt[N][T];
    int tl[N], rows = 0;
    for (int n = 0; n < N; n++) { /* targets: other tokens than greedy's, at most its length */
        tl[n] = ol[n] < T - 1 ? ol[n] : T - 1;
        if (tl[n] < 1) continue;
        for (int t = 0; t < tl[n]; t++) tgt[n][t] = 4 + (out[n * L + t] - 4 + 1 + n + t) % (Vt - 4);
        attend_dataset_add(d, src + n * S, sl[n], tgt[n], tl[n], NULL);
        rows++;
    }
    EXPECT(rows >= 3, "%s: only %d sources decode to a token or more", what, rows);
    attend_batch b;
    attend_batch_alloc(&b, rows, S, T, NULL);
    b.N = rows;
    b.S = S;
    b.T = T;
    memset(b.src, 0, (size_t)rows * S * sizeof *b.src);
    for (int n = 0, r = 0; n < N; n++) {
        if (tl[n] < 1) continue;
        memcpy(b.src + r * S, src + n * S, (size_t)S * sizeof *src);
        b.src_len[r] = sl[n];
        b.tgt_len[r] = tl[n] + 1;
        for (int t = 0; t < T; t++) {
            b.tgt_in[r * T + t] = t == 0 ? ATTEND_BOS : t <= tl[n] ? out[n * L + t - 1] : ATTEND_PAD;
            b.tgt_out[r * T + t] = t < tl[n] ? tgt[n][t] : t == tl[n] ? ATTEND_EOS : ATTEND_PAD;
        }
        r++;
    }
    attend_tf_stats ref, plain;
    EXPECT(attend_model_forward(m, &b, &ref, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    for (int r = 0; r < rows; r++)
        for (int t = 1; t < T; t++)
            if (t < b.tgt_len[r]) b.tgt_in[r * T + t] = b.tgt_out[r * T + t - 1];
    EXPECT(attend_model_forward(m, &b, &plain, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_trainer *tr = NULL;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    attend_train_options o = {0};
    o.sampling_prob = 1;
    EXPECT(attend_trainer_create(&tr, m, &oc, d, rows, 4, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (tr) {
        EXPECT(attend_trainer_set_options(tr, &o, &err) == ATTEND_OK, "%s: %s", what, err.msg);
        attend_step_report rep;
        EXPECT(attend_trainer_step(tr, &rep, &err) == ATTEND_OK, "%s: %s", what, err.msg);
        printf("  %s, %d rows: sampled loss %.7f, greedy-input reference %.7f, teacher forcing %.7f\n", what, rows,
               rep.tf.loss, ref.loss, plain.loss);
        EXPECT(fabs(rep.tf.loss - ref.loss) <= 1e-5 * fabs(ref.loss), "%s: sampled loss %.9g, reference %.9g", what,
               rep.tf.loss, ref.loss);
        EXPECT(fabs(plain.loss - ref.loss) > 1e-3, "%s: teacher forcing gives the same loss: vacuous", what);
        attend_trainer_free(tr);
    }
    attend_batch_release(&b);
    attend_dataset_free(d);
out:
    attend_model_free(m);
    attend_dataset_free(data);
    attend_vocab_free(v);
}

static void test_sampling(void) {
    attend_model_config c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.coverage = 1;
    check_sampling("sampling p=1, L2+coverage gru/bahdanau", c);
    c.normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    check_sampling("sampling p=1, L2+coverage+sparsemax gru/bahdanau", c);
    c = base(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_DOT);
    c.normalizer = ATTEND_NORMALIZER_ENTMAX15;
    check_sampling("sampling p=1, L2+entmax15 lstm/luong/dot", c);
}

int main(void) {
    RUN(test_coverage_copy);
    RUN(test_monotonic_copy);
    RUN(test_normalizers);
    RUN(test_sampling);
    return harness_summary();
}
