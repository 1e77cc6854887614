/*
 * readout.c — `attend readout`: an encoder alone, read out position by
 * position (decoder kind readout), trained on the shift labelling
 * y_i = x_{i-k} (blank "_" for i < k: attend_dataset_shift_task) — the
 * longest-path column of seed 002's Table 8.1 measured as accuracy — and
 * timed: milliseconds per training step, per encode of a batch, and the
 * process's peak resident memory (the price column). tools/table81.py runs
 * it over encoders, shifts and lengths.
 *
 * Output (stdout), one "key=value ..." line each, for scripts:
 *   data:   task, shift, symbols, lengths, pairs
 *   model:  encoder kind, widths, parameters, dependent steps per layer
 *   train:  steps, final loss, ms per step: wall median and minimum, CPU
 *           (the process's, all threads) median, over the steps after the first
 *   eval:   accuracy over the labels i >= k (the path), over the blanks, over all
 *   encode: ms per encode of one batch (wall median and minimum, CPU median, of --encode-reps)
 *   memory: peak RSS of the process (getrusage), the model's parameter bytes
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "attend.h"
#include "cli.h"
#include "options.h"
#include "outputs.h"

static void readout_usage(FILE *f) {
    fprintf(f,
            "usage: attend readout --encoder rnn|transformer|conv --shift K [options]\n"
            "\n"
            "Trains an encoder with a per-position readout (decoder readout: label i read\n"
            "from position i's top encoder state through a linear layer and a softmax) on\n"
            "the shift task y_i = x_{i-K} (the blank _ for i < K), so that each label needs\n"
            "a path of length K inside the encoder (seed 002, Table 8.1), and reports\n"
            "accuracy on dev pairs, time per training step and per encode, and peak memory.\n"
            "\n"
            "data:\n"
            "  --shift K            the path length (0 = copy each position; 0..65535)\n"
            "  --len L              every sequence L symbols long (default K + 32)\n"
            "  --symbols N          distinct symbols (10)\n"
            "  --count N            training pairs (2000)\n"
            "  --dev-count N        dev pairs, generated with --data-seed + 1 (200)\n"
            "  --data-seed N        (1)\n"
            "model:\n");
    cli_opt_usage(f, "--encoder", "transformer", 23);
    cli_opt_usage(f, "--emb", "32", 23);
    cli_opt_usage(f, "--hidden", "64", 23);
    cli_opt_usage(f, "--layers", "2", 23);
    cli_opt_usage(f, "--heads", "4", 23);
    cli_opt_usage(f, "--positions", "sinusoidal", 23);
    cli_opt_usage(f, "--post-norm", NULL, 23);
    cli_opt_usage(f, "--kernel", "3", 23);
    cli_opt_usage(f, "--conv-relu", NULL, 23);
    cli_opt_usage(f, "--cell", "gru", 23);
    fprintf(f, "training:\n");
    cli_opt_usage(f, "--steps", "300", 23);
    cli_opt_usage(f, "--batch", "32", 23);
    cli_opt_usage(f, "--lr", "0.003", 23);
    cli_opt_usage(f, "--warmup", "30", 23);
    cli_opt_usage(f, "--clip", "1", 23);
    cli_opt_usage(f, "--seed", "1", 23);
    fprintf(f,
            "  --encode-reps N      encodes of one batch timed after training (5)\n"
            "  --out PATH           save the trained model\n"
            "  --help               this message\n"
            "\n"
            "Every command takes --threads N (attend --threads 1 readout ...). Exit status:\n"
            "0 ok, 1 a library error (printed), 2 bad usage.\n");
}

/* the process's CPU seconds (all its threads): the work of a step, whatever else the machine runs */
static double cpu_now(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)) return 0;
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double minimum(const double *v, int n) {
    double m = n > 0 ? v[0] : 0;
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Dependent steps one encoder layer takes over a length-L sequence, by
 * construction: the recurrent layer's L cell steps one after another (both
 * directions run side by side), one batched product chain for a convolution
 * or a self-attention layer whatever L. */
static int dependent_steps(const attend_model_config *c, int L) { return c->encoder == ATTEND_ENCODER_RNN ? L : 1; }

