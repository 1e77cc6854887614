/*
 * g2p_train.c — `attend g2p train`: the default recipe (docs/G2P.md) on the
 * shared training loop (train_loop.h), with the dev evaluation after every
 * epoch, best-model selection and early stopping in its step hook.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attend.h"
#include "cli.h"
#include "mpirun.h"
#include "g2p_files.h"
#include "outputs.h" /* issues 17, 28: output checks, locks, free space */
#include "signals.h"
#include "train_loop.h"
#include "train_options.h"
#include "options.h"

/* ===================================================================== train */

/* The default recipe; docs/G2P.md explains each number. */
typedef struct {
    const char *dict, *out, *checkpoint, *resume;
    int skip;
    int keep_stress; /* --keep-stress: phonemes with their stress digits (AH0, AH1) */
    int emb, hidden, dec_hidden, attn, layers, dec_layers;
    int decoder;          /* --decoder: bahdanau (the recipe's), luong or transformer */
    int score;            /* --score: the bahdanau/luong attention score (additive) */
    cli_encoder_opts enc; /* --encoder and its settings (cli/options.h) */
    int batch, epochs, warmup, patience, checkpoint_every, log_every, eval_words;
    double lr, min_lr, clip, max_minutes;
    uint64_t seed;
    int grad_shards; /* --grad-shards (cli/mpirun.h); 0: one per rank */
    attend_train_options topt; /* --dropout, --label-smoothing (cli/train_options.h) */
    int monotonic;   /* --monotonic: monotonic attention (config monotonic) */
    int normalizer;  /* --normalizer: attend_normalizer of the attention (0: softmax) */
    int overwrite;   /* --overwrite: replace an existing --checkpoint, or another run's --out */
    cli_wp_opts wp;  /* --uniform-attention, --frozen-attention, --adversarial, --reference (cli/options.h) */
    int patience_given; /* --patience was given (a --frozen-attention run has no evaluations to count) */
} g2p_train_opts;

static void g2p_train_defaults(g2p_train_opts *o) {
    memset(o, 0, sizeof *o);
    o->out = "g2p.safetensors";
    o->decoder = ATTEND_DECODER_BAHDANAU;
    o->score = ATTEND_SCORE_ADDITIVE;
    cli_encoder_opts_init(&o->enc);
    cli_wp_opts_init(&o->wp);
    o->emb = 64;
    o->hidden = 128;
    o->dec_hidden = 256;
    o->attn = 128;
    o->layers = 1;
    o->batch = 64;
    o->epochs = 10;
    o->lr = 3e-3;
    o->min_lr = 1e-4;
    o->warmup = 500;
    o->clip = 1.0;
    o->patience = 3;
    o->max_minutes = 55;
    o->checkpoint_every = 1000;
    o->log_every = 200;
    o->seed = 1;
}

/* a shared option's --help line (cli/options.c) at this command's column, its default printed from fmt */
static void opt_line(FILE *f, const char *name, const char *fmt, ...) AT_PRINTF_CLI(3, 4);
static void opt_line(FILE *f, const char *name, const char *fmt, ...) {
    char dflt[96];
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(dflt, sizeof dflt, fmt, ap);
        va_end(ap);
    }
    cli_opt_usage(f, name, fmt ? dflt : NULL, 25);
}

