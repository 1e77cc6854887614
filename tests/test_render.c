/*
 * test_render.c — text/SVG/HTML heatmaps and SVG line plots (src/analysis/render.c).
 *
 * Every SVG and HTML output is parsed by the strict XML well-formedness checker
 * below (the HTML page is written as polyglot XHTML, so the same checker
 * applies). Heatmap cells are read back from the SVG (every rect's data-t,
 * data-s, data-w) and compared with the input weights within 5e-7 (data-w has
 * 6 decimals, so the rounding error is at most 5e-7 plus float noise).
 *
 * Golden files (tests/golden/render_*): the text heatmaps and two small SVGs are
 * compared byte for byte. After an intended change, regenerate them with
 *     cd tests && ATTEND_UPDATE_GOLDEN=1 ../build/tests/test_render
 * and review the diff (the SVGs open in any browser) before committing.
 *
 * The browser-side behaviour of the HTML page (#t=2 selects step 2) is checked
 * by tests/render_chromium.sh with headless Chromium.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>

#include "attend.h"
#include "harness.h"

/* ------------------------------------------------- XML well-formedness check */
/*
 * A strict checker for the XML 1.0 subset we write: UTF-8 without forbidden
 * control characters; an optional XML declaration, comments, PIs and a
 * DOCTYPE without internal subset in the prolog; exactly one root element;
 * tags balanced and properly nested; attributes quoted, unique per element,
 * without '<'; entity references limited to the five predefined names and
 * valid character references; CDATA sections; no "]]>" in text.
 */
typedef struct {
    const char *start, *p;
    char why[200];
} xml_rd;

static int xml_fail(xml_rd *r, const char *msg) {
    char ctx[40];
    size_t i = 0;
    for (const char *q = r->p; *q && i + 1 < sizeof ctx; q++) ctx[i++] = (*q == '\n') ? ' ' : *q;
    ctx[i] = '\0';
    snprintf(r->why, sizeof r->why, "byte %ld: %s (at \"%s\")", (long)(r->p - r->start), msg, ctx);
    return 0;
}

static int name_start(unsigned char c) { return isalpha(c) || c == '_' || c == ':' || c >= 0x80; }
static int name_char(unsigned char c) { return name_start(c) || isdigit(c) || c == '-' || c == '.'; }
static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int skip_ws(xml_rd *r) {
    const char *s = r->p;
    while (is_ws(*r->p)) r->p++;
    return r->p != s;
}

static int xml_name(xml_rd *r, const char **s, size_t *n) {
    if (!name_start((unsigned char)*r->p)) return xml_fail(r, "expected a name");
    *s = r->p;
    while (name_char((unsigned char)*r->p)) r->p++;
    *n = (size_t)(r->p - *s);
    return 1;
}

static int xml_char_ok(unsigned long c) {
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
           (c >= 0x10000 && c <= 0x10FFFF);
}

/* At '&': one entity or character reference. */
static int xml_ref(xml_rd *r) {
    r->p++;
    if (*r->p == '#') {
        r->p++;
        int hex = *r->p == 'x';
        if (hex) r->p++;
        unsigned long v = 0;
        int digits = 0;
        while (hex ? isxdigit((unsigned char)*r->p) : isdigit((unsigned char)*r->p)) {
            int d = isdigit((unsigned char)*r->p) ? *r->p - '0' : (tolower((unsigned char)*r->p) - 'a' + 10);
            if (v < 0x110000) v = v * (hex ? 16 : 10) + (unsigned long)d;
            r->p++;
            digits++;
        }
        if (!digits || *r->p != ';') return xml_fail(r, "bad character reference");
        if (!xml_char_ok(v)) return xml_fail(r, "character reference to a non-XML character");
        r->p++;
        return 1;
    }
    static const char *const names[] = {"amp;", "lt;", "gt;", "quot;", "apos;"};
    for (int i = 0; i < 5; i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(r->p, names[i], n)) {
            r->p += n;
            return 1;
        }
    }
    return xml_fail(r, "undefined entity (only amp lt gt quot apos are predefined)");
}

static int xml_comment(xml_rd *r) { /* at "<!--" */
    r->p += 4;
    const char *e = strstr(r->p, "--");
    if (!e) return xml_fail(r, "unterminated comment");
    if (e[2] != '>') return xml_fail(r, "\"--\" inside a comment");
    r->p = e + 3;
    return 1;
}

static int xml_pi(xml_rd *r) { /* at "<?" */
    const char *s;
    size_t n;
    r->p += 2;
    if (!xml_name(r, &s, &n)) return 0;
    const char *e = strstr(r->p, "?>");
    if (!e) return xml_fail(r, "unterminated processing instruction");
    r->p = e + 2;
    return 1;
}

