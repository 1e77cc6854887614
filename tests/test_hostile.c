/*
 * test_hostile.c — hostile files through the loaders users call with paths:
 * attend_st_open, attend_model_load and attend_trainer_resume (issue 7,
 * docs/RELIABILITY.md). One case per kind of attack: too short, cut at every
 * byte, header lengths beyond the file or the limit, headers that are not
 * JSON / not an object / NUL-padded, duplicate names, unknown dtypes,
 * non-string metadata, offsets with gaps, overlaps, end < begin or past the
 * end, shapes whose element count or byte size overflows 64 bits, rank above
 * the limit, tensors that disagree with the configuration, configurations
 * that claim huge sizes, checkpoints with impossible optimizer state, and
 * misaligned data. Each must give a precise error (status and message), never
 * a crash and never an allocation sized by the claim: a child process runs
 * the huge claims under an address-space limit (test_no_huge_allocation).
 * The in-memory parser's exhaustive rejection table is test_safetensors.c's
 * test_st_rejects; this file checks the file-level paths and the model and
 * checkpoint layers above it.
 *
 *   test_hostile                    run the tests
 *   test_hostile --write-corpus DIR write every case (and valid seeds) to
 *                                   DIR/{safetensors,model,checkpoint}/ for the
 *                                   fuzz targets (fuzz/corpus is made so)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"
#include "../fuzz/fuzz_setup.h"

static char g_dir[256];           /* scratch directory */
static const char *g_corpus;      /* --write-corpus DIR, else NULL */

