/* args.c — option parsing, error reporting and data options shared by the
 * `attend` commands (see args.h). */
#define _POSIX_C_SOURCE 200809L
#include "args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------- parsing */

void cli_init(cli_parser *p, const char *cmd, int argc, char **argv) {
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->i = 0; /* argv[0] is the command name */
}

int cli_next(cli_parser *p) {
    if (++p->i >= p->argc) return 0;
    p->arg = p->argv[p->i];
    p->value = NULL;
    if (!p->operands && !strcmp(p->arg, "--")) { /* the end of the options */
        p->operands = 1;
        if (++p->i >= p->argc) return 0;
        p->arg = p->argv[p->i];
    }
    if (p->operands) {
        p->opt[0] = '\0'; /* matches no option */
        return 1;
    }
    const char *eq = p->arg[0] == '-' && p->arg[1] == '-' ? strchr(p->arg, '=') : NULL;
    size_t n = eq ? (size_t)(eq - p->arg) : strlen(p->arg);
    if (n >= sizeof p->opt) n = sizeof p->opt - 1;
    memcpy(p->opt, p->arg, n);
    p->opt[n] = '\0';
    if (eq) p->value = eq + 1;
    return 1;
}

int cli_is(const cli_parser *p, const char *name) { return !strcmp(p->opt, name); }

int cli_positional(const cli_parser *p) { return p->operands || p->arg[0] != '-' || !strcmp(p->arg, "-"); }

int cli_is_help(const cli_parser *p) { return cli_is(p, "--help") || cli_is(p, "-h"); }

/* ------------------------------------------------------------ messages */

/* "attend CMD: " + fmt's text, escaped, + newline, on stderr. */
static void verror(const char *cmd, const char *fmt, va_list ap) {
    char small[1024], *text = small;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL) vsnprintf(text, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    if (!text) text = small; /* out of memory: the truncated message */
    size_t len = n < 0 ? 0 : text == small && n >= (int)sizeof small ? sizeof small - 1 : (size_t)n;
    fprintf(stderr, "attend %s: %s\n", cmd, cli_vis_n(text, len));
    if (text != small) free(text);
}

void cli_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    verror(cmd, fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    verror(cmd, fmt, ap);
    va_end(ap);
    return 2;
}

#define VIS_SLOTS 8
static char *vis_buf[VIS_SLOTS];
static size_t vis_cap[VIS_SLOTS];
static int vis_next;

const char *cli_vis_n(const char *s, size_t n) {
    if (!s) return "(null)";
    size_t need = attend_text_visible(NULL, 0, s, n);
    int k = vis_next;
    vis_next = (vis_next + 1) % VIS_SLOTS;
    if (vis_cap[k] < need + 1) {
        char *b = realloc(vis_buf[k], need + 1);
        if (!b) return "(text not shown: out of memory)";
        vis_buf[k] = b;
        vis_cap[k] = need + 1;
    }
    attend_text_visible(vis_buf[k], vis_cap[k], s, n);
    return vis_buf[k];
}

const char *cli_vis(const char *s) {
    if (!s) return "(null)";
    size_t n = strlen(s);
    return attend_text_visible(NULL, 0, s, n) == n ? s : cli_vis_n(s, n); /* escaping only ever lengthens */
}

static const char *oom_hint;

void cli_set_oom_hint(const char *hint) { oom_hint = hint; }
const char *cli_get_oom_hint(void) { return oom_hint; }

int cli_oom(const char *cmd, const char *what) {
    cli_error(cmd, "out of memory (%s): %s", what,
              oom_hint ? oom_hint : "no option of this command lowers it: give the process more memory");
    return 1;
}

int cli_string(cli_parser *p, const char **out) {
    if (p->value) {
        *out = p->value;
        return 0;
    }
    if (p->i + 1 >= p->argc) return cli_usage_error(p->cmd, "%s needs a value", p->opt);
    *out = p->argv[++p->i];
    return 0;
}

int cli_path(cli_parser *p, const char **out) {
    if (cli_string(p, out)) return 2;
    if (!**out) return cli_usage_error(p->cmd, "%s: the file name is empty", p->opt);
    return 0;
}

/* ------------------------------------------------------ numeric values */

/* s is "[-]digits" (sign only when allow_minus): no spaces, no '+', no other
 * base, nothing after the digits. */
static int is_integer_text(const char *s, int allow_minus) {
    if (allow_minus && *s == '-') s++;
    if (*s < '0' || *s > '9') return 0;
    while (*s >= '0' && *s <= '9') s++;
    return *s == '\0';
}

