/*
 * noalloc.c — shows that a training step and a decode step allocate nothing
 * after warm-up. Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
 * (tests/cmake/bench.cmake), so every allocation the library's objects make
 * goes through the counters below; the test warms each entry point up, resets
 * the counters and requires them to stay at zero over further calls. (The
 * warm-up of each entry point makes the packed copies of the weights its
 * products read: src/seq2seq/linear.c.)
 * (Shared libraries — OpenBLAS, libgomp — are outside the wrap: their own
 * buffers are allocated once at their initialisation.)
 *
 * Entry points: attend_trainer_step (forward, backward, clip, Adam),
 * attend_model_greedy, attend_model_beam and attend_model_score, and
 * attend_decode over an ensemble of two models (greedy, and beam search with
 * a coverage penalty where the decoder attends), for GRU and LSTM cells and
 * the Bahdanau, Luong and no-attention decoders; and a pointer model and an
 * ensemble of two pointer models. attend_model_intervene on a transformer
 * encoder's self-attention: one allocation per call (its tables), none from
 * the edit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <attend.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long n_alloc;

void *__wrap_malloc(size_t n) {
    n_alloc++;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t size) {
    n_alloc++;
    return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) {
    n_alloc++;
    return __real_realloc(p, n);
}

static int failures;

#define MUST(call)                                                                        \
    do {                                                                                  \
        attend_error e_;                                                                  \
        if ((call) != ATTEND_OK) {                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, e_.msg);   \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)
#define ERR (&e_)

static void expect_none(const char *what, long before) {
    long n = n_alloc - before;
    printf("  %-46s %ld allocations after warm-up\n", what, n);
    if (n != 0) {
        fprintf(stderr, "FAIL %s: %ld allocations after warm-up\n", what, n);
        failures++;
    }
}

/* transformer: 0 the recurrent encoder, 1 a pre-norm transformer encoder
 * (sinusoidal positions), 2 a post-norm one (learned positions), 3 a conv
 * encoder (kernel 3); 4 and 5: 1 and 2 under the transformer decoder (its
 * key/value cache reordered by the beam) */
