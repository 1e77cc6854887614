/*
 * intervene.c — `attend intervene`: the interventions the seeds distinguish
 * (seed 000 §14.5), each reported as the change in the output distribution
 * and whether the decoded output changes:
 *   remove-state   hide one saved encoder state, renormalise over the rest
 *   delete-token   delete one input token and re-encode (replace-token: swap it)
 *   uniform / permute / drop-top   overwrite every step's attention weights
 * on a trained model (attend_model_intervene) — the decoder's attention, or
 * with --encoder-self a transformer encoder's self-attention — or on seed
 * 000's textbook example (attend_attention_intervene, reproducing Tables 14.2 and 14.3).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "attend.h"
#include "cli.h"
#include "textbook.h"

static void intervene_usage(FILE *f) {
    fprintf(f,
            "usage: attend intervene MODEL TEXT [--replace TOKEN] [--seed N] [--per-step]\n"
            "       attend intervene MODEL TEXT --encoder-self [--layer L] [--head H] [--seed N] [--per-step]\n"
            "       attend intervene --textbook\n"
            "\n"
            "Attention weights are a diagnostic, not an explanation. This command changes what\n"
            "the decoder can see and measures what happens. The baseline is the model's greedy\n"
            "output for TEXT; p_t is its output distribution at step t (teacher-forced along the\n"
            "baseline), p'_t the same under the intervention. For every source position in turn:\n"
            "  remove-state   the saved state is hidden from attention and the softmax\n"
            "                 renormalises over the rest (the encoder is not re-run; with\n"
            "                 monotonic attention the decoder's scan passes over it)\n"
            "  delete-token   the token is deleted and the source re-encoded\n"
            "  replace-token  the token is replaced by --replace TOKEN and re-encoded\n"
            "and once for the whole map (Jain & Wallace):\n"
            "  uniform        every step's weights made uniform\n"
            "  permute        every step's weights permuted between positions (--seed)\n"
            "  drop-top       every step's largest weight removed, the rest renormalised\n"
            "Columns: total variation 1/2 sum|p - p'| (mean over steps, max and its step),\n"
            "Jensen-Shannon and KL(p||p') in nats (means), the free-running greedy output under\n"
            "the intervention, and whether it differs from the baseline.\n"
            "\n"
            "  --encoder-self   the same edits on the transformer encoder's self-attention instead of\n"
            "                   the decoder's: remove-state hides key position j from every query of\n"
            "                   the chosen layers and heads (each row renormalised over the rest);\n"
            "                   uniform, permute and drop-top edit every query row there; the edited\n"
            "                   encoder states feed the unchanged decoder (no delete/replace rows:\n"
            "                   they change the source, not an attention site)\n"
            "  --layer L        with --encoder-self: only layer L (1..layers; default every layer)\n"
            "  --head H         with --encoder-self: only head H (1..heads; default every head)\n"
            "  --replace TOKEN  also run replace-token with this source token\n"
            "  --seed N         seed of the permutation (1)\n"
            "  --per-step       print the total variation of every step under each row\n"
            "  --max-len N      longest output (the longer of the model's longest target and\n"
            "                   2 x the source length)\n"
            "  --textbook       seed 000's example instead of a model: three saved states of a\n"
            "                   ReLU encoder, query [1,0], readout r = c1 + 2 c2 (Tables 14.2\n"
            "                   and 14.3)\n"
            "  --help           this message\n");
}

/* ------------------------------------------------------------- textbook */

/* Prints s padded to `cols` terminal columns (CJK characters take two). */
static void print_padded(const char *s, int cols) {
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xC0) == 0x80) continue;
        w += *p >= 0xE3 ? 2 : 1; /* U+3000 and above (CJK, fullwidth punctuation) */
    }
    fputs(s, stdout);
    for (; w < cols; w++) putchar(' ');
}

static void print_vec(const char *label, const attend_real *x, int n) {
    printf("%s[", label);
    for (int i = 0; i < n; i++) printf("%s%.6f", i ? ", " : "", (double)x[i]);
    printf("]");
}