static void train_usage(FILE *f) {
    g2p_train_opts d;
    g2p_train_defaults(&d);
    fprintf(f,
            "usage: attend g2p train [--dict PATH] [--out MODEL] [options]\n"
            "\n"
            "Trains a G2P model on the train part of a dictionary with the default recipe:\n"
            "a bi-GRU encoder over letters and a Bahdanau (additive) attention GRU decoder over\n"
            "phonemes, Adam with a linear warm-up and a cosine decay over all epochs, the global\n"
            "gradient norm clipped. After every epoch the dev words are decoded (greedy); the\n"
            "model is saved to --out whenever the dev WER improves, and training stops early\n"
            "after --patience epochs without improvement. A checkpoint is written every\n"
            "--checkpoint-every steps; --resume continues from one bit for bit.\n"
            "\n"
            "data:\n"
            "  --dict PATH            the dictionary (default: $ATTEND_G2P_DICT, else\n"
            "                         data/g2p/" G2P_DICT_NAME ", see tools/get_cmudict.sh)\n"
            "  --skip-malformed       skip odd lines instead of stopping at the first\n"
            "  --keep-stress          keep the stress digits (AH0, AH1, AH2): the model learns\n"
            "                         stressed phonemes (the dictionary must have them, see\n"
            "                         tools/get_cmudict.sh --stress); g2p eval sees it\n"
            "model (letters and phonemes; the recipe's: a GRU encoder and decoder):\n");
    opt_line(f, "--decoder", "bahdanau; none and pointer do not apply");
    opt_line(f, "--score", "additive");
    opt_line(f, "--emb", "%d", d.emb);
    opt_line(f, "--hidden", "%d", d.hidden);
    opt_line(f, "--layers", "%d", d.layers);
    cli_encoder_options_usage(f, 25);
    opt_line(f, "--dec-hidden", "%d; the transformer decoder's feed-forward width", d.dec_hidden);
    opt_line(f, "--dec-layers", "1");
    opt_line(f, "--attn", "%d", d.attn);
    opt_line(f, "--monotonic", NULL);
    opt_line(f, "--normalizer", "softmax");
    opt_line(f, "--uniform-attention", NULL);
    fprintf(f, "training:\n"
               "  --epochs N             passes over the training pronunciations (%d)\n", d.epochs);
    opt_line(f, "--batch", "%d", d.batch);
    opt_line(f, "--lr", "%g", d.lr);
    opt_line(f, "--warmup", "%d", d.warmup);
    opt_line(f, "--min-lr", "%g", d.min_lr);
    opt_line(f, "--clip", "%g", d.clip);
    opt_line(f, "--patience", "%d; an evaluation per epoch", d.patience);
    fprintf(f, "  --max-minutes X        stop after X minutes of training, evaluations excluded\n"
               "                         (%g; 0 = no limit)\n"
               "  --eval-words N         dev words decoded per evaluation (0 = all)\n",
            d.max_minutes);
    opt_line(f, "--seed", "%llu", (unsigned long long)d.seed);
    cli_wp_training_usage(f, 25);
    fprintf(f, "                         With --frozen-attention the dev words are not decoded during\n"
               "                         training (the model's own attention is untrained): --out is\n"
               "                         the last model, and the run ends with its teacher-forced dev\n"
               "                         score under the reference's attention\n");
    fprintf(f, "output:\n");
    opt_line(f, "--out", "the best model by dev WER: %s", d.out);
    opt_line(f, "--checkpoint", NULL);
    opt_line(f, "--checkpoint-every", "%d", d.checkpoint_every);
    opt_line(f, "--resume", NULL);
    fprintf(f, "  --overwrite            replace an existing --checkpoint (without it, one needs\n"
               "                         --resume), or an existing --out that another run wrote\n");
    opt_line(f, "--log-every", "%d", d.log_every);
    fprintf(f, "  --help                 this message\n"
               "\n"
               "Progress goes to stderr (a bar on a terminal), results to stdout. SIGINT or\n"
               "SIGTERM stops after the step in progress: the checkpoint is written (--out holds\n"
               "the best model so far), exit 130 or 143; a second signal stops at once. --out and\n"
               "--checkpoint are locked for the run's life (PATH.lock).\n");
    cli_train_options_usage(f);
    cli_mpi_usage(f);
}

