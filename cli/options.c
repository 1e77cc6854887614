/*
 * options.c — the options train, g2p train, demo and sweep share, each
 * defined once (options.h), and the combination rules worded with them.
 */
#include <string.h>

#include "options.h"
#include "ensemble.h"

static int select_decoder(const char *s) { return attend_decoder_from_name(s); }

static const cli_option OPTIONS[] = {
    /* model */
    {"--cell", CLI_OPT_CHOICE, 0, 0, 0, attend_cell_from_name, "gru|lstm", NULL, "NAME", "gru or lstm"},
    {"--decoder", CLI_OPT_CHOICE, 0, 0, 0, select_decoder, "bahdanau|luong|none|pointer|transformer|readout", NULL,
     "NAME",
     "bahdanau, luong, none (no attention: a fixed context),\n"
     "pointer (only for --task sort, and implied by it),\n"
     "transformer (with --encoder transformer: its --heads, --positions\n"
     "and --post-norm; --dec-layers layers, feed-forward --dec-hidden), or\n"
     "readout (no decoder: one label per source position read from\n"
     "its top encoder state; targets as long as their sources)"},
    {"--score", CLI_OPT_CHOICE, 0, 0, 0, attend_score_from_name, "dot|scaled_dot|general|additive", NULL, "NAME",
     "dot, scaled_dot, general, additive"},
    {"--emb", CLI_OPT_INT, 1, 65536, 0, NULL, NULL, NULL, "N", "embedding width"},
    {"--encoder", CLI_OPT_CHOICE, 0, 0, 0, attend_encoder_from_name, "rnn|transformer|conv", NULL, "NAME",
     "rnn (bidirectional recurrent), transformer (multi-head\n"
     "self-attention and feed-forward layers) or conv (ConvS2S:\n"
     "gated convolutions); the last two have width --emb"},
    {"--kernel", CLI_OPT_INT, 1, 1025, 0, NULL, NULL, NULL, "K", "the conv encoder's kernel width (odd)"},
    {"--conv-relu", CLI_OPT_FLAG, 0, 0, 0, NULL, NULL, NULL, NULL,
     "the conv encoder's layers end in a ReLU (emb channels) in\nplace of the gated linear unit (2 emb channels)"},
    {"--hidden", CLI_OPT_INT, 1, 32768, 0, NULL, NULL, NULL, "N",
     "encoder width per direction (transformer: the feed-forward width)"},
    {"--layers", CLI_OPT_INT, 1, 8, 0, NULL, NULL, NULL, "N", "stacked encoder layers"},
    {"--heads", CLI_OPT_INT, 1, 65536, 0, NULL, NULL, NULL, "N",
     "the transformer encoder's attention heads; must divide --emb"},
    {"--positions", CLI_OPT_CHOICE, 0, 0, 0, attend_positions_from_name, "sinusoidal|learned|none", NULL, "NAME",
     "positions added to the transformer or conv encoder's\nembeddings: "
     "sinusoidal, learned, or none (blind to order)"},
    {"--post-norm", CLI_OPT_FLAG, 0, 0, 0, NULL, NULL, NULL, NULL,
     "the transformer encoder's layer norm after each residual\n"
     "(the original Transformer's; default: before each sub-layer)"},
    {"--dec-layers", CLI_OPT_INT, 1, 8, 0, NULL, NULL, NULL, "N",
     "stacked decoder layers; attention reads the top one"},
    {"--dec-hidden", CLI_OPT_INT, 1, 65536, 0, NULL, NULL, NULL, "N", "decoder width"},
    {"--attn", CLI_OPT_INT, 1, 65536, 0, NULL, NULL, NULL, "N", "additive attention width"},
    {"--coverage", CLI_OPT_FLAG, 0, 0, 0, NULL, NULL, "coverage", NULL,
     "coverage (Tu et al. 2016, See et al. 2017): the sum of the\n"
     "earlier steps' attention weights is an input of the additive\n"
     "score (tensor attention.w_cov); bahdanau or luong, additive"},
    {"--monotonic", CLI_OPT_FLAG, 0, 0, 0, NULL, NULL, "monotonic", NULL,
     "monotonic attention (Raffel et al. 2017; bahdanau or luong):\n"
     "expected alignments in training, hard at decoding (the\n"
     "attended position never moves left)"},
    {"--copy", CLI_OPT_FLAG, 0, 0, 0, NULL, NULL, "copy", NULL,
     "copy source tokens (pointer-generator, See et al. 2017): each\n"
     "step mixes the vocabulary with the attention over the source,\n"
     "so a source token unseen in training can be emitted (bahdanau\n"
     "or luong; dev targets unknown to the training data but found\n"
     "in their source count as copies)"},
    {"--normalizer", CLI_OPT_CHOICE, 0, 0, 0, attend_normalizer_from_name, "softmax|sparsemax|entmax15", "normalizer",
     "NAME",
     "softmax, sparsemax or entmax15: what turns the attention\n"
     "scores into weights (the sparse two leave exact zeros;\n"
     "bahdanau and luong decoders)"},
    {"--uniform-attention", CLI_OPT_FLAG, 0, 0, 0, NULL, NULL, "uniform_attention", NULL,
     "every step's attention weights 1/len over the source, in\n"
     "training and decoding: the uniform baseline of Wiegreffe &\n"
     "Pinter 2019 (no scores computed; bahdanau or luong)"},
    /* training */
    {"--steps", CLI_OPT_INT, 0, 1000000000, 0, NULL, NULL, NULL, "N", "total optimizer steps, one batch each"},
    {"--batch", CLI_OPT_INT, 1, 1 << 20, 0, NULL, NULL, NULL, "N", "pairs per batch"},
    {"--lr", CLI_OPT_DOUBLE, 1e-12, 1e6, 0, NULL, NULL, NULL, "X", "peak learning rate"},
    {"--warmup", CLI_OPT_INT, 0, 1000000000, 0, NULL, NULL, NULL, "N", "linear warm-up steps"},
    {"--min-lr", CLI_OPT_DOUBLE, 0, 1e6, 0, NULL, NULL, NULL, "X", "learning rate at the end of the cosine decay"},
    {"--clip", CLI_OPT_DOUBLE, 0, 1e12, 0, NULL, NULL, NULL, "X", "clip the global gradient norm to X; 0 = off"},
    {"--seed", CLI_OPT_U64, 0, 0, 0, NULL, NULL, NULL, "N", "initialisation and shuffling seed"},
    {"--patience", CLI_OPT_INT, 0, 1000000000, 0, NULL, NULL, NULL, "N",
     "stop after N evaluations in a row without a better dev score\n"
     "(0: never stop, only keep the best)"},
    {"--dropout", CLI_OPT_DOUBLE, 0, 1, 1, NULL, NULL, "dropout", "P",
     "inverted dropout in [0, 1) on the source and decoder-input\n"
     "embeddings, between encoder layers and on the output features;\n"
     "the masks follow from --seed and the step (0: off)"},
    {"--label-smoothing", CLI_OPT_DOUBLE, 0, 1, 1, NULL, NULL, "label_smoothing", "E",
     "label smoothing in [0, 1), as PyTorch's cross_entropy(\n"
     "label_smoothing=E); the training loss shown is the smoothed one,\n"
     "the dev loss plain cross-entropy (0: off)"},
    {"--sampling-prob", CLI_OPT_DOUBLE, 0, 1, 0, NULL, NULL, "sampling_prob", "P",
     "scheduled sampling: each decoder input after the first is,\n"
     "with probability P, the model's own previous prediction\n"
     "(argmax) instead of the reference (0: teacher forcing)"},
    {"--sampling-ramp", CLI_OPT_LONG, 0, 1000000000, 0, NULL, NULL, NULL, "N",
     "steps over which that probability rises linearly from 0\n"
     "to P (0: P from the first step)"},
    {"--coverage-loss", CLI_OPT_DOUBLE, 0, 1e6, 0, NULL, NULL, "coverage_loss", "X",
     "add X * sum_t sum_j min(a_tj, cov_tj), the coverage loss of\n"
     "See et al. 2017 (cov_t: the sum of the earlier weights), per\n"
     "target token like the cross-entropy; with or without\n"
     "--coverage; bahdanau or luong (0: off)"},
    {"--guided-alignment", CLI_OPT_DOUBLE, 0, 1e6, 0, NULL, NULL, "guided_alignment", "X",
     "add X times the cross-entropy between the attention weights\n"
     "and the data's alignments to the loss (Chen et al. 2016; the\n"
     "TSV's third column, or the task's own: copy i-i, reverse\n"
     "i-(L-1-i)); bahdanau and luong decoders. The step losses\n"
     "shown include it, evaluations report the cross-entropy\n"
     "alone (0: off)"},
    {"--frozen-attention", CLI_OPT_FLAG, 0, 0, 0, NULL, NULL, "frozen_attention", NULL,
     "train with the attention weights of --reference MODEL in\n"
     "place of the model's own (teacher-forced, as constants):\n"
     "Wiegreffe & Pinter's diagnostic transfer; evaluate it with\n"
     "`attend compare MODEL OUT --frozen` (its own attention is\n"
     "never trained)"},
    {"--adversarial", CLI_OPT_DOUBLE, 0, 1e6, 0, NULL, NULL, "adversarial", "L",
     "the loss TVD(p, q) - L JSD(a, b) per target token, in place\n"
     "of the cross-entropy, p, a the model's output distribution\n"
     "and attention, q, b those of --reference MODEL: its outputs\n"
     "kept, its attention pushed away (Wiegreffe & Pinter's\n"
     "adversary; 0: off)"},
    {"--reference", CLI_OPT_PATH, 0, 0, 0, NULL, NULL, NULL, "MODEL",
     "the base model of --frozen-attention and --adversarial: the\n"
     "same data and vocabularies (given again to --resume)"},
    /* output */
    {"--out", CLI_OPT_PATH, 0, 0, 0, NULL, NULL, NULL, "PATH", "model file written at the end"},
    {"--checkpoint", CLI_OPT_PATH, 0, 0, 0, NULL, NULL, NULL, "PATH",
     "checkpoint file (weights, optimizer, data position)"},
    {"--checkpoint-every", CLI_OPT_INT, 0, 1000000000, 0, NULL, NULL, NULL, "N", "steps between checkpoints"},
    {"--resume", CLI_OPT_PATH, 0, 0, 0, NULL, NULL, NULL, "PATH",
     "continue from a checkpoint of the same data and options"},
    {"--log-every", CLI_OPT_INT, 1, 1000000000, 0, NULL, NULL, NULL, "N",
     "log line every N steps when stderr is not a terminal"},
    {"--grad-shards", CLI_OPT_INT, 1, 1 << 20, 0, NULL, NULL, NULL, "N",
     "gradient shards per step (docs/SCALING.md)"},
};
#define N_OPTIONS ((int)(sizeof OPTIONS / sizeof OPTIONS[0]))

