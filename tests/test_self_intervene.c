/*
 * test_self_intervene.c — interventions on a transformer encoder's
 * self-attention (issue 27; attend_intervention.site = ATTEND_SITE_ENCODER_SELF,
 * src/analysis/intervene.c's at_self_edit_weights through the encoder's
 * weight hook in core/mha.c). Planted answers a wrong implementation fails:
 *   - uniform self-attention in a layer / head equals the same model with
 *     that layer's (head's) query projection zeroed (every score 0, so the
 *     softmax is exactly uniform): the decoder's forced alignments along the
 *     baseline (attend_model_score of the edited model) and the free-running
 *     output agree; every layer and every head at once = all of them zeroed;
 *     with the Bahdanau and the transformer decoder;
 *   - remove-state of key j = the masked softmax that never lets a query see
 *     j (attend_mha_forward with allowed[t,j] = 0), to rounding, padding
 *     included (the kernel with the edit as its hook; internal headers);
 *   - permute by the identity (a seed whose permutation is the identity) is
 *     exactly a no-op (divergences 0, output unchanged); another seed is not;
 *   - the refusals name both sides: an rnn or conv encoder, a layer or head
 *     out of range, token deletion/replacement at this site, a layer/head on
 *     the cross site.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"
/* the kernel and the edit, for the masking reference */
#include "analysis/intervene.h"
#include "core/mha.h"

enum { V = 12, D = 8, H = 2, FF = 16, CAP = 10, S = 6 };
static const int32_t SRC[S] = {4, 7, 5, 11, 4, 9};

static attend_model_config config(int layers, int transformer_decoder) {
    attend_model_config c = {.cell = ATTEND_CELL_GRU, .decoder = ATTEND_DECODER_BAHDANAU,
                             .score = ATTEND_SCORE_ADDITIVE, .src_vocab = V, .tgt_vocab = V, .emb = D,
                             .enc_hidden = FF, .enc_layers = layers, .dec_hidden = 16, .attn = 16, .max_batch = 4,
                             .max_src_len = CAP, .max_tgt_len = CAP};
    c.encoder = ATTEND_ENCODER_TRANSFORMER;
    c.heads = H;
    if (transformer_decoder) {
        c.decoder = ATTEND_DECODER_TRANSFORMER;
        c.dec_layers = 2;
    }
    return c;
}

static attend_model *make(const attend_model_config *c) {
    attend_model *m = NULL;
    attend_error err;
    memset(&err, 0, sizeof err);
    EXPECT(attend_model_create(&m, c, 11, &err) == ATTEND_OK, "%s", err.msg);
    return m;
}

/* zero the query projection (rows of Wq and bq) of layer l (0-based), head h (1-based; 0 = every head) */
static void zero_queries(attend_model *m, int l, int h) {
    char name[80];
    attend_model_tensor w, b;
    attend_error err;
    snprintf(name, sizeof name, "encoder.layers.%d.self_attn.in_proj_weight", l);
    EXPECT(attend_model_tensor_find(m, name, &w, &err) == ATTEND_OK, "%s", err.msg);
    snprintf(name, sizeof name, "encoder.layers.%d.self_attn.in_proj_bias", l);
    EXPECT(attend_model_tensor_find(m, name, &b, &err) == ATTEND_OK, "%s", err.msg);
    int dh = D / H;
    for (int r = 0; r < D; r++) { /* Wq = rows 0..D-1 of in_proj */
        if (h && r / dh != h - 1) continue;
        memset(w.data + (size_t)r * D, 0, D * sizeof *w.data);
        b.data[r] = 0;
    }
}

/* Uniform self-attention (layer L / head Hh, 0 = all) on model A against the
 * model with those queries zeroed: forced alignments and outputs. */