static int textbook(void) {
    const double a = log(2.0);
    const char *const *tokens = textbook_tokens;
    const char *names[TB_S] = {"颜色", "钥匙", "句号"}; /* the chapter's names of the saved states */
    attend_score_config cfg = {0};
    cfg.kind = ATTEND_SCORE_DOT;
    cfg.Dq = TB_D;
    cfg.Dk = TB_D;
    attend_score_params sp = {0};
    attend_real q[TB_D] = {1, 0}, h[TB_S * TB_D], w[TB_S], c[TB_D];
    int all[TB_S] = {0, 1, 2};
    textbook_encode(h, all, TB_S);
    attend_error err = {0};
    printf("Seed 000, chapter 14: source 红色 钥匙 。 through the ReLU encoder h_t = ReLU(h_{t-1} + E(x_t)),\n"
           "E(红色) = [a,0], E(钥匙) = [-a,a], E(。) = [0,-a], a = ln 2 = %.6f; query q1 = [1, 0],\n"
           "dot scores, readout r = c1 + 2 c2 (the chapter's diagnostic).\n\n",
           a);
    printf("saved states: ");
    for (int j = 0; j < TB_S; j++) {
        printf("%s%s ", j ? "; " : "", names[j]);
        print_vec("", h + j * TB_D, TB_D);
    }
    printf("\n");
    /* the baseline read-out */
    attend_intervention none = {ATTEND_IV_UNIFORM, 0, 0, 0, 0, 0, 0};
    size_t ws = attend_attention_workspace_size(&cfg, 1, 1, TB_S);
    attend_real work[64];
    if (ws > sizeof work / sizeof work[0] ||
        attend_attention_forward(&cfg, &sp, c, w, q, h, h, NULL, NULL, 0, 1, 1, TB_S, TB_D, work, ws, &err))
        return cli_lib_fail("intervene", &err);
    double r0 = (double)c[0] + 2 * (double)c[1];
    print_vec("baseline: weights ", w, TB_S);
    print_vec("  context ", c, TB_D);
    printf("  r = %.6f = %.4f a\n\n", r0, r0 / a);

    printf("Table 14.2 (remove a saved state, renormalise) and Table 14.3 (delete the token, re-encode):\n");
    printf("%-3s %-6s %-14s %-32s %-24s %-10s %-8s %s\n", "j", "token", "intervention", "weights (source order)",
           "context", "r", "r / a", "r - r0");
    for (int j = 0; j < TB_S; j++) {
        attend_intervention rm = {ATTEND_IV_REMOVE_STATE, j, 0, 0, 0, 0, 0};
        if (attend_attention_intervene(&cfg, &sp, c, w, q, h, h, TB_S, TB_D, &rm, &err))
            return cli_lib_fail("intervene", &err);
        double r = (double)c[0] + 2 * (double)c[1];
        printf("%-3d ", j + 1);
        print_padded(tokens[j], 7);
        printf("%-14s [%.6f, %.6f, %.6f]   [%.6f, %.6f]     %.6f   %.4f   %+.6f\n", "remove-state", (double)w[0], (double)w[1], (double)w[2], (double)c[0], (double)c[1], r, r / a, r - r0);
        /* delete token j: the other two tokens through the encoder again */
        int ids[TB_S - 1], n = 0;
        for (int t = 0; t < TB_S; t++)
            if (t != j) ids[n++] = t;
        attend_real h2[(TB_S - 1) * TB_D], w2[TB_S - 1];
        textbook_encode(h2, ids, n);
        if (attend_attention_forward(&cfg, &sp, c, w2, q, h2, h2, NULL, NULL, 0, 1, 1, n, TB_D, work, ws, &err))
            return cli_lib_fail("intervene", &err);
        r = (double)c[0] + 2 * (double)c[1];
        /* weights shown in the original order, 0 at the deleted token */
        attend_real shown[TB_S];
        for (int t = 0, k = 0; t < TB_S; t++) shown[t] = t == j ? 0 : w2[k++];
        printf("%-3s %-6s %-14s [%.6f, %.6f, %.6f]   [%.6f, %.6f]     %.6f   %.4f   %+.6f\n", "", "",
               "delete-token", (double)shown[0], (double)shown[1], (double)shown[2], (double)c[0], (double)c[1], r,
               r / a, r - r0);
        printf("%-3s %-6s %-14s re-encoded states: ", "", "", "");
        for (int t = 0; t < n; t++) {
            printf("%s%s ", t ? "; " : "", tokens[ids[t]]);
            print_vec("", h2 + t * TB_D, TB_D);
        }
        printf("\n");
    }
    printf("\nThe two interventions agree on 红色 and 。 but not on 钥匙: deleting the token changes\n"
           "the later 。 state to [a, 0], removing only the saved state does not.\n\n");

    printf("Whole-map interventions on the baseline weights:\n");
    const attend_intervention_kind kinds[3] = {ATTEND_IV_UNIFORM, ATTEND_IV_PERMUTE, ATTEND_IV_DROP_TOP};
    for (int i = 0; i < 3; i++) {
        attend_intervention iv = none;
        iv.kind = kinds[i];
        iv.seed = 1;
        if (attend_attention_intervene(&cfg, &sp, c, w, q, h, h, TB_S, TB_D, &iv, &err))
            return cli_lib_fail("intervene", &err);
        double r = (double)c[0] + 2 * (double)c[1];
        printf("  %-10s weights [%.6f, %.6f, %.6f]  context [%.6f, %.6f]  r = %.6f = %.4f a\n",
               attend_intervention_name(kinds[i]), (double)w[0], (double)w[1], (double)w[2], (double)c[0],
               (double)c[1], r, r / a);
    }
    int32_t perm[TB_S];
    attend_permutation(perm, TB_S, 1);
    printf("  (permute, seed 1: position j takes the weight of position perm[j], perm = [%d, %d, %d], 1-based)\n",
           (int)perm[0] + 1, (int)perm[1] + 1, (int)perm[2] + 1);
    return 0;
}