/* s is "[-]digits[.digits][e[+-]digits]" or "[-].digits[...]" (at least one
 * digit in the mantissa): no spaces, hex, "inf" or "nan". */
static int is_decimal_text(const char *s) {
    int digits = 0;
    if (*s == '-') s++;
    while (*s >= '0' && *s <= '9') s++, digits++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9') s++, digits++;
    }
    if (!digits) return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (*s < '0' || *s > '9') return 0;
        while (*s >= '0' && *s <= '9') s++;
    }
    return *s == '\0';
}

int cli_parse_long(const char *s, long lo, long hi, long *out) {
    if (!s || !is_integer_text(s, 1)) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_u64(const char *s, uint64_t *out) {
    if (!s || !is_integer_text(s, 0)) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno) return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_double(const char *s, double lo, double hi, double *out) {
    if (!s || !is_decimal_text(s)) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* ERANGE on underflow still gives the nearest value; only overflow is bad */
    if (*end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_int(cli_parser *p, long lo, long hi, int *out) {
    const char *s = NULL;
    if (cli_string(p, &s)) return 2;
    if (lo < INT_MIN) lo = INT_MIN;
    if (hi > INT_MAX) hi = INT_MAX;
    long v;
    if (cli_parse_long(s, lo, hi, &v))
        return cli_usage_error(p->cmd, "%s: expected an integer in [%ld, %ld], got '%s'", p->opt, lo, hi, s);
    *out = (int)v;
    return 0;
}

int cli_u64(cli_parser *p, uint64_t *out) {
    const char *s = NULL;
    if (cli_string(p, &s)) return 2;
    if (cli_parse_u64(s, out))
        return cli_usage_error(p->cmd, "%s: expected a non-negative integer, got '%s'", p->opt, s);
    return 0;
}

int cli_double(cli_parser *p, double lo, double hi, double *out) {
    const char *s = NULL;
    if (cli_string(p, &s)) return 2;
    if (cli_parse_double(s, lo, hi, out))
        return cli_usage_error(p->cmd, "%s: expected a number in [%g, %g], got '%s'", p->opt, lo, hi, s);
    return 0;
}

int cli_choice(cli_parser *p, int (*from_name)(const char *), const char *choices, int *out) {
    const char *s = NULL;
    if (cli_string(p, &s)) return 2;
    int v = from_name(s);
    if (v < 0) return cli_usage_error(p->cmd, "%s: expected one of %s, got '%s'", p->opt, choices, s);
    *out = v;
    return 0;
}

int cli_flag(cli_parser *p, int *out) {
    if (p->value) return cli_usage_error(p->cmd, "%s takes no value", p->opt);
    *out = 1;
    return 0;
}

int cli_unknown(const cli_parser *p) {
    if (cli_positional(p))
        return cli_usage_error(p->cmd, "unexpected argument '%s' (attend %s --help lists the usage)", p->arg, p->cmd);
    return cli_usage_error(p->cmd, "unknown option '%s' (attend %s --help lists the options)", p->opt, p->cmd);
}

int cli_lib_fail(const char *cmd, const attend_error *err) {
    const char *msg = err->msg[0] ? err->msg : attend_status_name(err->status);
    if (err->status == ATTEND_ERR_ALLOC) /* what would lower it, in this command's own options */
        cli_error(cmd, "%s: %s", msg,
                  oom_hint ? oom_hint : "no option of this command lowers it: give the process more memory");
    else cli_error(cmd, "%s", msg);
    return 1;
}

int cli_finish(const char *cmd, int rc) {
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(cmd, "error writing the output: %s", errno ? strerror(errno) : "write error");
        clearerr(stdout); /* said once: main's final check stays quiet */
        return rc == 2 ? 2 : 1;
    }
    return rc;
}

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const TASK_NAMES[] = {"copy", "reverse", "sort", "bag"};

int cli_task_from_name(const char *name) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, TASK_NAMES[i])) return i;
    return -1;
}

const char *cli_task_name(int task) { return task >= 0 && task < 4 ? TASK_NAMES[task] : "?"; }

int cli_optim_from_name(const char *name) {
    if (!strcmp(name, "adam")) return ATTEND_OPT_ADAM;
    if (!strcmp(name, "sgd")) return ATTEND_OPT_SGD;
    return -1;
}

/* ---------------------------------------------------------- data options */

void cli_data_opts_init(cli_data_opts *d) {
    memset(d, 0, sizeof *d);
    d->task = -1;
    d->tokenizer = -1;
}