static int train_parse(g2p_train_opts *o, int argc, char **argv, int *help) {
    cli_parser p;
    cli_init(&p, "g2p train", argc, argv);
    int rc = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) *help = 1;
        else if (cli_train_option(&p, &o->topt, &rc) || cli_wp_option(&p, &o->wp, &rc)) continue;
        else if (cli_is(&p, "--patience")) {
            o->patience_given = 1;
            cli_opt(&p, "--patience", &o->patience, &rc);
        }
        else if (cli_is(&p, "--dict")) rc = cli_path(&p, &o->dict);
        else if (cli_is(&p, "--skip-malformed")) rc = cli_flag(&p, &o->skip);
        else if (cli_is(&p, "--keep-stress")) rc = cli_flag(&p, &o->keep_stress);
        else if (cli_opt(&p, "--emb", &o->emb, &rc) || cli_opt(&p, "--hidden", &o->hidden, &rc) ||
                 cli_opt(&p, "--layers", &o->layers, &rc) || cli_opt(&p, "--dec-layers", &o->dec_layers, &rc) ||
                 cli_opt(&p, "--dec-hidden", &o->dec_hidden, &rc) || cli_opt(&p, "--attn", &o->attn, &rc) ||
                 cli_opt(&p, "--monotonic", &o->monotonic, &rc) || cli_opt(&p, "--normalizer", &o->normalizer, &rc) ||
                 cli_opt(&p, "--batch", &o->batch, &rc) || cli_opt(&p, "--lr", &o->lr, &rc) ||
                 cli_opt(&p, "--warmup", &o->warmup, &rc) || cli_opt(&p, "--min-lr", &o->min_lr, &rc) ||
                 cli_opt(&p, "--clip", &o->clip, &rc) ||
                 cli_opt(&p, "--seed", &o->seed, &rc) || cli_opt(&p, "--out", &o->out, &rc) ||
                 cli_opt(&p, "--checkpoint", &o->checkpoint, &rc) ||
                 cli_opt(&p, "--checkpoint-every", &o->checkpoint_every, &rc) ||
                 cli_opt(&p, "--resume", &o->resume, &rc) || cli_opt(&p, "--log-every", &o->log_every, &rc) ||
                 cli_opt(&p, "--grad-shards", &o->grad_shards, &rc) || cli_opt(&p, "--decoder", &o->decoder, &rc) ||
                 cli_opt(&p, "--score", &o->score, &rc) || cli_encoder_option(&p, &o->enc, &rc))
            continue;
        else if (cli_is(&p, "--epochs")) rc = cli_int(&p, 1, 10000, &o->epochs);
        else if (cli_is(&p, "--max-minutes")) rc = cli_double(&p, 0, 1e6, &o->max_minutes);
        else if (cli_is(&p, "--eval-words")) rc = cli_int(&p, 0, 100000000, &o->eval_words);
        else if (cli_is(&p, "--overwrite")) rc = cli_flag(&p, &o->overwrite);
        else rc = cli_unknown(&p);
    }
    if (rc || *help) return rc;
    if (o->decoder == ATTEND_DECODER_NONE || o->decoder == ATTEND_DECODER_POINTER)
        return cli_usage_error("g2p train", "--decoder %s: a G2P model needs attention over the letters and phoneme "
                                            "outputs (bahdanau, luong or transformer)",
                               attend_decoder_name((attend_decoder_kind)o->decoder));
    /* the encoder kind's settings, and the transformer decoder's encoder */
    if ((rc = cli_encoder_check("g2p train", &o->enc, o->decoder, o->emb))) return rc;
    /* what combines with what: the library's rules, in these options' words */
    attend_model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.decoder = (attend_decoder_kind)o->decoder;
    mc.score = (attend_score_kind)o->score;
    mc.monotonic = o->monotonic;
    mc.normalizer = (attend_normalizer)o->normalizer;
    attend_train_options topt = o->topt;
    cli_wp_apply(&o->wp, &mc, &topt);
    if ((rc = cli_rules_check("g2p train", &mc, &topt, NULL))) return rc;
    return cli_wp_check("g2p train", &o->wp, o->patience_given && o->patience > 0 ? "--patience" : NULL);
}

