/*
 * regress.c — replays files through a fuzz target's LLVMFuzzerTestOneInput
 * without libFuzzer, so a plain build (gcc, any sanitizer or none, valgrind)
 * checks every committed corpus file on every test run.
 *
 *   fuzz_regress_<name> PATH...   (a PATH that is a directory: every file in it)
 *
 * Prints one line per directory and "N passed, 0 failed" at the end; a broken
 * invariant aborts (FUZZ_CHECK), a sanitizer report exits non-zero.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "regress: cannot open %s\n", path);
        return 0;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (n == cap) buf = realloc(buf, cap *= 2);
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    /* an exact-size copy, so reads past the input are caught by the sanitizers */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    fprintf(stderr, "  %s (%zu bytes)\n", path, n); /* names the input if it crashes */
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 1;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    int total = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "regress: %s does not exist\n", argv[i]);
            bad++;
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            total += replay_file(argv[i]);
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            bad++;
            continue;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            if (n == cap) names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
            names[n++] = strdup(e->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, cmp_names); /* the same order every run */
        int here = 0;
        for (size_t k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[k]);
            here += replay_file(path);
            free(names[k]);
        }
        free(names);
        printf("%s: %d files replayed\n", argv[i], here);
        total += here;
        if (here == 0) {
            fprintf(stderr, "regress: %s holds no files\n", argv[i]);
            bad++;
        }
    }
    printf("%d passed, %d failed\n", total, bad);
    return bad ? 1 : 0;
}
