/*
 * test_intervene.c — interventions and the length sweep:
 *   - weight edits (uniform, permute, drop-top) on hand-made rows, and their errors;
 *   - seed 000's Tables 14.2 and 14.3 through attend_attention_intervene, against
 *     the chapter's values (fractions of a = ln 2);
 *   - attend_model_intervene on trained reversal models: a hidden saved state
 *     renormalises exactly, the step that changes most is the mirrored one, the
 *     divergences are in range, the calls are deterministic; errors;
 *   - alignments of trained copy (diagonal) and reversal (anti-diagonal) models,
 *     greedy and beam;
 *   - attend_sweep_run: same seed, same numbers; CSV and SVG well-formed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

/* ------------------------------------------------------------ weight edits */

static void test_weight_edits(void) {
    attend_error err;
    attend_real w[4] = {0.5f, 0.25f, 0.125f, 0.125f};
    uint8_t valid[4] = {1, 1, 0, 1};
    EXPECT(attend_weights_edit(w, valid, 4, ATTEND_EDIT_UNIFORM, NULL, &err) == ATTEND_OK, "%s", err.msg);
    double want_u[4] = {1.0 / 3, 1.0 / 3, 0, 1.0 / 3}, got[4];
    for (int j = 0; j < 4; j++) got[j] = w[j];
    EXPECT_CLOSE("uniform over 3 valid positions", got, want_u, 4, 1e-7, 0);

    attend_real d[4] = {0.5f, 0.25f, 0.125f, 0.125f};
    EXPECT(attend_weights_edit(d, NULL, 4, ATTEND_EDIT_DROP_TOP, NULL, &err) == ATTEND_OK, "%s", err.msg);
    double want_d[4] = {0, 0.5, 0.25, 0.25};
    for (int j = 0; j < 4; j++) got[j] = d[j];
    EXPECT_CLOSE("drop-top renormalises the rest", got, want_d, 4, 1e-7, 0);

    attend_real p[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    int32_t perm[4] = {3, 0, 1, 2};
    EXPECT(attend_weights_edit(p, NULL, 4, ATTEND_EDIT_PERMUTE, perm, &err) == ATTEND_OK, "%s", err.msg);
    double want_p[4] = {0.4, 0.1, 0.2, 0.3};
    for (int j = 0; j < 4; j++) got[j] = p[j];
    EXPECT_CLOSE("permute: w'_j = w_perm[j]", got, want_p, 4, 1e-7, 0);

    /* a long row takes the in-place cycle path; compare with a direct gather */
    enum { LONG = 300 };
    attend_real big[LONG], ref[LONG];
    int32_t bperm[LONG];
    attend_permutation(bperm, LONG, 7);
    for (int j = 0; j < LONG; j++) big[j] = (attend_real)(j + 1) / (LONG * (LONG + 1) / 2);
    for (int j = 0; j < LONG; j++) ref[j] = big[bperm[j]];
    EXPECT(attend_weights_edit(big, NULL, LONG, ATTEND_EDIT_PERMUTE, bperm, &err) == ATTEND_OK, "%s", err.msg);
    int same = 1;
    for (int j = 0; j < LONG; j++) same &= big[j] == ref[j];
    EXPECT(same, "the cycle-following permutation of %d weights differs from the gather", LONG);

    /* permutations are permutations, and seeded */
    int32_t a[50], b[50], seen[50] = {0};
    attend_permutation(a, 50, 3);
    attend_permutation(b, 50, 3);
    EXPECT(!memcmp(a, b, sizeof a), "same seed, different permutations");
    for (int j = 0; j < 50; j++) seen[a[j]]++;
    int once = 1;
    for (int j = 0; j < 50; j++) once &= seen[j] == 1;
    EXPECT(once, "attend_permutation is not a permutation");

    /* errors, nothing written */
    attend_real e[3] = {0.2f, 0.3f, 0.5f};
    uint8_t none[3] = {0, 0, 0}, one[3] = {0, 1, 0};
    EXPECT(attend_weights_edit(e, none, 3, ATTEND_EDIT_UNIFORM, NULL, &err) == ATTEND_ERR_MASKED_ROW, "all masked");
    EXPECT(attend_weights_edit(e, one, 3, ATTEND_EDIT_DROP_TOP, NULL, &err) == ATTEND_ERR_ARG, "drop-top of 1");
    printf("  drop-top of one valid position: %s\n", err.msg);
    int32_t dup[3] = {0, 0, 1}, cross[3] = {1, 0, 2};
    EXPECT(attend_weights_edit(e, NULL, 3, ATTEND_EDIT_PERMUTE, dup, &err) == ATTEND_ERR_ARG, "duplicate index");
    printf("  repeated index: %s\n", err.msg);
    EXPECT(attend_weights_edit(e, one, 3, ATTEND_EDIT_PERMUTE, cross, &err) == ATTEND_ERR_ARG, "crosses the mask");
    printf("  across the mask: %s\n", err.msg);
    EXPECT(attend_weights_edit(e, NULL, 3, ATTEND_EDIT_PERMUTE, NULL, &err) == ATTEND_ERR_NULL, "no perm");
    attend_real nan_row[2] = {NAN, 1};
    EXPECT(attend_weights_edit(nan_row, NULL, 2, ATTEND_EDIT_UNIFORM, NULL, &err) == ATTEND_ERR_NONFINITE, "NaN");
    EXPECT(e[0] == 0.2f && e[1] == 0.3f && e[2] == 0.5f, "a refused edit changed the row");
}

/* --------------------------------------------------------------- textbook */

/* The chapter's encoder h_t = ReLU(h_{t-1} + E(x_t)), E(红色)=[a,0], E(钥匙)=[-a,a], E(。)=[0,-a]. */
static void relu_encode(attend_real *h, const int *ids, int n) {
    const double a = log(2.0), emb[3][2] = {{a, 0}, {-a, a}, {0, -a}};
    double prev[2] = {0, 0};
    for (int t = 0; t < n; t++)
        for (int d = 0; d < 2; d++) {
            double x = prev[d] + emb[ids[t]][d];
            prev[d] = x > 0 ? x : 0;
            h[t * 2 + d] = (attend_real)prev[d];
        }
}

static void test_textbook_tables(void) {
    const double a = log(2.0);
    attend_score_config cfg = {ATTEND_SCORE_DOT, 2, 2, 0, 0, 0};
    attend_score_params sp = {0};
    attend_real q[2] = {1, 0}, h[6], w[3], c[2];
    int ids[3] = {0, 1, 2};
    relu_encode(h, ids, 3);
    double want_h[6] = {a, 0, 0, a, 0, 0}, got_h[6];
    for (int i = 0; i < 6; i++) got_h[i] = h[i];
    EXPECT_CLOSE("ReLU encoder states [a,0] [0,a] [0,0]", got_h, want_h, 6, 1e-7, 0);
    attend_error err;
    /* Table 14.2: remove saved state j */
    const double want_w[3][3] = {{0, 0.5, 0.5}, {2.0 / 3, 0, 1.0 / 3}, {2.0 / 3, 1.0 / 3, 0}};
    const double want_c[3][2] = {{0, a / 2}, {2 * a / 3, 0}, {2 * a / 3, a / 3}};
    const double want_r[3] = {a, 2 * a / 3, 4 * a / 3};
    for (int j = 0; j < 3; j++) {
        attend_intervention iv = {ATTEND_IV_REMOVE_STATE, j, 0, 0, 0, 0, 0};
        EXPECT(attend_attention_intervene(&cfg, &sp, c, w, q, h, h, 3, 2, &iv, &err) == ATTEND_OK, "%s", err.msg);
        double gw[3] = {w[0], w[1], w[2]}, gc[2] = {c[0], c[1]};
        char what[64];
        snprintf(what, sizeof what, "Table 14.2 weights, state %d removed", j + 1);
        EXPECT_CLOSE(what, gw, want_w[j], 3, 1e-7, 0);
        EXPECT(w[j] == 0, "the removed position has weight %g, not exactly 0", (double)w[j]);
        EXPECT_CLOSE("  context", gc, want_c[j], 2, 1e-7, 0);
        EXPECT_NEAR("  readout r = c1 + 2 c2", (double)c[0] + 2 * (double)c[1], want_r[j], 1e-6);
    }
    /* Table 14.3: delete token j, re-encode the other two, read with q1 */
    const double want_r3[3] = {a, a, 4 * a / 3};
    const double want_h3[3][4] = {{0, a, 0, 0}, {a, 0, a, 0}, {a, 0, 0, a}};
    for (int j = 0; j < 3; j++) {
        int keep[2], n = 0;
        for (int t = 0; t < 3; t++)
            if (t != j) keep[n++] = t;
        attend_real h2[4], w2[2], work[64];
        relu_encode(h2, keep, 2);
        double gh[4] = {h2[0], h2[1], h2[2], h2[3]};
        char what[64];
        snprintf(what, sizeof what, "Table 14.3 re-encoded states, token %d deleted", j + 1);
        EXPECT_CLOSE(what, gh, want_h3[j], 4, 1e-7, 0);
        size_t ws = attend_attention_workspace_size(&cfg, 1, 1, 2);
        EXPECT(ws <= 64, "workspace %zu", ws);
        EXPECT(attend_attention_forward(&cfg, &sp, c, w2, q, h2, h2, NULL, NULL, 0, 1, 1, 2, 2, work, ws, &err) ==
                   ATTEND_OK,
               "%s", err.msg);
        EXPECT_NEAR("  readout r", (double)c[0] + 2 * (double)c[1], want_r3[j], 1e-6);
    }
    /* the two interventions disagree exactly on 钥匙 */
    EXPECT(fabs(want_r[1] - want_r3[1]) > 0.2, "the tables should differ on row 2");
    /* whole-map edits on the baseline [1/2,1/4,1/4] */
    attend_intervention u = {ATTEND_IV_UNIFORM, 0, 0, 0, 0, 0, 0}, dt = {ATTEND_IV_DROP_TOP, 0, 0, 0, 0, 0, 0};
    EXPECT(attend_attention_intervene(&cfg, &sp, c, w, q, h, h, 3, 2, &u, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT_NEAR("uniform: r = a/3 + 2a/3 = a", (double)c[0] + 2 * (double)c[1], a, 1e-6);
    EXPECT(attend_attention_intervene(&cfg, &sp, c, w, q, h, h, 3, 2, &dt, &err) == ATTEND_OK, "%s", err.msg);
    double gd[3] = {w[0], w[1], w[2]}, wd[3] = {0, 0.5, 0.5};
    EXPECT_CLOSE("drop-top of [1/2,1/4,1/4]", gd, wd, 3, 1e-7, 0);
    attend_intervention del = {ATTEND_IV_DELETE_TOKEN, 0, 0, 0, 0, 0, 0}, out = {ATTEND_IV_REMOVE_STATE, 3, 0, 0, 0, 0, 0};
    EXPECT(attend_attention_intervene(&cfg, &sp, c, w, q, h, h, 3, 2, &del, &err) == ATTEND_ERR_ARG, "delete");
    printf("  token deletion without an encoder: %s\n", err.msg);
    EXPECT(attend_attention_intervene(&cfg, &sp, c, w, q, h, h, 3, 2, &out, &err) == ATTEND_ERR_ARG, "position");
    EXPECT(attend_attention_intervene(&cfg, &sp, c, w, q, h, h, 1, 2, &dt, &err) == ATTEND_ERR_MASKED_ROW, "S=1");
}

/* ----------------------------------------------------------- trained models */

typedef struct {
    attend_model *m;
    attend_vocab *vocab;
    attend_dataset *dev;
} trained;

static int train_model(trained *t, attend_task task, attend_decoder_kind dec, attend_score_kind score, int steps) {
    memset(t, 0, sizeof *t);
    attend_error err;
    attend_task_config tc = {task, 8, 4, 8, 4000, 21};
    attend_dataset *train = NULL;
    attend_vocab *dv = NULL;
    if (attend_dataset_task(&train, &t->vocab, &tc, &err)) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    tc.seed = 22;
    tc.count = 100;
    attend_dataset_task(&t->dev, &dv, &tc, NULL);
    attend_vocab_free(dv);
    int V = attend_vocab_size(t->vocab);
    attend_model_config mc = {ATTEND_CELL_GRU, dec, score, V, V, 16, 32, 1, 64, 32, 32, 8, 16, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_trainer *tr = NULL;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 5e-3;
    oc.clip_norm = 1;
    oc.warmup_steps = 30;
    oc.decay_steps = steps - 30;
    oc.min_lr = 1e-4;
    int ok = attend_model_create(&t->m, &mc, 5, &err) == ATTEND_OK &&
             attend_trainer_create(&tr, t->m, &oc, train, 32, 6, &err) == ATTEND_OK;
    for (int s = 0; ok && s < steps; s++) ok = attend_trainer_step(tr, NULL, &err) == ATTEND_OK;
    EXPECT(ok, "training: %s", err.msg);
    attend_trainer_free(tr);
    attend_dataset_free(train);
    attend_eval_stats st;
    if (ok && attend_model_evaluate(t->m, t->dev, 32, 0, &st, &err) == ATTEND_OK)
        printf("  %s %s-%s, %d steps: greedy seq acc %.3f, entropy %.3f\n", task == ATTEND_TASK_COPY ? "copy" : "reverse",
               attend_decoder_name(dec), attend_score_name(score), steps, st.greedy_seq_acc, st.attn_entropy);
    return ok;
}

static void free_trained(trained *t) {
    attend_model_free(t->m);
    attend_vocab_free(t->vocab);
    attend_dataset_free(t->dev);
}

/* Greedy (and beam) alignments: argmax per step on the (anti-)diagonal. */
static void check_alignment(trained *t, int reverse) {
    attend_error err;
    int off = 0, total = 0, beam_off = 0, beam_total = 0;
    for (int i = 0; i < attend_dataset_size(t->dev) && i < 40; i++) {
        const int32_t *src, *tgt;
        int S, T;
        attend_dataset_get(t->dev, i, &src, &S, &tgt, &T, NULL);
        int32_t out[16], out_len, src_len = S;
        attend_real align[16 * 8];
        if (attend_model_greedy(t->m, src, &src_len, 1, S, 16, out, &out_len, align, &err)) {
            EXPECT(0, "%s", err.msg);
            return;
        }
        for (int s = 0; s < out_len && s < S; s++) {
            int best = 0;
            for (int j = 1; j < S; j++)
                if (align[s * S + j] > align[s * S + best]) best = j;
            off += best != (reverse ? S - 1 - s : s);
            total++;
        }
        int32_t bout[2 * 16], blen[2];
        double score[2];
        attend_real balign[2 * 16 * 8];
        int got = 0;
        if (attend_model_beam(t->m, src, S, 3, 2, 16, 0, bout, blen, score, balign, &got, &err)) {
            EXPECT(0, "%s", err.msg);
            return;
        }
        for (int s = 0; got > 0 && s < blen[0] && s < S; s++) {
            int best = 0;
            for (int j = 1; j < S; j++)
                if (balign[s * S + j] > balign[s * S + best]) best = j;
            beam_off += best != (reverse ? S - 1 - s : s);
            beam_total++;
        }
    }
    printf("  %s: argmax off the %s in %d of %d greedy steps, %d of %d beam steps\n", reverse ? "reverse" : "copy",
           reverse ? "anti-diagonal" : "diagonal", off, total, beam_off, beam_total);
    EXPECT(total > 100 && off <= total / 20, "greedy: %d of %d steps off", off, total);
    EXPECT(beam_total > 100 && beam_off <= beam_total / 20, "beam: %d of %d steps off", beam_off, beam_total);
}

static void test_alignments(void) {
    trained c, r;
    if (train_model(&c, ATTEND_TASK_COPY, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 400)) check_alignment(&c, 0);
    if (train_model(&r, ATTEND_TASK_REVERSE, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 300)) check_alignment(&r, 1);
    free_trained(&c);
    free_trained(&r);
}

static void test_model_interventions(void) {
    trained t;
    if (!train_model(&t, ATTEND_TASK_REVERSE, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 400)) {
        free_trained(&t);
        return;
    }
    attend_error err;
    int mirrored = 0, positions = 0, changed = 0, sentences = 0;
    double worst_renorm = 0, worst_sum = 0;
    for (int i = 0; i < attend_dataset_size(t.dev) && i < 12; i++) {
        const int32_t *src, *tgt;
        int S, T;
        attend_dataset_get(t.dev, i, &src, &S, &tgt, &T, NULL);
        int32_t base[16], base_len, src_len = S;
        attend_real align0[16 * 8];
        if (attend_model_greedy(t.m, src, &src_len, 1, S, 16, base, &base_len, align0, &err) || base_len >= 16) {
            EXPECT(0, "greedy: %s", err.msg);
            break;
        }
        /* step 0 of a Bahdanau decoder reads with s_0, which the removal does not
         * touch: its weights are the baseline's renormalised without position j */
        attend_real w0[8];
        double tv[17], kl[17], js[17];
        attend_real fal[17 * 8];
        int32_t out[16];
        sentences++;
        for (int j = 0; j < S; j++) {
            attend_intervention iv = {ATTEND_IV_REMOVE_STATE, j, 0, 0, 0, 0, 0};
            attend_intervention_result res;
            memset(&res, 0, sizeof res);
            res.tv = tv;
            res.kl = kl;
            res.js = js;
            res.forced_align = fal;
            res.out = out;
            if (attend_model_intervene(t.m, src, S, base, base_len, 16, &iv, &res, &err)) {
                EXPECT(0, "%s", err.msg);
                break;
            }
            EXPECT(res.steps == base_len + 1 && res.src_len == S, "steps %d src_len %d", res.steps, res.src_len);
            /* the baseline's step-0 weights, from forced scoring of the same output */
            double lp;
            attend_real forced[17 * 8];
            if (attend_model_score(t.m, src, S, base, base_len, &lp, forced, &err)) {
                EXPECT(0, "%s", err.msg);
                break;
            }
            for (int k = 0; k < S; k++) w0[k] = forced[k];
            for (int k = 0; k < S; k++) {
                double want = k == j ? 0 : (double)w0[k] / (1 - (double)w0[j]);
                double d = fabs((double)fal[k] - want);
                if (d > worst_renorm) worst_renorm = d;
            }
            for (int s = 0; s < res.steps; s++) {
                double sum = 0;
                for (int k = 0; k < S; k++) sum += fal[s * S + k];
                EXPECT(fal[s * S + j] == 0, "step %d: hidden state %d has weight %g", s, j, (double)fal[s * S + j]);
                if (fabs(sum - 1) > worst_sum) worst_sum = fabs(sum - 1);
            }
            int at = 0;
            for (int s = 0; s < res.steps; s++) {
                EXPECT(tv[s] >= 0 && tv[s] <= 1 + 1e-12 && kl[s] >= 0 && js[s] >= 0 && js[s] <= log(2) + 1e-9,
                       "step %d: tv %g kl %g js %g out of range", s, tv[s], kl[s], js[s]);
                if (tv[s] > tv[at]) at = s;
            }
            mirrored += at == S - 1 - j;
            changed += res.changed;
            positions++;
        }
    }
    printf("  remove-state over %d positions of %d sentences: largest change at the mirrored step for %d, output "
           "changed for %d\n",
           positions, sentences, mirrored, changed);
    printf("  step-0 renormalisation worst |diff| %.2e, worst |sum - 1| %.2e\n", worst_renorm, worst_sum);
    EXPECT(worst_renorm < 1e-5, "step 0 is not the baseline renormalised: %g", worst_renorm);
    EXPECT(worst_sum < 1e-5, "weights do not sum to 1: %g", worst_sum);
    EXPECT(positions > 40 && mirrored >= positions * 8 / 10, "mirrored %d of %d", mirrored, positions);

    /* the other kinds on one sentence: deterministic; a deletion shortens the output */
    const int32_t *src, *tgt;
    int S, T;
    attend_dataset_get(t.dev, 0, &src, &S, &tgt, &T, NULL);
    int32_t base[16], base_len, src_len = S;
    attend_model_greedy(t.m, src, &src_len, 1, S, 16, base, &base_len, NULL, &err);
    const attend_intervention kinds[] = {
        {ATTEND_IV_DELETE_TOKEN, 1, 0, 0, 0, 0, 0}, {ATTEND_IV_REPLACE_TOKEN, 0, ATTEND_UNK + 1, 0, 0, 0, 0},
        {ATTEND_IV_UNIFORM, 0, 0, 0, 0, 0, 0},      {ATTEND_IV_PERMUTE, 0, 0, 9, 0, 0, 0},
        {ATTEND_IV_DROP_TOP, 0, 0, 0, 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        attend_intervention_result r1, r2;
        double tv1[17], tv2[17];
        int32_t o1[16], o2[16];
        memset(&r1, 0, sizeof r1);
        memset(&r2, 0, sizeof r2);
        r1.tv = tv1;
        r1.out = o1;
        r2.tv = tv2;
        r2.out = o2;
        EXPECT(attend_model_intervene(t.m, src, S, base, base_len, 16, &kinds[k], &r1, &err) == ATTEND_OK, "%s",
               err.msg);
        EXPECT(attend_model_intervene(t.m, src, S, base, base_len, 16, &kinds[k], &r2, &err) == ATTEND_OK, "%s",
               err.msg);
        EXPECT(r1.tv_mean == r2.tv_mean && r1.out_len == r2.out_len && !memcmp(tv1, tv2, sizeof(double) * r1.steps),
               "%s is not deterministic", attend_intervention_name(kinds[k].kind));
        printf("  %-13s tv mean %.4f max %.4f, js mean %.4f, output %s (%d tokens)\n",
               attend_intervention_name(kinds[k].kind), r1.tv_mean, r1.tv_max, r1.js_mean,
               r1.changed ? "changed" : "unchanged", r1.out_len);
        if (kinds[k].kind == ATTEND_IV_DELETE_TOKEN) {
            EXPECT(r1.src_len == S - 1, "src_len %d after a deletion", r1.src_len);
            EXPECT(r1.changed && r1.out_len == S - 1, "a reversal of a shorter source has %d tokens", r1.out_len);
        }
    }
    /* no-op check: a replacement with the same token changes nothing */
    attend_intervention same = {ATTEND_IV_REPLACE_TOKEN, 2, src[2], 0, 0, 0, 0};
    attend_intervention_result rs;
    memset(&rs, 0, sizeof rs);
    EXPECT(attend_model_intervene(t.m, src, S, base, base_len, 16, &same, &rs, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(rs.tv_max == 0 && rs.kl_max == 0 && !rs.changed, "replacing a token by itself: tv %g kl %g changed %d",
           rs.tv_max, rs.kl_max, rs.changed);

    /* errors */
    attend_intervention bad = {ATTEND_IV_REMOVE_STATE, S, 0, 0, 0, 0, 0};
    attend_intervention_result r;
    memset(&r, 0, sizeof r);
    EXPECT(attend_model_intervene(t.m, src, S, base, base_len, 16, &bad, &r, &err) == ATTEND_ERR_ARG, "position");
    printf("  position out of range: %s\n", err.msg);
    attend_intervention one = {ATTEND_IV_DELETE_TOKEN, 0, 0, 0, 0, 0, 0};
    EXPECT(attend_model_intervene(t.m, src, 1, base, base_len, 16, &one, &r, &err) == ATTEND_ERR_ARG, "only token");
    printf("  deleting the only token: %s\n", err.msg);
    attend_intervention rep = {ATTEND_IV_REPLACE_TOKEN, 0, 999, 0, 0, 0, 0};
    EXPECT(attend_model_intervene(t.m, src, S, base, base_len, 16, &rep, &r, &err) == ATTEND_ERR_ARG, "token id");
    int32_t bad_base[2] = {ATTEND_PAD, 5};
    attend_intervention u = {ATTEND_IV_UNIFORM, 0, 0, 0, 0, 0, 0};
    EXPECT(attend_model_intervene(t.m, src, S, bad_base, 2, 16, &u, &r, &err) == ATTEND_ERR_ARG, "PAD in base");
    printf("  PAD in the baseline: %s\n", err.msg);
    EXPECT(attend_model_intervene(t.m, src, S, base, 40, 16, &u, &r, &err) == ATTEND_ERR_CAPACITY, "long base");
    EXPECT(attend_model_intervene(NULL, src, S, base, base_len, 16, &u, &r, &err) == ATTEND_ERR_NULL, "NULL");
    free_trained(&t);

    /* decoder kinds: none takes only token interventions; pointer none */
    attend_model_config none_cfg = {ATTEND_CELL_GRU, ATTEND_DECODER_NONE, ATTEND_SCORE_ADDITIVE, 8, 8, 8, 8, 1, 16,
                                    8, 1, 6, 6, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_model *m = NULL;
    EXPECT(attend_model_create(&m, &none_cfg, 1, &err) == ATTEND_OK, "%s", err.msg);
    int32_t s6[3] = {4, 5, 6}, b2[2] = {5, 6};
    EXPECT(attend_model_intervene(m, s6, 3, b2, 2, 6, &u, &r, &err) == ATTEND_ERR_ARG, "none + uniform");
    printf("  decoder none: %s\n", err.msg);
    attend_intervention d0 = {ATTEND_IV_DELETE_TOKEN, 0, 0, 0, 0, 0, 0};
    EXPECT(attend_model_intervene(m, s6, 3, b2, 2, 6, &d0, &r, &err) == ATTEND_OK, "none + delete: %s", err.msg);
    attend_model_free(m);
    none_cfg.decoder = ATTEND_DECODER_POINTER;
    EXPECT(attend_model_create(&m, &none_cfg, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_intervene(m, s6, 3, b2, 2, 6, &d0, &r, &err) == ATTEND_ERR_ARG, "pointer");
    printf("  pointer decoder: %s\n", err.msg);
    attend_model_free(m);
}

/* ------------------------------------------------------------------ sweep */

static int count_of(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void test_sweep(void) {
    const int lengths[2] = {3, 6};
    const attend_sweep_model models[2] = {{.decoder = ATTEND_DECODER_NONE, .score = ATTEND_SCORE_ADDITIVE},
                                          {.decoder = ATTEND_DECODER_LUONG, .score = ATTEND_SCORE_GENERAL}};
    attend_sweep_config c;
    memset(&c, 0, sizeof c);
    c.task = ATTEND_TASK_REVERSE;
    c.symbols = 6;
    c.train_pairs = 500;
    c.dev_pairs = 40;
    c.lengths = lengths;
    c.n_lengths = 2;
    c.models = models;
    c.n_models = 2;
    c.cell = ATTEND_CELL_GRU;
    c.emb = 8;
    c.enc_hidden = 8;
    c.dec_hidden = 16;
    c.attn = 8;
    c.steps = 30;
    c.batch = 16;
    c.optim = attend_optim_defaults(ATTEND_OPT_ADAM);
    c.optim.lr = 5e-3;
    c.seed = 4;
    attend_sweep_row a[4], b[4];
    attend_error err;
    EXPECT(attend_sweep_run(&c, a, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_sweep_run(&c, b, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    int same = 1;
    for (int i = 0; i < 4; i++) same &= !memcmp(&a[i].eval, &b[i].eval, sizeof a[i].eval);
    EXPECT(same, "the same seed gave different numbers");
    for (int i = 0; i < 4; i++) {
        EXPECT(a[i].length == lengths[i / 2] && a[i].eval.pairs == 40, "row %d: length %d pairs %d", i, a[i].length,
               a[i].eval.pairs);
        EXPECT(fabs(a[i].uniform_entropy - log(lengths[i / 2])) < 1e-9, "row %d: ln S %g", i, a[i].uniform_entropy);
        EXPECT(a[i].samples_per_s > 0 && a[i].wall_seconds >= a[i].train_seconds, "row %d timing", i);
    }
    EXPECT(a[0].eval.attn_entropy == 0 && a[1].eval.attn_entropy > 0, "entropy: none %g, luong %g",
           a[0].eval.attn_entropy, a[1].eval.attn_entropy);
    /* each length's rows depend only on the seed and that length: runs split by
     * length give the same rows */
    attend_sweep_row split[2];
    for (int li = 0; li < 2; li++) {
        c.lengths = lengths + li;
        c.n_lengths = 1;
        EXPECT(attend_sweep_run(&c, split, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
        for (int mi = 0; mi < 2; mi++)
            EXPECT(!memcmp(&split[mi].eval, &a[li * 2 + mi].eval, sizeof split[mi].eval),
                   "length %d, model %d: a split run differs", lengths[li], mi);
    }
    c.lengths = lengths;
    c.n_lengths = 2;
    char *csv = NULL, *svg = NULL;
    EXPECT(attend_sweep_csv(a, 4, &csv, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_sweep_plot_svg(a, 4, NULL, &svg, &err) == ATTEND_OK, "%s", err.msg);
    if (csv) {
        EXPECT(count_of(csv, "\n") == 5, "CSV has %d lines", count_of(csv, "\n"));
        EXPECT(!strncmp(csv, "model,decoder,score,length,", 27), "CSV header: %.40s", csv);
        EXPECT(strstr(csv, "\nnone,none,,3,3,40,") && strstr(csv, "\nluong-general,luong,general,6,6,40,"),
               "CSV rows:\n%s", csv);
        /* 16 fields per line */
        int ok = 1;
        for (const char *line = csv; *line;) {
            const char *end = strchr(line, '\n');
            int commas = 0;
            for (const char *p = line; p < end; p++) commas += *p == ',';
            ok &= commas == 15;
            line = end + 1;
        }
        EXPECT(ok, "a CSV line without 16 fields");
    }
    if (csv) { /* CSV back to rows: the numbers survive at the printed precision */
        attend_sweep_row back[4];
        int n = 0;
        EXPECT(attend_sweep_csv_parse(csv, strlen(csv), "sweep.csv", back, 4, &n, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(n == 4, "parsed %d rows", n);
        for (int i = 0; i < n && i < 4; i++) {
            EXPECT(back[i].length == a[i].length && back[i].model.decoder == a[i].model.decoder &&
                       back[i].eval.pairs == a[i].eval.pairs,
                   "row %d: length/decoder/pairs", i);
            EXPECT(fabs(back[i].eval.greedy_seq_acc - a[i].eval.greedy_seq_acc) <= 5e-5 &&
                       fabs(back[i].eval.loss - a[i].eval.loss) <= 5e-6,
                   "row %d: accuracy %g vs %g", i, back[i].eval.greedy_seq_acc, a[i].eval.greedy_seq_acc);
        }
        EXPECT(attend_sweep_csv_parse(csv, strlen(csv), "sweep.csv", back, 3, &n, &err) == ATTEND_ERR_CAPACITY,
               "4 rows into 3");
        const char *bad = "model,decoder,score,length,min_length,pairs,greedy_seq_acc,greedy_token_acc,tf_seq_acc,"
                          "tf_token_acc,loss,attn_entropy,uniform_entropy,samples_per_s,train_seconds,wall_seconds\n"
                          "none,none,,5,5,300,0.5,x,,,,,,,,\n";
        EXPECT(attend_sweep_csv_parse(bad, strlen(bad), "bad.csv", back, 4, &n, &err) == ATTEND_ERR_FORMAT, "x");
        printf("  %s\n", err.msg);
        EXPECT(strstr(err.msg, "bad.csv:2") && strstr(err.msg, "greedy_token_acc"), "message: %s", err.msg);
        EXPECT(attend_sweep_csv_parse("a,b\n", 4, "h.csv", back, 4, &n, &err) == ATTEND_ERR_FORMAT, "header");
        const char *luong_no_score = "model,decoder,score,length,min_length,pairs,greedy_seq_acc,greedy_token_acc,"
                                     "tf_seq_acc,tf_token_acc,loss,attn_entropy,uniform_entropy,samples_per_s,"
                                     "train_seconds,wall_seconds\nx,luong,,5,5,3,,,,,,,,,,\n";
        EXPECT(attend_sweep_csv_parse(luong_no_score, strlen(luong_no_score), "s.csv", back, 4, &n, &err) ==
                   ATTEND_ERR_FORMAT,
               "luong without a score");
    }
    if (svg) {
        EXPECT(!strncmp(svg, "<svg", 4) || strstr(svg, "<svg"), "not an SVG");
        EXPECT(strstr(svg, "none") && strstr(svg, "luong-general"), "legend lacks a model");
        EXPECT(strstr(svg, "</svg>"), "unterminated SVG");
    }
    free(csv);
    free(svg);
    /* TSV mode: buckets */
    attend_dataset *train = NULL, *dev = NULL;
    attend_vocab *v = NULL, *v2 = NULL;
    attend_task_config tc = {ATTEND_TASK_COPY, 6, 2, 7, 300, 1};
    attend_dataset_task(&train, &v, &tc, NULL);
    tc.seed = 2;
    tc.count = 60;
    attend_dataset_task(&dev, &v2, &tc, NULL);
    c.train = train;
    c.dev = dev;
    c.src_vocab = c.tgt_vocab = attend_vocab_size(v);
    const int buckets[2] = {4, 20};
    c.lengths = buckets;
    attend_sweep_row t[4];
    EXPECT(attend_sweep_run(&c, t, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(t[0].min_length == 1 && t[0].length == 4 && t[2].min_length == 5 && t[2].length == 20, "buckets");
    EXPECT(t[0].eval.pairs + t[2].eval.pairs == 60 && t[0].eval.pairs > 0, "bucket pairs %d + %d", t[0].eval.pairs,
           t[2].eval.pairs);
    /* errors */
    const int bad_lengths[2] = {5, 5};
    c.lengths = bad_lengths;
    EXPECT(attend_sweep_run(&c, t, NULL, NULL, &err) == ATTEND_ERR_ARG, "lengths not increasing");
    printf("  %s\n", err.msg);
    c.lengths = buckets;
    /* issue 27: the transformer decoder needs the transformer encoder, named both ways */
    {
        attend_sweep_model tm[1] = {{ATTEND_DECODER_TRANSFORMER, ATTEND_SCORE_ADDITIVE, 0, 0, 0, 0}};
        const attend_sweep_model *keep = c.models;
        int keep_n = c.n_models;
        c.models = tm;
        c.n_models = 1;
        EXPECT(attend_sweep_run(&c, t, NULL, NULL, &err) == ATTEND_ERR_ARG, "transformer decoder over the rnn encoder");
        EXPECT(strstr(err.msg, "models[0]: decoder transformer") && strstr(err.msg, "not encoder rnn"), "%s", err.msg);
        printf("  %s\n", err.msg);
        char name[32];
        EXPECT(!strcmp(attend_sweep_model_name(tm[0], name, sizeof name), "transformer"), "name %s", name);
        c.models = keep;
        c.n_models = keep_n;
    }
    c.dev = NULL;
    EXPECT(attend_sweep_run(&c, t, NULL, NULL, &err) == ATTEND_ERR_ARG, "train without dev");
    c.train = NULL;
    c.task = ATTEND_TASK_SORT;
    EXPECT(attend_sweep_run(&c, t, NULL, NULL, &err) == ATTEND_ERR_ARG, "sort");
    printf("  %s\n", err.msg);
    attend_dataset_free(train);
    attend_dataset_free(dev);
    attend_vocab_free(v);
    attend_vocab_free(v2);
}

int main(void) {
    RUN(test_weight_edits);
    RUN(test_textbook_tables);
    RUN(test_alignments);
    RUN(test_model_interventions);
    RUN(test_sweep);
    return harness_summary();
}