static int xml_element(xml_rd *r, int depth) { /* at '<' */
    const char *name, *an[64];
    size_t nlen, alen[64];
    int nattr = 0;
    if (depth > 256) return xml_fail(r, "elements nested too deeply");
    r->p++;
    if (!xml_name(r, &name, &nlen)) return 0;
    for (;;) {
        int ws = skip_ws(r);
        if (r->p[0] == '/' && r->p[1] == '>') {
            r->p += 2;
            return 1;
        }
        if (*r->p == '>') {
            r->p++;
            break;
        }
        if (!ws) return xml_fail(r, "expected whitespace, '>' or '/>' in a start tag");
        const char *a;
        size_t al;
        if (!xml_name(r, &a, &al)) return 0;
        for (int i = 0; i < nattr; i++)
            if (alen[i] == al && !memcmp(an[i], a, al)) return xml_fail(r, "duplicate attribute");
        if (nattr == 64) return xml_fail(r, "too many attributes");
        an[nattr] = a;
        alen[nattr++] = al;
        skip_ws(r);
        if (*r->p != '=') return xml_fail(r, "attribute without '='");
        r->p++;
        skip_ws(r);
        char q = *r->p;
        if (q != '"' && q != '\'') return xml_fail(r, "unquoted attribute value");
        r->p++;
        while (*r->p != q) {
            if (!*r->p) return xml_fail(r, "unterminated attribute value");
            if (*r->p == '<') return xml_fail(r, "'<' in an attribute value");
            if (*r->p == '&') {
                if (!xml_ref(r)) return 0;
            } else {
                r->p++;
            }
        }
        r->p++;
    }
    for (;;) { /* content */
        if (!*r->p) return xml_fail(r, "element not closed");
        if (r->p[0] == '<' && r->p[1] == '/') {
            const char *e;
            size_t el;
            r->p += 2;
            if (!xml_name(r, &e, &el)) return 0;
            if (el != nlen || memcmp(e, name, el)) return xml_fail(r, "end tag does not match the open element");
            skip_ws(r);
            if (*r->p != '>') return xml_fail(r, "expected '>' after an end tag name");
            r->p++;
            return 1;
        }
        if (!strncmp(r->p, "<!--", 4)) {
            if (!xml_comment(r)) return 0;
        } else if (!strncmp(r->p, "<![CDATA[", 9)) {
            const char *e = strstr(r->p + 9, "]]>");
            if (!e) return xml_fail(r, "unterminated CDATA section");
            r->p = e + 3;
        } else if (r->p[0] == '<' && r->p[1] == '?') {
            if (!xml_pi(r)) return 0;
        } else if (*r->p == '<') {
            if (!xml_element(r, depth + 1)) return 0;
        } else if (*r->p == '&') {
            if (!xml_ref(r)) return 0;
        } else if (!strncmp(r->p, "]]>", 3)) {
            return xml_fail(r, "\"]]>\" in text");
        } else {
            r->p++;
        }
    }
}

/* Characters: valid UTF-8 and allowed by XML 1.0. */
static int xml_chars(xml_rd *r) {
    const unsigned char *s = (const unsigned char *)r->start;
    size_t i = 0;
    while (s[i]) {
        unsigned long c = s[i];
        int n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
        if (!n) break;
        if (n > 1) c &= 0x3Fu >> (n - 1);
        int ok = 1;
        for (int k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) ok = 0;
            else c = (c << 6) | (s[i + k] & 0x3Fu);
        }
        static const unsigned long minv[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (!ok || c < minv[n] || !xml_char_ok(c)) break;
        i += (size_t)n;
    }
    if (s[i]) {
        r->p = r->start + i;
        return xml_fail(r, "invalid UTF-8 or a character XML does not allow");
    }
    return 1;
}

/* 1 when doc is a well-formed XML document; else 0 with the reason in why. */
static int xml_well_formed(const char *doc, char *why, size_t why_n) {
    xml_rd r = {doc, doc, ""};
    int ok = xml_chars(&r);
    r.p = doc;
    if (ok && !strncmp(r.p, "<?xml", 5)) ok = xml_pi(&r);
    int doctype = 0, root = 0;
    while (ok) {
        skip_ws(&r);
        if (!*r.p) break;
        if (!strncmp(r.p, "<!--", 4)) {
            ok = xml_comment(&r);
        } else if (r.p[0] == '<' && r.p[1] == '?') {
            if (!strncmp(r.p, "<?xml", 5) && !name_char((unsigned char)r.p[5]))
                ok = xml_fail(&r, "XML declaration not at the start");
            else ok = xml_pi(&r);
        } else if (!strncmp(r.p, "<!DOCTYPE", 9)) {
            if (doctype || root) ok = xml_fail(&r, "misplaced DOCTYPE");
            const char *e = strchr(r.p, '>');
            const char *br = strchr(r.p, '[');
            if (ok && (!e || (br && br < e))) ok = xml_fail(&r, "DOCTYPE with an internal subset or unterminated");
            if (ok) r.p = e + 1;
            doctype = 1;
        } else if (*r.p == '<' && !root) {
            ok = xml_element(&r, 0);
            root = 1;
        } else {
            ok = xml_fail(&r, root ? "content after the root element" : "text before the root element");
        }
    }
    if (ok && !root) ok = xml_fail(&r, "no root element");
    snprintf(why, why_n, "%s", ok ? "" : r.why);
    return ok;
}

#define EXPECT_WELL_FORMED(doc)                                                   \
    do {                                                                          \
        char why_[200];                                                           \
        EXPECT(xml_well_formed((doc), why_, sizeof why_), "not well-formed: %s", why_); \
    } while (0)

/* The checker itself must reject what it is meant to reject. */
static void test_xml_checker(void) {
    static const char *const good[] = {
        "<a/>",
        "<?xml version=\"1.0\"?>\n<a b='1' c=\"&amp;&#60;&#x3e;\">t&lt;<b/><!-- c --><![CDATA[<&]]></a>\n",
        "<!DOCTYPE html>\n<html><p>x</p></html>",
    };
    static const char *const bad[] = {
        "", "<a>", "<a></b>", "<a><b></a></b>", "<a b=1/>", "<a b=\"1\" b=\"2\"/>", "<a>&nbsp;</a>",
        "<a>&#0;</a>", "<a>x & y</a>", "<a b=\"<\"/>", "<a/><b/>", "text<a/>", "<a>]]></a>",
        "<a><!-- -- --></a>", "<a>\x01</a>", "<a>\xC3</a>", "<a b=\"1\"c=\"2\"/>", "<a/>\n<?xml version=\"1.0\"?>",
    };
    char why[200];
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        EXPECT(xml_well_formed(good[i], why, sizeof why), "good[%zu] rejected: %s", i, why);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        EXPECT(!xml_well_formed(bad[i], why, sizeof why), "bad[%zu] accepted: %s", i, bad[i]);
}

/* ------------------------------------------------------------------ helpers */

/* strstr without the sanitizers' interceptor, which measures the whole
 * haystack on every call (quadratic when walking a 30 MB SVG). */
static const char *find(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    if (!n) return hay;
    for (; *hay; hay++)
        if (*hay == *needle && !strncmp(hay, needle, n)) return hay;
    return NULL;
}

/* Value of attribute `name` in the tag starting at tag ('<'), into val; 0 when absent. */
static int tag_attr(const char *tag, const char *name, char *val, size_t n) {
    const char *end = tag;
    while (*end && *end != '>') end++;
    char pat[64];
    snprintf(pat, sizeof pat, " %s=\"", name);
    const char *a = find(tag, pat);
    if (!a || !end || a > end) return 0;
    a += strlen(pat);
    const char *q = strchr(a, '"');
    if (!q || (size_t)(q - a) >= n) return 0;
    memcpy(val, a, (size_t)(q - a));
    val[q - a] = '\0';
    return 1;
}

