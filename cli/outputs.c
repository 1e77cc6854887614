/*
 * outputs.c — output files for the commands: the checks before any work
 * (attend_paths_check), SIGXFSZ, stale temporaries, and in-place writes of
 * non-regular targets the user allowed (cli/outputs.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outputs.h"

#include "args.h"

int cli_check_outputs(const char *cmd, const attend_path_use *uses, int n, const char *special_hint) {
    signal(SIGXFSZ, SIG_IGN);
    attend_error err = {0};
    if (attend_paths_check(uses, n, &err) == ATTEND_OK) return 0;
    cli_error(cmd, "%s", err.msg);
    if (special_hint && strstr(err.msg, "not a regular file: refusing"))
        cli_error(cmd, "%s", special_hint);
    return 1;
}

int cli_check_train_files(const char *cmd, const char *data_role, const char *data, const char *dev,
                          const char *resume, const char *checkpoint, const char *out, unsigned out_flags,
                          const char *special_hint) {
    int same = 0;
    if (resume && checkpoint) attend_path_same(resume, checkpoint, &same, NULL);
    attend_path_use uses[] = {
        {data, data_role, 0, 0},
        {dev, "--dev", 0, 0},
        {same ? NULL : resume, "--resume", 0, 0},
        {checkpoint, "--checkpoint", 1, 0},
        {out, "--out", 1, out_flags},
    };
    return cli_check_outputs(cmd, uses, (int)(sizeof uses / sizeof uses[0]), special_hint);
}

static void print_removed(void *ctx, const char *file, long pid) {
    printf("%s: removed %s, left by process %ld, which is gone\n", (const char *)ctx, cli_vis(file), pid);
    fflush(stdout); /* said at once: the run may be killed next */
}

void cli_clean_stale(const char *label, const char *path) {
    if (path) attend_output_clean_stale(path, print_removed, (void *)label, NULL, NULL);
}

int cli_output_begin(const char *cmd, const char *target, char *buf, size_t cap, const char **write_path) {
    struct stat sb;
    *write_path = target;
    if (stat(target, &sb) != 0 || S_ISREG(sb.st_mode)) return 0;
    const char *t = getenv("TMPDIR");
    int k = snprintf(buf, cap, "%s/attend-out-XXXXXX", t && *t ? t : "/tmp");
    int fd = k > 0 && (size_t)k < cap ? mkstemp(buf) : -1;
    if (fd < 0) {
        cli_error(cmd, "cannot create a temporary file for %s: %s", target, strerror(errno));
        return 1;
    }
    close(fd);
    *write_path = buf;
    return 0;
}

int cli_output_finish(const char *cmd, const char *target, const char *write_path, int ok) {
    if (write_path == target) return 0;
    int rc = 0;
    if (ok) { /* the bytes into the target in place, through the one writer */
        attend_error err = {0};
        attend_outfile *out = NULL;
        FILE *in = fopen(write_path, "rb");
        attend_status st = in ? attend_outfile_open(&out, target, ATTEND_OUTPUT_ALLOW_SPECIAL, &err) : ATTEND_ERR_IO;
        if (!in) snprintf(err.msg, sizeof err.msg, "cannot read '%s': %s", write_path, strerror(errno));
        char chunk[1 << 16];
        size_t n;
        while (!st && (n = fread(chunk, 1, sizeof chunk, in)) > 0) st = attend_outfile_write(out, chunk, n, &err);
        if (!st && ferror(in)) {
            st = ATTEND_ERR_IO;
            snprintf(err.msg, sizeof err.msg, "cannot read '%s': %s", write_path, strerror(errno));
        }
        if (st) attend_outfile_abort(out);
        else st = attend_outfile_commit(out, &err);
        if (in) fclose(in);
        if (st) rc = cli_lib_fail(cmd, &err);
    }
    remove(write_path);
    return rc;
}