/* ---------------------------------------------------------------- model */

typedef struct {
    analysis *a;
    const int32_t *base;
    int base_len;
    int per_step;
    double *tv, *kl, *js;
    int32_t *out;
    int site, layer, head; /* where the weight edits apply (attend_intervention) */
} run_ctx;

static int run_row(run_ctx *r, const char *pos, const char *token, attend_intervention iv) {
    analysis *a = r->a;
    attend_intervention_result res;
    memset(&res, 0, sizeof res);
    if (iv.kind != ATTEND_IV_DELETE_TOKEN && iv.kind != ATTEND_IV_REPLACE_TOKEN) {
        iv.site = r->site;
        iv.layer = r->layer;
        iv.head = r->head;
    }
    res.tv = r->tv;
    res.kl = r->kl;
    res.js = r->js;
    res.out = r->out;
    attend_error err = {0};
    if (attend_model_intervene(a->m, a->src, a->S, r->base, r->base_len, a->max_len, &iv, &res, &err))
        return cli_lib_fail("intervene", &err);
    int at = 0;
    for (int t = 1; t < res.steps; t++)
        if (r->tv[t] > r->tv[at]) at = t;
    char text[2048];
    printf("%-4s %-8s %-14s %8.4f %8.4f %5d %8.4f %9.4f  %-20s %s\n", pos, cli_vis(token),
           attend_intervention_name(iv.kind), res.tv_mean, res.tv_max, at, res.js_mean, res.kl_mean,
           cli_vis(analysis_out_text(a, r->out, res.out_len, text, sizeof text)), res.changed ? "yes" : "no");
    if (r->per_step) {
        printf("     tv per step:");
        for (int t = 0; t < res.steps; t++) printf(" %.3f", r->tv[t]);
        printf("\n");
    }
    return 0;
}

