/*
 * alignment.c — the third TSV column: word alignment links in the common
 * "i-j" format of fast_align and Marian's --guided-alignment files (source
 * position i, target position j, both 0-based), e.g. "0-0 1-2 2-1".
 */
#include <string.h>

#include "io/alignment.h"

#define MAX_DIGITS 9 /* positions fit an int32 with room to spare */

/* Reads a decimal number at s[*k..n): 1 and its value, or 0 when there are no
 * digits or more than MAX_DIGITS. */
static int read_number(const char *s, size_t n, size_t *k, int32_t *v) {
    size_t start = *k;
    int32_t x = 0;
    while (*k < n && s[*k] >= '0' && s[*k] <= '9') {
        if (*k - start == MAX_DIGITS) return 0;
        x = x * 10 + (s[*k] - '0');
        (*k)++;
    }
    *v = x;
    return *k > start;
}

attend_status at_alignment_parse(const char *s, size_t n, size_t base, int src_len, int tgt_len, int32_t *links,
                                 int *n_links, attend_error *err) {
    size_t k = 0;
    int count = 0;
    *n_links = 0;
    for (;;) {
        while (k < n && s[k] == ' ') k++;
        if (k == n) break;
        size_t start = k, end = k;
        while (end < n && s[end] != ' ') end++;
        int len = (int)(end - start < 32 ? end - start : 32); /* quote at most 32 bytes */
        const char *more = end - start > 32 ? "..." : "";
        int32_t i = 0, j = 0;
        int ok = read_number(s, end, &k, &i) && k < end && s[k] == '-';
        if (ok) {
            k++;
            ok = read_number(s, end, &k, &j) && k == end;
        }
        CHECK(ok, err, ATTEND_ERR_FORMAT,
              "alignment column: '%.*s%s' at byte %zu is not a link i-j (source position, target position)", len,
              s + start, more, base + start);
        CHECK(i < src_len, err, ATTEND_ERR_FORMAT,
              "alignment column: '%.*s' at byte %zu: source position %d is outside the source's %d tokens", len,
              s + start, base + start, (int)i, src_len);
        CHECK(j < tgt_len, err, ATTEND_ERR_FORMAT,
              "alignment column: '%.*s' at byte %zu: target position %d is outside the target's %d tokens", len,
              s + start, base + start, (int)j, tgt_len);
        links[2 * count] = i;
        links[2 * count + 1] = j;
        count++;
        k = end;
    }
    *n_links = count;
    return at_ok(err);
}
