/*
 * fuzz_args.c — the `attend` commands' numeric option values (cli/args.c:
 * cli_parse_long, cli_parse_u64, cli_parse_double; cli_int, cli_u64 and
 * cli_double print their messages around them). The first input byte picks
 * the parser and its range, the rest is the text. Each parser is compared
 * with an independent oracle: the grammar in cli/args.h, and the value
 * computed digit by digit (integers) or by strtod (doubles).
 */
#include "fuzz.h"

#include <limits.h>
#include <math.h>

#include "args.h"

/* -?[0-9]+ ; value with overflow detection. 0: not that grammar; -1: out of range */
static int oracle_integer(const char *s, int allow_minus, unsigned long long limit_pos,
                          unsigned long long limit_neg, int *neg, unsigned long long *mag) {
    *neg = 0;
    if (allow_minus && *s == '-') *neg = 1, s++;
    if (!*s) return 0;
    unsigned long long v = 0;
    int too_big = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        unsigned d = (unsigned)(*s - '0');
        if (v > (ULLONG_MAX - d) / 10) too_big = 1;
        else v = v * 10 + d;
    }
    *mag = v;
    if (too_big || v > (*neg ? limit_neg : limit_pos)) return -1;
    return 1;
}

static int oracle_decimal(const char *s) {
    const char *p = s;
    int digits = 0;
    if (*p == '-') p++;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 4096) return 0;
    char *s = malloc(size);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0'; /* text up to the first NUL, as argv gives it */
    uint8_t which = data[0] % 3, range = (uint8_t)(data[0] / 3 % 4);
    static const long lo_l[4] = {1, 0, LONG_MIN, -5}, hi_l[4] = {65536, 1000000000, LONG_MAX, 5};
    static const double lo_d[4] = {1e-12, 0, -1e300, -1}, hi_d[4] = {1e6, 0.999999, 1e300, 1};
    if (which == 0) {
        long v = 12345, lo = lo_l[range], hi = hi_l[range];
        int rc = cli_parse_long(s, lo, hi, &v);
        int neg;
        unsigned long long mag = 0;
        int g = oracle_integer(s, 1, (unsigned long long)LONG_MAX, (unsigned long long)LONG_MAX + 1, &neg, &mag);
        int want_ok = 0;
        long want = 0;
        if (g == 1) {
            want = neg ? (mag == (unsigned long long)LONG_MAX + 1 ? LONG_MIN : -(long)mag) : (long)mag;
            want_ok = want >= lo && want <= hi;
        }
        FUZZ_CHECK((rc == 0) == want_ok, "long '%s' in [%ld, %ld]: parser %s, oracle %s", s, lo, hi,
                   rc ? "refuses" : "accepts", want_ok ? "accepts" : "refuses");
        if (rc == 0) FUZZ_CHECK(v == want, "long '%s': %ld, oracle %ld", s, v, want);
        else FUZZ_CHECK(v == 12345, "a refused value changed *out");
    } else if (which == 1) {
        uint64_t v = 12345;
        int rc = cli_parse_u64(s, &v);
        int neg;
        unsigned long long mag = 0;
        int g = oracle_integer(s, 0, UINT64_MAX, 0, &neg, &mag);
        FUZZ_CHECK((rc == 0) == (g == 1), "u64 '%s': parser %s, oracle %d", s, rc ? "refuses" : "accepts", g);
        if (rc == 0) FUZZ_CHECK(v == mag, "u64 '%s': %llu, oracle %llu", s, (unsigned long long)v, mag);
        else FUZZ_CHECK(v == 12345, "a refused value changed *out");
    } else {
        double v = 12345, lo = lo_d[range], hi = hi_d[range];
        int rc = cli_parse_double(s, lo, hi, &v);
        int want_ok = 0;
        double want = 0;
        if (oracle_decimal(s)) {
            want = strtod(s, NULL);
            want_ok = isfinite(want) && want >= lo && want <= hi;
        }
        FUZZ_CHECK((rc == 0) == want_ok, "double '%s' in [%g, %g]: parser %s, oracle %s", s, lo, hi,
                   rc ? "refuses" : "accepts", want_ok ? "accepts" : "refuses");
        if (rc == 0) FUZZ_CHECK(v == want && isfinite(v), "double '%s': %.17g, oracle %.17g", s, v, want);
        else FUZZ_CHECK(v == 12345, "a refused value changed *out");
    }
    free(s);
    return 0;
}