static const char *tmp_path(const char *name) {
    static char buf[4][600];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

/* Removes path first: truncating an existing file makes ext4 flush it on
 * close (auto_da_alloc), which costs milliseconds per file in the loops. */
static int write_bytes(const char *path, const void *p, size_t n) {
    remove(path);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = n == 0 || fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static unsigned char *read_bytes(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(len > 0 ? (size_t)len : 1);
    *n = fread(p, 1, (size_t)len, f);
    fclose(f);
    return p;
}

/* Saves a case for the fuzz target `target` as DIR/target/name (corpus mode). */
static void corpus_save(const char *target, const char *name, const void *p, size_t n) {
    if (!g_corpus) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_corpus, target);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", g_corpus, target, name);
    if (!write_bytes(path, p, n)) fprintf(stderr, "cannot write %s\n", path);
}

/* A safetensors file: 8-byte length field hl (UINT64_MAX: the header's own
 * length), the header, then data_len bytes 0, 1, 2, ... */
static unsigned char *st_bytes(const char *header, size_t h, uint64_t hl, size_t data_len, size_t *len) {
    if (h == SIZE_MAX) h = strlen(header);
    if (hl == UINT64_MAX) hl = h;
    *len = 8 + h + data_len;
    unsigned char *p = malloc(*len);
    for (int k = 0; k < 8; k++) p[k] = (unsigned char)(hl >> (8 * k));
    memcpy(p + 8, header, h);
    for (size_t k = 0; k < data_len; k++) p[8 + h + k] = (unsigned char)k;
    return p;
}

/* Writes bytes to a file, opens it with attend_st_open and expects status
 * `want` with a message holding the path and `msg`. */
static void expect_st(const char *name, const unsigned char *p, size_t len, attend_status want, const char *msg) {
    const char *path = tmp_path(name);
    corpus_save("safetensors", name, p, len);
    EXPECT(write_bytes(path, p, len), "write %s", path);
    attend_st_file *f = (attend_st_file *)(uintptr_t)1;
    attend_error err;
    err.msg[0] = '\0';
    attend_status st = attend_st_open(&f, path, 0, &err);
    printf("  %-28s %s: %s\n", name, attend_status_name(st), err.msg + (strncmp(err.msg, path, strlen(path)) ? 0 : strlen(path)));
    EXPECT(st == want, "%s: %s, want %s (%s)", name, attend_status_name(st), attend_status_name(want), err.msg);
    if (st == ATTEND_OK) {
        attend_st_close(f);
        return;
    }
    EXPECT(f == NULL, "%s: *out not reset", name);
    EXPECT(strncmp(err.msg, path, strlen(path)) == 0, "%s: the message does not start with the path: %s", name, err.msg);
    EXPECT(strstr(err.msg, msg) != NULL, "%s: message '%s' lacks '%s'", name, err.msg, msg);
}

#define ST(name, header, data_len, msg)                                            \
    do {                                                                           \
        size_t len_;                                                               \
        unsigned char *p_ = st_bytes((header), SIZE_MAX, UINT64_MAX, (data_len), &len_); \
        expect_st((name), p_, len_, ATTEND_ERR_FORMAT, (msg));                     \
        free(p_);                                                                  \
    } while (0)

#define T(name, body) "\"" name "\":{" body "}"
#define F32(b, e, dims) "\"dtype\":\"F32\",\"shape\":" dims ",\"data_offsets\":[" #b "," #e "]"

/* ================================================== the safetensors layer */

static void test_short_files(void) {
    static const unsigned char bytes[8] = {2, 0, 0, 0, 0, 0, 0, 0};
    for (size_t n = 0; n < 8; n++) {
        char name[32], msg[64];
        snprintf(name, sizeof name, "short-%zu-bytes.st", n);
        snprintf(msg, sizeof msg, ": %zu bytes, shorter than the 8-byte header length field", n);
        expect_st(name, bytes, n, ATTEND_ERR_FORMAT, msg);
    }
}

static void test_header_lengths(void) {
    size_t len;
    unsigned char *p;
    /* beyond the file: the length field promises more than there is */
    p = st_bytes("{}", SIZE_MAX, 3, 0, &len);
    expect_st("hlen-beyond-file.st", p, len, ATTEND_ERR_FORMAT,
              "header length 3 exceeds the 2 bytes after the length field (file truncated?)");
    free(p);
    p = st_bytes("{}", SIZE_MAX, 99999999, 0, &len);
    expect_st("hlen-99999999-in-10-bytes.st", p, len, ATTEND_ERR_FORMAT, "header length 99999999 exceeds the 2 bytes");
    free(p);
    /* above the sane limit (100 MB), whatever the file holds */
    p = st_bytes("{}", SIZE_MAX, 100000001, 0, &len);
    expect_st("hlen-above-limit.st", p, len, ATTEND_ERR_FORMAT,
              "header length 100000001 exceeds the limit of 100000000 bytes");
    free(p);
    p = st_bytes("{}", SIZE_MAX, UINT64_MAX - 7, 0, &len);
    expect_st("hlen-2^64-8.st", p, len, ATTEND_ERR_FORMAT, "header length 18446744073709551608 exceeds the limit");
    free(p);
    p = st_bytes("{}", SIZE_MAX, (uint64_t)1 << 63, 0, &len);
    expect_st("hlen-2^63.st", p, len, ATTEND_ERR_FORMAT, "exceeds the limit");
    free(p);
    p = st_bytes("{}", SIZE_MAX, 0, 0, &len);
    expect_st("hlen-0.st", p, len, ATTEND_ERR_FORMAT, "header length is 0");
    free(p);
}

static void test_header_not_json(void) {
    ST("header-not-json.st", "this is not JSON", 0, "header JSON: ");
    ST("header-array.st", "[]", 0, "header is a JSON array, not an object");
    ST("header-number.st", "42", 0, "header is a JSON number, not an object");
    ST("header-leading-garbage.st", "x{}", 0, "header JSON: ");
    ST("header-bom.st", "\xEF\xBB\xBF{}", 0, "header JSON: ");
    ST("header-unterminated.st", "{\"a\":{\"dtype\":\"F32\"", 0, "header JSON: ");
    size_t len;
    unsigned char *p = st_bytes("{}\0\0\0\0\0\0", 8, UINT64_MAX, 0, &len);
    expect_st("header-nul-padded.st", p, len, ATTEND_ERR_FORMAT, "header JSON: ");
    free(p);
    p = st_bytes("\0\0\0\0\0\0{}", 8, UINT64_MAX, 0, &len);
    expect_st("header-nul-first.st", p, len, ATTEND_ERR_FORMAT, "header JSON: ");
    free(p);
    ST("header-deep-nesting.st", "{\"__metadata__\":{\"k\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}}", 0,
       "nesting deeper than 16");
}

static void test_names_dtypes_metadata(void) {
    ST("duplicate-name.st", "{" T("w", F32(0, 4, "[1]")) "," T("w", F32(4, 8, "[1]")) "}", 8,
       "duplicate tensor name 'w'");
    ST("duplicate-name-escaped.st", "{" T("w", F32(0, 4, "[1]")) "," T("\\u0077", F32(4, 8, "[1]")) "}", 8,
       "duplicate tensor name 'w'");
    ST("unknown-dtype-bf16.st", "{" T("w", "\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[0,2]") "}", 2,
       "tensor 'w': unknown dtype 'BF16' (known: F32 F64 I32 I64 U8 I8 F16)");
    ST("unknown-dtype-empty.st", "{" T("w", "\"dtype\":\"\",\"shape\":[1],\"data_offsets\":[0,2]") "}", 2,
       "unknown dtype ''");
    ST("dtype-number.st", "{" T("w", "\"dtype\":0,\"shape\":[1],\"data_offsets\":[0,4]") "}", 4,
       "tensor 'w': dtype is a JSON number, not a string");
    ST("metadata-number.st", "{\"__metadata__\":{\"k\":1}}", 0, "__metadata__ value of 'k' is a JSON number, not a string");
    ST("metadata-object.st", "{\"__metadata__\":{\"k\":{}}}", 0, "value of 'k' is a JSON object");
    ST("metadata-array.st", "{\"__metadata__\":[\"k\"]}", 0, "__metadata__ is a JSON array, not an object");
    ST("metadata-nul.st", "{\"__metadata__\":{\"k\":\"a\\u0000\"}}", 0, "contains a NUL byte");
    ST("metadata-twice.st", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "__metadata__ appears twice");
}

static void test_offsets(void) {
    ST("offsets-gap.st", "{" T("a", F32(0, 4, "[1]")) "," T("b", F32(8, 12, "[1]")) "}", 12,
       "gap of 4 bytes before tensor 'b' (data bytes [4, 8) belong to no tensor)");
    ST("offsets-overlap.st", "{" T("a", F32(0, 8, "[2]")) "," T("b", F32(4, 12, "[2]")) "}", 12,
       "tensors 'a' [0, 8) and 'b' [4, 12) overlap");
    ST("offsets-same-range.st", "{" T("a", F32(0, 4, "[1]")) "," T("b", F32(0, 4, "[1]")) "}", 4, "overlap");
    ST("offsets-end-before-begin.st", "{" T("w", "\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,0]") "}", 4,
       "tensor 'w': data_offsets begin 4 > end 0");
    ST("offsets-past-end.st", "{" T("w", F32(0, 8, "[2]")) "}", 4,
       "tensor 'w': data_offsets end 8 is beyond the 4-byte data buffer");
    ST("offsets-past-end-huge.st", "{" T("w", "\"dtype\":\"U8\",\"shape\":[9223372036854775807],"
                                              "\"data_offsets\":[0,9223372036854775807]") "}",
       4, "data_offsets end 9223372036854775807 is beyond the 4-byte data buffer");
    ST("offsets-negative.st", "{" T("w", "\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[-1,0]") "}", 1,
       "data_offsets is not [begin, end] of two non-negative integers");
    ST("offsets-beyond-int64.st", "{" T("w", "\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,18446744073709551616]") "}",
       1, "data_offsets is not [begin, end]");
    ST("offsets-trailing-bytes.st", "{" T("a", F32(0, 4, "[1]")) "}", 8,
       "the last 4 bytes of the 8-byte data buffer belong to no tensor");
    ST("offsets-span-mismatch.st", "{" T("w", F32(0, 20, "[2,3]")) "}", 20,
       "data_offsets span 20 bytes, but shape [2,3] of F32 needs 24");
}

static void test_shape_overflow_and_rank(void) {
    /* the element count overflows 64 bits */
    ST("shape-count-overflow.st", "{" T("w", "\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]") "}",
       0, "tensor 'w': shape [4294967296,4294967296] of U8 overflows a size_t");
    /* the count fits, the byte size does not: 2^62 elements of 8 bytes */
    ST("shape-bytes-overflow.st", "{" T("w", "\"dtype\":\"F64\",\"shape\":[4611686018427387904],\"data_offsets\":[0,0]") "}",
       0, "shape [4611686018427387904] of F64 overflows a size_t");
    /* a product that wraps to exactly the span it claims: 2^33 * 2^31 * 4 = 2^66 -> 0 mod 2^64 */
    ST("shape-wraps-to-zero.st", "{" T("w", "\"dtype\":\"F32\",\"shape\":[8589934592,2147483648],\"data_offsets\":[0,0]") "}",
       0, "overflows a size_t");
    /* a zero dimension after huge ones is still an overflow on the way */
    ST("shape-huge-then-zero.st", "{" T("w", "\"dtype\":\"F32\",\"shape\":[9223372036854775807,4,0],\"data_offsets\":[0,0]") "}",
       0, "overflows a size_t");
    ST("shape-negative.st", "{" T("w", "\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,0]") "}", 0,
       "tensor 'w': shape[0] is not a non-negative integer");
    ST("rank-9.st", "{" T("w", "\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]") "}", 1,
       "tensor 'w': shape has 9 dims, more than 8");
    ST("rank-1000.st",
       "{" T("w", "\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]") "}",
       1, "shape has 64 dims, more than 8");
}

/* Data that is not aligned for its dtype: an odd header length puts the data
 * buffer at an odd file offset, and a 1-byte tensor first shifts the rest.
 * The reader hands out unaligned pointers; every loader copies with memcpy
 * (UBSan's alignment check, on in the sanitizer builds, would report a typed
 * load). */
static void test_misaligned_data(void) {
    const char *h = "{" T("u", "\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]") ","
                    T("d", "\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[1,17]") ","
                    T("f", "\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[17,21]") "} ";
    size_t hl = strlen(h);
    if (hl % 2 == 0) hl--; /* an odd length: drop the trailing space */
    size_t len = 8 + hl + 21;
    unsigned char *p = calloc(1, len);
    for (int k = 0; k < 8; k++) p[k] = (unsigned char)((uint64_t)hl >> (8 * k));
    memcpy(p + 8, h, hl);
    unsigned char *data = p + 8 + hl;
    double dv[2] = {1.5, -2.25};
    float fv = 3.0f;
    data[0] = 7;
    memcpy(data + 1, dv, 16); /* little-endian hosts, as the library's tests assume */
    memcpy(data + 17, &fv, 4);
    expect_st("misaligned-data.st", p, len, ATTEND_OK, "");
    attend_st_file *f = NULL;
    attend_error err;
    const char *path = tmp_path("misaligned-data.st");
    EXPECT(attend_st_open(&f, path, 0, &err) == ATTEND_OK, "%s", err.msg);
    if (f) {
        const attend_st_tensor *d = attend_st_find(f, "d"), *t = attend_st_find(f, "f");
        EXPECT(((uintptr_t)d->data & 7) != 0, "the F64 data is aligned after all (%p)", d->data);
        double got[2];
        float gf;
        memcpy(got, d->data, 16);
        memcpy(&gf, t->data, 4);
        EXPECT(got[0] == 1.5 && got[1] == -2.25 && gf == 3.0f, "values %g %g %g", got[0], got[1], (double)gf);
        attend_st_close(f);
    }
    free(p);
}

/* =============================================================== models */

/* A small model and its vocabulary. */
typedef struct {
    attend_model *m;
    attend_vocab *v;
} small_model;

static int small_make(small_model *s, attend_decoder_kind dec, attend_score_kind score, attend_cell_kind cell) {
    memset(s, 0, sizeof *s);
    attend_error err;
    attend_vocab_create(&s->v, NULL);
    const char *sym[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) attend_vocab_add(s->v, sym[i], 1, NULL, NULL);
    int dot = score == ATTEND_SCORE_DOT || score == ATTEND_SCORE_SCALED_DOT;
    attend_model_config c = {cell, dec, score, 8, 8, 4, 3, 1, dot ? 6 : 5, 4, 4, 6, 6, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    if (attend_model_create(&s->m, &c, 3, &err) != ATTEND_OK) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    return 1;
}

static void small_free(small_model *s) {
    attend_model_free(s->m);
    attend_vocab_free(s->v);
}

/* Writes s's model as a model file, with changes: config JSON replacing the
 * real one (NULL: keep), tensor `reshape` written flat with one element more
 * (NULL: none), an extra tensor `extra` (NULL: none). */
static int write_model_variant(const small_model *s, const char *path, const char *config, const char *reshape,
                               const char *extra) {
    attend_st_entry e[128];
    int n = attend_model_tensor_count(s->m), k = 0;
    float *scratch[128] = {0};
    for (int i = 0; i < n && k < 120; i++) {
        attend_model_tensor t;
        attend_model_tensor_get(s->m, i, &t, NULL);
        memset(&e[k], 0, sizeof e[k]);
        e[k].name = t.name;
        e[k].dtype = ATTEND_DTYPE_F32;
        e[k].ndim = t.ndim;
        e[k].shape[0] = t.shape[0];
        e[k].shape[1] = t.shape[1];
        e[k].data = t.data;
        if (reshape && !strcmp(t.name, reshape)) {
            scratch[k] = calloc(t.numel + 1, sizeof(float));
            memcpy(scratch[k], t.data, t.numel * sizeof(float));
            e[k].ndim = 1;
            e[k].shape[0] = (int64_t)t.numel + 1;
            e[k].shape[1] = 0;
            e[k].data = scratch[k];
        }
        k++;
    }
    static const float one = 1.0f;
    if (extra) {
        memset(&e[k], 0, sizeof e[k]);
        e[k].name = extra;
        e[k].dtype = ATTEND_DTYPE_F32;
        e[k].ndim = 1;
        e[k].shape[0] = 1;
        e[k].data = &one;
        k++;
    }
    char *cfg = NULL, *vj = NULL;
    attend_model_config_to_json(attend_model_get_config(s->m), &cfg, NULL);
    attend_vocab_to_json(s->v, &vj, NULL);
    int pointer = attend_model_get_config(s->m)->decoder == ATTEND_DECODER_POINTER;
    attend_st_meta meta[5] = {{"attend.format", "model"},
                              {"attend.config", config ? config : cfg},
                              {"attend.tokenizer", "char"},
                              {"attend.src_vocab", vj},
                              {"attend.tgt_vocab", pointer ? "[]" : vj}};
    attend_error err;
    attend_status st = attend_st_write(path, e, k, meta, 5, &err);
    EXPECT(st == ATTEND_OK, "%s", err.msg);
    for (int i = 0; i < k; i++) free(scratch[i]);
    free(cfg);
    free(vj);
    return st == ATTEND_OK;
}

/* Loads path as a model and expects status want with msg in the message
 * (which must name the file); saves the file to the model corpus. */
static void expect_model(const char *name, const char *path, attend_status want, const char *msg) {
    size_t len;
    unsigned char *p = read_bytes(path, &len);
    if (p) corpus_save("model", name, p, len);
    free(p);
    attend_model *m = (attend_model *)(uintptr_t)1;
    attend_vocab *sv = (attend_vocab *)(uintptr_t)1, *tv = (attend_vocab *)(uintptr_t)1;
    attend_error err;
    err.msg[0] = '\0';
    attend_status st = attend_model_load(&m, path, NULL, &sv, &tv, NULL, &err);
    printf("  %-28s %s: %s\n", name, attend_status_name(st), err.msg);
    EXPECT(st == want, "%s: %s, want %s (%s)", name, attend_status_name(st), attend_status_name(want), err.msg);
    if (st == ATTEND_OK) {
        attend_model_free(m);
        attend_vocab_free(sv);
        attend_vocab_free(tv);
        return;
    }
    EXPECT(m == NULL && sv == NULL && tv == NULL, "%s: something was returned from a refused file", name);
    EXPECT(strstr(err.msg, path) != NULL, "%s: the message does not name the file: %s", name, err.msg);
    EXPECT(strstr(err.msg, msg) != NULL, "%s: message '%s' lacks '%s'", name, err.msg, msg);
}

#define CFG(vocab, emb, hid, dec, batch, src, tgt)                                                        \
    "{\"cell\":\"gru\",\"decoder\":\"bahdanau\",\"score\":\"additive\",\"src_vocab\":" #vocab            \
    ",\"tgt_vocab\":" #vocab ",\"emb\":" #emb ",\"enc_hidden\":" #hid ",\"enc_layers\":1,\"dec_hidden\":" #dec \
    ",\"attn\":4,\"max_batch\":" #batch ",\"max_src_len\":" #src ",\"max_tgt_len\":" #tgt "}"

/* the same with "dec_layers":2 (a two-layer decoder) */
#define CFG_DL2(vocab, emb, hid, dec, batch, src, tgt)                                                    \
    "{\"cell\":\"gru\",\"decoder\":\"bahdanau\",\"score\":\"additive\",\"src_vocab\":" #vocab            \
    ",\"tgt_vocab\":" #vocab ",\"emb\":" #emb ",\"enc_hidden\":" #hid ",\"enc_layers\":1,\"dec_hidden\":" #dec \
    ",\"attn\":4,\"max_batch\":" #batch ",\"max_src_len\":" #src ",\"max_tgt_len\":" #tgt ",\"dec_layers\":2}"

static void test_model_files(void) {
    small_model s;
    if (!small_make(&s, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, ATTEND_CELL_GRU)) return;
    const char *p = tmp_path("model.safetensors");
    /* valid seeds for the model corpus: every decoder, both cells */
    struct {
        const char *name;
        attend_decoder_kind dec;
        attend_score_kind score;
        attend_cell_kind cell;
    } seeds[] = {{"valid-bahdanau-additive-gru.st", ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, ATTEND_CELL_GRU},
                 {"valid-luong-general-lstm.st", ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, ATTEND_CELL_LSTM},
                 {"valid-luong-dot-gru.st", ATTEND_DECODER_LUONG, ATTEND_SCORE_DOT, ATTEND_CELL_GRU},
                 {"valid-none-gru.st", ATTEND_DECODER_NONE, ATTEND_SCORE_ADDITIVE, ATTEND_CELL_GRU},
                 {"valid-pointer-scaled-lstm.st", ATTEND_DECODER_POINTER, ATTEND_SCORE_SCALED_DOT, ATTEND_CELL_LSTM}};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        small_model t;
        if (!small_make(&t, seeds[i].dec, seeds[i].score, seeds[i].cell)) continue;
        attend_error err;
        EXPECT(attend_model_save(t.m, p, t.v, seeds[i].dec == ATTEND_DECODER_POINTER ? NULL : t.v,
                                 ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK,
               "%s", err.msg);
        expect_model(seeds[i].name, p, ATTEND_OK, "");
        small_free(&t);
    }

    /* a tensor whose shape disagrees with the configuration */
    write_model_variant(&s, p, NULL, "bridge.weight", NULL);
    expect_model("shape-vs-config.st", p, ATTEND_ERR_FORMAT, "tensor 'bridge.weight' has shape [31], expected [5,6]");
    /* a configuration that does not match the tensors (another width) */
    write_model_variant(&s, p, CFG(8, 4, 3, 7, 4, 6, 6), NULL, NULL);
    expect_model("config-vs-tensors.st", p, ATTEND_ERR_FORMAT, "tensor 'bridge.weight' has shape [5,6], expected [7,6]");
    /* a tensor the configuration has no place for */
    write_model_variant(&s, p, NULL, NULL, "encoder.weight_ih_l1");
    expect_model("unexpected-tensor.st", p, ATTEND_ERR_FORMAT, "unexpected tensor 'encoder.weight_ih_l1'");
    /* a stacked decoder (dec_layers): the configuration claims a second layer
     * the file lacks; the file has one the configuration does not */
    write_model_variant(&s, p, CFG_DL2(8, 4, 3, 5, 4, 6, 6), NULL, NULL);
    expect_model("dec-layers-missing.st", p, ATTEND_ERR_FORMAT, "tensor 'decoder.weight_ih_l1' is missing");
    write_model_variant(&s, p, NULL, NULL, "decoder.weight_hh_l1");
    expect_model("dec-layers-unexpected.st", p, ATTEND_ERR_FORMAT, "unexpected tensor 'decoder.weight_hh_l1'");
    /* configurations claiming huge sizes, in a file of a few kilobytes: refused
     * from the sizes before anything that large is allocated */
    write_model_variant(&s, p, CFG(10000000, 65536, 3, 5, 4, 6, 6), NULL, NULL);
    expect_model("config-huge-embedding.st", p, ATTEND_ERR_FORMAT, "needs at least");
    write_model_variant(&s, p, CFG(8, 4, 32768, 5, 4, 6, 6), NULL, NULL);
    expect_model("config-huge-hidden.st", p, ATTEND_ERR_FORMAT, "needs at least");
    write_model_variant(&s, p, CFG(8, 4, 3, 5, 1048576, 65536, 65536), NULL, NULL);
    expect_model("config-huge-capacity.st", p, ATTEND_ERR_CAPACITY, "capacities");
    /* metadata that is not what it should be */
    write_model_variant(&s, p, "{\"cell\":\"gru\"", NULL, NULL);
    expect_model("config-not-json.st", p, ATTEND_ERR_FORMAT, "metadata attend.config: ");
    write_model_variant(&s, p, "[1,2]", NULL, NULL);
    expect_model("config-array.st", p, ATTEND_ERR_FORMAT, "not a JSON object");
    write_model_variant(&s, p, CFG(8, 4, 3, 5, 0, 6, 6), NULL, NULL);
    expect_model("config-zero-batch.st", p, ATTEND_ERR_FORMAT, "max_batch=0");

    /* the same model with data at odd offsets: pad the header by 1..7 bytes */
    attend_error err;
    EXPECT(attend_model_save(s.m, p, s.v, s.v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    size_t len;
    unsigned char *good = read_bytes(p, &len);
    uint64_t hl = 0;
    for (int k = 7; k >= 0; k--) hl = hl << 8 | good[k];
    for (int pad = 1; pad < 8; pad += 2) {
        unsigned char *q = malloc(len + (size_t)pad);
        uint64_t h2 = hl + (uint64_t)pad;
        for (int k = 0; k < 8; k++) q[k] = (unsigned char)(h2 >> (8 * k));
        memcpy(q + 8, good + 8, hl);
        memset(q + 8 + hl, ' ', (size_t)pad);
        memcpy(q + 8 + h2, good + 8 + hl, len - 8 - hl);
        const char *qp = tmp_path("misaligned.safetensors");
        write_bytes(qp, q, len + (size_t)pad);
        attend_model *m = NULL;
        EXPECT(attend_model_load(&m, qp, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "pad %d: %s", pad, err.msg);
        if (m) {
            size_t n = attend_model_param_count(m);
            EXPECT(n == attend_model_param_count(s.m) &&
                       !memcmp(attend_model_params(m), attend_model_params(s.m), n * sizeof(attend_real)),
                   "pad %d: other weights", pad);
            attend_model_free(m);
        }
        if (pad == 1) corpus_save("model", "misaligned-data.st", q, len + 1);
        free(q);
    }
    free(good);
    small_free(&s);
}

/* The copy tensors (copy.w_c, copy.w_s, copy.w_x, copy.b): missing, misshapen,
 * or present in a model without copy. */
static void test_copy_tensors(void) {
    small_model s, plain;
    if (!small_make(&plain, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, ATTEND_CELL_GRU)) return;
    if (!small_make(&s, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, ATTEND_CELL_GRU)) {
        small_free(&plain);
        return;
    }
    attend_model_free(s.m);
    s.m = NULL;
    attend_model_config c = *attend_model_get_config(plain.m);
    c.copy = 1;
    attend_error err;
    EXPECT(attend_model_create(&s.m, &c, 3, &err) == ATTEND_OK, "%s", err.msg);
    if (!s.m) {
        small_free(&plain);
        small_free(&s);
        return;
    }
    const char *p = tmp_path("copy.safetensors");
    EXPECT(attend_model_save(s.m, p, s.v, s.v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    expect_model("valid-bahdanau-copy.st", p, ATTEND_OK, "");
    write_model_variant(&s, p, NULL, "copy.w_s", NULL);
    expect_model("copy-misshapen.st", p, ATTEND_ERR_FORMAT, "tensor 'copy.w_s' has shape [6], expected [5]");
    char *cj = NULL;
    attend_model_config_to_json(&c, &cj, NULL);
    write_model_variant(&plain, p, cj, NULL, NULL); /* a copy config over a model without the tensors */
    expect_model("copy-missing.st", p, ATTEND_ERR_FORMAT, "copy.w_c");
    free(cj);
    write_model_variant(&plain, p, NULL, NULL, "copy.b"); /* copy tensors in a model without copy */
    expect_model("copy-unexpected.st", p, ATTEND_ERR_FORMAT, "unexpected tensor 'copy.b'");
    small_free(&plain);
    small_free(&s);
}

/* Every prefix of a valid model file, one byte at a time, is refused cleanly. */
/* Coverage's tensor attention.w_cov [A] (issue 13): wrong shape, wrong
 * dtype, missing (a config with coverage over tensors without it), extra (a
 * config without coverage over tensors with it) are refused naming it. */
static void test_coverage_tensor(void) {
    small_model c, s;
    if (!small_make(&s, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, ATTEND_CELL_GRU)) return;
    memset(&c, 0, sizeof c);
    attend_error err;
    attend_model_config cc = *attend_model_get_config(s.m);
    cc.coverage = 1;
    attend_vocab_create(&c.v, NULL);
    const char *sym[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) attend_vocab_add(c.v, sym[i], 1, NULL, NULL);
    EXPECT(attend_model_create(&c.m, &cc, 3, &err) == ATTEND_OK, "%s", err.msg);
    if (!c.m) {
        small_free(&s);
        attend_vocab_free(c.v);
        return;
    }
    const char *p = tmp_path("coverage.safetensors");
    EXPECT(attend_model_save(c.m, p, c.v, c.v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    expect_model("valid-bahdanau-coverage.st", p, ATTEND_OK, "");
    write_model_variant(&c, p, NULL, "attention.w_cov", NULL);
    expect_model("coverage-shape.st", p, ATTEND_ERR_FORMAT, "tensor 'attention.w_cov' has shape [5], expected [4]");
    char *cov_cfg = NULL;
    attend_model_config_to_json(&cc, &cov_cfg, NULL);
    write_model_variant(&s, p, cov_cfg, NULL, NULL);
    expect_model("coverage-missing.st", p, ATTEND_ERR_FORMAT, "tensor 'attention.w_cov' is missing");
    write_model_variant(&s, p, NULL, NULL, "attention.w_cov");
    expect_model("coverage-extra.st", p, ATTEND_ERR_FORMAT, "unexpected tensor 'attention.w_cov'");
    /* w_cov stored as F64 */
    attend_st_entry e[64];
    double w64[4] = {0.5, -0.5, 0.25, 1};
    int n = attend_model_tensor_count(c.m), k = 0;
    for (int i = 0; i < n && k < 64; i++, k++) {
        attend_model_tensor t;
        attend_model_tensor_get(c.m, i, &t, NULL);
        memset(&e[k], 0, sizeof e[k]);
        e[k].name = t.name;
        e[k].dtype = strcmp(t.name, "attention.w_cov") ? ATTEND_DTYPE_F32 : ATTEND_DTYPE_F64;
        e[k].ndim = t.ndim;
        e[k].shape[0] = t.shape[0];
        e[k].shape[1] = t.shape[1];
        e[k].data = e[k].dtype == ATTEND_DTYPE_F64 ? (const void *)w64 : (const void *)t.data;
    }
    char *vj = NULL;
    attend_vocab_to_json(c.v, &vj, NULL);
    attend_st_meta meta[5] = {{"attend.format", "model"}, {"attend.config", cov_cfg}, {"attend.tokenizer", "char"},
                              {"attend.src_vocab", vj}, {"attend.tgt_vocab", vj}};
    EXPECT(attend_st_write(p, e, k, meta, 5, &err) == ATTEND_OK, "%s", err.msg);
    expect_model("coverage-dtype.st", p, ATTEND_ERR_FORMAT, "tensor 'attention.w_cov' has dtype F64, expected F32");
    free(vj);
    free(cov_cfg);
    small_free(&c);
    small_free(&s);
}

static void test_model_truncated_everywhere(void) {
    small_model s;
    if (!small_make(&s, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, ATTEND_CELL_LSTM)) return;
    const char *p = tmp_path("whole.safetensors"), *q = tmp_path("cut.safetensors");
    attend_error err;
    EXPECT(attend_model_save(s.m, p, s.v, s.v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    size_t len;
    unsigned char *bytes = read_bytes(p, &len);
    int refused = 0, bad_msg = 0;
    for (size_t cut = 0; cut < len; cut++) {
        write_bytes(q, bytes, cut);
        attend_model *m = NULL;
        attend_status st = attend_model_load(&m, q, NULL, NULL, NULL, NULL, &err);
        if (st == ATTEND_ERR_FORMAT && m == NULL) refused++;
        else attend_model_free(m);
        if (!strstr(err.msg, q)) bad_msg++;
    }
    printf("  %zu of %zu prefixes refused with ATTEND_ERR_FORMAT, %d messages without the path\n", (size_t)refused, len,
           bad_msg);
    EXPECT((size_t)refused == len && bad_msg == 0, "a prefix was accepted or badly reported");
    free(bytes);
    small_free(&s);
}

/* ========================================================== checkpoints */

/* The fuzz setup (fuzz/fuzz_setup.h) trained a few steps and saved. */
static int make_checkpoint(fuzz_setup *fs, attend_trainer **tr, const char *path, int steps) {
    attend_error err;
    if (fuzz_setup_make(fs, &err) || fuzz_setup_trainer(fs, tr, &err)) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    for (int i = 0; i < steps; i++) attend_trainer_step(*tr, NULL, &err);
    EXPECT(attend_trainer_save(*tr, path, fs->vocab, fs->vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s",
           err.msg);
    return 1;
}

/* Rewrites checkpoint src to dst with tensor `name` replaced by data [nbytes]
 * (same dtype and length) or metadata key `key` set to value. */
static void rewrite_checkpoint(const char *src, const char *dst, const char *name, const void *data, const char *key,
                               const char *value) {
    attend_st_file *f = NULL;
    attend_error err;
    if (attend_st_open(&f, src, 0, &err)) {
        EXPECT(0, "%s", err.msg);
        return;
    }
    int n = attend_st_count(f);
    attend_st_entry *e = calloc((size_t)n, sizeof *e);
    for (int i = 0; i < n; i++) {
        const attend_st_tensor *t = attend_st_get(f, i);
        e[i].name = t->name;
        e[i].dtype = t->dtype;
        e[i].ndim = t->ndim;
        memcpy(e[i].shape, t->shape, sizeof t->shape);
        e[i].data = name && !strcmp(t->name, name) ? data : t->data;
    }
    const char *keys[] = {"attend.format", "attend.config", "attend.tokenizer", "attend.src_vocab", "attend.tgt_vocab",
                          "attend.train"};
    attend_st_meta meta[6];
    for (int i = 0; i < 6; i++) {
        meta[i].key = keys[i];
        meta[i].value = key && !strcmp(key, keys[i]) ? value : attend_st_metadata(f, keys[i]);
    }
    EXPECT(attend_st_write(dst, e, n, meta, 6, &err) == ATTEND_OK, "%s", err.msg);
    free(e);
    attend_st_close(f);
}

/* Resumes a fresh trainer of the fuzz setup from path; expects want and msg;
 * a refusal must leave the weights and the step count alone. */
static void expect_resume(const char *name, const char *path, attend_status want, const char *msg) {
    size_t len;
    unsigned char *p = read_bytes(path, &len);
    if (p) corpus_save("checkpoint", name, p, len);
    free(p);
    fuzz_setup fs;
    attend_trainer *tr = NULL;
    attend_error err;
    if (fuzz_setup_make(&fs, &err) || fuzz_setup_trainer(&fs, &tr, &err)) {
        EXPECT(0, "%s", err.msg);
        return;
    }
    size_t n = attend_model_param_count(fs.model);
    attend_real *before = malloc(n * sizeof *before);
    memcpy(before, attend_model_params(fs.model), n * sizeof *before);
    err.msg[0] = '\0';
    attend_status st = attend_trainer_resume(tr, path, &err);
    printf("  %-28s %s: %s\n", name, attend_status_name(st), err.msg);
    EXPECT(st == want, "%s: %s, want %s (%s)", name, attend_status_name(st), attend_status_name(want), err.msg);
    if (st != ATTEND_OK) {
        EXPECT(strstr(err.msg, path) != NULL, "%s: the message does not name the file: %s", name, err.msg);
        EXPECT(strstr(err.msg, msg) != NULL, "%s: message '%s' lacks '%s'", name, err.msg, msg);
        EXPECT(!memcmp(before, attend_model_params(fs.model), n * sizeof *before), "%s: weights changed", name);
        EXPECT(attend_trainer_steps(tr) == 0, "%s: step changed", name);
    }
    free(before);
    attend_trainer_free(tr);
    fuzz_setup_free(&fs);
}

/* json with the value of "key" (a number or string, up to the next ',' or
 * '}') replaced by value, or the key removed when value is NULL; malloc'ed. */
static char *json_set(const char *json, const char *key, const char *value) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(json, pat);
    if (!at) return NULL;
    const char *v = at + strlen(pat), *end = v + strcspn(v, ",}");
    size_t n = strlen(json) + (value ? strlen(value) : 0) + 1;
    char *out = malloc(n);
    if (value) snprintf(out, n, "%.*s%s%s", (int)(v - json), json, value, end);
    else if (*end == ',') snprintf(out, n, "%.*s%s", (int)(at - json), json, end + 1);
    else snprintf(out, n, "%.*s%s", (int)(at - json - 1), json, end); /* the last member: drop the comma before */
    return out;
}

/* Checkpoint fingerprints (docs/FORMAT.md): another data hash or option is
 * refused naming it; a checkpoint without the fields (an older writer) resumes. */
static void test_checkpoint_fingerprints(const char *ck, const char *bad) {
    attend_st_file *f = NULL;
    attend_error err;
    if (attend_st_open(&f, ck, 0, &err)) {
        EXPECT(0, "%s", err.msg);
        return;
    }
    const char *tj = attend_st_metadata(f, "attend.train");
    struct {
        const char *file, *key, *value;
        attend_status want;
        const char *msg;
    } cases[] = {
        {"fingerprint-other-data.st", "data_fnv1a64", "\"0123456789abcdef\"", ATTEND_ERR_ARG,
         "training data hash is 0123456789abcdef"},
        {"fingerprint-data-not-string.st", "data_fnv1a64", "17", ATTEND_ERR_FORMAT, "data_fnv1a64 is not a string"},
        {"fingerprint-other-lr.st", "lr", "0.5", ATTEND_ERR_ARG, "lr is 0.5, in this run 0.01"},
        {"fingerprint-other-seed.st", "seed", "8", ATTEND_ERR_ARG, "seed is 8, in this run 7"},
        {"fingerprint-seed-huge.st", "seed", "1e300", ATTEND_ERR_ARG, "seed is 1e+300, in this run 7"},
        {"fingerprint-seed-string.st", "seed", "\"7\"", ATTEND_ERR_FORMAT, "seed is not a number"},
        {"fingerprint-other-eps.st", "eps", "1", ATTEND_ERR_ARG, "eps is 1, in this run"},
        {"fingerprint-lr-string.st", "lr", "\"x\"", ATTEND_ERR_FORMAT, "lr is not a number"},
        {"fingerprint-missing-data.st", "data_fnv1a64", NULL, ATTEND_OK, ""},
    };
    for (size_t i = 0; tj && i < sizeof cases / sizeof cases[0]; i++) {
        char *j = json_set(tj, cases[i].key, cases[i].value);
        EXPECT(j != NULL, "attend.train has no %s: %s", cases[i].key, tj);
        if (!j) continue;
        rewrite_checkpoint(ck, bad, NULL, NULL, "attend.train", j);
        expect_resume(cases[i].file, bad, cases[i].want, cases[i].msg);
        free(j);
    }
    attend_st_close(f);
}

static void test_checkpoints(void) {
    fuzz_setup fs;
    attend_trainer *tr = NULL;
    const char *ck = tmp_path("ck.safetensors"), *bad = tmp_path("bad.safetensors");
    if (!make_checkpoint(&fs, &tr, ck, 5)) return;
    expect_resume("valid-step5.st", ck, ATTEND_OK, "");
    attend_error err;
    const char *ck0 = tmp_path("ck0.safetensors");
    EXPECT(attend_trainer_save(tr, ck0, fs.vocab, fs.vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    for (int i = 0; i < 9; i++) attend_trainer_step(tr, NULL, &err); /* into the second epoch */
    const char *ck14 = tmp_path("ck14.safetensors");
    EXPECT(attend_trainer_save(tr, ck14, fs.vocab, fs.vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    expect_resume("valid-step14.st", ck14, ATTEND_OK, "");

    attend_st_file *f = NULL;
    attend_st_open(&f, ck, 0, &err);
    const attend_st_tensor *ts = attend_st_find(f, "optim.state"), *to = attend_st_find(f, "optim.order"),
                           *tm = attend_st_find(f, "optim.moments");
    int64_t state[8];
    memcpy(state, ts->data, sizeof state);
    int n = (int)to->shape[0];
    int32_t *order = malloc((size_t)n * sizeof *order);
    size_t nm = (size_t)tm->shape[0];
    float *moments = malloc(nm * sizeof *moments);
    memcpy(order, to->data, (size_t)n * sizeof *order);
    memcpy(moments, tm->data, nm * sizeof *moments);
    attend_st_close(f);

    int64_t s2[8];
    struct {
        const char *name;
        int field;
        int64_t value;
    } states[] = {{"state-negative-steps.st", 0, -1},      {"state-huge-steps.st", 0, INT64_MAX},
                  {"state-huge-skipped.st", 1, INT64_MAX}, {"state-epoch-0.st", 2, 0},
                  {"state-epoch-2^40.st", 2, (int64_t)1 << 40}, {"state-epoch-int-max.st", 2, 2147483647},
                  {"state-pos-past-end.st", 3, 13},
                  {"state-rng-zero.st", -1, 0}};
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        memcpy(s2, state, sizeof s2);
        if (states[i].field >= 0) s2[states[i].field] = states[i].value;
        else memset(s2 + 4, 0, 4 * sizeof *s2);
        rewrite_checkpoint(ck, bad, "optim.state", s2, NULL, NULL);
        expect_resume(states[i].name, bad, ATTEND_ERR_FORMAT, "'optim.state'");
    }
    int32_t o2 = order[1];
    order[1] = order[0];
    rewrite_checkpoint(ck, bad, "optim.order", order, NULL, NULL);
    expect_resume("order-repeated.st", bad, ATTEND_ERR_FORMAT, "'optim.order' is not a permutation");
    order[1] = 12;
    rewrite_checkpoint(ck, bad, "optim.order", order, NULL, NULL);
    expect_resume("order-out-of-range.st", bad, ATTEND_ERR_FORMAT, "'optim.order' is not a permutation");
    order[1] = o2;
    moments[3] = NAN;
    rewrite_checkpoint(ck, bad, "optim.moments", moments, NULL, NULL);
    expect_resume("moments-nan.st", bad, ATTEND_ERR_FORMAT, "'optim.moments' element 3 is not finite");
    moments[3] = -INFINITY;
    rewrite_checkpoint(ck, bad, "optim.moments", moments, NULL, NULL);
    expect_resume("moments-inf.st", bad, ATTEND_ERR_FORMAT, "not finite");
    rewrite_checkpoint(ck, bad, NULL, NULL, "attend.train", "{\"optimizer\":\"adam\"}");
    expect_resume("train-meta-incomplete.st", bad, ATTEND_ERR_FORMAT, "attend.train");
    rewrite_checkpoint(ck, bad, NULL, NULL, "attend.train", "not json");
    expect_resume("train-meta-not-json.st", bad, ATTEND_ERR_FORMAT, "attend.train");
    rewrite_checkpoint(ck, bad, NULL, NULL, "attend.train",
                       "{\"optimizer\":\"adam\",\"batch_size\":4,\"data_size\":99999999999}");
    expect_resume("train-meta-other-data.st", bad, ATTEND_ERR_ARG, "pairs");
    rewrite_checkpoint(ck, bad, NULL, NULL, "attend.format", "model");
    expect_resume("format-model.st", bad, ATTEND_ERR_FORMAT, "not a checkpoint");
    test_checkpoint_fingerprints(ck, bad);

    /* every prefix of the checkpoint is refused, nothing changes */
    size_t len;
    unsigned char *bytes = read_bytes(ck, &len);
    int refused = 0;
    fuzz_setup fs2;
    attend_trainer *tr2 = NULL;
    fuzz_setup_make(&fs2, &err);
    fuzz_setup_trainer(&fs2, &tr2, &err);
    for (size_t cut = 0; cut < len; cut++) {
        write_bytes(bad, bytes, cut);
        refused += attend_trainer_resume(tr2, bad, &err) == ATTEND_ERR_FORMAT && attend_trainer_steps(tr2) == 0 &&
                   strstr(err.msg, bad) != NULL;
    }
    printf("  %d of %zu checkpoint prefixes refused\n", refused, len);
    EXPECT((size_t)refused == len, "a prefix of a checkpoint was accepted");
    attend_trainer_free(tr2);
    fuzz_setup_free(&fs2);
    free(bytes);
    free(order);
    free(moments);
    attend_trainer_free(tr);
    fuzz_setup_free(&fs);
}

/* =============================================== no allocation by claim */

/* Virtual memory in use now, in bytes (Linux /proc/self/statm). */
static size_t vm_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* In a child process whose address space is capped 64 MiB above what it uses,
 * files that claim gigabytes (a 99,999,999-byte header, a 2^61-byte tensor, a
 * model configuration with billions of parameters or activations) must be
 * refused with FORMAT/CAPACITY, not ALLOC: the loader never tried to allocate
 * what the file claims. Sanitizer builds reserve terabytes of shadow memory,
 * so there the limit cannot be set; the same cases run with their statuses. */
static void test_no_huge_allocation(void) {
    small_model s;
    if (!small_make(&s, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, ATTEND_CELL_GRU)) return;
    const char *files[6] = {tmp_path("claim-header.st"), tmp_path("claim-tensor.st"), tmp_path("claim-params.st"),
                            tmp_path("claim-acts.st")};
    size_t len;
    unsigned char *p = st_bytes("{}", SIZE_MAX, 99999999, 0, &len);
    write_bytes(files[0], p, len);
    free(p);
    p = st_bytes("{" T("w", "\"dtype\":\"U8\",\"shape\":[2305843009213693952],\"data_offsets\":[0,2305843009213693952]") "}",
                 SIZE_MAX, UINT64_MAX, 4, &len);
    write_bytes(files[1], p, len);
    free(p);
    write_model_variant(&s, files[2], CFG(10000000, 65536, 32768, 65536, 4, 6, 6), NULL, NULL);
    write_model_variant(&s, files[3], CFG(8, 4, 3, 5, 1048576, 65536, 65536), NULL, NULL);
    small_free(&s);
#ifdef ATTEND_TEST_SANITIZED
    int limited = 0;
#else
    int limited = 1;
#endif
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (limited) {
            struct rlimit rl;
            getrlimit(RLIMIT_AS, &rl);
            rl.rlim_cur = vm_bytes() + ((rlim_t)64 << 20);
            if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(90);
        }
        int bad = 0;
        attend_error err;
        attend_st_file *f = NULL;
        attend_model *m = NULL;
        attend_status st;
        for (int i = 0; i < 2; i++) {
            st = attend_st_open(&f, files[i], 0, &err);
            printf("  %s: %s\n", attend_status_name(st), err.msg);
            bad += st != ATTEND_ERR_FORMAT;
        }
        st = attend_model_load(&m, files[2], NULL, NULL, NULL, NULL, &err);
        printf("  %s: %s\n", attend_status_name(st), err.msg);
        bad += st != ATTEND_ERR_FORMAT;
        st = attend_model_load(&m, files[3], NULL, NULL, NULL, NULL, &err);
        printf("  %s: %s\n", attend_status_name(st), err.msg);
        bad += st != ATTEND_ERR_CAPACITY;
        /* the caller's capacities replace the file's: then it loads */
        attend_model_config cap = {0};
        cap.max_batch = 2;
        cap.max_src_len = 4;
        cap.max_tgt_len = 4;
        st = attend_model_load(&m, files[3], &cap, NULL, NULL, NULL, &err);
        printf("  with capacities 2/4/4: %s %s\n", attend_status_name(st), err.msg);
        bad += st != ATTEND_OK;
        attend_model_free(m);
        fflush(stdout);
        _exit(bad);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %s %d",
           WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    printf("  address space %s\n", limited ? "capped at +64 MiB" : "not capped (sanitizer build)");
}

/* ================================================================ main */

static void write_valid_st_seeds(void) {
    attend_st_entry e[3];
    static const float fv[2] = {1.0f, -2.0f};
    static const uint8_t u = 7;
    static const int64_t iv[3] = {1, -1, 1LL << 40};
    memset(e, 0, sizeof e);
    e[0].name = "a";
    e[0].dtype = ATTEND_DTYPE_F32;
    e[0].ndim = 1;
    e[0].shape[0] = 2;
    e[0].data = fv;
    e[1].name = "b";
    e[1].dtype = ATTEND_DTYPE_U8;
    e[1].data = &u;
    e[2].name = "c.weight";
    e[2].dtype = ATTEND_DTYPE_I64;
    e[2].ndim = 2;
    e[2].shape[0] = 1;
    e[2].shape[1] = 3;
    e[2].data = iv;
    attend_st_meta meta[1] = {{"k", "v\"1"}};
    const char *p = tmp_path("seed.st");
    attend_st_write(p, e, 3, meta, 1, NULL);
    size_t len;
    unsigned char *b = read_bytes(p, &len);
    corpus_save("safetensors", "valid-three-dtypes.st", b, len);
    free(b);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--write-corpus")) g_corpus = argv[2];
    else if (argc != 1) {
        fprintf(stderr, "usage: test_hostile [--write-corpus DIR]\n");
        return 2;
    }
    /* thousands of small files: a RAM file system when there is one (on a busy
     * disk the same loops take seconds instead of milliseconds) */
    const char *t = getenv("TMPDIR");
    if (!t || !*t) t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/attend-test-hostile-XXXXXX", t);
    if (!mkdtemp(g_dir)) return 1;
    if (g_corpus) write_valid_st_seeds();
    RUN(test_short_files);
    RUN(test_header_lengths);
    RUN(test_header_not_json);
    RUN(test_names_dtypes_metadata);
    RUN(test_offsets);
    RUN(test_shape_overflow_and_rank);
    RUN(test_misaligned_data);
    RUN(test_model_files);
    RUN(test_coverage_tensor);
    RUN(test_copy_tensors);
    RUN(test_model_truncated_everywhere);
    RUN(test_checkpoints);
    RUN(test_no_huge_allocation);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return harness_summary();
}