static void run_kind(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int transformer) {
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = cell;
    c.decoder = dec;
    c.score = score;
    c.src_vocab = c.tgt_vocab = 4 + 6;
    c.emb = 8;
    c.enc_hidden = 6;
    c.enc_layers = 1;
    c.dec_hidden = 12;
    c.attn = 7;
    c.max_batch = 16;
    c.max_src_len = 9;
    c.max_tgt_len = 9;
    if (transformer == 3) {
        c.encoder = ATTEND_ENCODER_CONV;
        c.kernel = 3;
        c.enc_layers = 2;
    } else if (transformer) {
        c.encoder = ATTEND_ENCODER_TRANSFORMER;
        c.heads = 2;
        c.enc_layers = 2;
        c.post_norm = transformer == 2;
        c.positions = transformer == 2 ? ATTEND_POSITIONS_LEARNED : ATTEND_POSITIONS_SINUSOIDAL;
        c.max_positions = transformer == 2 ? 9 : 0;
    }
    if (transformer >= 4) {
        c.encoder = ATTEND_ENCODER_TRANSFORMER;
        c.heads = 2;
        c.enc_layers = 2;
        c.dec_layers = 2;
        c.post_norm = transformer == 5;
        c.positions = transformer == 5 ? ATTEND_POSITIONS_LEARNED : ATTEND_POSITIONS_SINUSOIDAL;
        c.max_positions = transformer == 5 ? 10 : 0; /* max_tgt_len + 1 steps */
    }
    attend_task_config tc = {ATTEND_TASK_REVERSE, 6, 3, 9, 64, 1};
    attend_dataset *d;
    attend_vocab *v;
    attend_model *m;
    attend_trainer *tr;
    MUST(attend_dataset_task(&d, &v, &tc, ERR));
    MUST(attend_model_create(&m, &c, 5, ERR));
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.clip_norm = 1.0;
    MUST(attend_trainer_create(&tr, m, &oc, d, 16, 3, ERR));
    char label[96];
    snprintf(label, sizeof label, "%s/%s/%s%s", attend_cell_name(cell), attend_decoder_name(dec), attend_score_name(score),
             transformer == 1   ? " (transformer encoder, pre-norm)"
             : transformer == 2 ? " (transformer encoder, post-norm)"
             : transformer == 3 ? " (conv encoder)"
             : transformer == 4 ? " (transformer encoder + decoder, pre-norm)"
             : transformer == 5 ? " (transformer encoder + decoder, post-norm)"
                                : "");
    printf("%s\n", label);

    attend_step_report rep;
    MUST(attend_trainer_step(tr, &rep, ERR));
    long before = n_alloc;
    for (int i = 0; i < 5; i++) MUST(attend_trainer_step(tr, &rep, ERR)); /* 5 batches: an epoch boundary too */
    expect_none("attend_trainer_step", before);

    int32_t src[4 * 9], len[4] = {9, 4, 7, 1}, out[4 * 10], out_len[4];
    for (int i = 0; i < 4 * 9; i++) src[i] = 4 + i % 6;
    attend_real align[4 * 10 * 9];
    MUST(attend_model_greedy(m, src, len, 4, 9, 10, out, out_len, align, ERR));
    before = n_alloc;
    for (int i = 0; i < 3; i++) MUST(attend_model_greedy(m, src, len, 4, 9, 10, out, out_len, align, ERR));
    expect_none("attend_model_greedy", before);

    int32_t bout[4 * 10], blen[4];
    double bscore[4];
    attend_real balign[4 * 10 * 9];
    int n_out;
    MUST(attend_model_beam(m, src, 9, 4, 4, 10, 0.6, bout, blen, bscore, balign, &n_out, ERR));
    before = n_alloc;
    for (int i = 0; i < 3; i++)
        MUST(attend_model_beam(m, src, 9 - i, 4 - i, 2, 10 - i, 0.6, bout, blen, bscore, balign, &n_out, ERR));
    expect_none("attend_model_beam (same or smaller searches)", before);

    double logp;
    attend_real salign[10 * 9];
    MUST(attend_model_score(m, src, 9, src + 2, 5, &logp, salign, ERR)); /* warm-up: its packed weights */
    before = n_alloc;
    for (int i = 0; i < 3; i++) MUST(attend_model_score(m, src, 9, src + 2, 5, &logp, salign, ERR));
    expect_none("attend_model_score", before);

    /* an ensemble of two models: the mean of their step log-probabilities */
    attend_model *m2;
    MUST(attend_model_clone(&m2, m, ERR));
    attend_model *ens[2] = {m, m2};
    attend_real ealign[2 * 4 * 10 * 9];
    attend_decode_options go = ATTEND_OPTIONS_INIT(attend_decode_options);
    go.max_len = 10;
    MUST(attend_decode(ens, 2, src, len, 4, 9, &go, out, out_len, NULL, ealign, NULL, ERR));
    before = n_alloc;
    for (int i = 0; i < 3; i++) MUST(attend_decode(ens, 2, src, len, 4, 9, &go, out, out_len, NULL, ealign, NULL, ERR));
    expect_none("attend_decode, ensemble of 2, greedy", before);
    attend_decode_options bo = ATTEND_OPTIONS_INIT(attend_decode_options);
    bo.beam = 4;
    bo.nbest = 4;
    bo.max_len = 10;
    bo.alpha = 0.6;
    int no_cov = dec == ATTEND_DECODER_NONE || dec == ATTEND_DECODER_TRANSFORMER; /* the penalty is refused */
    bo.coverage_penalty = no_cov ? 0 : 0.4;
    MUST(attend_decode(ens, 2, src, NULL, 1, 9, &bo, bout, blen, bscore, ealign, &n_out, ERR));
    before = n_alloc;
    for (int i = 0; i < 3; i++) {
        bo.beam = 4 - i;
        bo.nbest = 2;
        bo.max_len = 10 - i;
        MUST(attend_decode(ens, 2, src, NULL, 1, 9 - i, &bo, bout, blen, bscore, ealign, &n_out, ERR));
    }
    expect_none(no_cov ? "attend_decode, ensemble of 2, beam"
                                           : "attend_decode, ensemble of 2, beam + coverage penalty", before);

    /* interventions on the transformer encoder's self-attention (a weight
     * hook inside its attention kernel): after warm-up, the one block per
     * call attend_model_intervene takes for its log-probability tables (res.out
     * given), whatever the site, layer, head or kind; the hook adds none */
    if (transformer == 1 || transformer == 2 || transformer >= 4) {
        const int32_t base[3] = {5, 6, 7};
        int32_t iout[10];
        attend_intervention_result res;
        memset(&res, 0, sizeof res);
        res.out = iout;
        attend_intervention iv = {ATTEND_IV_UNIFORM, 0, 0, 0, ATTEND_SITE_ENCODER_SELF, 0, 0};
        MUST(attend_model_intervene(m, src, 9, base, 3, 9, &iv, &res, ERR));
        before = n_alloc;
        const attend_intervention_kind kinds[4] = {ATTEND_IV_REMOVE_STATE, ATTEND_IV_UNIFORM, ATTEND_IV_PERMUTE,
                                                   ATTEND_IV_DROP_TOP};
        for (int i = 0; i < 4; i++) {
            attend_intervention k = {kinds[i], 2, 0, 7, ATTEND_SITE_ENCODER_SELF, i % 3, i % 2};
            MUST(attend_model_intervene(m, src, 9 - i, base, 3, 9, &k, &res, ERR));
        }
        long n = n_alloc - before;
        printf("  %-46s %ld allocations in 4 calls (1 each: its tables)\n", "attend_model_intervene, encoder-self", n);
        if (n != 4) {
            fprintf(stderr, "FAIL attend_model_intervene, encoder-self: %ld allocations in 4 calls, want 4\n", n);
            failures++;
        }
    }

    attend_model_free(m2);
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(d);
    attend_vocab_free(v);
}

