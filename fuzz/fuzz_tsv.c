/*
 * fuzz_tsv.c — attend_dataset_read_tsv on hostile data files. The first input
 * byte picks the options (tokenizer, skip mode, one shared or two
 * vocabularies, small line/token limits); the rest is the file. The same file
 * is then read again as evaluation data (grow = 0) against the grown
 * vocabularies. Invariants: on error nothing is returned, the vocabularies are
 * rolled back to their size before the call and the message names path:line
 * (or the path); on success every pair has lengths in 1..max_tokens and ids
 * inside the vocabularies and alignment links inside their pair, and re-reading
 * without growing gives the same ids.
 */
#include "fuzz.h"

#include "attend.h"

static void check_dataset(const attend_dataset *d, const attend_vocab *sv, const attend_vocab *tv, int max_tokens) {
    for (int i = 0; i < attend_dataset_size(d); i++) {
        const int32_t *s, *t;
        int sl, tl;
        attend_error err;
        FUZZ_CHECK(attend_dataset_get(d, i, &s, &sl, &t, &tl, &err) == ATTEND_OK, "get %d: %s", i, err.msg);
        FUZZ_CHECK(sl >= 1 && sl <= max_tokens && tl >= 1 && tl <= max_tokens, "pair %d lengths %d %d", i, sl, tl);
        for (int k = 0; k < sl; k++) FUZZ_CHECK(s[k] >= 3 && s[k] < attend_vocab_size(sv), "source id %d", s[k]);
        for (int k = 0; k < tl; k++) FUZZ_CHECK(t[k] >= 3 && t[k] < attend_vocab_size(tv), "target id %d", t[k]);
        const int32_t *links; /* a third column: links inside the pair */
        int nl;
        FUZZ_CHECK(attend_dataset_get_alignment(d, i, &links, &nl, &err) == ATTEND_OK, "alignment %d: %s", i, err.msg);
        for (int k = 0; k < nl; k++)
            FUZZ_CHECK(links[2 * k] >= 0 && links[2 * k] < sl && links[2 * k + 1] >= 0 && links[2 * k + 1] < tl,
                       "pair %d link %d-%d outside %d x %d", i, links[2 * k], links[2 * k + 1], sl, tl);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t o = data[0];
    const char *path = fuzz_write_file(data + 1, size - 1);
    attend_tsv_options opt = {0};
    opt.tokenizer = (o & 1) ? ATTEND_TOKENIZE_SPACE : ATTEND_TOKENIZE_CHAR;
    opt.skip_malformed = (o >> 1) & 1;
    int shared = (o >> 2) & 1;
    opt.max_line_bytes = (o >> 3) & 1 ? 16 : 0; /* 0: the default 4096 */
    opt.max_tokens = (o >> 4) & 1 ? 3 : 0;      /* 0: the default 256 */
    int max_tokens = opt.max_tokens ? opt.max_tokens : 256;

    attend_vocab *sv = NULL, *tv = NULL;
    attend_error err;
    FUZZ_CHECK(attend_vocab_create(&sv, &err) == ATTEND_OK, "vocab");
    if (shared) tv = sv;
    else FUZZ_CHECK(attend_vocab_create(&tv, &err) == ATTEND_OK, "vocab");
    /* a token already there, so a rollback has something to keep */
    attend_vocab_add(sv, "a", 1, NULL, NULL);
    int s0 = attend_vocab_size(sv), t0 = attend_vocab_size(tv);

    attend_dataset *d = (attend_dataset *)(uintptr_t)1;
    int skipped = -1;
    attend_status st = attend_dataset_read_tsv(&d, path, sv, tv, 1, &opt, &skipped, &err);
    if (st != ATTEND_OK) {
        FUZZ_CHECK(d == NULL, "refused, but a dataset was returned");
        FUZZ_CHECK(st == ATTEND_ERR_FORMAT || st == ATTEND_ERR_ALLOC || st == ATTEND_ERR_CAPACITY,
                   "status %s: %s", attend_status_name(st), err.msg);
        FUZZ_CHECK(!opt.skip_malformed || st != ATTEND_ERR_FORMAT, "a format error in skip mode: %s", err.msg);
        fuzz_check_message(err.msg, path);
        FUZZ_CHECK(attend_vocab_size(sv) == s0 && attend_vocab_size(tv) == t0, "vocabularies not rolled back");
    } else {
        FUZZ_CHECK(skipped >= 0, "skipped %d", skipped);
        FUZZ_CHECK(opt.skip_malformed || skipped == 0, "skipped %d without skip mode", skipped);
        check_dataset(d, sv, tv, max_tokens);
        /* read again as evaluation data: same pairs, same ids, vocabularies unchanged */
        int s1 = attend_vocab_size(sv), t1 = attend_vocab_size(tv);
        attend_dataset *e = NULL;
        st = attend_dataset_read_tsv(&e, path, sv, tv, 0, &opt, &skipped, &err);
        FUZZ_CHECK(st == ATTEND_OK, "second read: %s", err.msg);
        FUZZ_CHECK(attend_vocab_size(sv) == s1 && attend_vocab_size(tv) == t1, "grow = 0 changed a vocabulary");
        FUZZ_CHECK(attend_dataset_size(e) == attend_dataset_size(d), "second read: %d pairs, first %d",
                   attend_dataset_size(e), attend_dataset_size(d));
        for (int i = 0; i < attend_dataset_size(d); i++) {
            const int32_t *a, *b, *x, *y;
            int al, bl, xl, yl;
            attend_dataset_get(d, i, &a, &al, &b, &bl, NULL);
            attend_dataset_get(e, i, &x, &xl, &y, &yl, NULL);
            FUZZ_CHECK(al == xl && bl == yl && !memcmp(a, x, (size_t)al * 4) && !memcmp(b, y, (size_t)bl * 4),
                       "pair %d differs when read again", i);
        }
        attend_dataset_free(e);
        attend_dataset_free(d);
    }
    if (tv != sv) attend_vocab_free(tv);
    attend_vocab_free(sv);
    return 0;
}