static void uniform_case(int layers, int transformer_decoder, int L, int Hh) {
    attend_model_config c = config(layers, transformer_decoder);
    attend_model *a = make(&c), *z = make(&c);
    if (!a || !z) goto done;
    for (int l = 0; l < layers; l++)
        if (!L || l == L - 1) zero_queries(z, l, Hh);
    attend_error err;
    /* an untrained model's own greedy output may hold PAD/BOS: a fixed baseline instead */
    const int32_t base[] = {5, 8, 3, 9, 6, 7};
    int32_t base_len = 6, len = S;
    attend_intervention iv = {ATTEND_IV_UNIFORM, 0, 0, 0, ATTEND_SITE_ENCODER_SELF, L, Hh};
    attend_intervention_result res;
    memset(&res, 0, sizeof res);
    attend_real fa[(CAP + 1) * S], ref[(CAP + 1) * S];
    int32_t out[CAP], zout[CAP], zlen = 0;
    res.forced_align = fa;
    res.out = out;
    EXPECT(attend_model_intervene(a, SRC, S, base, base_len, CAP - 1, &iv, &res, &err) == ATTEND_OK, "%s", err.msg);
    double logp;
    EXPECT(attend_model_score(z, SRC, S, base, base_len, &logp, ref, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_greedy(z, SRC, &len, 1, S, CAP - 1, zout, &zlen, NULL, &err) == ATTEND_OK, "%s", err.msg);
    double worst = 0, moved = 0;
    for (int k = 0; k < (base_len + 1) * S; k++) {
        double d = fabs((double)fa[k] - ref[k]);
        if (d > worst) worst = d;
    }
    /* the edit must matter: the baseline's own alignments differ */
    attend_real own[(CAP + 1) * S];
    EXPECT(attend_model_score(a, SRC, S, base, base_len, &logp, own, &err) == ATTEND_OK, "%s", err.msg);
    for (int k = 0; k < (base_len + 1) * S; k++) moved = fmax(moved, fabs((double)own[k] - ref[k]));
    printf("  %d layer(s), %s decoder, layer %d head %d: forced alignments vs zeroed queries worst %.2e "
           "(baseline's differ by %.3f); TV mean %.4f\n",
           layers, transformer_decoder ? "transformer" : "bahdanau", L, Hh, worst, moved, res.tv_mean);
    EXPECT(worst <= 1e-6, "uniform self-attention differs from zeroed queries by %.3e", worst);
    EXPECT(moved > 1e-3 && res.tv_mean > 1e-5, "the edit changed nothing (%.3e, TV %.3e): the check could not fail",
           moved, res.tv_mean);
    EXPECT(res.out_len == zlen && !memcmp(out, zout, (size_t)zlen * sizeof *out),
           "free-running output (%d tokens) differs from the zeroed model's (%d)", res.out_len, zlen);
done:
    attend_model_free(a);
    attend_model_free(z);
}

static void test_uniform_is_zeroed_queries(void) {
    uniform_case(1, 0, 1, 0); /* the one layer, every head */
    uniform_case(1, 0, 1, 2); /* head 2 only */
    uniform_case(2, 0, 2, 1); /* layer 2, head 1 */
    uniform_case(2, 0, 0, 0); /* every layer, every head */
    uniform_case(2, 0, 0, 1); /* head 1 of every layer */
    uniform_case(2, 1, 1, 0); /* the transformer decoder reads the edited states */
    uniform_case(2, 1, 0, 2);
}

/* remove-state of key j through the kernel's hook = allowed[t,j] = 0 in
 * attend_mha_forward, on two rows (the second padded to length 4) */
static void hook_fn(void *user, attend_real *P, const uint8_t *valid, int N, int Hh, int T, int Sk) {
    (void)T;
    at_self_edit_weights(user, 0, P, valid, N, Hh, Sk);
}

static void test_remove_is_masking(void) {
    enum { N = 2 };
    attend_mha_config mc = {D, H, 0, 0, 1};
    attend_real w[3 * D * D + 3 * D + D * D + D], x[N * S * D];
    attend_rng rng;
    attend_rng_seed(&rng, 5);
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++)
        w[k] = (attend_real)(((double)(attend_rng_next(&rng) >> 11) / 9007199254740992.0 - 0.5) * 1.6);
    for (size_t k = 0; k < sizeof x / sizeof x[0]; k++)
        x[k] = (attend_real)(((double)(attend_rng_next(&rng) >> 11) / 9007199254740992.0 - 0.5) * 3);
    attend_mha_params p = {w, w + D * D, w + 2 * D * D, w + 3 * D * D, w + 3 * D * D + D, w + 3 * D * D + 2 * D,
                           w + 3 * D * D + 3 * D, w + 4 * D * D + 3 * D};
    uint8_t valid[N * S];
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++) valid[n * S + j] = n == 0 || j < 4;
    size_t wn = attend_mha_workspace_size(&mc, N, S, S);
    attend_real *ws = malloc(wn * sizeof *ws), *ws2 = malloc(wn * sizeof *ws2);
    if (!ws || !ws2) goto done;
    attend_error err;
    double worst = 0, moved = 0;
    for (int j = 0; j < 4; j++) {
            at_self_edit e = {ATTEND_IV_REMOVE_STATE, 0, 0, j, NULL};
            at_mha_hook hook = {hook_fn, &e};
            attend_real got[N * S * D], want[N * S * D], plain[N * S * D];
            at_self_attention_forward_model(&mc, &p, got, x, valid, 0, N, S, ws, &hook);
            at_self_attention_forward_model(&mc, &p, plain, x, valid, 0, N, S, ws2, NULL);
            uint8_t allowed[S * S];
            for (int t = 0; t < S; t++)
                for (int k = 0; k < S; k++) allowed[t * S + k] = k != j;
            EXPECT(attend_mha_forward(&mc, &p, want, NULL, 0, x, x, x, valid, allowed, 0, N, S, S, ws2, wn, &err) ==
                       ATTEND_OK,
                   "%s", err.msg);
            for (int n = 0; n < N; n++)
                for (int t = 0; t < S; t++) {
                    if (!valid[n * S + t]) continue; /* a padded query's row is not edited */
                    for (int d = 0; d < D; d++) {
                        size_t k = ((size_t)n * S + t) * D + d;
                        worst = fmax(worst, fabs((double)got[k] - want[k]));
                        moved = fmax(moved, fabs((double)plain[k] - want[k]));
                    }
                }
            /* the weights left in the workspace: column j is 0, rows sum to 1 */
            const attend_real *P = at_mha_weights(&mc, N, S, S, ws);
            for (int r = 0; r < N * H * S; r++) {
                if (!valid[(r / (H * S)) * S + r % S]) continue;
                double sum = 0;
                for (int k = 0; k < S; k++) sum += P[(size_t)r * S + k];
                EXPECT(P[(size_t)r * S + j] == 0 && fabs(sum - 1) < 1e-5, "row %d: weight of key %d = %g, sum %g", r,
                       j, (double)P[(size_t)r * S + j], sum);
            }
        }
    printf("  remove-state vs masked key (attend_mha_forward, allowed): worst %.2e; unmasked differs by %.3f\n", worst,
           moved);
    EXPECT(worst <= 2e-6, "remove-state differs from the masked softmax by %.3e", worst);
    EXPECT(moved > 1e-2, "masking the key changed nothing (%.3e): the check could not fail", moved);
