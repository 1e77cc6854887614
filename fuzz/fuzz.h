/*
 * fuzz.h — shared by the fuzz targets in fuzz/ (see fuzz/README.md).
 *
 * Each fuzz_<name>.c defines LLVMFuzzerTestOneInput. Built with clang and
 * -fsanitize=fuzzer it is a libFuzzer binary (tools/fuzz.sh); linked with
 * fuzz/regress.c instead it replays a corpus without libFuzzer (the
 * fuzz_regress_<name> ctest tests). A target checks invariants beyond "no
 * crash" with FUZZ_CHECK, which aborts naming the broken invariant: that is a
 * finding as much as a sanitizer report.
 */
#ifndef ATTEND_FUZZ_H
#define ATTEND_FUZZ_H

#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                     \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            abort();                                                              \
        }                                                                         \
    } while (0)

/* Some loaders take a path: the input is written to one scratch file per
 * process (in $TMPDIR, else /dev/shm or /tmp), replaced for every input, removed at exit. */
static char fuzz_path_[512];

static void fuzz_remove_file_(void) {
    if (fuzz_path_[0]) remove(fuzz_path_);
}

static inline const char *fuzz_write_file(const uint8_t *data, size_t size) {
    if (!fuzz_path_[0]) {
        const char *dir = getenv("TMPDIR"); /* else a RAM file system when there is one */
        if (!dir || !*dir) dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(fuzz_path_, sizeof fuzz_path_, "%s/attend-fuzz-%ld.bin", dir, (long)getpid());
        atexit(fuzz_remove_file_);
    }
    remove(fuzz_path_); /* a new file: ext4 flushes a truncated one on close (auto_da_alloc) */
    FILE *f = fopen(fuzz_path_, "wb");
    FUZZ_CHECK(f != NULL, "cannot create %s", fuzz_path_);
    FUZZ_CHECK(size == 0 || fwrite(data, 1, size, f) == size, "cannot write %s", fuzz_path_);
    FUZZ_CHECK(fclose(f) == 0, "cannot close %s", fuzz_path_);
    return fuzz_path_;
}

/* A message the library returned is non-empty, NUL-terminated and starts
 * with what it should name (the path or label), when given. */
static inline void fuzz_check_message(const char *msg, const char *prefix) {
    size_t n = strnlen(msg, 256);
    FUZZ_CHECK(n > 0 && n < 256, "empty or unterminated error message");
    if (prefix) FUZZ_CHECK(strncmp(msg, prefix, strlen(prefix)) == 0, "message '%s' does not start with '%s'", msg, prefix);
}

#endif
