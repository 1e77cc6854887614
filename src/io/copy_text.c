/*
 * copy_text.c — the text side of the copy mechanism (attend/seq2seq.h,
 * "Copy"): the byte span of the j-th token of a text, decoding ids of the
 * extended vocabulary (Vt + j: the source token at position j) to text, and
 * the TSV reader's copied target ids.
 */
#include <string.h>

#include "io/copy_text.h"
#include "io/text.h"

/* The next token of text [len] from *i: its start and length; 0 at the end.
 * text is valid UTF-8 (checked by the callers). */
static int next_token(attend_tokenizer tok, const char *text, size_t len, size_t *i, size_t *start, size_t *tlen) {
    if (tok == ATTEND_TOKENIZE_SPACE) {
        while (*i < len && text[*i] == ' ') (*i)++;
        if (*i >= len) return 0;
        *start = *i;
        while (*i < len && text[*i] != ' ') (*i)++;
        *tlen = *i - *start;
        return 1;
    }
    if (*i >= len) return 0;
    uint32_t cp;
    const char *why;
    int k = at_utf8_next((const unsigned char *)text + *i, len - *i, &cp, &why);
    *start = *i;
    *tlen = (size_t)(k > 0 ? k : 1);
    *i += *tlen;
    return 1;
}

attend_status attend_text_token(attend_tokenizer tok, const char *text, size_t len, int j, size_t *start,
                                 size_t *tlen, attend_error *err) {
    const char *who = "attend_text_token";
    CHECK((text || len == 0) && start && tlen, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !start ? "start" : !tlen ? "tlen" : "text");
    CHECK(tok == ATTEND_TOKENIZE_CHAR || tok == ATTEND_TOKENIZE_SPACE, err, ATTEND_ERR_ARG,
          "%s: unknown tokenizer %d", who, (int)tok);
    size_t bad;
    const char *why;
    CHECK(len == 0 || at_utf8_valid(text, len, &bad, &why), err, ATTEND_ERR_FORMAT, "%s: invalid UTF-8 at byte %zu (%s)",
          who, bad, why);
    size_t i = 0, s = 0, l = 0;
    int k = 0;
    while (j >= 0 && next_token(tok, text, len, &i, &s, &l)) {
        if (k++ == j) {
            *start = s;
            *tlen = l;
            return at_ok(err);
        }
    }
    return at_fail(err, ATTEND_ERR_ARG, "%s: the text has %d tokens, no token %d", who, k, j);
}

attend_status attend_vocab_decode_copy(const attend_vocab *v, attend_tokenizer tok, const int32_t *ids, int n,
                                       const char *src_text, size_t src_len, char *buf, size_t cap,
                                       attend_error *err) {
    const char *who = "attend_vocab_decode_copy";
    CHECK(v && (ids || n == 0) && buf && (src_text || src_len == 0), err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !v ? "vocabulary" : !buf ? "buf" : !ids ? "ids" : "src_text");
    CHECK(n >= 0, err, ATTEND_ERR_ARG, "%s: n=%d, must be >= 0", who, n);
    CHECK(tok == ATTEND_TOKENIZE_CHAR || tok == ATTEND_TOKENIZE_SPACE, err, ATTEND_ERR_ARG,
          "%s: unknown tokenizer %d", who, (int)tok);
    int V = attend_vocab_size(v);
    if (cap > 0) buf[0] = '\0';
    /* two passes: measure (checking every id), then write */
    for (int pass = 0; pass < 2; pass++) {
        size_t pos = 0;
        int written = 0;
        for (int i = 0; i < n && ids[i] != ATTEND_EOS; i++) {
            int32_t id = ids[i];
            CHECK(id >= 0, err, ATTEND_ERR_ARG, "%s: ids[%d]=%d is negative", who, i, (int)id);
            if (id == ATTEND_PAD || id == ATTEND_BOS) continue;
            const char *s;
            size_t l;
            if (id < V) {
                s = attend_vocab_token(v, id);
                l = strlen(s);
            } else {
                size_t st;
                attend_error e;
                if (attend_text_token(tok, src_text, src_len, id - V, &st, &l, &e) != ATTEND_OK)
                    return at_fail(err, e.status == ATTEND_ERR_FORMAT ? ATTEND_ERR_FORMAT : ATTEND_ERR_ARG,
                                   "%s: ids[%d]=%d is the copy of source token %d (vocabulary size %d): %s", who, i,
                                   (int)id, (int)(id - V), V, e.msg);
                s = src_text + st;
            }
            size_t sep = tok == ATTEND_TOKENIZE_SPACE && written ? 1 : 0;
            if (pass == 1) {
                if (sep) buf[pos] = ' ';
                memcpy(buf + pos + sep, s, l);
            }
            CHECK(at_add_size(pos, sep + l, &pos), err, ATTEND_ERR_CAPACITY, "%s: text size overflows size_t", who);
            written++;
        }
        if (pass == 0)
            CHECK(pos + 1 <= cap && pos + 1 > pos, err, ATTEND_ERR_CAPACITY,
                  "%s: buffer of %zu bytes is too small, the text needs %zu (with its NUL)", who, cap, pos + 1);
        else
            buf[pos] = '\0';
    }
    return at_ok(err);
}