done:
    free(ws);
    free(ws2);
}

/* a seed whose permutation of S positions is the identity: exactly no change */
static void test_identity_permute(void) {
    enum { S3 = 3 };
    const int32_t src[S3] = {4, 9, 6};
    int32_t perm[S3];
    uint64_t id_seed = 0, other = 0;
    for (uint64_t s = 1; s < 1000 && (!id_seed || !other); s++) {
        attend_permutation(perm, S3, s);
        int is_id = perm[0] == 0 && perm[1] == 1 && perm[2] == 2;
        if (is_id && !id_seed) id_seed = s;
        if (!is_id && !other) other = s;
    }
    EXPECT(id_seed && other, "no identity permutation of 3 among 999 seeds");
    attend_model_config c = config(2, 0);
    attend_model *m = make(&c);
    if (!m) return;
    attend_error err;
    const int32_t base[] = {6, 9, 4};
    int32_t base_len = 3, g[CAP], g_len = 0, len = S3;
    EXPECT(attend_model_greedy(m, src, &len, 1, S3, CAP - 1, g, &g_len, NULL, &err) == ATTEND_OK, "%s", err.msg);
    for (int k = 0; k < 2; k++) {
        attend_intervention iv = {ATTEND_IV_PERMUTE, 0, 0, k ? other : id_seed, ATTEND_SITE_ENCODER_SELF, 0, 0};
        attend_intervention_result res;
        memset(&res, 0, sizeof res);
        int32_t out[CAP];
        res.out = out;
        EXPECT(attend_model_intervene(m, src, S3, base, base_len, CAP - 1, &iv, &res, &err) == ATTEND_OK, "%s",
               err.msg);
        int same = res.out_len == g_len && !memcmp(out, g, (size_t)g_len * sizeof *g);
        printf("  permute seed %llu (%s): TV max %.3g, KL max %.3g, JS max %.3g, greedy output %s\n",
               (unsigned long long)iv.seed, k ? "not the identity" : "the identity", res.tv_max, res.kl_max,
               res.js_max, same ? "the model's own" : "changed");
        if (!k)
            EXPECT(res.tv_max == 0 && res.kl_max == 0 && res.js_max == 0 && same,
                   "the identity permutation changed something (TV %.3e, output %s)", res.tv_max,
                   same ? "the same" : "changed");
        else EXPECT(res.tv_max > 1e-4, "a real permutation changed nothing (TV %.3e)", res.tv_max);
    }
    attend_model_free(m);
}

