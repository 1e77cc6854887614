/*
 * test_guide.c — guided alignment (issue 13 part 5; src/seq2seq/extensions/guide.c,
 * src/io/alignment.c): the TSV's alignment column (good lines; malformed ones
 * and positions outside the line, each with path:line and the link quoted;
 * skipping), the dataset's alignments (the tasks' own, set/get), batches, the
 * loss and every gradient against PyTorch, the trainer's option (refusals,
 * checkpoints, data-parallel shards) and evaluation without the term.
 *
 * Reference data: tests/ref/guide_<name>.txt from
 *     /usr/bin/python3 tools/make_guide_ref.py
 * (tools/ref_model.py's model on the weights of tests/ref/model_<name>.safetensors,
 * one batch with alignments, lambda 0.7). Tolerance as tests/test_model_ref.c's
 * (float32 against float64 from the same float32 weights): |ours − torch| <=
 * 1e-5 + 1e-4·|torch|.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "ref_reader.h"
#include "attend.h"

#define ATOL 1e-5
#define RTOL 1e-4

/* got evaluated once */
#define EXPECT_STATUS(got, want, err)                                                                      \
    do {                                                                                                   \
        attend_status st_ = (got);                                                                         \
        EXPECT(st_ == (want), "status %s, want %s (msg: %s)", attend_status_name(st_),                     \
               attend_status_name(want), (err).msg);                                                       \
    } while (0)
#define EXPECT_MSG(err, sub) EXPECT(strstr((err).msg, (sub)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (sub))

static char tmpdir[256];