/* Dev WER/PER of the model now (greedy, batched). */
static int dev_eval(attend_model *m, const attend_g2p_dict *d, attend_vocab *gv, attend_vocab *pv, int batch,
                    int max_words, attend_g2p_counts *c) {
    attend_error err = {0};
    attend_g2p_eval_options eo = {0, 0, batch, max_words, 0, 0};
    if (attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, c, &err)) return cli_lib_fail("g2p train", &err);
    return 0;
}

/* What the step hook of `g2p train` needs: after every epoch (and at the
 * end, or when out of time) the dev words are decoded; the model is saved to
 * --out when the dev WER improved, and training stops after --patience epochs
 * without improvement. The state (best WER, epochs without improvement,
 * stopped, training time) goes into every checkpoint. */
typedef struct {
    const char *cmd;
    const g2p_train_opts *o;
    attend_model *m;
    attend_trainer *tr;
    const attend_g2p_dict *d;
    attend_vocab *gv, *pv;
    long steps_per_epoch, total;
    int writer;
    train_state st;          /* dev WER; patience in epochs (one evaluation each) */
    char run_fp[17];         /* attend_trainer_fingerprint, in the model files written */
    double trained_before;   /* training seconds of earlier sessions (--max-minutes counts them) */
    long checkpoint_step;    /* the step of the last checkpoint written (-1: none) */
    int no_dev;              /* the split has no dev words: no selection, --out is the last model */
    int frozen;              /* --frozen-attention: no evaluations (its own attention is untrained), --out is the
                                last model */
} g2p_hook;

static int epoch_of(const g2p_hook *h, long step) { return (int)((step - 1) / h->steps_per_epoch) + 1; }

static void epoch_tag(void *user, long step, char *buf, size_t n) {
    snprintf(buf, n, " epoch %d", epoch_of(user, step));
}

static int save_checkpoint(g2p_hook *h, train_loop *lp) {
    attend_error err = {0};
    char state[512];
    h->st.trained_s = h->trained_before + (lp ? lp->t_train : 0);
    train_state_format(&h->st, state, sizeof state);
    if (attend_trainer_set_caller_state(h->tr, state, &err) ||
        attend_trainer_save(h->tr, h->o->checkpoint, h->gv, h->pv, ATTEND_TOKENIZE_CHAR, &err)) {
        if (lp) train_loop_clear(lp);
        return cli_lib_fail(h->cmd, &err);
    }
    h->checkpoint_step = attend_trainer_steps(h->tr);
    return 0;
}