static void refused(attend_model *m, attend_intervention iv, const char *a, const char *b) {
    attend_error err;
    memset(&err, 0, sizeof err);
    int32_t base[1] = {4};
    attend_intervention_result res;
    memset(&res, 0, sizeof res);
    attend_status st = attend_model_intervene(m, SRC, S, base, 1, CAP - 1, &iv, &res, &err);
    EXPECT(st == ATTEND_ERR_ARG && strstr(err.msg, a) && strstr(err.msg, b), "status %d, message '%s' (want '%s', '%s')",
           (int)st, err.msg, a, b);
    printf("  %s\n", err.msg);
}

static void test_refusals(void) {
    attend_model_config c = config(2, 0);
    attend_model *m = make(&c);
    if (!m) return;
    const int E = ATTEND_SITE_ENCODER_SELF;
    refused(m, (attend_intervention){ATTEND_IV_UNIFORM, 0, 0, 0, E, 3, 0}, "layer=3", "enc_layers=2");
    refused(m, (attend_intervention){ATTEND_IV_UNIFORM, 0, 0, 0, E, 0, 3}, "head=3", "heads=2");
    refused(m, (attend_intervention){ATTEND_IV_UNIFORM, 0, 0, 0, E, -1, 0}, "layer=-1", "enc_layers=2");
    refused(m, (attend_intervention){ATTEND_IV_DELETE_TOKEN, 1, 0, 0, E, 0, 0}, "delete-token", "encoder-self");
    refused(m, (attend_intervention){ATTEND_IV_REPLACE_TOKEN, 1, 5, 0, E, 0, 0}, "replace-token", "encoder-self");
    refused(m, (attend_intervention){ATTEND_IV_REMOVE_STATE, 1, 0, 0, ATTEND_SITE_CROSS, 1, 0}, "layer=1",
            "site is cross");
    refused(m, (attend_intervention){ATTEND_IV_REMOVE_STATE, 1, 0, 0, 7, 0, 0}, "unknown site 7", "encoder-self");
    refused(m, (attend_intervention){ATTEND_IV_REMOVE_STATE, S, 0, 0, E, 0, 0}, "position 6", "[0,6)");
    attend_model_free(m);
    for (int kind = 0; kind < 2; kind++) {
        c = config(1, 0);
        c.heads = 0;
        c.encoder = kind ? ATTEND_ENCODER_CONV : ATTEND_ENCODER_RNN;
        if (kind) c.kernel = 3;
        m = make(&c);
        if (!m) return;
        refused(m, (attend_intervention){ATTEND_IV_UNIFORM, 0, 0, 0, E, 0, 0}, "encoder-self",
                kind ? "encoder is conv" : "encoder is rnn");
        attend_model_free(m);
    }
    EXPECT(!strcmp(attend_intervention_site_name(ATTEND_SITE_ENCODER_SELF), "encoder-self") &&
               !strcmp(attend_intervention_site_name(ATTEND_SITE_CROSS), "cross"),
           "site names");
}

int main(void) {
    RUN(test_uniform_is_zeroed_queries);
    RUN(test_remove_is_masking);
    RUN(test_identity_permute);
    RUN(test_refusals);
    return harness_summary();
}