static const char *tmp_file(const char *name, const char *text) {
    static char buf[4][512];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    FILE *f = fopen(buf[k], "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return buf[k];
}

static attend_vocab *new_vocab(void) {
    attend_vocab *v = NULL;
    attend_vocab_create(&v, NULL);
    return v;
}

/* Pair i's alignment is exactly want [n,2] (n = -1: none). */
static int links_are(const attend_dataset *d, int i, const int32_t *want, int n) {
    const int32_t *links;
    int nl = -2;
    if (attend_dataset_get_alignment(d, i, &links, &nl, NULL) != ATTEND_OK || nl != n) return 0;
    for (int k = 0; k < 2 * (n > 0 ? n : 0); k++)
        if (links[k] != want[k]) return 0;
    return 1;
}

/* ------------------------------------------------------------- reading */

static void test_tsv_alignments(void) {
    attend_vocab *sv = new_vocab(), *tv = new_vocab();
    attend_dataset *d = NULL;
    attend_error e;
    const char *p = tmp_file("good.tsv", "abc\tcba\t0-2 1-1 2-0\n"
                                         "ab\tba\t\n"
                                         "xy\tyx\n"
                                         "abcd\tdcba\t 3-0  0-3 1-2 \r\n"
                                         "a\ta\t0-0 0-0");
    EXPECT_STATUS(attend_dataset_read_tsv(&d, p, sv, tv, 1, NULL, NULL, &e), ATTEND_OK, e);
    EXPECT(attend_dataset_size(d) == 5, "pairs %d", attend_dataset_size(d));
    EXPECT(attend_dataset_aligned_pairs(d) == 4, "aligned pairs %d", attend_dataset_aligned_pairs(d));
    const int32_t l0[] = {0, 2, 1, 1, 2, 0}, l3[] = {3, 0, 0, 3, 1, 2}, l4[] = {0, 0, 0, 0};
    EXPECT(links_are(d, 0, l0, 3), "line 1's links");
    EXPECT(links_are(d, 1, NULL, 0), "line 2: an empty column is an alignment without links");
    EXPECT(links_are(d, 2, NULL, -1), "line 3: no column, no alignment");
    EXPECT(links_are(d, 3, l3, 3), "line 4: spaces and CRLF");
    EXPECT(links_are(d, 4, l4, 2), "line 5: a repeated link is kept as given");
    /* the sides are what they were without the column */
    const int32_t *src, *tgt;
    int sl, tl;
    attend_dataset_get(d, 3, &src, &sl, &tgt, &tl, NULL);
    EXPECT(sl == 4 && tl == 4, "line 4: %d and %d tokens", sl, tl);
    attend_dataset_free(d);
    /* a two-column file carries none */
    p = tmp_file("plain.tsv", "ab\tba\ncd\tdc\n");
    EXPECT_STATUS(attend_dataset_read_tsv(&d, p, sv, tv, 1, NULL, NULL, &e), ATTEND_OK, e);
    EXPECT(attend_dataset_aligned_pairs(d) == 0 && links_are(d, 0, NULL, -1), "two columns");
    attend_dataset_free(d);
    /* space tokens: positions count words */
    attend_tsv_options so = {ATTEND_TOKENIZE_SPACE, 0, 0, 0, 0};
    p = tmp_file("words.tsv", "the cat sat\tle chat\t0-0 1-1\n");
    EXPECT_STATUS(attend_dataset_read_tsv(&d, p, sv, tv, 1, &so, NULL, &e), ATTEND_OK, e);
    const int32_t lw[] = {0, 0, 1, 1};
    EXPECT(links_are(d, 0, lw, 2), "word positions");
    attend_dataset_free(d);
    p = tmp_file("words_bad.tsv", "the cat sat\tle chat\t0-0 3-1\n");
    EXPECT_STATUS(attend_dataset_read_tsv(&d, p, sv, tv, 1, &so, NULL, &e), ATTEND_ERR_FORMAT, e);
    EXPECT_MSG(e, "words_bad.tsv:1: alignment column: '3-1' at byte 24: source position 3 is outside the source's 3 "
                  "tokens");
    attend_vocab_free(sv);
    attend_vocab_free(tv);
}

static void test_tsv_alignment_malformed(void) {
    struct {
        const char *line, *why;
    } cases[] = {
        {"ab\tba\t0-1 x-1", "alignment column: 'x-1' at byte 10 is not a link i-j (source position, target position)"},
        {"ab\tba\t0-1-1", "alignment column: '0-1-1' at byte 6 is not a link i-j"},
        {"ab\tba\t1-", "alignment column: '1-' at byte 6 is not a link i-j"},
        {"ab\tba\t-1-0", "alignment column: '-1-0' at byte 6 is not a link i-j"},
        {"ab\tba\t0:1", "alignment column: '0:1' at byte 6 is not a link i-j"},
        {"ab\tba\t1234567890-0", "alignment column: '1234567890-0' at byte 6 is not a link i-j"},
        {"ab\tba\t0-0 2-1", "alignment column: '2-1' at byte 10: source position 2 is outside the source's 2 tokens"},
        {"abc\tcb\t0-2", "alignment column: '0-2' at byte 7: target position 2 is outside the target's 2 tokens"},
        {"ab\tba\t0-0\tx", "extra tab field at byte 9 (a line is source<TAB>target[<TAB>alignment])"},
        {"ab\t\t0-0", "empty target side"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256], name[32], want[320];
        snprintf(text, sizeof text, "ab\tba\t0-1 1-0\nxy\tyx\t1-0\n%s\nok\tko\n", cases[i].line);
        snprintf(name, sizeof name, "bad%zu.tsv", i);
        const char *p = tmp_file(name, text);
        attend_vocab *sv = new_vocab(), *tv = new_vocab();
        attend_dataset *d = NULL;
        attend_error e;
        attend_tsv_options o = {ATTEND_TOKENIZE_CHAR, 0, 0, 0, 0};
        attend_status st = attend_dataset_read_tsv(&d, p, sv, tv, 1, &o, NULL, &e);
        snprintf(want, sizeof want, "%s:3: %s", p, cases[i].why);
        EXPECT(st == ATTEND_ERR_FORMAT && !strncmp(e.msg, want, strlen(want)), "case %zu: %s: \"%s\", want \"%s\"", i,
               attend_status_name(st), e.msg, want);
        EXPECT(d == NULL && attend_vocab_size(sv) == 4 && attend_vocab_size(tv) == 4, "case %zu: not rolled back", i);
        /* skipped: lines 1, 2 and 4 load with their alignments */
        o.skip_malformed = 1;
        int skipped = -1;
        st = attend_dataset_read_tsv(&d, p, sv, tv, 1, &o, &skipped, &e);
        const int32_t l1[] = {1, 0};
        EXPECT(st == ATTEND_OK && skipped == 1 && attend_dataset_size(d) == 3 && attend_dataset_aligned_pairs(d) == 2 &&
                   links_are(d, 1, l1, 1) && links_are(d, 2, NULL, -1),
               "case %zu skipped: %s, skipped %d", i, attend_status_name(st), skipped);
        attend_dataset_free(d);
        attend_vocab_free(sv);
        attend_vocab_free(tv);
    }
}

/* ------------------------------------------------------- datasets, batches */

static void test_dataset_alignments(void) {
    attend_dataset *d = NULL;
    attend_error e;
    attend_dataset_create(&d, NULL);
    int32_t s[] = {4, 5, 6}, t[] = {6, 5};
    attend_dataset_add(d, s, 3, t, 2, NULL);
    attend_dataset_add(d, s, 2, t, 1, NULL);
    EXPECT(attend_dataset_aligned_pairs(d) == 0 && links_are(d, 0, NULL, -1), "none yet");
    const int32_t good[] = {2, 0, 1, 1, 0, 1}, bad_src[] = {3, 0}, bad_tgt[] = {0, 2}, neg[] = {-1, 0};
    EXPECT_STATUS(attend_dataset_set_alignment(d, 0, bad_src, 1, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "pair 0 link 0: 3-0 is outside the 3 source and 2 target positions");
    EXPECT_STATUS(attend_dataset_set_alignment(d, 0, bad_tgt, 1, &e), ATTEND_ERR_ARG, e);
    EXPECT_STATUS(attend_dataset_set_alignment(d, 0, neg, 1, &e), ATTEND_ERR_ARG, e);
    EXPECT_STATUS(attend_dataset_set_alignment(d, 2, good, 1, &e), ATTEND_ERR_ARG, e);
    EXPECT_STATUS(attend_dataset_set_alignment(d, 0, NULL, 1, &e), ATTEND_ERR_NULL, e);
    EXPECT_STATUS(attend_dataset_set_alignment(d, 0, good, -1, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "pair 0: n_links=-1, must be >= 0");
    EXPECT(attend_dataset_aligned_pairs(d) == 0, "a refused alignment counted");
    EXPECT_STATUS(attend_dataset_set_alignment(d, 0, good, 3, &e), ATTEND_OK, e);
    EXPECT_STATUS(attend_dataset_set_alignment(d, 1, NULL, 0, &e), ATTEND_OK, e);
    EXPECT(links_are(d, 0, good, 3) && links_are(d, 1, NULL, 0) && attend_dataset_aligned_pairs(d) == 2, "set");
    EXPECT_STATUS(attend_dataset_set_alignment(d, 0, good + 2, 1, &e), ATTEND_OK, e); /* replaces */
    EXPECT(links_are(d, 0, good + 2, 1) && attend_dataset_aligned_pairs(d) == 2, "replaced");
    const int32_t *links;
    int nl;
    EXPECT_STATUS(attend_dataset_get_alignment(d, 5, &links, &nl, &e), ATTEND_ERR_ARG, e);

    /* batches: link i-j marks step j, position i; the EOS step has none */
    attend_batch b;
    EXPECT_STATUS(attend_batch_alloc(&b, 2, 3, 3, &e), ATTEND_OK, e);
    EXPECT(b.align == NULL, "allocated before any alignment");
    int idx[2] = {1, 0};
    EXPECT_STATUS(attend_batch_fill(&b, d, idx, 2, 0, &e), ATTEND_OK, e);
    EXPECT(b.align != NULL && b.T == 3 && b.S == 3, "align %p T %d S %d", (void *)b.align, b.T, b.S);
    if (b.align) {
        int ones = 0;
        for (int k = 0; k < 2 * 3 * 3; k++) ones += b.align[k];
        EXPECT(ones == 1 && b.align[(1 * 3 + 1) * 3 + 1] == 1, "row 1 step 1 position 1 only (%d ones)", ones);
    }
    attend_batch_release(&b);
    attend_dataset_free(d);

    /* the tasks carry theirs: reverse's anti-diagonal, copy's diagonal, sort's targets */
    for (int task = 0; task < 3; task++) {
        attend_task_config tc = {(attend_task)task, 6, 1, 7, 40, 3};
        attend_vocab *v = NULL;
        EXPECT_STATUS(attend_dataset_task(&d, &v, &tc, &e), ATTEND_OK, e);
        EXPECT(attend_dataset_aligned_pairs(d) == 40, "task %d: %d aligned", task, attend_dataset_aligned_pairs(d));
        int right = 1;
        for (int i = 0; i < 40; i++) {
            const int32_t *src, *tgt;
            int sl, tl;
            attend_dataset_get(d, i, &src, &sl, &tgt, &tl, NULL);
            attend_dataset_get_alignment(d, i, &links, &nl, NULL);
            right &= nl == tl;
            for (int j = 0; right && j < nl; j++) {
                int32_t want = task == ATTEND_TASK_COPY ? j : task == ATTEND_TASK_REVERSE ? sl - 1 - j : tgt[j];
                right &= links[2 * j] == want && links[2 * j + 1] == j;
                if (task != ATTEND_TASK_SORT) right &= src[links[2 * j]] == tgt[j]; /* the token it comes from */
            }
        }
        EXPECT(right, "task %d: alignments", task);
        attend_dataset_free(d);
        attend_vocab_free(v);
    }
}

/* ------------------------------------------------ loss, gradients: PyTorch */

static void copy_ids(int32_t *dst, const ref_tensor *t) {
    for (size_t i = 0; i < t->n; i++) dst[i] = (int32_t)t->v[i];
}

static void run_ref(const char *name) {
    char path[256], what[160];
    attend_error err;
    snprintf(path, sizeof path, "ref/guide_%s.txt", name);
    ref_file f;
    if (!ref_load(&f, path, "/usr/bin/python3 tools/make_guide_ref.py")) return;
    snprintf(path, sizeof path, "ref/model_%s.safetensors", name);
    attend_model *m = NULL;
    attend_vocab *sv = NULL, *tv = NULL;
    attend_tokenizer tok;
    EXPECT_STATUS(attend_model_load(&m, path, NULL, &sv, &tv, &tok, &err), ATTEND_OK, err);
    const ref_tensor *t_src = ref_get(&f, "src", 2, NULL), *t_sl = ref_get(&f, "src_len", 1, NULL);
    const ref_tensor *t_ti = ref_get(&f, "tgt_in", 2, NULL), *t_to = ref_get(&f, "tgt_out", 2, NULL);
    const ref_tensor *t_tl = ref_get(&f, "tgt_len", 1, NULL), *t_al = ref_get(&f, "align", 3, NULL);
    const ref_tensor *t_lam = ref_get(&f, "lambda", 1, NULL), *t_loss = ref_get(&f, "loss", 1, NULL);
    const ref_tensor *t_g = ref_get(&f, "guided", 1, NULL);
    if (m && t_src && t_sl && t_ti && t_to && t_tl && t_al && t_lam && t_loss && t_g) {
        int N = t_src->dims[0], S = t_src->dims[1], T = t_ti->dims[1];
        attend_batch b;
        attend_batch_alloc(&b, N, S, T, NULL);
        b.N = N;
        b.S = S;
        b.T = T;
        copy_ids(b.src, t_src);
        copy_ids(b.src_len, t_sl);
        copy_ids(b.tgt_in, t_ti);
        copy_ids(b.tgt_out, t_to);
        copy_ids(b.tgt_len, t_tl);
        uint8_t *align = malloc((size_t)N * T * S);
        for (size_t i = 0; i < t_al->n; i++) align[i] = (uint8_t)t_al->v[i];
        b.align = align;
        double lambda = t_lam->v[0];
        attend_tf_stats off, on;
        /* off: the cross-entropy alone, whatever the batch carries */
        EXPECT_STATUS(attend_model_forward(m, &b, &off, &err), ATTEND_OK, err);
        EXPECT(attend_model_guided_loss(m) == 0, "%s: a term without lambda", name);
        EXPECT_STATUS(attend_model_set_guided_alignment(m, lambda, &err), ATTEND_OK, err);
        EXPECT(attend_model_guided_alignment(m) == lambda, "%s: lambda not kept", name);
        attend_model_zero_grad(m);
        EXPECT_STATUS(attend_model_forward(m, &b, &on, &err), ATTEND_OK, err);
        double g = attend_model_guided_loss(m);
        snprintf(what, sizeof what, "%s loss", name);
        EXPECT_CLOSE(what, &on.loss, t_loss->v, 1, ATOL, RTOL);
        snprintf(what, sizeof what, "%s guided term", name);
        EXPECT_CLOSE(what, &g, t_g->v, 1, ATOL, RTOL);
        EXPECT(fabs(on.loss - (off.loss + lambda * g)) < 1e-6, "%s: loss %.9g != %.9g + %g x %.9g", name, on.loss,
               off.loss, lambda, g);
        EXPECT_STATUS(attend_model_backward(m, &err), ATTEND_OK, err);
        for (int i = 0; i < attend_model_tensor_count(m); i++) {
            attend_model_tensor mt;
            attend_model_tensor_get(m, i, &mt, NULL);
            char gname[96];
            snprintf(gname, sizeof gname, "grad.%s", mt.name);
            const ref_tensor *rg = ref_get(&f, gname, mt.ndim, NULL);
            if (!rg || rg->n != mt.numel) continue;
            double *got = malloc(mt.numel * sizeof *got);
            for (size_t k = 0; k < mt.numel; k++) got[k] = (double)mt.grad[k];
            snprintf(what, sizeof what, "%s %s", name, gname);
            EXPECT_CLOSE(what, got, rg->v, rg->n, ATOL, RTOL);
            free(got);
        }
        /* a batch without alignments adds nothing */
        b.align = NULL;
        attend_tf_stats none;
        EXPECT_STATUS(attend_model_forward(m, &b, &none, &err), ATTEND_OK, err);
        EXPECT(none.loss == off.loss && attend_model_guided_loss(m) == 0, "%s: no alignments, loss %.9g", name,
               none.loss);
        /* an alignment outside a row: position 5 of row 0 (4 tokens), then a padded step */
        b.align = align;
        align[(0 * T + 0) * S + 5] = 1;
        EXPECT_STATUS(attend_model_forward(m, &b, NULL, &err), ATTEND_ERR_ARG, err);
        EXPECT_MSG(err, "row 0 step 0: alignment to source position 5 outside the row's 4 source positions");
        align[(0 * T + 0) * S + 5] = 0;
        align[(1 * T + 3) * S + 0] = 1; /* row 1 has 2 steps */
        EXPECT_STATUS(attend_model_forward(m, &b, NULL, &err), ATTEND_ERR_ARG, err);
        EXPECT_MSG(err, "row 1 step 3");
        align[(1 * T + 3) * S + 0] = 0;
        b.align = NULL;
        attend_batch_release(&b);
        free(align);
    }
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    ref_free(&f);
}

static void test_loss_against_torch(void) {
    run_ref("gru_bahdanau_additive");
    run_ref("gru_luong_general");
    run_ref("lstm_bahdanau_scaled_dot");
}

static void test_model_refusals(void) {
    attend_model_config c = {ATTEND_CELL_GRU, ATTEND_DECODER_NONE, ATTEND_SCORE_ADDITIVE, 10, 10, 4, 4, 1, 8, 4, 2,
                             5, 5, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_model *m = NULL;
    attend_error e;
    attend_model_create(&m, &c, 1, NULL);
    EXPECT_STATUS(attend_model_set_guided_alignment(m, 1, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "guided_alignment with decoder none, which has no attention weights");
    EXPECT_STATUS(attend_model_set_guided_alignment(m, 0, &e), ATTEND_OK, e);
    attend_model_free(m);
    c.decoder = ATTEND_DECODER_POINTER;
    attend_model_create(&m, &c, 1, NULL);
    EXPECT_STATUS(attend_model_set_guided_alignment(m, 1, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "guided_alignment with decoder pointer");
    attend_model_free(m);
    c.decoder = ATTEND_DECODER_LUONG;
    attend_model_create(&m, &c, 1, NULL);
    EXPECT_STATUS(attend_model_set_guided_alignment(m, -1, &e), ATTEND_ERR_ARG, e);
    EXPECT_STATUS(attend_model_set_guided_alignment(m, NAN, &e), ATTEND_ERR_ARG, e);
    EXPECT_STATUS(attend_model_set_guided_alignment(NULL, 1, &e), ATTEND_ERR_NULL, e);
    EXPECT_STATUS(attend_model_set_guided_alignment(m, 2.5, &e), ATTEND_OK, e);
    attend_model_free(m);
}

/* ------------------------------------------------------------- training */

typedef struct {
    attend_dataset *data;
    attend_vocab *vocab;
    attend_model *m;
    attend_trainer *tr;
} run;

static int make_run(run *r, attend_task task, attend_decoder_kind dec, double lambda, attend_error *err) {
    memset(r, 0, sizeof *r);
    attend_task_config tc = {task, 6, 2, 6, 256, 5};
    if (attend_dataset_task(&r->data, &r->vocab, &tc, err)) return 0;
    int V = attend_vocab_size(r->vocab);
    attend_model_config mc = {ATTEND_CELL_GRU, dec, ATTEND_SCORE_ADDITIVE, V, V, 8, 8, 1, 16, 8, 16, 6, 6, 0, 0, 0,
                              0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    if (attend_model_create(&r->m, &mc, 3, err) || attend_trainer_create(&r->tr, r->m, &oc, r->data, 16, 9, err))
        return 0;
    attend_train_options o;
    memset(&o, 0, sizeof o);
    o.guided_alignment = lambda;
    return attend_trainer_set_options(r->tr, &o, err) == ATTEND_OK;
}

static void free_run(run *r) {
    attend_trainer_free(r->tr);
    attend_model_free(r->m);
    attend_dataset_free(r->data);
    attend_vocab_free(r->vocab);
}

static void test_trainer_option(void) {
    attend_error e;
    run r;
    /* refused: no attention, a pointer, no alignments in the data */
    EXPECT(!make_run(&r, ATTEND_TASK_REVERSE, ATTEND_DECODER_NONE, 1, &e) && e.status == ATTEND_ERR_ARG &&
               strstr(e.msg, "decoder none"),
           "decoder none: %s", e.msg);
    free_run(&r);
    EXPECT(!make_run(&r, ATTEND_TASK_SORT, ATTEND_DECODER_POINTER, 1, &e) && e.status == ATTEND_ERR_ARG &&
               strstr(e.msg, "decoder pointer"),
           "pointer: %s", e.msg);
    free_run(&r);
    EXPECT(make_run(&r, ATTEND_TASK_REVERSE, ATTEND_DECODER_BAHDANAU, 0, &e), "%s", e.msg);
    attend_vocab *sv = new_vocab(), *tv = new_vocab();
    attend_dataset *plain = NULL;
    EXPECT_STATUS(attend_dataset_read_tsv(&plain, tmp_file("plain2.tsv", "abc\tcba\n"), sv, tv, 1, NULL, NULL, &e),
                  ATTEND_OK, e);
    attend_trainer *tr = NULL;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    EXPECT_STATUS(attend_trainer_create(&tr, r.m, &oc, plain, 4, 1, &e), ATTEND_OK, e);
    attend_train_options o;
    memset(&o, 0, sizeof o);
    o.guided_alignment = 1;
    EXPECT_STATUS(attend_trainer_set_options(tr, &o, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "guided_alignment=1, but the training data carries no alignments");
    o.guided_alignment = -0.5;
    EXPECT_STATUS(attend_trainer_set_options(tr, &o, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "guided_alignment=-0.5, must be in [0, inf)");
    attend_trainer_free(tr);
    attend_dataset_free(plain);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    free_run(&r);
}

/* Training with the term lowers it; evaluation leaves it out; shards sum to the batch. */
static void test_training(void) {
    attend_error e;
    run a, b, c;
    if (!make_run(&a, ATTEND_TASK_REVERSE, ATTEND_DECODER_BAHDANAU, 2, &e) ||
        !make_run(&b, ATTEND_TASK_REVERSE, ATTEND_DECODER_BAHDANAU, 0, &e) ||
        !make_run(&c, ATTEND_TASK_REVERSE, ATTEND_DECODER_BAHDANAU, 2, &e)) {
        EXPECT(0, "%s", e.msg);
        return;
    }
    attend_step_report ra, rb;
    double g_first = 0, g_last = 0;
    for (int s = 0; s < 60; s++) {
        EXPECT_STATUS(attend_trainer_step(a.tr, &ra, &e), ATTEND_OK, e);
        EXPECT_STATUS(attend_trainer_step(b.tr, &rb, &e), ATTEND_OK, e);
        double g = attend_model_guided_loss(a.m);
        if (s < 5) g_first += g / 5;
        if (s >= 55) g_last += g / 5;
        if (s == 0) /* the same first batch and weights: only the term differs */
            EXPECT(ra.tf.loss > rb.tf.loss && attend_model_guided_loss(b.m) == 0, "step 1: %.6f vs %.6f", ra.tf.loss,
                   rb.tf.loss);
    }
    printf("  guided term per token: %.4f over the first 5 steps, %.4f over the last 5\n", g_first, g_last);
    EXPECT(g_last < 0.75 * g_first, "the term did not fall: %.4f -> %.4f", g_first, g_last);
    attend_eval_stats with, without;
    EXPECT_STATUS(attend_model_evaluate(a.m, a.data, 16, 64, &with, &e), ATTEND_OK, e);
    EXPECT(attend_model_guided_alignment(a.m) == 2, "evaluate changed lambda");
    attend_model_set_guided_alignment(a.m, 0, NULL);
    EXPECT_STATUS(attend_model_evaluate(a.m, a.data, 16, 64, &without, &e), ATTEND_OK, e);
    EXPECT(with.loss == without.loss, "evaluation loss %.9g with the term set, %.9g without", with.loss, without.loss);
    /* a trainer's steps use its own option even after the model was set otherwise */
    EXPECT_STATUS(attend_trainer_step(a.tr, &ra, &e), ATTEND_OK, e);
    EXPECT(attend_model_guided_alignment(a.m) == 2 && attend_model_guided_loss(a.m) > 0, "option not applied");

    /* two gradient shards give the whole batch's step (to float rounding) */
    EXPECT_STATUS(attend_trainer_set_parallel(c.tr, 2, 0, 1, NULL, NULL, &e), ATTEND_OK, e);
    run d;
    make_run(&d, ATTEND_TASK_REVERSE, ATTEND_DECODER_BAHDANAU, 2, &e);
    EXPECT_STATUS(attend_trainer_step(c.tr, &ra, &e), ATTEND_OK, e);
    EXPECT_STATUS(attend_trainer_step(d.tr, &rb, &e), ATTEND_OK, e);
    EXPECT(fabs(ra.tf.loss - rb.tf.loss) < 1e-5 && fabs(ra.opt.grad_norm - rb.opt.grad_norm) < 1e-4 * rb.opt.grad_norm,
           "shards: loss %.7f vs %.7f, gradient norm %.7f vs %.7f", ra.tf.loss, rb.tf.loss, ra.opt.grad_norm,
           rb.opt.grad_norm);
    free_run(&a);
    free_run(&b);
    free_run(&c);
    free_run(&d);
}

/* A checkpoint records lambda: resuming with another is refused naming it. */
static void test_checkpoint_lambda(void) {
    attend_error e;
    run a, b, c;
    char ck[512];
    snprintf(ck, sizeof ck, "%s/guide.ckpt", tmpdir);
    if (!make_run(&a, ATTEND_TASK_REVERSE, ATTEND_DECODER_LUONG, 1, &e) ||
        !make_run(&b, ATTEND_TASK_REVERSE, ATTEND_DECODER_LUONG, 0.5, &e) ||
        !make_run(&c, ATTEND_TASK_REVERSE, ATTEND_DECODER_LUONG, 1, &e)) {
        EXPECT(0, "%s", e.msg);
        return;
    }
    attend_step_report r;
    for (int s = 0; s < 3; s++) attend_trainer_step(a.tr, &r, NULL);
    EXPECT_STATUS(attend_trainer_save(a.tr, ck, a.vocab, a.vocab, ATTEND_TOKENIZE_CHAR, &e), ATTEND_OK, e);
    attend_status st = attend_trainer_resume(b.tr, ck, &e);
    printf("  lambda 0.5 on a lambda 1 checkpoint: %s\n", e.msg);
    EXPECT(st == ATTEND_ERR_ARG && strstr(e.msg, "guided_alignment"), "%s: %s", attend_status_name(st), e.msg);
    EXPECT(attend_trainer_steps(b.tr) == 0, "a refused resume moved the step");
    EXPECT_STATUS(attend_trainer_resume(c.tr, ck, &e), ATTEND_OK, e);
    EXPECT(attend_trainer_steps(c.tr) == 3, "resumed at %ld", attend_trainer_steps(c.tr));
    /* and it continues bit for bit */
    attend_trainer_step(a.tr, &r, NULL);
    attend_trainer_step(c.tr, &r, NULL);
    EXPECT(!memcmp(attend_model_params(a.m), attend_model_params(c.m),
                   attend_model_param_count(a.m) * sizeof(attend_real)),
           "the resumed run differs");
    remove(ck);
    free_run(&a);
    free_run(&b);
    free_run(&c);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/attend-test-guide-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_tsv_alignments);
    RUN(test_tsv_alignment_malformed);
    RUN(test_dataset_alignments);
    RUN(test_loss_against_torch);
    RUN(test_model_refusals);
    RUN(test_trainer_option);
    RUN(test_training);
    RUN(test_checkpoint_lambda);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return harness_summary();
}