static int starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static size_t count_of(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = find(hay, needle); p; p = find(p + 1, needle)) n++;
    return n;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* Compares got with tests/golden/<name> (or rewrites it with ATTEND_UPDATE_GOLDEN=1). */
static void golden(const char *name, const char *got) {
    char path[256];
    snprintf(path, sizeof path, "golden/%s", name);
    const char *upd = getenv("ATTEND_UPDATE_GOLDEN");
    if (upd && *upd && strcmp(upd, "0")) {
        FILE *f = fopen(path, "wb");
        EXPECT(f && fputs(got, f) >= 0 && fclose(f) == 0, "could not write %s", path);
        printf("  updated %s\n", path);
        return;
    }
    char *want = read_file(path);
    EXPECT(want, "missing %s (regenerate: cd tests && ATTEND_UPDATE_GOLDEN=1 ../build/tests/test_render)", path);
    if (!want) return;
    if (strcmp(got, want)) {
        size_t i = 0, line = 1, bol = 0;
        while (got[i] && got[i] == want[i]) {
            if (got[i++] == '\n') line++, bol = i;
        }
        int gl = (int)strcspn(got + bol, "\n"), wl = (int)strcspn(want + bol, "\n");
        EXPECT(0, "%s differs from the output at byte %zu, line %zu:\n  want: %.*s\n  got:  %.*s", path, i, line,
               wl, want + bol, gl, got + bol);
    } else {
        printf("  %-48s matches byte for byte\n", path);
    }
    free(want);
}

/* A fixed small alignment (English -> French), shared by the golden tests. */
enum { GT = 5, GS = 6 };
static const char *const g_src[GS] = {"the", "European", "economic", "area", ".", "<&\">"};
static const char *const g_out[GT] = {"la", "zone", "\xC3\xA9" "conomique", "europ\xC3\xA9" "enne", "."};
static const attend_real g_w[GT * GS] = {
    0.90f, 0.05f, 0.02f, 0.01f, 0.01f, 0.01f, /* la */
    0.02f, 0.08f, 0.15f, 0.70f, 0.04f, 0.01f, /* zone */
    0.00f, 0.25f, 0.55f, 0.10f, 0.05f, 0.05f, /* économique */
    0.01f, 0.62f, 0.30f, 0.03f, 0.02f, 0.02f, /* européenne */
    0.00f, 0.00f, 0.00f, 0.01f, 0.99f, 0.00f, /* . */
};

/* ----------------------------------------------------------- text heatmap */

static void test_text_golden(void) {
    char *s = NULL;
    attend_error e;
    EXPECT(attend_render_heatmap_text(&s, g_w, GT, GS, g_src, g_out, &e) == ATTEND_OK, "%s", e.msg);
    if (s) golden("render_text_basic.txt", s);
    free(s);

    /* positions as labels: T=12 (two-digit labels), S=3 */
    attend_real w[12 * 3];
    for (int t = 0; t < 12; t++)
        for (int s2 = 0; s2 < 3; s2++) w[t * 3 + s2] = (attend_real)(s2 == t % 3 ? 0.8 : 0.1);
    s = NULL;
    EXPECT(attend_render_heatmap_text(&s, w, 12, 3, NULL, NULL, &e) == ATTEND_OK, "%s", e.msg);
    if (s) golden("render_text_positions.txt", s);
    free(s);
}

/* attend_render_heatmap_text_style: the ramp style is attend_render_heatmap_text
 * byte for byte (golden above); the grid styles (golden in
 * tests/cli/heatmap_golden.txt through cli/heatmap.c) show weights as given,
 * allow T = 0, and refuse what they cannot draw. */