int cmd_intervene(int argc, char **argv) {
    cli_set_oom_hint("use a shorter TEXT or a lower --max-len"); /* the options of this command that lower its memory */
    const char *model = NULL, *text = NULL, *replace = NULL;
    int help = 0, npos = 0, per_step = 0, textbook_mode = 0, max_len = 0, enc_self = 0, layer = 0, head = 0;
    uint64_t seed = 1;
    cli_parser p;
    cli_init(&p, "intervene", argc, argv);
    int rc = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--replace")) rc = cli_string(&p, &replace);
        else if (cli_is(&p, "--seed")) rc = cli_u64(&p, &seed);
        else if (cli_is(&p, "--per-step")) rc = cli_flag(&p, &per_step);
        else if (cli_is(&p, "--textbook")) rc = cli_flag(&p, &textbook_mode);
        else if (cli_is(&p, "--max-len")) rc = cli_int(&p, 1, 65536, &max_len);
        else if (cli_is(&p, "--encoder-self")) rc = cli_flag(&p, &enc_self);
        else if (cli_is(&p, "--layer")) rc = cli_int(&p, 1, 65536, &layer);
        else if (cli_is(&p, "--head")) rc = cli_int(&p, 1, 65536, &head);
        else if (cli_positional(&p) && npos < 2) {
            if (npos++ == 0) model = p.arg;
            else text = p.arg;
        } else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        intervene_usage(stdout);
        return cli_finish("intervene", 0);
    }
    if (textbook_mode) {
        if (model) return cli_usage_error("intervene", "--textbook takes no MODEL or TEXT");
        return cli_finish("intervene", textbook());
    }
    if (!model || !text) return cli_usage_error("intervene", "needs MODEL and TEXT, or --textbook (see --help)");
    if ((layer || head) && !enc_self)
        return cli_usage_error("intervene", "%s applies to --encoder-self (the decoder's attention has no layers or "
                                            "heads to choose here)", layer ? "--layer" : "--head");
    if (enc_self && replace)
        return cli_usage_error("intervene", "--replace changes the source itself, not an attention site: run it "
                                            "without --encoder-self");

    analysis a;
    rc = analysis_open(&a, "intervene", model, text, 1, max_len);
    const attend_model_config *c = rc ? NULL : attend_model_get_config(a.m);
    if (!rc && c->decoder == ATTEND_DECODER_POINTER) {
        cli_error("intervene", "%s is a pointer model: its output is its attention, so there is no separate output "
                               "distribution to compare; use attend align",
                  model);
        rc = 1;
    }
    if (!rc && enc_self) {
        int L = c->enc_layers > 0 ? c->enc_layers : 1;
        if (c->encoder != ATTEND_ENCODER_TRANSFORMER)
            rc = cli_usage_error("intervene", "--encoder-self needs a transformer encoder, but %s has encoder %s "
                                              "(no self-attention)", model, attend_encoder_name(c->encoder));
        else if (layer > L) rc = cli_usage_error("intervene", "--layer %d, but %s has %d encoder layers", layer, model, L);
        else if (head > c->heads)
            rc = cli_usage_error("intervene", "--head %d, but %s's encoder has %d heads", head, model, c->heads);
    }
    int32_t replace_id = -1;
    if (!rc && replace) {
        int n = 0;
        attend_error err = {0};
        if (attend_vocab_encode(a.sv, a.tok, 0, replace, strlen(replace), &replace_id, 1, &n, &err) || n != 1) {
            cli_error("intervene", "--replace '%s' is not one source token", replace);
            rc = 2;
        } else if (replace_id == ATTEND_UNK) {
            cli_error("intervene", "--replace '%s' is not in the model's source vocabulary", replace);
            rc = 2;
        }
    }
    int L = rc ? 0 : a.max_len;
    int32_t *base = NULL, *out = NULL;
    double *buf = NULL;
    if (!rc) {
        base = malloc((size_t)L * sizeof *base);
        out = malloc((size_t)L * sizeof *out);
        buf = malloc(3 * (size_t)(L + 1) * sizeof *buf);
        if (!base || !out || !buf) {
            cli_oom("intervene", "the output buffers");
            rc = 1;
        }
    }
    int32_t base_len = 0;
    if (!rc) {
        attend_error err = {0};
        int32_t src_len = a.S;
        if (attend_model_greedy(a.m, a.src, &src_len, 1, a.S, L, base, &base_len, NULL, &err))
            rc = cli_lib_fail("intervene", &err);
        if (!rc && base_len == L) {
            cli_error("intervene", "the greedy output did not end within %d tokens; its EOS step is "
                            "needed for the comparison (raise --max-len)",
                    L);
            rc = 1;
        }
    }
    if (!rc) {
        char btext[2048];
        /* no score function: decoder 'none', and the transformer's scaled dot products (not cfg.score) */
        const int no_score = c->decoder == ATTEND_DECODER_NONE || c->decoder == ATTEND_DECODER_TRANSFORMER;
        printf("model: %s (%s decoder%s%s)\nsource: %s  (%d tokens)\nbaseline greedy output: %s  (%d tokens + EOS = "
               "%d compared steps)\n\n",
               cli_vis(model), attend_decoder_name(c->decoder), no_score ? "" : ", ",
               no_score ? "" : attend_score_name(c->score), cli_vis(text), a.S,
               cli_vis(analysis_out_text(&a, base, base_len, btext, sizeof btext)), (int)base_len, (int)base_len + 1);
        if (enc_self) {
            char lay[32], hd[32];
            snprintf(lay, sizeof lay, layer ? "layer %d" : "every layer (%d)", layer ? layer : c->enc_layers);
            snprintf(hd, sizeof hd, head ? "head %d" : "every head (%d)", head ? head : c->heads);
            printf("site: the encoder's self-attention, %s, %s (remove-state: the key hidden from every query)\n\n",
                   lay, hd);
        }
        printf("%-4s %-8s %-14s %8s %8s %5s %8s %9s  %-20s %s\n", "pos", "token", "intervention", "TV mean", "TV max",
               "step", "JS mean", "KL mean", "output", "changed");
    }
    run_ctx r = {&a, base, base_len, per_step, buf, NULL, NULL, out, enc_self ? ATTEND_SITE_ENCODER_SELF : 0, layer,
                 head};
    if (buf) {
        r.kl = buf + L + 1;
        r.js = buf + 2 * (L + 1);
    }
    /* weight edits need one attention row per step: not decoder 'none', not the transformer's heads */
    int attentive = !rc && (enc_self || (c->decoder != ATTEND_DECODER_NONE && c->decoder != ATTEND_DECODER_TRANSFORMER));
    for (int j = 0; !rc && j < a.S; j++) {
        char pos[16];
        snprintf(pos, sizeof pos, "%d", j);
        if (attentive && a.S >= 2) rc = run_row(&r, pos, a.src_tok[j], (attend_intervention){ATTEND_IV_REMOVE_STATE, j, 0, 0, 0, 0, 0});
        if (!rc && a.S >= 2 && !enc_self) rc = run_row(&r, pos, a.src_tok[j], (attend_intervention){ATTEND_IV_DELETE_TOKEN, j, 0, 0, 0, 0, 0});
        if (!rc && replace_id >= 0)
            rc = run_row(&r, pos, a.src_tok[j], (attend_intervention){ATTEND_IV_REPLACE_TOKEN, j, replace_id, 0, 0, 0, 0});
    }
    if (!rc && attentive) {
        rc = run_row(&r, "all", "", (attend_intervention){ATTEND_IV_UNIFORM, 0, 0, 0, 0, 0, 0});
        if (!rc) rc = run_row(&r, "all", "", (attend_intervention){ATTEND_IV_PERMUTE, 0, 0, seed, 0, 0, 0});
        if (!rc && a.S >= 2) rc = run_row(&r, "all", "", (attend_intervention){ATTEND_IV_DROP_TOP, 0, 0, 0, 0, 0, 0});
    }
    if (!rc && !attentive)
        printf("\n(%s: only token deletion/replacement apply)\n",
               c->decoder == ATTEND_DECODER_NONE
                   ? "decoder 'none' has no attention"
                   : "decoder 'transformer': its multi-head cross-attention has no single weight row per step to "
                     "edit");
    free(base);
    free(out);
    free(buf);
    analysis_close(&a);
    return cli_finish("intervene", rc);
}
