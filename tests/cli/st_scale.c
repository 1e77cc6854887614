/*
 * st_scale.c — test helper: multiplies the F32 tensor NAME of a safetensors
 * file by FACTOR, in place (header and every other byte unchanged).
 *
 *     st_scale FILE NAME FACTOR
 *
 * tests/cli/cli_test.sh (case nonfinite) scales a checkpoint's output layer
 * by 1e35, a run that diverged without yet overflowing: still finite, so
 * the loader accepts it, and resuming from it overflows the logits, the
 * non-finite steps the trainer must skip and count. The tensor's bytes are
 * located in the file by content (the library's reader owns its copy).
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <attend.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: st_scale FILE NAME FACTOR\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "st_scale: cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    attend_error err;
    attend_st_file *st;
    if (attend_st_parse(&st, buf, (size_t)len, argv[1], &err) != ATTEND_OK) {
        fprintf(stderr, "st_scale: %s\n", err.msg);
        return 1;
    }
    const attend_st_tensor *t = attend_st_find(st, argv[2]);
    if (!t || t->dtype != ATTEND_DTYPE_F32 || t->nbytes == 0) {
        fprintf(stderr, "st_scale: %s: no non-empty F32 tensor %s\n", argv[1], argv[2]);
        return 1;
    }
    unsigned char *at = memmem(buf, (size_t)len, t->data, t->nbytes);
    if (!at || memmem(at + 1, (size_t)len - (size_t)(at + 1 - buf), t->data, t->nbytes)) {
        fprintf(stderr, "st_scale: %s: the bytes of %s are not unique in the file\n", argv[1], argv[2]);
        return 1;
    }
    float factor = strtof(argv[3], NULL);
    for (size_t i = 0; i < t->nbytes / sizeof(float); i++) {
        float v;
        memcpy(&v, at + i * sizeof v, sizeof v);
        v *= factor;
        memcpy(at + i * sizeof v, &v, sizeof v);
    }
    attend_st_close(st);
    f = fopen(argv[1], "wb");
    if (!f || fwrite(buf, 1, (size_t)len, f) != (size_t)len || fclose(f) != 0) {
        fprintf(stderr, "st_scale: cannot write %s\n", argv[1]);
        return 1;
    }
    free(buf);
    return 0;
}