const cli_option *cli_opt_find(const char *name) {
    for (int i = 0; i < N_OPTIONS; i++)
        if (!strcmp(OPTIONS[i].name, name)) return &OPTIONS[i];
    return NULL;
}

int cli_opt(cli_parser *p, const char *name, void *dst, int *rc) {
    if (!cli_is(p, name)) return 0;
    const cli_option *o = cli_opt_find(name);
    if (!o) { /* a name the table lacks is a programming error of the command */
        *rc = cli_usage_error(p->cmd, "%s: not a shared option", name);
        return 1;
    }
    switch (o->kind) {
    case CLI_OPT_INT: *rc = cli_int(p, (long)o->lo, (long)o->hi, dst); break;
    case CLI_OPT_LONG: {
        int v = 0;
        *rc = cli_int(p, (long)o->lo, (long)o->hi, &v);
        if (!*rc) *(long *)dst = v;
        break;
    }
    case CLI_OPT_U64: *rc = cli_u64(p, dst); break;
    case CLI_OPT_DOUBLE:
        if (!o->hi_open) {
            *rc = cli_double(p, o->lo, o->hi, dst);
        } else { /* [lo, hi): hi itself is a usage error (dropout 1 drops everything, smoothing 1 leaves no target) */
            const char *s = NULL;
            double v;
            if (cli_string(p, &s)) *rc = 2;
            else if (cli_parse_double(s, o->lo, o->hi, &v) || !(v < o->hi))
                *rc = cli_usage_error(p->cmd, "%s: expected a number in [%g, %g), got '%s'", p->opt, o->lo, o->hi, s);
            else {
                *(double *)dst = v;
                *rc = 0;
            }
        }
        break;
    case CLI_OPT_FLAG: *rc = cli_flag(p, dst); break;
    case CLI_OPT_STRING: *rc = cli_string(p, dst); break;
    case CLI_OPT_PATH: *rc = cli_path(p, dst); break;
    case CLI_OPT_CHOICE: *rc = cli_choice(p, o->from_name, o->choices, dst); break;
    }
    return 1;
}