void at_copy_extend_targets(attend_tokenizer tok, const char *src, size_t src_len, const char *tgt, size_t tgt_len,
                            int32_t *ids, int nt, int32_t Vt) {
    size_t i = 0, s, l;
    for (int k = 0; k < nt && next_token(tok, tgt, tgt_len, &i, &s, &l); k++) {
        if (ids[k] != ATTEND_UNK || (l == 5 && !memcmp(tgt + s, "<unk>", 5))) continue;
        size_t i2 = 0, s2, l2;
        for (int j = 0; next_token(tok, src, src_len, &i2, &s2, &l2); j++)
            if (l2 == l && !memcmp(src + s2, tgt + s, l)) {
                ids[k] = Vt + j;
                break;
            }
    }
}

attend_status at_copy_grow_targets(attend_tokenizer tok, const char *src, size_t src_len, const char *tgt,
                                   size_t tgt_len, int32_t *ids, int nt, attend_vocab *tv, attend_error *err) {
    size_t i = 0, s, l;
    for (int k = 0; k < nt && next_token(tok, tgt, tgt_len, &i, &s, &l); k++) {
        if (ids[k] != ATTEND_UNK || (l == 5 && !memcmp(tgt + s, "<unk>", 5))) continue;
        size_t i2 = 0, s2, l2;
        int found = -1;
        for (int j = 0; found < 0 && next_token(tok, src, src_len, &i2, &s2, &l2); j++)
            if (l2 == l && !memcmp(src + s2, tgt + s, l)) found = j;
        if (found >= 0) ids[k] = AT_COPY_MARK + found;
        else TRY(attend_vocab_add(tv, tgt + s, l, &ids[k], err));
    }
    return ATTEND_OK;
}

void at_copy_resolve(int32_t *tgt, int nt, const int32_t *src, int ns, const attend_vocab *sv, const attend_vocab *tv) {
    int32_t Vt = attend_vocab_size(tv);
    for (int k = 0; k < nt; k++) {
        if (tgt[k] < AT_COPY_MARK) continue;
        int j = tgt[k] - AT_COPY_MARK;
        const char *tk = attend_vocab_token(sv, src[j]);
        int32_t t = tk ? attend_vocab_find(tv, tk, strlen(tk)) : -1;
        if (t >= 0) {
            tgt[k] = t;
            continue;
        }
        int first = j;
        for (int i = 0; i < j && i < ns; i++)
            if (src[i] == src[j]) {
                first = i;
                break;
            }
        tgt[k] = Vt + first;
    }
}