static void test_text_styles(void) {
    char *a = NULL, *b = NULL;
    attend_error e;
    EXPECT(attend_render_heatmap_text(&a, g_w, GT, GS, g_src, g_out, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_render_heatmap_text_style(&b, g_w, GT, GS, g_src, g_out, ATTEND_HEATMAP_RAMP, &e) == ATTEND_OK,
           "%s", e.msg);
    EXPECT(a && b && !strcmp(a, b), "the ramp style differs from attend_render_heatmap_text");
    free(a);
    free(b);

    const attend_real w[2] = {(attend_real)NAN, 0.5f};
    const char *src[2] = {" ", "x"}, *out[1] = {"y"};
    b = NULL;
    EXPECT(attend_render_heatmap_text_style(&b, w, 1, 2, src, out, ATTEND_HEATMAP_PERCENT, &e) == ATTEND_OK, "%s",
           e.msg);
    EXPECT(b && !strcmp(b, "      _   x\n  +---------+\n"
                           "y |   0  50 |\n  +---------+\n   weight per cell in hundredths\n"),
           "percent grid:\n%s", b ? b : "(none)");
    free(b);
    b = NULL;
    EXPECT(attend_render_heatmap_text_style(&b, w, 0, 2, src, out, ATTEND_HEATMAP_SHADE, &e) == ATTEND_OK, "%s",
           e.msg);
    EXPECT(b && strstr(b, " | (no output tokens)\n"), "T = 0:\n%s", b ? b : "(none)");
    free(b);
    b = (char *)w;
    EXPECT(attend_render_heatmap_text_style(&b, w, 1, 2, src, out, (attend_heatmap_style)7, &e) == ATTEND_ERR_ARG &&
               !b && strstr(e.msg, "unknown style 7"),
           "unknown style: %s", e.msg);
    const char *holes[2] = {"a", NULL};
    EXPECT(attend_render_heatmap_text_style(&b, w, 1, 2, holes, out, ATTEND_HEATMAP_TSV, &e) == ATTEND_ERR_NULL &&
               strstr(e.msg, "src_tokens[1] is NULL"),
           "NULL token: %s", e.msg);
    EXPECT(attend_render_heatmap_text_style(&b, w, 1, 2, NULL, out, ATTEND_HEATMAP_SHADE, &e) == ATTEND_ERR_NULL &&
               strstr(e.msg, "src_tokens is NULL"),
           "NULL token array: %s", e.msg);
    EXPECT(attend_render_heatmap_text_style(&b, w, -1, 2, src, out, ATTEND_HEATMAP_SHADE, &e) == ATTEND_ERR_SHAPE,
           "T = -1: %s", e.msg);
}

/* Each bin of the ramp, its edges, and the argmax summary. */
static void test_text_ramp(void) {
    attend_real w[1 * 12] = {0.0f, 0.05f, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f};
    static const char expect_bins[12] = {' ', ' ', '.', ':', '-', '=', '+', '*', '#', '%', '@', '@'};
    char *s = NULL;
    attend_error e;
    EXPECT(attend_render_heatmap_text(&s, w, 1, 12, NULL, NULL, &e) == ATTEND_OK, "%s", e.msg);
    if (!s) return;
    /* row 0 is the second line: "0 |" then " cccccc" per cell */
    const char *row = strchr(s, '\n') + 1;
    EXPECT(!strncmp(row, "0 |", 3), "row starts %.10s", row);
    for (int k = 0; k < 12; k++) {
        const char *cell = row + 3 + k * 7;
        EXPECT(cell[0] == ' ', "separator before cell %d", k);
        for (int i = 1; i <= 6; i++)
            EXPECT(cell[i] == expect_bins[k], "cell %d (w=%g) has '%c', want '%c'", k, (double)w[k], cell[i],
                   expect_bins[k]);
    }
    EXPECT(find(row, " | argmax=11 (11) w=1.00\n") != NULL, "argmax summary: %s", row);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) EXPECT(*p < 0x80, "non-ASCII byte");
    free(s);

    /* ties go to the first position; tokens print whole in the summary */
    attend_real w2[3] = {0.4f, 0.4f, 0.2f};
    const char *src[3] = {"averyveryverylongtoken", "b", "c"};
    const char *out[1] = {"x"};
    s = NULL;
    EXPECT(attend_render_heatmap_text(&s, w2, 1, 3, src, out, &e) == ATTEND_OK, "%s", e.msg);
    if (s) {
        EXPECT(find(s, "argmax=0 (averyveryverylongtoken) w=0.40") != NULL, "%s", s);
        EXPECT(find(s, " avery~ b      c      |") != NULL, "truncated header: %s", s);
    }
    free(s);

    /* control characters cannot break the layout */
    const char *src3[2] = {"a\nb", "\t"};
    s = NULL;
    EXPECT(attend_render_heatmap_text(&s, w2, 1, 2, src3, NULL, &e) == ATTEND_OK, "%s", e.msg);
    if (s) {
        EXPECT(count_of(s, "\n") == 3, "3 lines expected:\n%s", s);
        EXPECT(find(s, "a?b") != NULL, "%s", s);
    }
    free(s);
}

/* ------------------------------------------------------------ SVG heatmap */

/* Reads back every cell rect of an SVG heatmap and compares with w. */
static void check_cells(const char *svg, const attend_real *w, int T, int S) {
    int *seen = calloc((size_t)T * (size_t)S, sizeof *seen);
    double *got = calloc((size_t)T * (size_t)S, sizeof *got), *want = calloc((size_t)T * (size_t)S, sizeof *want);
    int rects = 0, bad = 0;
    for (const char *p = find(svg, "<rect class=\"cell\""); p; p = find(p + 1, "<rect class=\"cell\"")) {
        char vt[32], vs[32], vw[32];
        rects++;
        if (!tag_attr(p, "data-t", vt, sizeof vt) || !tag_attr(p, "data-s", vs, sizeof vs) ||
            !tag_attr(p, "data-w", vw, sizeof vw)) {
            bad++;
            continue;
        }
        int t = atoi(vt), s = atoi(vs);
        const char *dot = strchr(vw, '.');
        EXPECT(dot && strlen(dot + 1) == 6, "data-w=\"%s\" should have 6 decimals", vw);
        if (t < 0 || t >= T || s < 0 || s >= S) {
            bad++;
            continue;
        }
        seen[t * S + s]++;
        got[t * S + s] = strtod(vw, NULL);
        want[t * S + s] = (double)w[t * S + s];
        const char *close = find(p, "</rect>"), *title = find(p, "<title>");
        EXPECT(title && close && title < close, "cell [%d,%d] has no <title> tooltip", t, s);
    }
    EXPECT(rects == T * S, "%d cell rects, want T*S = %d", rects, T * S);
    EXPECT(!bad, "%d rects without valid data-t/data-s/data-w", bad);
    for (int i = 0; i < T * S; i++) EXPECT(seen[i] == 1, "cell [%d,%d] appears %d times", i / S, i % S, seen[i]);
    EXPECT_CLOSE("data-w read back vs weights", got, want, (size_t)T * (size_t)S, 5e-7, 0);
    free(seen);
    free(got);
    free(want);
}

