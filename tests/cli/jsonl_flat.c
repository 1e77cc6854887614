/*
 * jsonl_flat.c — reads JSON Lines strictly (RFC 8259: one value per line, no
 * trailing text) and prints every scalar as one line
 *
 *     LINE<TAB>PATH<TAB>VALUE
 *
 * PATH like .hypotheses[0].score, VALUE a number as written, true/false/null,
 * or a string decoded (escapes resolved, \uXXXX and surrogate pairs to UTF-8)
 * and then written with TAB, newline, CR and backslash as \t \n \r \\ so it
 * stays on one line. An empty array or object prints PATH<TAB>[] / {}. Exits 1
 * with "FILE:LINE:COLUMN: what" at the first malformed line: the command tests
 * (tests/cli/newcomer_test.sh) parse what `attend ... --format jsonl` printed
 * with it, so output that is not JSON fails them.
 *
 *   jsonl_flat FILE
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s;
    size_t i, n;
    long line;
    const char *file;
    char path[4096];
} parser;

static int fail(parser *p, const char *what) {
    fprintf(stderr, "%s:%ld:%zu: %s\n", p->file, p->line, p->i + 1, what);
    return -1;
}

static void ws(parser *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\r')) p->i++;
}

static void put_escaped(unsigned char c) {
    if (c == '\t') fputs("\\t", stdout);
    else if (c == '\n') fputs("\\n", stdout);
    else if (c == '\r') fputs("\\r", stdout);
    else if (c == '\\') fputs("\\\\", stdout);
    else putchar(c);
}

static void put_utf8(unsigned long cp) {
    unsigned char b[4];
    int k;
    if (cp < 0x80) b[0] = (unsigned char)cp, k = 1;
    else if (cp < 0x800) b[0] = (unsigned char)(0xC0 | cp >> 6), b[1] = (unsigned char)(0x80 | (cp & 0x3F)), k = 2;
    else if (cp < 0x10000)
        b[0] = (unsigned char)(0xE0 | cp >> 12), b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)),
        b[2] = (unsigned char)(0x80 | (cp & 0x3F)), k = 3;
    else
        b[0] = (unsigned char)(0xF0 | cp >> 18), b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F)),
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)), b[3] = (unsigned char)(0x80 | (cp & 0x3F)), k = 4;
    for (int j = 0; j < k; j++) put_escaped(b[j]);
}

static int hex4(parser *p, unsigned long *out) {
    if (p->i + 4 > p->n) return fail(p, "short \\u escape");
    unsigned long v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned long)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned long)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned long)(c - 'A' + 10);
        else return fail(p, "bad hex digit in \\u escape");
    }
    *out = v;
    return 0;
}

/* A string at p->i (the opening quote); print != 0 writes it decoded. */
static int string(parser *p, int print) {
    p->i++;
    while (p->i < p->n) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            return 0;
        }
        if (c < 0x20) return fail(p, "control character in a string");
        if (c != '\\') {
            if (print) put_escaped(c);
            p->i++;
            continue;
        }
        if (++p->i >= p->n) break;
        char e = p->s[p->i++];
        unsigned long cp;
        switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = 8; break;
        case 'f': cp = 12; break;
        case 'n': cp = 10; break;
        case 'r': cp = 13; break;
        case 't': cp = 9; break;
        case 'u':
            if (hex4(p, &cp)) return -1;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned long lo;
                if (p->i + 2 > p->n || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
                    return fail(p, "high surrogate without a low one");
                p->i += 2;
                if (hex4(p, &lo)) return -1;
                if (lo < 0xDC00 || lo > 0xDFFF) return fail(p, "bad low surrogate");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail(p, "lone low surrogate");
            }
            break;
        default: return fail(p, "bad escape");
        }
        if (print) put_utf8(cp);
    }
    return fail(p, "unterminated string");
}

static int number(parser *p) {
    size_t b = p->i;
    if (p->s[p->i] == '-') p->i++;
    if (p->i >= p->n) return fail(p, "bad number");
    if (p->s[p->i] == '0') p->i++;
    else if (p->s[p->i] >= '1' && p->s[p->i] <= '9')
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    else return fail(p, "bad number");
    if (p->i < p->n && p->s[p->i] == '.') {
        p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
        if (p->i == d) return fail(p, "no digits after the decimal point");
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
        if (p->i == d) return fail(p, "no digits in the exponent");
    }
    printf("%ld\t%s\t%.*s\n", p->line, p->path, (int)(p->i - b), p->s + b);
    return 0;
}

static int value(parser *p, int depth);

static int container(parser *p, int depth, char close) {
    size_t base = strlen(p->path);
    p->i++;
    ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        printf("%ld\t%s\t%s\n", p->line, p->path, close == ']' ? "[]" : "{}");
        return 0;
    }
    for (long k = 0;; k++) {
        ws(p);
        if (close == '}') {
            if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "expected a key");
            size_t kb = p->i + 1;
            if (string(p, 0)) return -1;
            size_t kl = p->i - 1 - kb;
            if (base + kl + 2 >= sizeof p->path) return fail(p, "path too long");
            p->path[base] = '.';
            memcpy(p->path + base + 1, p->s + kb, kl); /* keys are plain here */
            p->path[base + 1 + kl] = '\0';
            ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') return fail(p, "expected ':'");
            p->i++;
        } else {
            if (base + 24 >= sizeof p->path) return fail(p, "path too long");
            snprintf(p->path + base, sizeof p->path - base, "[%ld]", k);
        }
        if (value(p, depth + 1)) return -1;
        p->path[base] = '\0';
        ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return 0;
        }
        return fail(p, close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
    }
}

static int literal(parser *p, const char *word) {
    size_t k = strlen(word);
    if (p->i + k > p->n || memcmp(p->s + p->i, word, k)) return fail(p, "bad literal");
    p->i += k;
    printf("%ld\t%s\t%s\n", p->line, p->path, word);
    return 0;
}

static int value(parser *p, int depth) {
    if (depth > 64) return fail(p, "nested too deep");
    ws(p);
    if (p->i >= p->n) return fail(p, "expected a value");
    char c = p->s[p->i];
    if (c == '{') return container(p, depth, '}');
    if (c == '[') return container(p, depth, ']');
    if (c == '"') {
        printf("%ld\t%s\t", p->line, p->path);
        if (string(p, 1)) return -1;
        printf("\n");
        return 0;
    }
    if (c == 't') return literal(p, "true");
    if (c == 'f') return literal(p, "false");
    if (c == 'n') return literal(p, "null");
    if (c == '-' || (c >= '0' && c <= '9')) return number(p);
    return fail(p, "expected a value");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: jsonl_flat FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    parser p;
    memset(&p, 0, sizeof p);
    p.file = argv[1];
    char *line = NULL;
    size_t cap = 0;
    long got;
    int rc = 0;
    while (rc == 0 && (got = (long)getline(&line, &cap, f)) >= 0) {
        p.line++;
        p.s = line;
        p.n = (size_t)got;
        if (p.n && line[p.n - 1] == '\n') p.n--;
        p.i = 0;
        p.path[0] = '\0';
        if (value(&p, 0)) rc = 1;
        else {
            ws(&p);
            if (p.i != p.n) rc = (fail(&p, "text after the value"), 1);
        }
    }
    if (ferror(f)) rc = (perror(argv[1]), 1);
    free(line);
    fclose(f);
    return rc;
}