int cli_data_option(cli_parser *p, cli_data_opts *d, const char *tsv_name) {
    if (cli_is(p, "--task")) return cli_choice(p, cli_task_from_name, "copy|reverse|sort|bag", &d->task);
    if (cli_is(p, "--symbols")) {
        d->given_task_opts = 1;
        return cli_int(p, 1, 100000, &d->symbols);
    }
    if (cli_is(p, "--min-len")) {
        d->given_task_opts = 1;
        return cli_int(p, 1, 65536, &d->min_len);
    }
    if (cli_is(p, "--max-len")) {
        d->given_task_opts = 1;
        return cli_int(p, 1, 65536, &d->max_len);
    }
    if (cli_is(p, "--count")) {
        d->given_task_opts = 1;
        return cli_int(p, 1, 100000000, &d->count);
    }
    if (cli_is(p, "--data-seed")) {
        d->given_task_opts = d->have_data_seed = 1;
        return cli_u64(p, &d->data_seed);
    }
    if (cli_is(p, tsv_name)) return cli_path(p, &d->tsv);
    if (!strcmp(tsv_name, "--train") && cli_is(p, "--dev")) return cli_path(p, &d->dev);
    if (!strcmp(tsv_name, "--train") && cli_is(p, "--dev-count"))
        {
        d->given_task_opts = 1;
        return cli_int(p, 1, 100000000, &d->dev_count);
    }
    if (cli_is(p, "--tokenizer")) return cli_choice(p, attend_tokenizer_from_name, "char|space", &d->tokenizer);
    if (cli_is(p, "--skip-malformed")) return cli_flag(p, &d->skip_malformed);
    return -1;
}

int cli_read_tsv(const char *cmd, attend_dataset **out, const char *path, attend_vocab *src_vocab,
                 attend_vocab *tgt_vocab, int grow, attend_tokenizer tok, int skip_malformed) {
    return cli_read_tsv_copy(cmd, out, path, src_vocab, tgt_vocab, grow, tok, skip_malformed, 0);
}

int cli_read_tsv_copy(const char *cmd, attend_dataset **out, const char *path, attend_vocab *src_vocab,
                      attend_vocab *tgt_vocab, int grow, attend_tokenizer tok, int skip_malformed, int copy) {
    attend_error err = {0};
    attend_tsv_options o = {0};
    o.tokenizer = tok;
    o.copy = copy;
    o.skip_malformed = skip_malformed;
    int skipped = 0;
    if (attend_dataset_read_tsv(out, path, src_vocab, tgt_vocab, grow, &o, &skipped, &err) != ATTEND_OK)
        return cli_lib_fail(cmd, &err);
    if (skip_malformed) printf("%s: %d malformed line%s skipped\n", cli_vis(path), skipped, skipped == 1 ? "" : "s");
    if (attend_dataset_size(*out) == 0) {
        attend_dataset_free(*out);
        *out = NULL;
        cli_error(cmd, "%s: no usable pairs", path);
        return 1;
    }
    return 0;
}

static int32_t map_id(int32_t id, const attend_vocab *from, const attend_vocab *to) {
    if (id < 4) return id; /* the specials have the same ids everywhere */
    const char *t = attend_vocab_token(from, id);
    int32_t j = t ? attend_vocab_find(to, t, strlen(t)) : -1;
    return j < 0 ? ATTEND_UNK : j;
}

int cli_remap_dataset(const char *cmd, attend_dataset **out, const attend_dataset *d, const attend_vocab *from,
                      const attend_vocab *to_src, const attend_vocab *to_tgt, int pointer) {
    attend_error err = {0};
    attend_dataset *r = NULL;
    int ms = attend_dataset_max_src_len(d), mt = attend_dataset_max_tgt_len(d);
    int32_t *s = malloc((size_t)(ms + 1) * sizeof *s), *t = malloc((size_t)(mt + 1) * sizeof *t);
    attend_status st = s && t ? attend_dataset_create(&r, &err) : ATTEND_ERR_ALLOC;
    if (st == ATTEND_ERR_ALLOC && !(s && t)) snprintf(err.msg, sizeof err.msg, "out of memory");
    for (int i = 0; st == ATTEND_OK && i < attend_dataset_size(d); i++) {
        const int32_t *src, *tgt;
        int sl, tl;
        st = attend_dataset_get(d, i, &src, &sl, &tgt, &tl, &err);
        if (st) break;
        for (int j = 0; j < sl; j++) s[j] = map_id(src[j], from, to_src);
        for (int j = 0; j < tl; j++) t[j] = pointer ? tgt[j] : map_id(tgt[j], from, to_tgt);
        st = attend_dataset_add(r, s, sl, t, tl, &err);
    }
    free(s);
    free(t);
    if (st) {
        attend_dataset_free(r);
        return cli_lib_fail(cmd, &err);
    }
    *out = r;
    return 0;
}

