/*
 * test_copy.c — the copy mechanism (pointer-generator, See et al. 2017;
 * src/seq2seq/extensions/copy.c, src/io/copy_text.c) in the float library:
 *   - against PyTorch: tests/ref/copy_<name>.{safetensors,txt} from
 *     /usr/bin/python3 tools/make_copy_ref.py (GRU Bahdanau/additive, LSTM
 *     Luong/general): loss, teacher-forced statistics and every gradient of a
 *     batch whose targets hold copied ids (Vt + j), greedy decodes (copied ids
 *     included) and their alignments; beam width 1 gives greedy's tokens
 *     (tolerance as test_model_ref.c: |ours − torch| <= 1e-5 + 1e-4·|torch|);
 *   - decoding emits a source token the vocabularies never saw: with p_gen
 *     pushed to 0 every output is a copy, and attend_vocab_decode_copy writes
 *     the unseen token's text;
 *   - the TSV reader's copied target ids (attend_tsv_options.copy) and
 *     attend_text_token;
 *   - bad input: a copied id that is not its row's extended id, set_copy_map
 *     on a model without copy, copy with the none and pointer decoders.
 * Finite differences in double: tests/test_copy_f64.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "ref_reader.h"
#include "attend.h"

#define ATOL 1e-5
#define RTOL 1e-4

static void copy_ids(int32_t *dst, const ref_tensor *t) {
    for (size_t i = 0; i < t->n; i++) dst[i] = (int32_t)t->v[i];
}

static void compare_real(const char *what, const attend_real *got, const double *want, size_t n) {
    double *g = malloc(n * sizeof *g);
    for (size_t i = 0; i < n; i++) g[i] = (double)got[i];
    EXPECT_CLOSE(what, g, want, n, ATOL, RTOL);
    free(g);
}

static void run_ref(const char *name) {
    char path[256], what[160];
    attend_error err;
    snprintf(path, sizeof path, "ref/copy_%s.txt", name);
    ref_file f;
    if (!ref_load(&f, path, "/usr/bin/python3 tools/make_copy_ref.py")) return;
    snprintf(path, sizeof path, "ref/copy_%s.safetensors", name);
    attend_model *m = NULL;
    attend_vocab *sv = NULL, *tv = NULL;
    attend_status st = attend_model_load(&m, path, NULL, &sv, &tv, NULL, &err);
    EXPECT(st == ATTEND_OK, "%s: %s", path, err.msg);
    if (st != ATTEND_OK) {
        ref_free(&f);
        return;
    }
    const attend_model_config *cfg = attend_model_get_config(m);
    int Vt = cfg->tgt_vocab;
    EXPECT(cfg->copy == 1, "%s: copy=%d", name, cfg->copy);
    /* the map from the file's vocabularies: a b c are target tokens, d e f are not */
    EXPECT(attend_model_copy_target(m, 4) == 4 && attend_model_copy_target(m, 6) == 6 &&
               attend_model_copy_target(m, 7) == -1 && attend_model_copy_target(m, ATTEND_UNK) == -1,
           "%s: copy map %d %d %d %d", name, attend_model_copy_target(m, 4), attend_model_copy_target(m, 6),
           attend_model_copy_target(m, 7), attend_model_copy_target(m, ATTEND_UNK));
    const ref_tensor *t_src = ref_get(&f, "src", 2, NULL), *t_sl = ref_get(&f, "src_len", 1, NULL);
    const ref_tensor *t_ti = ref_get(&f, "tgt_in", 2, NULL), *t_to = ref_get(&f, "tgt_out", 2, NULL);
    const ref_tensor *t_tl = ref_get(&f, "tgt_len", 1, NULL), *t_loss = ref_get(&f, "loss", 1, NULL);
    const ref_tensor *t_tok = ref_get(&f, "tokens", 1, NULL), *t_ct = ref_get(&f, "correct_tokens", 1, NULL);
    const ref_tensor *t_cs = ref_get(&f, "correct_seqs", 1, NULL), *t_ent = ref_get(&f, "attn_entropy", 1, NULL);
    if (t_src && t_sl && t_ti && t_to && t_tl && t_loss && t_tok && t_ct && t_cs && t_ent) {
        int N = t_src->dims[0], S = t_src->dims[1], T = t_ti->dims[1];
        attend_batch b;
        EXPECT(attend_batch_alloc(&b, N, S, T, &err) == ATTEND_OK, "%s", err.msg);
        b.N = N;
        b.S = S;
        b.T = T;
        copy_ids(b.src, t_src);
        copy_ids(b.src_len, t_sl);
        copy_ids(b.tgt_in, t_ti);
        copy_ids(b.tgt_out, t_to);
        copy_ids(b.tgt_len, t_tl);
        int copied = 0;
        for (int i = 0; i < N * T; i++) copied += b.tgt_out[i] >= Vt;
        EXPECT(copied >= 3, "%s: only %d copied targets in the reference batch", name, copied);
        attend_tf_stats stats;
        attend_model_zero_grad(m);
        st = attend_model_forward(m, &b, &stats, &err);
        EXPECT(st == ATTEND_OK, "%s: forward: %s", name, err.msg);
        if (st == ATTEND_OK) {
            snprintf(what, sizeof what, "%s loss (%d copied targets)", name, copied);
            EXPECT_CLOSE(what, &stats.loss, t_loss->v, 1, ATOL, RTOL);
            snprintf(what, sizeof what, "%s attention entropy", name);
            EXPECT_CLOSE(what, &stats.attn_entropy, t_ent->v, 1, ATOL, RTOL);
            EXPECT(stats.tokens == (int)t_tok->v[0] && stats.correct_tokens == (int)t_ct->v[0] &&
                       stats.correct_seqs == (int)t_cs->v[0],
                   "%s: tokens %d/%d right, %d seqs; torch %d/%d, %d", name, stats.correct_tokens, stats.tokens,
                   stats.correct_seqs, (int)t_ct->v[0], (int)t_tok->v[0], (int)t_cs->v[0]);
            st = attend_model_backward(m, &err);
            EXPECT(st == ATTEND_OK, "%s: backward: %s", name, err.msg);
        }
        int ngrad = 0;
        for (int i = 0; i < f.count; i++) ngrad += !strncmp(f.t[i].name, "grad.", 5);
        EXPECT(ngrad == attend_model_tensor_count(m), "%s: %d reference gradients for %d tensors", name, ngrad,
               attend_model_tensor_count(m));
        for (int i = 0; st == ATTEND_OK && i < attend_model_tensor_count(m); i++) {
            attend_model_tensor mt;
            attend_model_tensor_get(m, i, &mt, NULL);
            char gname[96];
            snprintf(gname, sizeof gname, "grad.%s", mt.name);
            const ref_tensor *g = ref_get(&f, gname, mt.ndim, NULL);
            if (!g || g->n != mt.numel) {
                EXPECT(0, "%s: %s missing or misshapen", name, gname);
                continue;
            }
            snprintf(what, sizeof what, "%s %s", name, gname);
            compare_real(what, mt.grad, g->v, g->n);
        }
        attend_batch_release(&b);
    }
    const ref_tensor *g_src = ref_get(&f, "greedy_src", 2, NULL), *g_sl = ref_get(&f, "greedy_src_len", 1, NULL);
    const ref_tensor *g_ml = ref_get(&f, "greedy_max_len", 1, NULL), *g_out = ref_get(&f, "greedy_out", 2, NULL);
    const ref_tensor *g_len = ref_get(&f, "greedy_out_len", 1, NULL), *g_al = ref_get(&f, "greedy_align", 3, NULL);
    if (g_src && g_sl && g_ml && g_out && g_len && g_al) {
        int M = g_src->dims[0], S2 = g_src->dims[1], L = (int)g_ml->v[0];
        int32_t *src = malloc((size_t)M * S2 * sizeof *src), *sl = malloc((size_t)M * sizeof *sl);
        int32_t *out = malloc((size_t)M * L * sizeof *out), *ol = malloc((size_t)M * sizeof *ol);
        attend_real *align = malloc((size_t)M * L * S2 * sizeof *align);
        copy_ids(src, g_src);
        copy_ids(sl, g_sl);
        st = attend_model_greedy(m, src, sl, M, S2, L, out, ol, align, &err);
        EXPECT(st == ATTEND_OK, "%s: greedy: %s", name, err.msg);
        int same = st == ATTEND_OK, copies = 0;
        for (int i = 0; same && i < M; i++) same = ol[i] == (int32_t)g_len->v[i];
        for (int i = 0; same && i < M * L; i++) {
            same = out[i] == (int32_t)g_out->v[i];
            copies += out[i] >= Vt;
        }
        EXPECT(same, "%s: greedy tokens differ from torch", name);
        EXPECT(copies > 0, "%s: greedy emitted no copied id", name);
        printf("  %s: greedy agrees with torch token for token (%d copied ids)\n", name, copies);
        snprintf(what, sizeof what, "%s greedy alignments", name);
        if (same) compare_real(what, align, g_al->v, g_al->n);
        /* beam width 1 follows greedy */
        for (int i = 0; i < M && st == ATTEND_OK; i++) {
            int32_t bo[16], bl;
            double sc;
            int nout = 0;
            int32_t row[8];
            memcpy(row, src + (size_t)i * S2, (size_t)sl[i] * sizeof *row);
            st = attend_model_beam(m, row, sl[i], 1, 1, L, 0.0, bo, &bl, &sc, NULL, &nout, &err);
            EXPECT(st == ATTEND_OK && nout == 1, "%s: beam: %s", name, err.msg);
            int ok = bl == ol[i];
            for (int t = 0; ok && t < bl; t++) ok = bo[t] == out[(size_t)i * L + t];
            EXPECT(ok, "%s: beam width 1 differs from greedy on source %d", name, i);
        }
        /* a wider beam over the extended distribution: every id within [0, Vt + S) */
        int32_t bo[3 * 16], bl[3];
        double sc[3];
        attend_real bal[3 * 16 * 8];
        int nout = 0;
        st = attend_model_beam(m, src + 3 * S2, sl[3], 3, 3, L, 0.0, bo, bl, sc, bal, &nout, &err);
        EXPECT(st == ATTEND_OK && nout >= 1, "%s: beam 3: %s", name, err.msg);
        int bcopies = 0;
        for (int k = 0; k < nout; k++)
            for (int t = 0; t < bl[k]; t++) {
                EXPECT(bo[k * L + t] >= 0 && bo[k * L + t] < Vt + sl[3], "%s: beam id %d", name, bo[k * L + t]);
                bcopies += bo[k * L + t] >= Vt;
            }
        printf("  %s: beam 3 on source 3: %d hypotheses, %d copied ids, best log p %.4f\n", name, nout, bcopies, sc[0]);
        free(src);
        free(sl);
        free(out);
        free(ol);
        free(align);
    }
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    ref_free(&f);
}