/* Positions a label can see through the encoder: unbounded for self-attention,
 * layers (k-1)/2 for a 'same' convolution of width k, unbounded (one step a
 * position) for the recurrent encoder; -1 = unbounded. */
static int reach(const attend_model_config *c) {
    return c->encoder == ATTEND_ENCODER_CONV ? c->enc_layers * (c->kernel - 1) / 2 : -1;
}

typedef struct {
    int shift, len, symbols, count, dev_count, encode_reps;
    uint64_t data_seed;
    const char *out;
} readout_opts;

int cmd_readout(int argc, char **argv) {
    const char *cmd = "readout";
    cli_set_oom_hint("--batch, --len or --hidden");
    cli_parser p;
    cli_init(&p, cmd, argc, argv);
    readout_opts o = {-1, 0, 10, 2000, 200, 5, 1, NULL};
    attend_model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.cell = ATTEND_CELL_GRU;
    mc.decoder = ATTEND_DECODER_READOUT;
    mc.encoder = ATTEND_ENCODER_TRANSFORMER;
    mc.emb = 32;
    mc.enc_hidden = 64;
    mc.enc_layers = 2;
    mc.dec_hidden = 1; /* unused by the readout */
    mc.attn = 1;
    int heads = 0, kernel = 0, post_norm = 0, conv_relu = 0, steps = 300, batch = 32, warmup = 30, rc = 0;
    int positions = -1;
    double lr = 3e-3, clip = 1.0;
    uint64_t seed = 1;
    while (cli_next(&p)) {
        if (cli_is_help(&p)) {
            readout_usage(stdout);
            return cli_finish(cmd, 0);
        } else if (cli_is(&p, "--shift")) rc = cli_int(&p, 0, 65535, &o.shift);
        else if (cli_is(&p, "--len")) rc = cli_int(&p, 1, 65536, &o.len);
        else if (cli_is(&p, "--symbols")) rc = cli_int(&p, 1, 100000, &o.symbols);
        else if (cli_is(&p, "--count")) rc = cli_int(&p, 1, 100000000, &o.count);
        else if (cli_is(&p, "--dev-count")) rc = cli_int(&p, 1, 100000000, &o.dev_count);
        else if (cli_is(&p, "--data-seed")) rc = cli_u64(&p, &o.data_seed);
        else if (cli_is(&p, "--encode-reps")) rc = cli_int(&p, 1, 100000, &o.encode_reps);
        else if (cli_is(&p, "--out")) rc = cli_path(&p, &o.out);
        else if (cli_opt(&p, "--encoder", &mc.encoder, &rc) || cli_opt(&p, "--emb", &mc.emb, &rc) ||
                 cli_opt(&p, "--hidden", &mc.enc_hidden, &rc) || cli_opt(&p, "--layers", &mc.enc_layers, &rc) ||
                 cli_opt(&p, "--heads", &heads, &rc) || cli_opt(&p, "--positions", &positions, &rc) ||
                 cli_opt(&p, "--post-norm", &post_norm, &rc) || cli_opt(&p, "--kernel", &kernel, &rc) ||
                 cli_opt(&p, "--conv-relu", &conv_relu, &rc) || cli_opt(&p, "--cell", &mc.cell, &rc) ||
                 cli_opt(&p, "--steps", &steps, &rc) || cli_opt(&p, "--batch", &batch, &rc) ||
                 cli_opt(&p, "--lr", &lr, &rc) || cli_opt(&p, "--warmup", &warmup, &rc) ||
                 cli_opt(&p, "--clip", &clip, &rc) || cli_opt(&p, "--seed", &seed, &rc)) {
        } else rc = cli_unknown(&p);
        if (rc) return rc;
    }
    if (o.shift < 0) return cli_usage_error(cmd, "needs --shift K (see attend readout --help)");
    if (!o.len) o.len = o.shift + 32;
    int tf = mc.encoder == ATTEND_ENCODER_TRANSFORMER, conv = mc.encoder == ATTEND_ENCODER_CONV;
    if (!tf && (heads || post_norm))
        return cli_usage_error(cmd, "--heads and --post-norm apply to --encoder transformer, not --encoder %s",
                               attend_encoder_name(mc.encoder));
    if (!conv && (kernel || conv_relu))
        return cli_usage_error(cmd, "--kernel and --conv-relu apply to --encoder conv, not --encoder %s",
                               attend_encoder_name(mc.encoder));
    if (mc.encoder == ATTEND_ENCODER_RNN && positions >= 0)
        return cli_usage_error(cmd, "--positions applies to --encoder transformer or conv, not --encoder rnn");
    if (tf) mc.heads = heads ? heads : 4;
    if (tf) mc.post_norm = post_norm;
    if (conv) {
        mc.kernel = kernel ? kernel : 3;
        mc.conv_relu = conv_relu;
    }
    if (tf || conv) mc.positions = positions >= 0 ? (attend_positions)positions : ATTEND_POSITIONS_SINUSOIDAL;
    if (mc.positions == ATTEND_POSITIONS_LEARNED) mc.max_positions = o.len;
    if (o.shift >= o.len)
        return cli_usage_error(cmd, "--shift %d leaves no label to read in sequences of --len %d", o.shift, o.len);

    attend_error err = {0};
    attend_dataset *train = NULL, *dev = NULL;
    attend_vocab *vocab = NULL, *dev_vocab = NULL;
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    attend_batch b = {0};
    int32_t *out = NULL, *out_len = NULL;
    double *times = NULL;
    attend_task_config tc = {ATTEND_TASK_SHIFT, o.symbols, o.len, o.len, o.count, o.data_seed};
    if (attend_dataset_shift_task(&train, &vocab, &tc, o.shift, &err)) goto lib_fail;
    tc.count = o.dev_count;
    tc.seed = o.data_seed + 1;
    if (attend_dataset_shift_task(&dev, &dev_vocab, &tc, o.shift, &err)) goto lib_fail;
    printf("data: task=shift shift=%d symbols=%d len=%d train_pairs=%d dev_pairs=%d\n", o.shift, o.symbols, o.len,
           o.count, o.dev_count);

    mc.src_vocab = mc.tgt_vocab = attend_vocab_size(vocab);
    mc.max_batch = batch;
    mc.max_src_len = mc.max_tgt_len = o.len;
    if (attend_model_create(&m, &mc, seed, &err)) goto lib_fail;
    int E = attend_model_encoder_width(&mc), r = reach(&mc);
    printf("model: encoder=%s layers=%d emb=%d width=%d hidden=%d", attend_encoder_name(mc.encoder), mc.enc_layers,
           mc.emb, E, mc.enc_hidden);
    if (tf) printf(" heads=%d positions=%s", mc.heads, attend_positions_name(mc.positions));
    if (conv) printf(" kernel=%d positions=%s", mc.kernel, attend_positions_name(mc.positions));
    if (mc.encoder == ATTEND_ENCODER_RNN) printf(" cell=%s", attend_cell_name(mc.cell));
    printf(" params=%zu dependent_steps_per_layer=%d reach=%d\n", attend_model_param_count(m),
           dependent_steps(&mc, o.len), r);

    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = lr;
    oc.clip_norm = clip;
    oc.warmup_steps = warmup < steps ? warmup : 0;
    oc.decay_steps = steps - oc.warmup_steps;
    oc.min_lr = lr / 10;
    if (attend_trainer_create(&tr, m, &oc, train, batch, seed, &err)) goto lib_fail;
    times = malloc(2 * (size_t)(steps + o.encode_reps + 1) * sizeof *times);
    if (!times) {
        rc = cli_oom(cmd, "the step times");
        goto done;
    }
    int ntimes = 0;
    double loss = NAN, *cpu = times + steps + o.encode_reps + 1;
    for (int s = 0; s < steps; s++) {
        attend_step_report rep;
        double t0 = cli_now(), c0 = cpu_now();
        if (attend_trainer_step(tr, &rep, &err)) goto lib_fail;
        double dt = cli_now() - t0, dc = cpu_now() - c0;
        if (s > 0 || steps == 1) { /* the first step warms the packed copies */
            cpu[ntimes] = dc;
            times[ntimes++] = dt;
        }
        loss = rep.tf.loss;
    }
    double wmin = minimum(times, ntimes);
    printf("train: steps=%d batch=%d final_loss=%.4f ms_per_step=%.3f min_ms_per_step=%.3f cpu_ms_per_step=%.3f\n",
           steps, batch, loss, 1e3 * median(times, ntimes), 1e3 * wmin, 1e3 * median(cpu, ntimes));

    /* accuracy: greedy labels (the readout's argmax per position) against the dev labels */
    int N = batch;
    if (attend_batch_alloc(&b, N, o.len, o.len, &err)) goto lib_fail;
    out = malloc((size_t)N * o.len * sizeof *out);
    out_len = malloc((size_t)N * sizeof *out_len);
    int *idx = malloc((size_t)N * sizeof *idx);
    if (!out || !out_len || !idx) {
        free(idx);
        rc = cli_oom(cmd, "the dev outputs");
        goto done;
    }
    long right_path = 0, n_path = 0, right_blank = 0, n_blank = 0;
    attend_decode_options dop;
    memset(&dop, 0, sizeof dop);
    dop.size = sizeof dop;
    dop.max_len = o.len;
    for (int i0 = 0; i0 < o.dev_count; i0 += N) {
        int n = o.dev_count - i0 < N ? o.dev_count - i0 : N;
        for (int i = 0; i < n; i++) idx[i] = i0 + i;
        if (attend_batch_fill(&b, dev, idx, n, 1, &err) ||
            attend_decode(&m, 1, b.src, b.src_len, n, b.S, &dop, out, out_len, NULL, NULL, NULL, &err)) {
            free(idx);
            goto lib_fail;
        }
        for (int i = 0; i < n; i++)
            for (int t = 0; t < b.tgt_len[i]; t++) {
                int ok = t < out_len[i] && out[(size_t)i * o.len + t] == b.tgt_out[(size_t)i * b.T + t];
                if (t >= o.shift) right_path += ok, n_path++;
                else right_blank += ok, n_blank++;
            }
    }
    printf("eval: acc_path=%.4f labels_path=%ld acc_blank=%.4f labels_blank=%ld acc_all=%.4f chance=%.4f\n",
           n_path ? (double)right_path / n_path : 0, n_path, n_blank ? (double)right_blank / n_blank : 0, n_blank,
           (double)(right_path + right_blank) / (double)(n_path + n_blank), 1.0 / o.symbols);

    /* encode time: one batch of the first dev pairs (the readout's products are O(L E V), the encoder's the rest) */
    int n = o.dev_count < N ? o.dev_count : N;
    for (int i = 0; i < n; i++) idx[i] = i;
    int fill_st = attend_batch_fill(&b, dev, idx, n, 1, &err);
    free(idx);
    if (fill_st) goto lib_fail;
    ntimes = 0;
    for (int rep = 0; rep <= o.encode_reps; rep++) {
        double t0 = cli_now(), c0 = cpu_now();
        if (attend_decode(&m, 1, b.src, b.src_len, n, b.S, &dop, out, out_len, NULL, NULL, NULL, &err))
            goto lib_fail;
        if (rep > 0) { /* the first one warms up */
            cpu[ntimes] = cpu_now() - c0;
            times[ntimes++] = cli_now() - t0;
        }
    }
    wmin = minimum(times, ntimes);
    printf("encode: batch=%d len=%d ms_per_batch=%.3f min_ms_per_batch=%.3f cpu_ms_per_batch=%.3f threads=%d\n", n,
           o.len, 1e3 * median(times, ntimes), 1e3 * wmin, 1e3 * median(cpu, ntimes), attend_threads());
    if (o.out && attend_model_save(m, o.out, vocab, vocab, ATTEND_TOKENIZE_CHAR, &err)) goto lib_fail;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("memory: peak_rss_kb=%ld param_bytes=%zu\n", (long)ru.ru_maxrss,
           attend_model_param_count(m) * sizeof(attend_real));
    goto done;
lib_fail:
    rc = cli_lib_fail(cmd, &err);
done:
    free(times);
    free(out);
    free(out_len);
    attend_batch_release(&b);
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(train);
    attend_dataset_free(dev);
    attend_vocab_free(vocab);
    attend_vocab_free(dev_vocab);
    return rc ? rc : cli_finish(cmd, 0);
}