static void test_svg_heatmap(void) {
    enum { T = 7, S = 9 };
    attend_real w[T * S];
    const char *src[S] = {"a", "tokenization", "b", "\xE6\x97\xA5\xE6\x9C\xAC", "c", "d", "e", "f", "g"};
    uint32_t x = 12345;
    for (int t = 0; t < T; t++) {
        double sum = 0, raw[S];
        for (int s = 0; s < S; s++) {
            x = x * 1664525u + 1013904223u;
            raw[s] = (double)(x >> 8) / 16777216.0 + (s == t ? 3 : 0);
            sum += raw[s];
        }
        for (int s = 0; s < S; s++) w[t * S + s] = (attend_real)(raw[s] / sum);
    }
    w[0] = 0;
    w[1] = 1; /* the extremes of the scale */
    char *svg = NULL;
    attend_error e;
    EXPECT(attend_render_heatmap_svg(&svg, w, T, S, src, NULL, "Alignment <test>", &e) == ATTEND_OK, "%s",
           e.msg);
    if (!svg) return;
    EXPECT_WELL_FORMED(svg);
    EXPECT(starts_with(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""),
           "standalone SVG header: %.90s", svg);
    EXPECT(find(svg, "version=\"1.1\"") != NULL, "SVG 1.1");
    check_cells(svg, w, T, S);
    /* colour scale: white at 0, dark blue at 1, a gradient bar with 3 ticks */
    EXPECT(find(svg, "fill=\"#ffffff\" data-t=\"0\" data-s=\"0\" data-w=\"0.000000\"") != NULL, "w=0 is white");
    EXPECT(find(svg, "fill=\"#08306b\" data-t=\"0\" data-s=\"1\" data-w=\"1.000000\"") != NULL, "w=1 is dark blue");
    EXPECT(find(svg, "<linearGradient id=\"attend-scale\"") != NULL, "colour bar gradient");
    EXPECT(find(svg, ">0</text>") && find(svg, ">0.5</text>") && find(svg, ">1</text>"), "ticks 0, 0.5, 1");
    EXPECT(find(svg, "rotate(-45") != NULL, "long source labels are rotated");
    EXPECT(find(svg, "Alignment &lt;test&gt;</text>") != NULL, "title shown and escaped");
    EXPECT(find(svg, "\xE6\x97\xA5\xE6\x9C\xAC") != NULL, "UTF-8 token kept");
    free(svg);

    /* short tokens stay horizontal; no title */
    attend_real w1[2] = {0.25f, 0.75f};
    svg = NULL;
    EXPECT(attend_render_heatmap_svg(&svg, w1, 1, 2, NULL, NULL, NULL, &e) == ATTEND_OK, "%s", e.msg);
    if (svg) {
        EXPECT_WELL_FORMED(svg);
        EXPECT(!find(svg, "rotate("), "short labels are not rotated");
        EXPECT(!find(svg, "<title>attention"), "no document title");
        check_cells(svg, w1, 1, 2);
    }
    free(svg);

    /* a large map: 300 x 400 cells */
    enum { BT = 300, BS = 400 };
    attend_real *wb = malloc(sizeof *wb * BT * BS);
    for (int i = 0; i < BT * BS; i++) wb[i] = (attend_real)((i % 1001) / 1000.0);
    svg = NULL;
    EXPECT(attend_render_heatmap_svg(&svg, wb, BT, BS, NULL, NULL, NULL, &e) == ATTEND_OK, "%s", e.msg);
    if (svg) {
        EXPECT_WELL_FORMED(svg);
        check_cells(svg, wb, BT, BS);
    }
    free(svg);
    free(wb);

    svg = NULL;
    EXPECT(attend_render_heatmap_svg(&svg, g_w, GT, GS, g_src, g_out, "en \xE2\x86\x92 fr", &e) == ATTEND_OK, "%s",
           e.msg);
    if (svg) golden("render_heatmap_small.svg", svg);
    free(svg);
}