static int after_step(void *user, train_loop *lp, const attend_step_report *r, int *stop) {
    g2p_hook *h = user;
    const g2p_train_opts *o = h->o;
    attend_error err = {0};
    long step = r->step;
    int rc;
    int out_of_time = cli_mpi_any(o->max_minutes > 0 && h->trained_before + lp->t_train > 60 * o->max_minutes);
    int ckpt = o->checkpoint && o->checkpoint_every && step % o->checkpoint_every == 0;
    if (out_of_time) {
        train_loop_clear(lp);
        printf("time limit: %.1f minutes reached\n", o->max_minutes);
        *stop = 1;
    }
    if (h->no_dev || h->frozen || (step % h->steps_per_epoch != 0 && step != h->total && !out_of_time))
        return ckpt ? save_checkpoint(h, lp) : 0;
    attend_g2p_counts c;
    double te = cli_now();
    if ((rc = dev_eval(h->m, h->d, h->gv, h->pv, o->batch, o->eval_words, &c))) return rc;
    double wer = attend_g2p_wer(&c), per = attend_g2p_per(&c);
    int patience_out = 0;
    int better = c.words > 0 && train_best_update(&h->st.best, wer, step, &patience_out);
    if (better && h->writer &&
        cli_save_model(h->m, o->out, h->gv, h->pv, ATTEND_TOKENIZE_CHAR, h->run_fp, &err)) {
        train_loop_clear(lp);
        return cli_lib_fail(h->cmd, &err);
    }
    if (better) memcpy(h->st.run, h->run_fp, sizeof h->st.run);
    train_loop_clear(lp);
    if (c.words > 0)
        printf("epoch %d step %ld: dev PER %.2f%% WER %.2f%% (%ld words, %.1f s)%s; %.1f min trained\n",
               epoch_of(h, step), step, 100 * per, 100 * wer, c.words, cli_now() - te, better ? ", best: saved" : "",
               (h->trained_before + lp->t_train) / 60);
    else
        printf("epoch %d step %ld: dev PER n/a WER n/a (no dev words); %.1f min trained\n", epoch_of(h, step), step,
               (h->trained_before + lp->t_train) / 60);
    fflush(stdout);
    if (patience_out) {
        printf("early stop: no better dev WER for %d epochs\n", h->st.best.bad);
        h->st.stopped = 1;
        *stop = 1;
    }
    /* after the evaluation: the checkpoint holds what was decided at this step */
    return ckpt ? save_checkpoint(h, lp) : 0;
}