int cli_load_model(const char *cmd, const char *path, int max_batch, int max_src, int max_tgt, attend_model **m,
                   attend_vocab **src_vocab, attend_vocab **tgt_vocab, attend_tokenizer *tok) {
    attend_error err = {0};
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = max_batch;
    cap.max_src_len = max_src;
    cap.max_tgt_len = max_tgt;
    if (attend_model_load(m, path, &cap, src_vocab, tgt_vocab, tok, &err) != ATTEND_OK) return cli_lib_fail(cmd, &err);
    return 0;
}

void cli_print_eval(FILE *f, const char *label, const attend_eval_stats *s) {
    fprintf(f,
            "%s: pairs %d  loss %.4f  tf-token %.4f  tf-seq %.4f  greedy-token %.4f  greedy-seq %.4f  "
            "entropy %.3f\n",
            label, s->pairs, s->loss, s->tf_token_acc, s->tf_seq_acc, s->greedy_token_acc, s->greedy_seq_acc,
            s->attn_entropy);
}

/* ------------------------------------------------ bounded line input */

int cli_lines_open(cli_lines *r, const char *cmd, const char *path) {
    memset(r, 0, sizeof *r);
    int std = !path || !strcmp(path, "-");
    r->name = std ? "<stdin>" : path;
    r->f = std ? stdin : fopen(path, "rb");
    if (!r->f) {
        cli_error(cmd, "%s: %s", path, strerror(errno));
        return 1;
    }
    r->buf = malloc(CLI_MAX_LINE + 1);
    if (!r->buf) {
        cli_oom(cmd, "the line buffer");
        cli_lines_close(r);
        return 1;
    }
    return 0;
}

void cli_lines_close(cli_lines *r) {
    if (r->f && r->f != stdin) fclose(r->f);
    free(r->buf);
    r->f = NULL;
    r->buf = NULL;
}

int cli_lines_next(cli_lines *r, size_t *len) {
    size_t n = 0;
    int c, any = 0;
    errno = 0;
    while ((c = getc_unlocked(r->f)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (n == CLI_MAX_LINE) { /* too long: stop here, without reading the rest */
            r->line++;
            r->long_line = 1;
            return -1;
        }
        r->buf[n++] = (char)c;
    }
    if (c == EOF && ferror(r->f)) {
        r->err = errno ? errno : EIO;
        return -2;
    }
    if (!any) return 0;
    r->line++;
    if (n && r->buf[n - 1] == '\r') n--;
    r->buf[n] = '\0';
    *len = n;
    return 1;
}

int cli_lines_skip_rest(cli_lines *r) {
    int c;
    errno = 0;
    r->long_line = 0;
    while ((c = getc_unlocked(r->f)) != EOF)
        if (c == '\n') return 0;
    if (ferror(r->f)) {
        r->err = errno ? errno : EIO;
        return -2;
    }
    return 0;
}

/* ---------------------------------------------------- output formats */

int cli_format_from_name(const char *name) {
    if (!strcmp(name, "text")) return CLI_FORMAT_TEXT;
    if (!strcmp(name, "tsv")) return CLI_FORMAT_TSV;
    if (!strcmp(name, "jsonl")) return CLI_FORMAT_JSONL;
    return -1;
}

/* Length of the valid UTF-8 sequence at s [n], or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    size_t k;
    uint32_t cp;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) k = 2, cp = s[0] & 0x1F;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) k = 3, cp = s[0] & 0x0F;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4) k = 4, cp = s[0] & 0x07;
    else return 0;
    if (k > n) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return k;
}

void cli_json_string(FILE *f, const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    putc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c), i++;
        else if (c == '\n') fputs("\\n", f), i++;
        else if (c == '\t') fputs("\\t", f), i++;
        else if (c == '\r') fputs("\\r", f), i++;
        else if (c < 0x20 || c == 0x7F) fprintf(f, "\\u%04x", c), i++;
        else {
            size_t k = utf8_len(u + i, len - i);
            if (k == 0) fputs("\\ufffd", f), i++;
            else fwrite(u + i, 1, k, f), i += k;
        }
    }
    putc('"', f);
}

void cli_tsv_field(FILE *f, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\t') fputs("\\t", f);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\\') fputs("\\\\", f);
        else if ((unsigned char)c < 0x20 || c == 0x7F) fprintf(f, "\\x%02x", (unsigned char)c); /* as attend_text_visible */
        else putc(c, f);
    }
}