/* Tokens and titles with markup characters are escaped everywhere. */
static void test_escaping(void) {
    const char *src[3] = {"<&\">", "'", "a&amp;b"};
    const char *out[2] = {"</svg>", "]]>"};
    attend_real w[6] = {0.2f, 0.3f, 0.5f, 1, 0, 0};
    attend_error e;
    char *svg = NULL, *html = NULL, *txt = NULL;
    EXPECT(attend_render_heatmap_svg(&svg, w, 2, 3, src, out, "<script>alert(1)</script>", &e) == ATTEND_OK,
           "%s", e.msg);
    EXPECT(attend_render_heatmap_html(&html, w, 2, 3, src, out, "<b>&", &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_render_heatmap_text(&txt, w, 2, 3, src, out, &e) == ATTEND_OK, "%s", e.msg);
    const char *docs[2] = {svg, html};
    for (int i = 0; i < 2; i++) {
        const char *d = docs[i];
        if (!d) continue;
        EXPECT_WELL_FORMED(d);
        EXPECT(find(d, "&lt;&amp;&quot;&gt;") != NULL, "doc %d: <&\"> escaped", i);
        EXPECT(find(d, "&#39;") != NULL, "doc %d: ' escaped", i);
        EXPECT(find(d, "a&amp;amp;b") != NULL, "doc %d: & of an entity-looking token escaped", i);
        EXPECT(find(d, "&lt;/svg&gt;") != NULL, "doc %d: </svg> token escaped", i);
        EXPECT(find(d, "]]&gt;") != NULL, "doc %d: ]]> token escaped", i);
        EXPECT(!find(d, "<&\">") && !find(d, "<script>alert"), "doc %d: raw markup leaked", i);
        EXPECT(!find(d, ">]]>"), "doc %d: raw ]]>", i);
    }
    if (html) EXPECT(find(html, "<h1>&lt;b&gt;&amp;</h1>") != NULL, "title escaped in the heading");
    if (txt) EXPECT(find(txt, " <&\">   '      a&amp~ |") != NULL, "text keeps tokens as they are:\n%s", txt);
    free(svg);
    free(html);
    free(txt);

    /* characters XML cannot carry become U+FFFD; the output stays well-formed */
    const char *ctl[2] = {"a\x01z", "\xEF\xBF\xBE"};
    attend_real w2[2] = {0.5f, 0.5f};
    svg = NULL;
    EXPECT(attend_render_heatmap_svg(&svg, w2, 1, 2, ctl, NULL, NULL, &e) == ATTEND_OK, "%s", e.msg);
    if (svg) {
        EXPECT_WELL_FORMED(svg);
        EXPECT(find(svg, "a\xEF\xBF\xBDz") != NULL, "control character replaced");
    }
    free(svg);
}

/* ---------------------------------------------------------------- HTML page */

static void test_html(void) {
    char *html = NULL;
    attend_error e;
    EXPECT(attend_render_heatmap_html(&html, g_w, GT, GS, g_src, g_out, "en \xE2\x86\x92 fr", &e) == ATTEND_OK,
           "%s", e.msg);
    if (!html) return;
    EXPECT_WELL_FORMED(html);
    EXPECT(starts_with(html, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\""), "XHTML header");
    /* no network: the only URLs are the XHTML and SVG namespace identifiers */
    size_t urls = count_of(html, "http://") + count_of(html, "https://");
    size_t ns = count_of(html, "xmlns=\"http://www.w3.org/1999/xhtml\"") +
                count_of(html, "xmlns=\"http://www.w3.org/2000/svg\"");
    EXPECT(ns == 2 && urls == ns, "%zu URLs, %zu of them namespace identifiers", urls, ns);
    EXPECT(!find(html, " src=") && !find(html, " href=") && !find(html, "@import") && !find(html, "url(http"),
           "external references");
    EXPECT(!find(html, "<?xml"), "no XML declaration inside the page");
    /* the script must stay free of '<' and '&' so the page parses as XML without CDATA */
    const char *js = find(html, "<script>\n");
    const char *js_end = js ? find(js, "</script>") : NULL;
    EXPECT(js && js_end, "inline script");
    for (const char *p = js ? js + 9 : NULL; p && p < js_end; p++)
        EXPECT(*p != '<' && *p != '&', "script byte %ld is '%c'", (long)(p - js), *p);
    /* structure: focusable output tokens, source tokens, the selected element */
    EXPECT(count_of(html, "<button type=\"button\" class=\"tok out\"") == GT, "one focusable button per output token");
    EXPECT(count_of(html, "<span class=\"tok src\"") == GS, "one span per source token");
    EXPECT(count_of(html, "id=\"selected\"") == 1, "one #selected element");
    EXPECT(find(html, "location.hash") != NULL, "hash handling");
    EXPECT(find(html, "id=\"attend-rowhl\"") != NULL, "row highlight in the embedded SVG");
    EXPECT(count_of(html, "<svg ") == 1, "embedded SVG");
    check_cells(html, g_w, GT, GS);
    /* the weights as a JSON array [[...],...] */
    const char *j = find(html, "<script type=\"application/json\" id=\"attend-weights\">");
    EXPECT(j != NULL, "embedded weights");
    if (j) {
        j = strchr(j, '>') + 1;
        const char *end = find(j, "</script>");
        double got[GT * GS], want[GT * GS];
        int n = 0, depth = 0, rows = 0, ok = 1;
        const char *p = j;
        while (p < end && ok) {
            if (*p == '[') {
                depth++;
                if (depth == 2) rows++;
                p++;
            } else if (*p == ']') {
                depth--;
                p++;
            } else if (*p == ',' || is_ws(*p)) {
                p++;
            } else {
                char *q;
                double v = strtod(p, &q);
                if (q == p || n >= GT * GS || depth != 2) ok = 0;
                else got[n] = v, want[n] = (double)g_w[n], n++;
                p = q;
            }
        }
        EXPECT(ok && depth == 0 && rows == GT && n == GT * GS, "JSON array shape: %d rows, %d numbers", rows, n);
        if (n == GT * GS) EXPECT_CLOSE("embedded JSON weights vs input", got, want, (size_t)n, 5e-7, 0);
    }
    free(html);

    /* positions as labels */
    attend_real w[4] = {0.5f, 0.5f, 0.1f, 0.9f};
    html = NULL;
    EXPECT(attend_render_heatmap_html(&html, w, 2, 2, NULL, NULL, NULL, &e) == ATTEND_OK, "%s", e.msg);
    if (html) {
        EXPECT_WELL_FORMED(html);
        EXPECT(find(html, "<title>Attention alignment</title>") != NULL, "default title");
        EXPECT(find(html, "data-t=\"1\" aria-pressed=\"false\">1</button>") != NULL, "position labels");
    }
    free(html);
}

/* --------------------------------------------------------------- line plot */

static void test_line_plot(void) {
    double x[10], y0[10], y1[10], y2[10];
    for (int i = 0; i < 10; i++) {
        x[i] = 100.0 * (i + 1);
        y0[i] = 1.0 - 0.08 * i;
        y1[i] = 0.05 * i * i / 5.0;
        y2[i] = 0.5;
    }
    y1[4] = NAN; /* a gap */
    y2[9] = 1.7; /* beyond y_max: clipped, no marker */
    attend_plot_series ser[3] = {{"loss", 10, x, y0}, {"accuracy <dev>", 10, x, y1}, {NULL, 10, x, y2}};
    char *svg = NULL;
    attend_error e;
    EXPECT(attend_render_line_plot_svg(&svg, ser, 3, "Training & evaluation", "step", "value", 0, 1, 0, &e) ==
               ATTEND_OK, "%s", e.msg);
    if (!svg) return;
    EXPECT_WELL_FORMED(svg);
    EXPECT(starts_with(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""),
           "standalone SVG");
    EXPECT(count_of(svg, "class=\"legend-entry\"") == 3, "one legend entry per series");
    EXPECT(find(svg, ">accuracy &lt;dev&gt;</text>") != NULL, "escaped label");
    EXPECT(find(svg, ">series 2</text>") != NULL, "default label");
    EXPECT(find(svg, ">Training &amp; evaluation</text>") != NULL, "title");
    EXPECT(find(svg, ">step</text>") && find(svg, ">value</text>"), "axis labels");
    EXPECT(find(svg, "rotate(-90") != NULL, "y label rotated");
    /* y ticks 0, 0.2, ..., 1 exactly as given; x ticks nice (0 .. 1000 by 200) */
    for (int k = 0; k <= 5; k++) {
        char want[32];
        snprintf(want, sizeof want, ">%d.%d</text>", k / 5, (k % 5) * 2);
        EXPECT(find(svg, want) != NULL, "y tick %s", want);
    }
    EXPECT(find(svg, ">0</text>") && find(svg, ">200</text>") && find(svg, ">1000</text>"), "x ticks");
    /* the NaN leaves a gap: series 1's path has two subpaths */
    const char *s1 = find(svg, "<g class=\"series\" data-series=\"1\">");
    EXPECT(s1 != NULL, "series 1 group");
    if (s1) {
        const char *d = find(s1, " d=\"");
        const char *e2 = d ? strchr(d + 4, '"') : NULL;
        int moves = 0;
        for (const char *p = d; p && p < e2; p++) moves += *p == 'M';
        EXPECT(moves == 2, "series 1 has %d subpaths, want 2 (NaN gap)", moves);
        const char *end = find(s1, "</g>");
        size_t markers = 0;
        for (const char *p = find(s1, "<rect"); p && p < end; p = find(p + 1, "<rect")) markers++;
        EXPECT(markers == 9, "series 1: %zu square markers, want 9 (one point is NaN)", markers);
    }
    EXPECT(count_of(svg, "<path clip-path=\"url(#attend-plot-clip)\"") == 3, "series lines clipped to the plot");
    golden("render_lineplot_small.svg", svg);
    free(svg);

    /* log x over 1..1e6, 8 series with distinct colours and marker shapes */
    double lx[7], ly[8][7];
    attend_plot_series many[8];
    char names[8][16];
    for (int i = 0; i < 7; i++) lx[i] = pow(10, i);
    for (int sidx = 0; sidx < 8; sidx++) {
        for (int i = 0; i < 7; i++) ly[sidx][i] = 0.1 * sidx + 0.01 * i;
        snprintf(names[sidx], sizeof names[sidx], "run %d", sidx);
        many[sidx] = (attend_plot_series){names[sidx], 7, lx, ly[sidx]};
    }
    svg = NULL;
    EXPECT(attend_render_line_plot_svg(&svg, many, 8, NULL, "tokens", NULL, 0, 1, 1, &e) == ATTEND_OK, "%s",
           e.msg);
    if (svg) {
        EXPECT_WELL_FORMED(svg);
        EXPECT(find(svg, ">1</text>") && find(svg, ">1000</text>") && find(svg, ">1e6</text>"),
               "decade ticks");
        char colours[8][16], shapes[8][64];
        int found = 0;
        for (const char *p = find(svg, "class=\"legend-entry\""); p && found < 8;
             p = find(p + 1, "class=\"legend-entry\"")) {
            const char *line = find(p, "<line");
            const char *mk = line ? find(line, "/>") + 2 : NULL;
            if (!mk) break;
            EXPECT(tag_attr(line, "stroke", colours[found], sizeof colours[found]), "legend colour");
            /* marker signature: element, fill kind, number of path commands */
            char fill[16] = "";
            tag_attr(mk, "fill", fill, sizeof fill);
            const char *mend = find(mk, "/>");
            int cmds = 0;
            for (const char *q = mk; q < mend; q++) cmds += *q == 'L' || *q == 'M';
            /* for paths, which way the first segment goes tells triangles and crosses apart */
            double px1 = 0, py1 = 0, px2 = 0, py2 = 0;
            const char *d = find(mk, " d=\"");
            if (d && d < mend) sscanf(d + 4, "M%lf %lf L%lf %lf", &px1, &py1, &px2, &py2);
            snprintf(shapes[found], sizeof shapes[found], "%.6s|%s|%d|%d", mk,
                     !strcmp(fill, "#ffffff") ? "hollow" : (!strcmp(fill, "none") ? "stroke" : "solid"), cmds,
                     (py2 > py1) - (py2 < py1));
            found++;
        }
        EXPECT(found == 8, "%d legend entries", found);
        for (int a = 0; a < found; a++)
            for (int b = a + 1; b < found; b++) {
                EXPECT(strcmp(colours[a], colours[b]), "series %d and %d share colour %s", a, b, colours[a]);
                EXPECT(strcmp(shapes[a], shapes[b]), "series %d and %d share marker %s", a, b, shapes[a]);
            }
    }
    free(svg);

    /* one point, everything NaN, an empty series: still a valid plot */
    double one_x = 5, one_y = 0.5, nan_y[2] = {NAN, NAN}, nan_x[2] = {1, 2};
    attend_plot_series odd[3] = {{"one", 1, &one_x, &one_y}, {"nan", 2, nan_x, nan_y}, {"empty", 0, NULL, NULL}};
    svg = NULL;
    EXPECT(attend_render_line_plot_svg(&svg, odd, 3, "odd", NULL, NULL, -1, 2, 0, &e) == ATTEND_OK, "%s", e.msg);
    if (svg) {
        EXPECT_WELL_FORMED(svg);
        EXPECT(find(svg, "<circle") != NULL, "an isolated point still gets its marker");
    }
    free(svg);
}

/* ------------------------------------------------------------------ errors */

/* Runs call (which names o_ and e_), expects want_status and a message
 * containing want_text; on error *out must be NULL (unless out itself was NULL). */
#define EXPECT_ERR(call, want_status, want_text)                                                      \
    do {                                                                                              \
        attend_error e_ = {0};                                                                        \
        char *sent_ = malloc(1), *o_ = sent_; /* a non-NULL sentinel */                               \
        attend_status st_ = (call);                                                                   \
        EXPECT(st_ == (want_status), "%s: got %s (%s), want %s", #call, attend_status_name(st_), e_.msg, \
               attend_status_name(want_status));                                                      \
        EXPECT(find(e_.msg, (want_text)) != NULL, "message \"%s\" lacks \"%s\"", e_.msg, (want_text)); \
        if (st_ == ATTEND_OK && o_ != sent_) free(o_);                                                \
        if (st_ != ATTEND_OK)                                                                         \
            EXPECT(o_ == NULL || find(#call, "(NULL,"), "%s: *out not NULL after an error", #call);  \
        free(sent_);                                                                                  \
    } while (0)

static void test_errors(void) {
    attend_real w[6] = {0.2f, 0.3f, 0.5f, 1, 0, 0};
    const char *src[3] = {"a", "b", "c"};
    const char *badsrc[3] = {"a", "b", "c\xC3("};
    const char *nullsrc[3] = {"a", NULL, "c"};
    const char *out[2] = {"x", "\xED\xA0\x80"}; /* a UTF-16 surrogate */

    EXPECT_ERR(attend_render_heatmap_text(NULL, w, 2, 3, src, NULL, &e_), ATTEND_ERR_NULL, "out is NULL");
    EXPECT_ERR(attend_render_heatmap_text(&o_, NULL, 2, 3, src, NULL, &e_), ATTEND_ERR_NULL, "weights");
    EXPECT_ERR(attend_render_heatmap_text(&o_, w, 0, 3, src, NULL, &e_), ATTEND_ERR_SHAPE, "T=0");
    EXPECT_ERR(attend_render_heatmap_svg(&o_, w, 2, -1, src, NULL, NULL, &e_), ATTEND_ERR_SHAPE, "S=-1");
    EXPECT_ERR(attend_render_heatmap_html(&o_, w, 1001, 1000, NULL, NULL, NULL, &e_), ATTEND_ERR_SHAPE,
               "1001000 cells");
    EXPECT_ERR(attend_render_heatmap_svg(&o_, w, 2, 3, badsrc, NULL, NULL, &e_), ATTEND_ERR_FORMAT,
               "src_tokens[2]: invalid UTF-8 at byte 1");
    EXPECT_ERR(attend_render_heatmap_html(&o_, w, 2, 3, src, out, NULL, &e_), ATTEND_ERR_FORMAT,
               "out_tokens[1]: invalid UTF-8 at byte 0");
    EXPECT_ERR(attend_render_heatmap_text(&o_, w, 2, 3, nullsrc, NULL, &e_), ATTEND_ERR_NULL,
               "src_tokens[1] is NULL");
    EXPECT_ERR(attend_render_heatmap_svg(&o_, w, 2, 3, src, NULL, "\xC0\xAF", &e_), ATTEND_ERR_FORMAT,
               "title: invalid UTF-8");

    attend_real wn[6] = {0.2f, 0.3f, 0.5f, 1, 0, NAN};
    EXPECT_ERR(attend_render_heatmap_text(&o_, wn, 2, 3, src, NULL, &e_), ATTEND_ERR_NONFINITE,
               "weight [t=1,s=2] is NaN");
    wn[5] = -INFINITY;
    EXPECT_ERR(attend_render_heatmap_svg(&o_, wn, 2, 3, src, NULL, NULL, &e_), ATTEND_ERR_NONFINITE,
               "weight [t=1,s=2] is -Inf");
    attend_real wr[6] = {0.2f, 0.3f, 0.5f, 1, 1.5f, 0};
    EXPECT_ERR(attend_render_heatmap_html(&o_, wr, 2, 3, src, NULL, NULL, &e_), ATTEND_ERR_ARG,
               "weight [t=1,s=1] = 1.5 is outside [0,1]");
    wr[4] = -0.01f;
    EXPECT_ERR(attend_render_heatmap_text(&o_, wr, 2, 3, src, NULL, &e_), ATTEND_ERR_ARG, "outside [0,1]");
    /* softmax rounding just outside [0,1] is accepted and shown clamped */
    wr[4] = -5e-7f;
    wr[3] = 1.0f + 5e-7f;
    EXPECT_ERR(attend_render_heatmap_svg(&o_, wr, 2, 3, src, NULL, NULL, &e_), ATTEND_OK, "");

    /* line plots */
    double x[3] = {1, 2, 3}, y[3] = {0.1, 0.2, 0.3};
    attend_plot_series ok1 = {"a", 3, x, y};
    EXPECT_ERR(attend_render_line_plot_svg(NULL, &ok1, 1, NULL, NULL, NULL, 0, 1, 0, &e_), ATTEND_ERR_NULL,
               "out is NULL");
    EXPECT_ERR(attend_render_line_plot_svg(&o_, NULL, 1, NULL, NULL, NULL, 0, 1, 0, &e_), ATTEND_ERR_NULL,
               "series is NULL");
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &ok1, 0, NULL, NULL, NULL, 0, 1, 0, &e_), ATTEND_ERR_SHAPE,
               "n_series=0");
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &ok1, 1, NULL, NULL, NULL, 1, 1, 0, &e_), ATTEND_ERR_ARG,
               "y_min < y_max");
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &ok1, 1, NULL, NULL, NULL, NAN, 1, 0, &e_), ATTEND_ERR_ARG,
               "y range");
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &ok1, 1, NULL, "\xFF", NULL, 0, 1, 0, &e_), ATTEND_ERR_FORMAT,
               "x_label: invalid UTF-8");
    attend_plot_series neg = {"a", -1, x, y};
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &neg, 1, NULL, NULL, NULL, 0, 1, 0, &e_), ATTEND_ERR_SHAPE,
               "series 0 has n=-1");
    attend_plot_series nox[2] = {ok1, {"b", 3, NULL, y}};
    EXPECT_ERR(attend_render_line_plot_svg(&o_, nox, 2, NULL, NULL, NULL, 0, 1, 0, &e_), ATTEND_ERR_NULL,
               "series 1 has n=3 but x or y is NULL");
    double xn[3] = {1, NAN, 3}, yi[3] = {0.1, INFINITY, 0.3}, xz[3] = {0, 1, 2};
    attend_plot_series s_xn = {"a", 3, xn, y}, s_yi = {"a", 3, x, yi}, s_xz = {"a", 3, xz, y};
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &s_xn, 1, NULL, NULL, NULL, 0, 1, 0, &e_), ATTEND_ERR_NONFINITE,
               "series 0 x[1] is NaN");
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &s_yi, 1, NULL, NULL, NULL, 0, 1, 0, &e_), ATTEND_ERR_NONFINITE,
               "series 0 y[1] is infinite");
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &s_xz, 1, NULL, NULL, NULL, 0, 1, 1, &e_), ATTEND_ERR_ARG,
               "x[0] = 0, but a log x axis needs x > 0");
    attend_plot_series badlabel = {"\xE2\x82", 3, x, y};
    EXPECT_ERR(attend_render_line_plot_svg(&o_, &badlabel, 1, NULL, NULL, NULL, 0, 1, 0, &e_), ATTEND_ERR_FORMAT,
               "series 0 label: invalid UTF-8");
    /* err may be NULL */
    char *o2 = (char *)1;
    EXPECT(attend_render_heatmap_text(&o2, w, 0, 3, NULL, NULL, NULL) == ATTEND_ERR_SHAPE && o2 == NULL,
           "NULL err");
}

int main(void) {
    RUN(test_xml_checker);
    RUN(test_text_golden);
    RUN(test_text_ramp);
    RUN(test_text_styles);
    RUN(test_svg_heatmap);
    RUN(test_escaping);
    RUN(test_html);
    RUN(test_line_plot);
    RUN(test_errors);
    return harness_summary();
}