int cmd_g2p_train(int argc, char **argv) {
    const char *cmd = "g2p train";
    g2p_train_opts o;
    g2p_train_defaults(&o);
    int help = 0, rc = train_parse(&o, argc, argv, &help);
    if (rc) return rc;
    if (help) {
        train_usage(stdout);
        return cli_finish(cmd, 0);
    }
    char buf[PATH_MAX + 64];
    const char *path = g2p_find_dict(cmd, o.dict, buf, sizeof buf);
    if (!path) return 1;
    cli_signals_catch(); /* from here a signal is noted and the run stops cleanly between steps */
    cli_set_oom_hint("lower --batch or the model's sizes (--emb, --hidden, --dec-hidden, --attn, --layers)");
    if ((rc = cli_mpi_begin(cmd, argc, argv, o.batch, &o.grad_shards))) return cli_mpi_end(cmd, rc);
    int writer = cli_mpi_rank() == 0; /* rank 0 alone writes (cli/mpirun.h) */
    if (!writer) o.checkpoint = NULL;
    /* issue 17 (cli/outputs.h): every file checked before any work */
    if (cli_check_train_files(cmd, "--dict", path, NULL, o.resume, o.checkpoint, writer ? o.out : NULL, 0, NULL))
        return cli_mpi_end(cmd, 1);
    /* issue 28: never replace a checkpoint unasked; one writer per output */
    if ((rc = cli_check_checkpoint_reuse(cmd, o.checkpoint, o.resume, o.overwrite))) return cli_mpi_end(cmd, rc);
    attend_lock *locks[2] = {NULL, NULL};
    const char *outs[2] = {o.checkpoint, writer ? o.out : NULL};
    if (cli_lock_outputs(cmd, outs, 2, locks)) return cli_mpi_end(cmd, 1);
    attend_error err = {0};
    attend_g2p_dict *d = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    attend_dataset *train = NULL;
    attend_model *m = NULL, *ref = NULL;
    attend_trainer *tr = NULL;
    if ((rc = g2p_read_dict(cmd, path, o.skip, o.keep_stress, &d))) goto done;
    if (attend_vocab_create(&gv, &err) || attend_vocab_create(&pv, &err) ||
        attend_g2p_dataset(&train, d, ATTEND_G2P_TRAIN, gv, pv, 1, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    int n_train = attend_dataset_size(train);
    if (n_train == 0) {
        cli_error(cmd, "%s: no training words", path);
        rc = 1;
        goto done;
    }
    long dev_words = 0;
    for (int w = 0; w < attend_g2p_dict_words(d); w++) {
        const char *word = attend_g2p_dict_word(d, w);
        dev_words += attend_g2p_split_of(word, strlen(word)) == ATTEND_G2P_DEV;
    }
    printf("data: %s: %d words; train %d pronunciations, dev %ld words; %d letters, %d phonemes%s\n", cli_vis(path), in.words,
           n_train, dev_words, attend_vocab_size(gv) - 4, attend_vocab_size(pv) - 4,
           o.keep_stress ? " (stress kept)" : "");
    if (o.keep_stress && !attend_g2p_vocab_has_stress(pv)) {
        cli_error(cmd, "--keep-stress: %s has no stress digits (AH0, AH1): use a dictionary with stress, "
                        "e.g. from tools/get_cmudict.sh --stress", path);
        rc = 1;
        goto done;
    }

    attend_model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.cell = ATTEND_CELL_GRU;
    mc.decoder = (attend_decoder_kind)o.decoder;
    mc.score = (attend_score_kind)o.score;
    mc.monotonic = o.monotonic;
    mc.src_vocab = attend_vocab_size(gv);
    mc.tgt_vocab = attend_vocab_size(pv);
    mc.emb = o.emb;
    mc.enc_hidden = o.hidden;
    mc.enc_layers = o.layers;
    mc.dec_layers = o.dec_layers > 1 ? o.dec_layers : 0;
    mc.dec_hidden = o.dec_hidden;
    mc.attn = o.attn;
    mc.normalizer = (attend_normalizer)o.normalizer;
    cli_wp_apply(&o.wp, &mc, &o.topt);
    mc.max_batch = o.batch;
    mc.max_src_len = in.max_word_len;     /* every split fits, dev included */
    mc.max_tgt_len = in.max_pron_len;
    cli_encoder_config(&mc, &o.enc);
    cli_encoder_positions_capacity(&mc);
    if (attend_model_create(&m, &mc, o.seed, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    /* the base model of --frozen-attention / --adversarial: the same letters and phonemes */
    if ((rc = cli_wp_reference(cmd, &o.wp, path, &mc, gv, pv, ATTEND_TOKENIZE_CHAR, &ref))) goto done;
    o.topt.reference = ref;
    long steps_per_epoch = (n_train + o.batch - 1) / o.batch, total = steps_per_epoch * o.epochs;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = o.lr;
    oc.clip_norm = o.clip;
    oc.warmup_steps = o.warmup;
    oc.decay_steps = total > o.warmup ? (int)(total - o.warmup) : 0;
    oc.min_lr = o.min_lr;
    if (attend_trainer_create(&tr, m, &oc, train, o.batch, o.seed, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    if ((rc = cli_train_options_set(cmd, tr, &o.topt))) goto done;
    if ((rc = cli_mpi_trainer(cmd, tr, o.grad_shards))) goto done;
    cli_print_model(stdout, m);
    printf(" (%.2f MB)\n", 4.0 * (double)attend_model_param_count(m) / 1e6);
    printf("training: adam lr %g, warm-up %d, cosine decay to %g over %ld steps, clip %g, batch %d, %d epochs of "
           "%ld steps, patience %d, seed %llu",
           o.lr, o.warmup, o.min_lr, total, o.clip, o.batch, o.epochs, steps_per_epoch, o.patience,
           (unsigned long long)o.seed);
    cli_train_options_print(stdout, &o.topt);
    printf("\n");
    g2p_hook h;
    memset(&h, 0, sizeof h);
    h.cmd = cmd;
    h.o = &o;
    h.m = m;
    h.tr = tr;
    h.d = d;
    h.gv = gv;
    h.pv = pv;
    h.steps_per_epoch = steps_per_epoch;
    h.total = total;
    h.writer = writer;
    h.checkpoint_step = -1;
    h.no_dev = dev_words == 0;
    h.frozen = o.wp.frozen;
    if (h.no_dev)
        cli_error(cmd, "note: %s has no dev words in its split: nothing to choose the model by; --out will be the "
                       "last model (dev PER and WER n/a)",
                  path);
    attend_trainer_fingerprint(tr, h.run_fp);
    snprintf(h.st.select, sizeof h.st.select, "wer");
    h.st.patience = o.patience;
    h.st.eval_every = (int)steps_per_epoch;
    train_best_init(&h.st.best, o.patience, 2); /* a WER is at most 1 */
    if (o.resume) {
        if (attend_trainer_resume(tr, o.resume, &err)) {
            rc = cli_lib_fail(cmd, &err);
            goto done;
        }
        printf("resumed: %s at step %ld\n", cli_vis(o.resume), attend_trainer_steps(tr));
        const char *text = attend_trainer_caller_state(tr);
        train_state was;
        if (text && train_state_parse(text, &was)) {
            cli_error(cmd, "%s: the checkpoint's early-stopping state is unreadable: '%.80s'", o.resume, text);
            rc = 1;
            goto done;
        }
        if (text) { /* everything the interrupted run had decided */
            if (was.patience != o.patience)
                cli_error(cmd, "note: %s: the checkpoint's run had --patience %d, this one %d", o.resume, was.patience,
                          o.patience);
            h.trained_before = was.trained_s;
            h.st.best = was.best;
            h.st.best.patience = o.patience;
            memcpy(h.st.run, was.run, sizeof h.st.run);
            h.st.stopped = was.stopped && o.patience && was.best.bad >= o.patience;
            if (h.st.best.best <= 1)
                printf("best so far: %s, dev WER %.2f%% (step %ld, %d epoch%s without improvement since)\n",
                       cli_vis(o.out), 100 * h.st.best.best, h.st.best.best_step, h.st.best.bad,
                       h.st.best.bad == 1 ? "" : "s");
        } else { /* an older checkpoint: the best so far is --out's dev WER */
            cli_error(cmd, "note: %s: an older checkpoint without the early-stopping state: assumed 0 epochs "
                           "without improvement, not stopped, and --out's dev WER as the best so far",
                      o.resume);
            double best_wer = 2;
            attend_model *bm = NULL;
            attend_vocab *bg = NULL, *bp = NULL;
            attend_g2p_counts c;
            attend_model_config cap;
            memset(&cap, 0, sizeof cap);
            cap.max_batch = o.batch;
            cap.max_src_len = in.max_word_len;
            cap.max_tgt_len = in.max_pron_len;
            if (g2p_file_exists(o.out) && attend_g2p_model_load(&bm, o.out, &cap, &bg, &bp, &err) == ATTEND_OK &&
                dev_eval(bm, d, bg, bp, o.batch, o.eval_words, &c) == 0 && c.words > 0) {
                best_wer = attend_g2p_wer(&c);
                printf("best so far: %s, dev WER %.2f%%\n", cli_vis(o.out), 100 * best_wer);
            }
            attend_model_free(bm);
            attend_vocab_free(bg);
            attend_vocab_free(bp);
            cli_mpi_share(&best_wer); /* rank 0's --out decides for all */
            h.st.best.best = best_wer;
        }
    }
    /* --out is the best model: an existing one must be this run's */
    if (writer && (rc = cli_check_best_out(cmd, "--out", o.out, m, h.run_fp, h.st.run[0] ? h.st.run : NULL,
                                           o.overwrite)))
        goto done;
    if (h.st.stopped) { /* it ended already: nothing to train, nothing to replace */
        printf("early stop: this run stopped at step %ld (no better dev WER for %d epochs, --patience %d); the best: "
               "step %ld; nothing to do\n",
               h.st.best.last_step, h.st.best.bad, o.patience, h.st.best.best_step);
        goto done;
    }
    {
        const char *paths[2] = {o.checkpoint, writer ? o.out : NULL};
        uint64_t bytes[2] = {cli_checkpoint_bytes(m, gv, pv, n_train), cli_model_file_bytes(m, gv, pv)};
        const char *what[2] = {"the checkpoint", "the model"};
        if ((rc = cli_check_space(cmd, paths, bytes, what, 2))) goto done;
    }
    fflush(stdout);

    train_loop_config lc = {cmd, tr, total, o.log_every, 0, o.checkpoint, after_step, epoch_tag, &h};
    train_loop lp;
    double t_begin = cli_now();
    if ((rc = train_loop_run(&lc, &lp))) goto done;
    double best_wer = h.st.best.best;
    if (o.checkpoint && h.checkpoint_step != attend_trainer_steps(tr) && (rc = save_checkpoint(&h, &lp))) goto done;
    if (lp.interrupted) {
        long step = attend_trainer_steps(tr);
        if (o.checkpoint)
            printf("interrupted (%s) at step %ld: checkpoint %s holds step %ld; to go on, run the same command with "
                   "--resume %s\n",
                   cli_signal_name(lp.interrupted), step, cli_vis(o.checkpoint), step, cli_vis(o.checkpoint));
        else if (best_wer <= 1)
            printf("interrupted (%s) at step %ld: %s holds the best model so far (step %ld, dev WER %.2f%%); nothing "
                   "else was saved (--checkpoint PATH makes a run resumable)\n",
                   cli_signal_name(lp.interrupted), step, cli_vis(o.out), h.st.best.best_step, 100 * best_wer);
        else
            printf("interrupted (%s) at step %ld: nothing was saved (no --checkpoint, and no evaluation yet)\n",
                   cli_signal_name(lp.interrupted), step);
        rc = cli_mpi_agreed(cli_signal_status(lp.interrupted)); /* rank 0 decided for every rank */
        goto done;
    }
    printf("trained: steps %ld-%ld in %.1f min (%.0f words/s; %.1f min with evaluations); best dev WER ",
           lp.start_step + 1, attend_trainer_steps(tr), lp.t_train / 60, train_loop_pairs_per_s(&lp),
           (cli_now() - t_begin) / 60);
    if (best_wer <= 1) printf("%.2f%%\n", 100 * best_wer);
    else printf("n/a\n");
    if (h.frozen && dev_words > 0) { /* what the diagnostic measures: the model with the reference's attention */
        attend_dataset *dev = NULL;
        attend_compare_stats cs;
        if (attend_g2p_dataset(&dev, d, ATTEND_G2P_DEV, gv, pv, 0, &err) ||
            attend_model_compare(m, ref, dev, o.batch, 0, 1, &cs, &err)) {
            attend_dataset_free(dev);
            rc = cli_lib_fail(cmd, &err);
            goto done;
        }
        attend_dataset_free(dev);
        printf("dev with the reference's attention (teacher-forced): pairs %d  loss %.4f  tf-token %.4f (the "
               "reference: loss %.4f  tf-token %.4f)\n",
               cs.pairs, cs.loss_a, cs.acc_a, cs.loss_b, cs.acc_b);
    }
    if ((h.no_dev || h.frozen) && writer) {
        if (cli_save_model(m, o.out, gv, pv, ATTEND_TOKENIZE_CHAR, h.run_fp, &err)) {
            rc = cli_lib_fail(cmd, &err);
            goto done;
        }
        printf("saved: %s (the last model: %s)\n", cli_vis(o.out),
               h.frozen ? "--frozen-attention is evaluated with `attend compare REFERENCE OUT --frozen`"
                        : "no dev words to choose by");
    } else if (best_wer <= 1) {
        printf("saved: %s\n", cli_vis(o.out));
    }
done:
    cli_unlock_outputs(locks, 2);
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_model_free(ref);
    attend_dataset_free(train);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_dict_free(d);
    return cli_mpi_end(cmd, cli_finish(cmd, rc));
}