static void test_reference(void) {
    run_ref("gru_bahdanau_additive");
    run_ref("lstm_luong_general");
}

/* A model that only copies (copy.b = -40: p_gen ~ 0) decodes a source with a
 * token no vocabulary has: the output is copies, written back as text. */
static void test_unseen_token(void) {
    attend_error err;
    attend_vocab *sv = NULL, *tv = NULL;
    attend_vocab_create(&sv, NULL);
    attend_vocab_create(&tv, NULL);
    const char *ws[] = {"call", "at", "noon", "ann"};
    for (int i = 0; i < 4; i++) attend_vocab_add(sv, ws[i], strlen(ws[i]), NULL, NULL);
    const char *wt[] = {"CALL", "noon", "ann"};
    for (int i = 0; i < 3; i++) attend_vocab_add(tv, wt[i], strlen(wt[i]), NULL, NULL);
    attend_model_config c = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 8, 7, 4, 3, 1, 5, 4,
                             2, 6, 6, 0, 0, 1, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_model *m = NULL;
    EXPECT(attend_model_create(&m, &c, 7, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return;
    EXPECT(attend_model_set_copy_map(m, sv, tv, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_copy_target(m, 6) == 5 && attend_model_copy_target(m, 7) == 6 &&
               attend_model_copy_target(m, 4) == -1,
           "map: noon %d ann %d call %d", attend_model_copy_target(m, 6), attend_model_copy_target(m, 7),
           attend_model_copy_target(m, 4));
    attend_model_tensor t;
    attend_model_tensor_find(m, "copy.b", &t, NULL);
    t.data[0] = -40;
    const char *text = "call zoe at noon";
    int32_t src[6];
    int S = 0;
    EXPECT(attend_vocab_encode(sv, ATTEND_TOKENIZE_SPACE, 0, text, strlen(text), src, 6, &S, &err) == ATTEND_OK,
           "%s", err.msg);
    EXPECT(S == 4 && src[1] == ATTEND_UNK, "zoe is unknown: %d tokens, id %d", S, src[1]);
    int32_t out[6], ol;
    attend_real al[6 * 4];
    EXPECT(attend_model_greedy(m, src, &S, 1, S, 6, out, &ol, al, &err) == ATTEND_OK, "%s", err.msg);
    /* every output is one of the row's ids: call -> Vt+0, zoe -> Vt+1, at -> Vt+2, noon -> 5 */
    const int32_t allowed[] = {7, 8, 9, 5};
    int zoe = 0;
    for (int k = 0; k < ol; k++) {
        int ok = 0;
        for (int j = 0; j < 4; j++) ok |= out[k] == allowed[j];
        EXPECT(ok, "step %d: id %d is not a copy of the source", k, out[k]);
        int best = 0; /* p_gen ~ 0: the copied position is the attention's argmax */
        for (int j = 1; j < S; j++)
            if (al[k * S + j] > al[k * S + best]) best = j;
        EXPECT(out[k] == allowed[best], "step %d: copied %d, attention's argmax is position %d", k, out[k], best);
        zoe += out[k] == 8;
    }
    char buf[128];
    EXPECT(attend_vocab_decode_copy(tv, ATTEND_TOKENIZE_SPACE, out, ol, text, strlen(text), buf, sizeof buf, &err) ==
               ATTEND_OK,
           "%s", err.msg);
    printf("  copy-only model: \"%s\" -> \"%s\" (%d copies of the unseen 'zoe')\n", text, buf, zoe);
    int32_t ids[] = {4, 8, 5, 9};
    EXPECT(attend_vocab_decode_copy(tv, ATTEND_TOKENIZE_SPACE, ids, 4, text, strlen(text), buf, sizeof buf, &err) ==
                   ATTEND_OK &&
               !strcmp(buf, "CALL zoe noon at"),
           "decode_copy: '%s'", buf);
    int32_t bad[] = {11};
    EXPECT(attend_vocab_decode_copy(tv, ATTEND_TOKENIZE_SPACE, bad, 1, text, strlen(text), buf, sizeof buf, &err) ==
                   ATTEND_ERR_ARG &&
               strstr(err.msg, "source token 4"),
           "out of range copy: %s", err.msg);
    EXPECT(attend_vocab_decode_copy(tv, ATTEND_TOKENIZE_SPACE, ids, 4, text, strlen(text), buf, 8, &err) ==
               ATTEND_ERR_CAPACITY,
           "small buffer: %s", err.msg);
    /* interventions compare extended distributions; after deleting "call"
     * (position 0) the copied ids still name positions of the original source */
    {
        int32_t iout[6];
        double tvs[8], kl[8], js[8];
        attend_intervention_result res;
        memset(&res, 0, sizeof res);
        res.tv = tvs;
        res.kl = kl;
        res.js = js;
        res.out = iout;
        attend_intervention iv = {ATTEND_IV_DELETE_TOKEN, 0, 0, 0, 0, 0, 0};
        int bl = ol < 5 ? ol : 5;
        EXPECT(attend_model_intervene(m, src, S, out, bl, 6, &iv, &res, &err) == ATTEND_OK, "%s", err.msg);
        for (int k = 0; k < res.out_len; k++)
            EXPECT(iout[k] == 8 || iout[k] == 9 || iout[k] == 5, "delete call: step %d copied id %d", k, iout[k]);
        EXPECT(res.steps == bl + 1 && isfinite(res.tv_mean), "delete: %d steps, tv %g", res.steps, res.tv_mean);
        iv.kind = ATTEND_IV_UNIFORM;
        EXPECT(attend_model_intervene(m, src, S, out, bl, 6, &iv, &res, &err) == ATTEND_OK, "%s", err.msg);
        for (int k = 0; k < res.out_len; k++)
            EXPECT(iout[k] == 7 || iout[k] == 8 || iout[k] == 9 || iout[k] == 5, "uniform: step %d id %d", k,
                   iout[k]);
        printf("  intervene on the copy model: delete 'call' -> %d tokens, uniform TV mean %.3f\n", res.out_len,
               res.tv_mean);
    }
    /* forced scoring accepts the copied id of zoe, refuses one of a later repeat */
    double lp;
    int32_t tgt[] = {8};
    EXPECT(attend_model_score(m, src, S, tgt, 1, &lp, NULL, &err) == ATTEND_OK && isfinite(lp), "%s", err.msg);
    int32_t src2[] = {4, 5, 4}, bad2[] = {7 + 2}; /* call at position 2 copies as Vt + 0 */
    EXPECT(attend_model_score(m, src2, 3, bad2, 1, &lp, NULL, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "copied id 9"),
           "a repeat's position: %s", err.msg);
    int32_t src3[] = {4, 5}, bad3[] = {7 + 3};
    EXPECT(attend_model_score(m, src3, 2, bad3, 1, &lp, NULL, &err) == ATTEND_ERR_ARG, "beyond the source: %s",
           err.msg);
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
}

static void test_tsv_and_tokens(void) {
    char dir[] = "/tmp/attend-copy-XXXXXX";
    if (!mkdtemp(dir)) return;
    char path[256];
    snprintf(path, sizeof path, "%s/eval.tsv", dir);
    FILE *fp = fopen(path, "w");
    fputs("call zoe at noon\tCALL zoe noon\ngreet zoe zoe\tzoe <unk> max\n", fp);
    fclose(fp);
    attend_vocab *sv = NULL, *tv = NULL;
    attend_vocab_create(&sv, NULL);
    attend_vocab_create(&tv, NULL);
    attend_vocab_add(sv, "call", 4, NULL, NULL);
    attend_vocab_add(tv, "CALL", 4, NULL, NULL);
    attend_vocab_add(tv, "noon", 4, NULL, NULL);
    attend_error err;
    for (int copy = 0; copy < 2; copy++) {
        attend_tsv_options o = {ATTEND_TOKENIZE_SPACE, 0, 0, 0, copy};
        attend_dataset *d = NULL;
        EXPECT(attend_dataset_read_tsv(&d, path, sv, tv, 0, &o, NULL, &err) == ATTEND_OK, "%s", err.msg);
        if (!d) continue;
        const int32_t *s, *t;
        int ns, nt;
        attend_dataset_get(d, 0, &s, &ns, &t, &nt, NULL);
        int Vt = attend_vocab_size(tv);
        /* zoe (source position 1) copies as Vt + 1; CALL and noon are vocabulary ids */
        EXPECT(nt == 3 && t[0] == 4 && t[1] == (copy ? Vt + 1 : ATTEND_UNK) && t[2] == 5, "copy=%d: %d %d %d", copy,
               t[0], t[1], t[2]);
        attend_dataset_get(d, 1, &s, &ns, &t, &nt, NULL);
        /* zoe twice: the first position; a literal <unk> stays; max is not in the source */
        EXPECT(nt == 3 && t[0] == (copy ? Vt + 1 : ATTEND_UNK) && t[1] == ATTEND_UNK && t[2] == ATTEND_UNK,
               "copy=%d: %d %d %d", copy, t[0], t[1], t[2]);
        attend_dataset_free(d);
    }
    size_t st, tl;
    const char *txt = "ab  cd é";
    EXPECT(attend_text_token(ATTEND_TOKENIZE_SPACE, txt, strlen(txt), 1, &st, &tl, &err) == ATTEND_OK && st == 4 &&
               tl == 2,
           "space token 1: %zu %zu", st, tl);
    EXPECT(attend_text_token(ATTEND_TOKENIZE_CHAR, txt, strlen(txt), 7, &st, &tl, &err) == ATTEND_OK && st == 7 &&
               tl == 2,
           "char token 7 (é): %zu %zu", st, tl);
    EXPECT(attend_text_token(ATTEND_TOKENIZE_SPACE, txt, strlen(txt), 3, &st, &tl, &err) == ATTEND_ERR_ARG,
           "no token 3: %s", err.msg);
    EXPECT(attend_text_token(ATTEND_TOKENIZE_CHAR, "\xff", 1, 0, &st, &tl, &err) == ATTEND_ERR_FORMAT, "bad UTF-8");
    remove(path);
    rmdir(dir);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
}

static void test_bad_config(void) {
    attend_error err;
    attend_model_config c = {ATTEND_CELL_GRU, ATTEND_DECODER_NONE, ATTEND_SCORE_ADDITIVE, 8, 7, 4, 3, 1, 5, 4,
                             2, 6, 6, 0, 0, 1, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    EXPECT(attend_model_config_check(&c, &err) == ATTEND_ERR_ARG && strstr(err.msg, "copy with decoder none"), "%s",
           err.msg);
    c.decoder = ATTEND_DECODER_POINTER;
    EXPECT(attend_model_config_check(&c, &err) == ATTEND_ERR_ARG && strstr(err.msg, "copy with decoder pointer"), "%s",
           err.msg);
    c.decoder = ATTEND_DECODER_LUONG;
    c.copy = 2;
    EXPECT(attend_model_config_check(&c, &err) == ATTEND_ERR_ARG && strstr(err.msg, "copy=2"), "%s", err.msg);
    c.copy = 0;
    attend_model *m = NULL;
    attend_vocab *v = NULL;
    attend_vocab_create(&v, NULL);
    EXPECT(attend_model_create(&m, &c, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_set_copy_map(m, v, v, &err) == ATTEND_ERR_ARG && strstr(err.msg, "no copy"), "%s", err.msg);
    EXPECT(attend_model_copy_target(m, 4) == -1, "no map without copy");
    attend_model_free(m);
    attend_vocab_free(v);
}

int main(void) {
    RUN(test_reference);
    RUN(test_unseen_token);
    RUN(test_tsv_and_tokens);
    RUN(test_bad_config);
    return harness_summary();
}