#define CLI_HELP_WIDTH 88 /* the --help texts' right margin */

void cli_opt_usage(FILE *f, const char *name, const char *dflt, int col) {
    const cli_option *o = cli_opt_find(name);
    if (!o) return;
    char head[64];
    snprintf(head, sizeof head, "  %s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    int pad = col - (int)strlen(head);
    fprintf(f, "%s%*s", head, pad > 1 ? pad : 1, "");
    int at = (int)strlen(head) + (pad > 1 ? pad : 1);
    /* the description's lines as written, then the default in parentheses, wrapped by words */
    for (const char *s = o->help; *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        fprintf(f, "%.*s", (int)n, s);
        at += (int)n;
        if (!nl) break;
        fprintf(f, "\n%*s", col, "");
        at = col;
        s = nl + 1;
    }
    if (dflt) {
        char text[256];
        snprintf(text, sizeof text, "(%s)", dflt);
        for (const char *w = text; *w;) {
            const char *sp = strchr(w, ' ');
            int n = sp ? (int)(sp - w) : (int)strlen(w);
            if (at + 1 + n > CLI_HELP_WIDTH && at > col) {
                fprintf(f, "\n%*s", col, "");
                at = col;
            } else {
                fputc(' ', f);
                at++;
            }
            fprintf(f, "%.*s", n, w);
            at += n;
            w += n;
            while (*w == ' ') w++;
        }
    }
    fprintf(f, "\n");
}

/* How the command names a feature of the rules: its option (with the value
 * for a choice), or (sweep's suffixes) "+name" ("+sparsemax" for a normaliser). */
static void feature_name(const char *feature, const attend_model_config *cfg, int suffixes, char *buf, size_t cap) {
    int normalizer = !strcmp(feature, "normalizer");
    if (suffixes) {
        snprintf(buf, cap, "+%s", normalizer ? attend_normalizer_name(cfg->normalizer) : feature);
        return;
    }
    for (int i = 0; i < N_OPTIONS; i++)
        if (OPTIONS[i].feature && !strcmp(OPTIONS[i].feature, feature)) {
            if (normalizer) snprintf(buf, cap, "%s %s", OPTIONS[i].name, attend_normalizer_name(cfg->normalizer));
            else snprintf(buf, cap, "%s", OPTIONS[i].name);
            return;
        }
    snprintf(buf, cap, "%s", feature);
}

/* The message of the first rule cfg and t break, in the command's words (suffixes: sweep's), into msg;
 * 0 when none is broken. */
static int rule_message(const attend_model_config *cfg, const attend_train_options *t, const char *task_name,
                        int suffixes, char *msg, size_t cap) {
    int i = attend_feature_rule_broken(cfg, t);
    if (i < 0) return 0;
    const attend_feature_rule *r = attend_feature_rule_get(i);
    char f[64], o[64], dec[64], text[400];
    feature_name(r->feature, cfg, suffixes, f, sizeof f);
    snprintf(dec, sizeof dec, "%s %s", suffixes ? "decoder" : "--decoder", attend_decoder_name(cfg->decoder));
    switch (r->kind) {
    case ATTEND_RULE_ATTENTION:
    case ATTEND_RULE_VOCABULARY: snprintf(o, sizeof o, "%s", task_name ? task_name : dec); break;
    case ATTEND_RULE_ADDITIVE:
        snprintf(o, sizeof o, "%s %s", suffixes ? "score" : "--score", attend_score_name(cfg->score));
        break;
    case ATTEND_RULE_EXCLUDES: feature_name(r->other, cfg, suffixes, o, sizeof o); break;
    }
    attend_feature_rule_format(r, f, o, text, sizeof text);
    if (task_name && (r->kind == ATTEND_RULE_ATTENTION || r->kind == ATTEND_RULE_VOCABULARY))
        snprintf(msg, cap, "%s (%s is a task for %s: %s with %s)", text, task_name, dec, f, dec);
    else snprintf(msg, cap, "%s", text);
    return 1;
}

int cli_rules_check(const char *cmd, const attend_model_config *cfg, const attend_train_options *t,
                    const char *task_name) {
    char msg[600];
    if (!rule_message(cfg, t, task_name, 0, msg, sizeof msg)) return 0;
    return cli_usage_error(cmd, "%s", msg);
}

int cli_rules_suffixes(const attend_model_config *cfg, char *msg, size_t cap) {
    return rule_message(cfg, NULL, NULL, 1, msg, cap);
}

/* ------------------------------------------- the encoder kind and its settings */

void cli_encoder_opts_init(cli_encoder_opts *e) {
    memset(e, 0, sizeof *e);
    e->positions = -1;
}

int cli_encoder_option(cli_parser *p, cli_encoder_opts *e, int *rc) {
    return cli_opt(p, "--encoder", &e->encoder, rc) || cli_opt(p, "--heads", &e->heads, rc) ||
           cli_opt(p, "--positions", &e->positions, rc) || cli_opt(p, "--post-norm", &e->post_norm, rc) ||
           cli_opt(p, "--kernel", &e->kernel, rc) || cli_opt(p, "--conv-relu", &e->conv_relu, rc);
}

void cli_encoder_options_usage(FILE *f, int col) {
    cli_opt_usage(f, "--encoder", "rnn", col);
    cli_opt_usage(f, "--heads", "4", col);
    cli_opt_usage(f, "--positions", "sinusoidal", col);
    cli_opt_usage(f, "--post-norm", NULL, col);
    cli_opt_usage(f, "--kernel", "3", col);
    cli_opt_usage(f, "--conv-relu", NULL, col);
}

int cli_encoder_check(const char *cmd, const cli_encoder_opts *e, int decoder, int emb) {
    const char *kind = attend_encoder_name((attend_encoder_kind)e->encoder);
    if (e->encoder != ATTEND_ENCODER_TRANSFORMER && (e->heads || e->post_norm))
        return cli_usage_error(cmd, "%s applies to --encoder transformer, not --encoder %s",
                               e->heads ? "--heads" : "--post-norm", kind);
    if (e->encoder == ATTEND_ENCODER_RNN && e->positions >= 0)
        return cli_usage_error(cmd, "--positions applies to --encoder transformer or conv, not --encoder rnn");
    if (e->encoder != ATTEND_ENCODER_CONV && (e->kernel || e->conv_relu))
        return cli_usage_error(cmd, "%s applies to --encoder conv, not --encoder %s",
                               e->kernel ? "--kernel" : "--conv-relu", kind);
    if (e->encoder == ATTEND_ENCODER_CONV && e->kernel && e->kernel % 2 == 0)
        return cli_usage_error(cmd, "--kernel %d: the conv encoder's kernel width must be odd ('same' padding)",
                               e->kernel);
    if (decoder == ATTEND_DECODER_TRANSFORMER && e->encoder != ATTEND_ENCODER_TRANSFORMER)
        return cli_usage_error(cmd, "--decoder transformer shares the encoder's --heads, --positions and "
                                    "--post-norm: it needs --encoder transformer, not --encoder %s",
                               kind);
    if (e->encoder == ATTEND_ENCODER_TRANSFORMER) {
        int heads = e->heads ? e->heads : 4;
        if (heads > emb || emb % heads)
            return cli_usage_error(cmd, "--heads %d%s does not divide --emb %d (the transformer encoder's width)",
                                   heads, e->heads ? "" : " (the default)", emb);
    }
    return 0;
}

void cli_encoder_config(attend_model_config *mc, const cli_encoder_opts *e) {
    mc->encoder = (attend_encoder_kind)e->encoder;
    mc->heads = 0;
    mc->positions = ATTEND_POSITIONS_SINUSOIDAL;
    mc->post_norm = mc->kernel = mc->conv_relu = 0;
    if (e->encoder == ATTEND_ENCODER_RNN) return;
    mc->positions = (attend_positions)(e->positions >= 0 ? e->positions : ATTEND_POSITIONS_SINUSOIDAL);
    if (e->encoder == ATTEND_ENCODER_TRANSFORMER) {
        mc->heads = e->heads ? e->heads : 4;
        mc->post_norm = e->post_norm;
    } else if (e->encoder == ATTEND_ENCODER_CONV) {
        mc->kernel = e->kernel ? e->kernel : 3;
        mc->conv_relu = e->conv_relu;
    }
}

void cli_encoder_positions_capacity(attend_model_config *mc) {
    if (mc->positions != ATTEND_POSITIONS_LEARNED || mc->encoder == ATTEND_ENCODER_RNN) return;
    mc->max_positions = mc->max_src_len; /* the learned table: as long as the longest source seen */
    if (mc->decoder == ATTEND_DECODER_TRANSFORMER && mc->max_tgt_len + 1 > mc->max_positions)
        mc->max_positions = mc->max_tgt_len + 1; /* and the longest target's steps */
}

void cli_positions_caps(const attend_model_config *c, int *S, int *L) {
    if (c->positions != ATTEND_POSITIONS_LEARNED || c->max_positions <= 0 || c->encoder == ATTEND_ENCODER_RNN) return;
    if (S && *S > c->max_positions) *S = c->max_positions;
    if (L && c->decoder == ATTEND_DECODER_TRANSFORMER && *L > c->max_positions - 1) *L = c->max_positions - 1;
}

void cli_print_model(FILE *f, const attend_model *m) {
    const attend_model_config *c = attend_model_get_config(m);
    int tdec = c->decoder == ATTEND_DECODER_TRANSFORMER, readout = c->decoder == ATTEND_DECODER_READOUT;
    /* the decoder: the transformer decoder has no cell, the readout (a label per source position) no
     * cell, width or attention */
    char dec[96];
    if (readout) snprintf(dec, sizeof dec, "a readout (one label per source position)");
    else if (tdec) snprintf(dec, sizeof dec, "transformer decoder %d", c->dec_hidden);
    else /* a recurrent encoder has named the cell */
        snprintf(dec, sizeof dec, "%s%s%s decoder %d", c->encoder == ATTEND_ENCODER_RNN ? "" : attend_cell_name(c->cell),
                 c->encoder == ATTEND_ENCODER_RNN ? "" : " ", attend_decoder_name(c->decoder), c->dec_hidden);
    if (c->encoder == ATTEND_ENCODER_TRANSFORMER)
        fprintf(f, "model: transformer encoder %d layers of width %d (%d heads, feed-forward %d, %s, %s positions), %s",
                c->enc_layers, c->emb, c->heads, c->enc_hidden, c->post_norm ? "post-norm" : "pre-norm",
                attend_positions_name(c->positions), dec);
    else if (c->encoder == ATTEND_ENCODER_CONV)
        fprintf(f, "model: conv encoder %d layers of width %d (kernel %d, %s, %s positions), %s", c->enc_layers, c->emb,
                c->kernel, c->conv_relu ? "ReLU" : "GLU", attend_positions_name(c->positions), dec);
    else
        fprintf(f, "model: %s encoder %dx%d bidirectional, %s", attend_cell_name(c->cell), c->enc_layers, c->enc_hidden,
                dec);
    if (c->dec_layers > 1 && !readout) fprintf(f, " (%d layers)", c->dec_layers);
    if (tdec) fprintf(f, " (feed-forward, cross-attention of %d heads)", c->heads);
    else if (c->decoder != ATTEND_DECODER_NONE && !readout) {
        fprintf(f, ", %s attention", attend_score_name(c->score));
        if (c->score == ATTEND_SCORE_ADDITIVE) fprintf(f, " %d", c->attn);
        if (c->coverage) fprintf(f, " with coverage");
        if (c->monotonic) fprintf(f, ", monotonic");
        if (c->normalizer) fprintf(f, " (%s)", attend_normalizer_name(c->normalizer));
        if (c->uniform_attention) fprintf(f, ", uniform weights");
    }
    if (c->copy) fprintf(f, ", copy (pointer-generator)");
    fprintf(f, ", emb %d: %zu parameters", c->emb, attend_model_param_count(m));
}

/* ------------------------------------ Wiegreffe & Pinter's training options */

void cli_wp_opts_init(cli_wp_opts *w) { memset(w, 0, sizeof *w); }

int cli_wp_option(cli_parser *p, cli_wp_opts *w, int *rc) {
    return cli_opt(p, "--uniform-attention", &w->uniform, rc) || cli_opt(p, "--frozen-attention", &w->frozen, rc) ||
           cli_opt(p, "--adversarial", &w->adversarial, rc) || cli_opt(p, "--reference", &w->reference, rc);
}

void cli_wp_training_usage(FILE *f, int col) {
    cli_opt_usage(f, "--reference", NULL, col);
    cli_opt_usage(f, "--frozen-attention", NULL, col);
    cli_opt_usage(f, "--adversarial", NULL, col);
}

void cli_wp_apply(const cli_wp_opts *w, attend_model_config *mc, attend_train_options *t) {
    if (mc) mc->uniform_attention = w->uniform;
    if (t) {
        t->frozen_attention = w->frozen;
        t->adversarial = w->adversarial;
    }
}

int cli_wp_check(const char *cmd, const cli_wp_opts *w, const char *chooser) {
    if ((w->frozen || w->adversarial > 0) && !w->reference)
        return cli_usage_error(cmd, "%s needs --reference MODEL (the base model)",
                               w->frozen ? "--frozen-attention" : "--adversarial");
    if (w->reference && !w->frozen && !(w->adversarial > 0))
        return cli_usage_error(cmd, "--reference is the base model of --frozen-attention or --adversarial: give one");
    if (w->frozen && chooser)
        return cli_usage_error(cmd, "--frozen-attention: the evaluations during training run the model's own "
                                    "(untrained) attention, so %s cannot choose by them; train, then `attend "
                                    "compare REFERENCE OUT --frozen`",
                               chooser);
    return 0;
}

int cli_wp_reference(const char *cmd, const cli_wp_opts *w, const char *data_name, const attend_model_config *mc,
                     const attend_vocab *sv, const attend_vocab *tv, attend_tokenizer tok, attend_model **ref) {
    *ref = NULL;
    if (!w->reference) return 0;
    attend_model *r = NULL;
    attend_vocab *rsv = NULL, *rtv = NULL;
    attend_tokenizer rtok;
    int rc = cli_load_model(cmd, w->reference, mc->max_batch, mc->max_src_len, mc->max_tgt_len, &r, &rsv, &rtv, &rtok);
    if (rc) return rc;
    cli_member a = {data_name, *mc, (attend_vocab *)sv, (attend_vocab *)tv, tok};
    cli_member b = {w->reference, *attend_model_get_config(r), rsv, rtv, rtok};
    rc = cli_ensemble_check(cmd, &a, &b, 2);
    attend_vocab_free(rsv);
    attend_vocab_free(rtv);
    if (rc) {
        attend_model_free(r);
        return rc;
    }
    *ref = r;
    return 0;
}