/* A pointer model (a sort task) and an ensemble of two: greedy and beam. */
static void run(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score) {
    run_kind(cell, dec, score, 0);
}

static void run_pointer(void) {
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = ATTEND_DECODER_POINTER;
    c.score = ATTEND_SCORE_ADDITIVE;
    c.src_vocab = 4 + 6;
    c.emb = 8;
    c.enc_hidden = 6;
    c.enc_layers = 1;
    c.dec_hidden = 12;
    c.attn = 7;
    c.max_batch = 16;
    c.max_src_len = 9;
    c.max_tgt_len = 9;
    attend_model *m, *m2;
    MUST(attend_model_create(&m, &c, 5, ERR));
    MUST(attend_model_create(&m2, &c, 6, ERR));
    printf("gru/pointer/additive\n");
    int32_t src[4 * 9], len[4] = {9, 4, 7, 1}, out[4 * 9], out_len[4];
    for (int i = 0; i < 4 * 9; i++) src[i] = 4 + i % 6;
    attend_real align[2 * 4 * 9 * 9];
    attend_model *one[1] = {m}, *two[2] = {m, m2};
    attend_decode_options go = ATTEND_OPTIONS_INIT(attend_decode_options);
    go.max_len = 9;
    for (int M = 1; M <= 2; M++) {
        attend_model **ms = M == 1 ? one : two;
        MUST(attend_decode(ms, M, src, len, 4, 9, &go, out, out_len, NULL, align, NULL, ERR));
        long before = n_alloc;
        for (int i = 0; i < 3; i++) MUST(attend_decode(ms, M, src, len, 4, 9, &go, out, out_len, NULL, align, NULL, ERR));
        expect_none(M == 1 ? "attend_decode, pointer, greedy" : "attend_decode, ensemble of 2 pointers, greedy", before);
        int32_t bout[4 * 9], blen[4];
        double bscore[4];
        int n_out;
        attend_decode_options bo = ATTEND_OPTIONS_INIT(attend_decode_options);
        bo.beam = 4;
        bo.nbest = 3;
        bo.max_len = 9;
        bo.coverage_penalty = 0.2;
        MUST(attend_decode(ms, M, src, NULL, 1, 9, &bo, bout, blen, bscore, align, &n_out, ERR));
        before = n_alloc;
        for (int i = 0; i < 3; i++) MUST(attend_decode(ms, M, src, NULL, 1, 9, &bo, bout, blen, bscore, align, &n_out, ERR));
        expect_none(M == 1 ? "attend_decode, pointer, beam" : "attend_decode, ensemble of 2 pointers, beam", before);
    }
    attend_model_free(m);
    attend_model_free(m2);
}

int main(void) {
    run(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    run(ATTEND_CELL_GRU, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL);
    run(ATTEND_CELL_LSTM, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_SCALED_DOT);
    run(ATTEND_CELL_LSTM, ATTEND_DECODER_NONE, ATTEND_SCORE_ADDITIVE);
    run_kind(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 1);
    run_kind(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 2);
    run_kind(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 3);
    run_kind(ATTEND_CELL_GRU, ATTEND_DECODER_TRANSFORMER, ATTEND_SCORE_ADDITIVE, 4);
    run_kind(ATTEND_CELL_GRU, ATTEND_DECODER_TRANSFORMER, ATTEND_SCORE_ADDITIVE, 5);
    run_pointer();
    /* the counters do see the library: creation and warm-up allocate */
    printf("allocations counted in total (creation, warm-up): %ld\n", n_alloc);
    if (n_alloc == 0) {
        fprintf(stderr, "FAIL: no allocation was counted at all: the --wrap link option is not in effect\n");
        failures++;
    }
    printf("%s\n", failures ? "noalloc: FAILED" : "noalloc: ok");
    return failures ? 1 : 0;
}