int cli_unknown_symbols(const char *text, size_t len, attend_tokenizer tok, const int32_t *ids, int n, char *buf,
                        size_t cap) {
    int count = 0;
    for (int i = 0; i < n; i++) count += ids[i] == ATTEND_UNK;
    if (cap) buf[0] = '\0';
    if (!count || cap < 16) return count;
    /* the token boundaries as the tokenizer draws them: code points, or runs of
     * non-space bytes */
    size_t start[64], tl[64];
    int shown = 0, k = 0;
    size_t used = 0;
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < len && k < n;) {
        size_t b = i, e;
        if (tok == ATTEND_TOKENIZE_SPACE) {
            if (u[i] == ' ') {
                i++;
                continue;
            }
            for (e = i; e < len && u[e] != ' '; e++) {}
        } else {
            size_t l = utf8_len(u + i, len - i);
            e = i + (l ? l : 1);
        }
        i = e;
        if (ids[k++] != ATTEND_UNK) continue;
        int seen = 0;
        for (int j = 0; j < shown; j++)
            if (tl[j] == e - b && !memcmp(text + start[j], text + b, e - b)) seen = 1;
        if (seen || shown == 5) continue;
        size_t w = e - b > 16 ? 16 : e - b;
        if (used + w + 8 >= cap) break;
        for (size_t j = 0; j < w; j++) /* control bytes as '?' so the message stays one line */
            if (u[b + j] < 0x20 || u[b + j] == 0x7F) goto skip;
        used += (size_t)snprintf(buf + used, cap - used, "%s'%.*s'", shown ? ", " : "", (int)w, text + b);
    skip:
        start[shown] = b;
        tl[shown] = e - b;
        shown++;
    }
    (void)start;
    return count;
}

/* ------------------------------------------------- per-line problems */

int cli_problem(cli_problems *p, cli_problem_kind kind, const char *name, long line, const char *fmt, ...) {
    p->count[kind]++;
    int error = p->strict;
    if (error || p->shown < CLI_PROBLEMS_SHOWN) {
        char what[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        cli_error(p->cmd, "%s:%ld: %s%s", name, line, what, error ? " (an error with --strict)" : "");
        if (++p->shown == CLI_PROBLEMS_SHOWN && !error)
            cli_error(p->cmd, "further per-line messages left out; the summary at the end counts them");
    }
    return error;
}

void cli_problems_summary(const cli_problems *p) {
    static const char *const what[CLI_PROBLEM_KINDS] = {"with unknown symbols", "longer than the training sources",
                                                        "too long (not decoded)", "malformed (skipped)"};
    long any = 0;
    for (int k = 0; k < CLI_PROBLEM_KINDS; k++) any += p->count[k];
    if (!any) return;
    const char *unit = p->unit ? p->unit : "input line";
    char text[512];
    size_t u = (size_t)snprintf(text, sizeof text, "%ld %s%s:", p->lines, unit, p->lines == 1 ? "" : "s");
    const char *sep = " ";
    for (int k = 0; k < CLI_PROBLEM_KINDS && u < sizeof text; k++) {
        if (!p->count[k]) continue;
        u += (size_t)snprintf(text + u, sizeof text - u, "%s%ld %s", sep, p->count[k], what[k]);
        if (k == CLI_PROBLEM_UNKNOWN && u < sizeof text)
            u += (size_t)snprintf(text + u, sizeof text - u, " (%ld symbols)", p->unknown_symbols);
        sep = ", ";
    }
    cli_error(p->cmd, "%s", text);
}

/* ------------------------------------------- schedules from --steps */

int cli_warmup_for(int steps) { return steps / 10 < CLI_WARMUP_MAX ? steps / 10 : CLI_WARMUP_MAX; }
/* an interval at or past the last step means: only at the end */
static int interval_for(int steps, int part) {
    int every = steps / part < CLI_INTERVAL_MIN ? CLI_INTERVAL_MIN : steps / part;
    return every >= steps ? 0 : every;
}
int cli_eval_every_for(int steps) { return interval_for(steps, 5); }
int cli_checkpoint_every_for(int steps) { return interval_for(steps, 10); }
