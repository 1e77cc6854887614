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
    /* the hint is about --out: a device as --checkpoint is refused without it */
    return cli_check_outputs(cmd, uses, (int)(sizeof uses / sizeof uses[0]),
                             checkpoint && attend_outfile_in_place(checkpoint) ? NULL : special_hint);
}

static void print_removed(void *ctx, const char *file, long pid) {
    printf("%s: removed %s, left by process %ld, which is gone\n", (const char *)ctx, cli_vis(file), pid);
    fflush(stdout); /* said at once: the run may be killed next */
}

void cli_clean_stale(const char *label, const char *path) {
    if (path) attend_output_clean_stale(path, print_removed, (void *)label, NULL, NULL);
}

int cli_output_begin(const char *cmd, const char *target, char *buf, size_t cap, const char **write_path) {
    *write_path = target;
    if (!attend_outfile_in_place(target)) return 0; /* regular or missing: the atomic writer */
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
        attend_status st =
            in ? attend_outfile_open(&out, cli_write_path(target), ATTEND_OUTPUT_ALLOW_SPECIAL, &err) : ATTEND_ERR_IO;
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
        if (st) { /* nothing lost: the bytes stay where they are, and the message says where */
            rc = cli_lib_fail(cmd, &err);
            cli_error(cmd, "what was to be written to '%s' is kept in '%s'", target, write_path);
            return rc;
        }
    }
    remove(write_path);
    return rc;
}

static struct {
    char *path;     /* the output that is standard output, as the user named it */
    char alias[32]; /* "/dev/fd/N": the original standard output */
} g_stdout;

int cli_stdout_claim(const char *cmd, const char *const *paths, int n) {
    struct stat so, sp;
    if (g_stdout.path || fstat(STDOUT_FILENO, &so) != 0) return 0;
    for (int i = 0; i < n; i++) {
        if (!paths[i] || !attend_outfile_in_place(paths[i]) || stat(paths[i], &sp) != 0) continue;
        if (sp.st_dev != so.st_dev || sp.st_ino != so.st_ino) continue;
        fflush(stdout);
        int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        size_t len = strlen(paths[i]) + 1;
        g_stdout.path = fd >= 0 ? malloc(len) : NULL;
        if (!g_stdout.path || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            cli_error(cmd, "'%s' is standard output: cannot keep the report apart from it: %s", paths[i],
                      strerror(errno ? errno : ENOMEM));
            free(g_stdout.path);
            g_stdout.path = NULL;
            if (fd >= 0) close(fd);
            return 1;
        }
        memcpy(g_stdout.path, paths[i], len);
        snprintf(g_stdout.alias, sizeof g_stdout.alias, "/dev/fd/%d", fd);
        return 0;
    }
    return 0;
}

const char *cli_write_path(const char *path) {
    return path && g_stdout.path && !strcmp(path, g_stdout.path) ? g_stdout.alias : path;
}

/* ------------------------------------------------ training runs (issue 28) */

int cli_check_checkpoint_reuse(const char *cmd, const char *checkpoint, const char *resume, int overwrite) {
    struct stat sb;
    if (!checkpoint || overwrite || stat(checkpoint, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    int same = 0;
    if (resume) attend_path_same(resume, checkpoint, &same, NULL);
    if (same) return 0;
    if (resume)
        return cli_usage_error(cmd, "--checkpoint '%s' exists and is not the --resume file: this run would replace "
                                    "it; --overwrite replaces it, or give another --checkpoint",
                               checkpoint);
    return cli_usage_error(cmd, "--checkpoint '%s' exists: continue that run with --resume %s, or start over with "
                                "--overwrite (which replaces it)",
                           checkpoint, checkpoint);
}

int cli_lock_outputs(const char *cmd, const char *const *paths, int n, attend_lock **locks) {
    for (int i = 0; i < n; i++) locks[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (!paths[i] || attend_outfile_in_place(paths[i])) continue;
        attend_error err = {0};
        long stale = 0;
        if (attend_lock_acquire(&locks[i], paths[i], &stale, &err)) {
            if (strstr(err.msg, "in use by process"))
                cli_error(cmd, "%s: another run writes it; wait for it to end, or choose another path", err.msg);
            else
                cli_lib_fail(cmd, &err);
            cli_unlock_outputs(locks, n);
            return 1;
        }
        if (stale > 0 && kill((pid_t)stale, 0) != 0)
            cli_error(cmd, "note: '%s' was locked by process %ld, which is gone: lock taken over", paths[i], stale);
    }
    return 0;
}

void cli_unlock_outputs(attend_lock **locks, int n) {
    for (int i = 0; i < n; i++) {
        attend_lock_release(locks[i]);
        locks[i] = NULL;
    }
}

static void human_bytes(char out[32], uint64_t b) {
    if (b >= (uint64_t)1 << 30) snprintf(out, 32, "%.1f GiB", (double)b / (1 << 30));
    else if (b >= 1 << 20) snprintf(out, 32, "%.1f MiB", (double)b / (1 << 20));
    else if (b >= 1 << 10) snprintf(out, 32, "%.1f KiB", (double)b / (1 << 10));
    else snprintf(out, 32, "%llu bytes", (unsigned long long)b);
}

int cli_check_space(const char *cmd, const char *const *paths, const uint64_t *bytes, const char *const *what, int n) {
    for (int i = 0; i < n; i++) {
        if (!paths[i] || attend_outfile_in_place(paths[i])) continue;
        /* the sum over the outputs on this one's file system (its free space as the key) */
        uint64_t need = 0, avail = 0, other = 0;
        attend_error err = {0};
        attend_output_space(paths[i], 0, &avail, &err);
        if (avail == UINT64_MAX) continue; /* unknown */
        char names[512] = "";
        size_t u = 0;
        int first = 1;
        for (int j = 0; j < n; j++) {
            if (!paths[j] || attend_outfile_in_place(paths[j])) continue;
            struct stat a, b;
            int same_fs = j == i;
            if (!same_fs) { /* the same file system: the directories' devices */
                char di[4096], dj[4096];
                const char *si = strrchr(paths[i], '/'), *sj = strrchr(paths[j], '/');
                snprintf(di, sizeof di, "%.*s", si ? (int)(si - paths[i] + 1) : 1, si ? paths[i] : ".");
                snprintf(dj, sizeof dj, "%.*s", sj ? (int)(sj - paths[j] + 1) : 1, sj ? paths[j] : ".");
                same_fs = stat(di, &a) == 0 && stat(dj, &b) == 0 && a.st_dev == b.st_dev;
            }
            if (!same_fs) continue;
            if (j < i) { /* counted with an earlier one already */
                first = 0;
                break;
            }
            need += bytes[j];
            other += j != i;
            char h[32];
            human_bytes(h, bytes[j]);
            if (u < sizeof names)
                u += (size_t)snprintf(names + u, sizeof names - u, "%s'%s' (%s, about %s)", u ? " and " : "",
                                      paths[j], what[j], h);
        }
        if (!first || avail >= need) continue;
        char h[32], t[32];
        human_bytes(h, avail);
        human_bytes(t, need);
        if (other)
            cli_error(cmd, "not enough free space: %s need about %s together, and their file system has %s free: "
                           "free some space or write elsewhere (nothing was trained)",
                      names, t, h);
        else
            cli_error(cmd, "not enough free space: %s, and its file system has %s free: free some space or write "
                           "elsewhere (nothing was trained)",
                      names, h);
        return 1;
    }
    return 0;
}

uint64_t cli_model_file_bytes(const attend_model *m, const attend_vocab *src_vocab, const attend_vocab *tgt_vocab) {
    uint64_t b = 4 * (uint64_t)attend_model_param_count(m) + 65536; /* tensors; header and configuration */
    const attend_vocab *vs[2] = {src_vocab, tgt_vocab};
    for (int k = 0; k < 2; k++)
        for (int i = 0; vs[k] && i < attend_vocab_size(vs[k]); i++) {
            const char *t = attend_vocab_token(vs[k], i);
            b += 6 * (t ? strlen(t) : 0) + 3; /* a JSON string, every byte escaped at worst */
        }
    return b;
}

uint64_t cli_checkpoint_bytes(const attend_model *m, const attend_vocab *src_vocab, const attend_vocab *tgt_vocab,
                              int data_size) {
    return cli_model_file_bytes(m, src_vocab, tgt_vocab) + 8 * (uint64_t)attend_model_param_count(m) +
           4 * (uint64_t)(data_size > 0 ? data_size : 0) + 8192;
}

int cli_check_best_out(const char *cmd, const char *option, const char *out, const attend_model *m,
                       const char *run_fp, const char *run_fp2, int overwrite) {
    struct stat sb;
    if (!out || overwrite || stat(out, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    attend_error err = {0};
    attend_st_file *f = NULL;
    char why[320];
    if (attend_st_open(&f, out, 0, &err) != ATTEND_OK) {
        snprintf(why, sizeof why, "it is not a model file (%s)", err.msg);
    } else {
        const char *cj = attend_st_metadata(f, "attend.config"), *run = attend_st_metadata(f, "attend.run");
        attend_model_config cfg;
        char field[32], was[32], now[32];
        why[0] = '\0';
        if (!cj || attend_model_config_from_json(&cfg, cj, strlen(cj), &err) != ATTEND_OK)
            snprintf(why, sizeof why, "it is not an attend model file");
        else if (attend_model_config_diff(&cfg, attend_model_get_config(m), 0, field, was, now))
            snprintf(why, sizeof why, "a model of another configuration: its %s is %s, this run's %s", field, was,
                     now);
        else if (!run)
            snprintf(why, sizeof why, "a model without a run fingerprint (written by an older attend, or copied, "
                                      "quantized or converted)");
        else if (strcmp(run, run_fp) && (!run_fp2 || strcmp(run, run_fp2)))
            snprintf(why, sizeof why, "a model of another run: its fingerprint of the data and options is %.16s, "
                                      "this run's %s",
                     run, run_fp);
        attend_st_close(f);
        if (!why[0]) return 0;
    }
    return cli_usage_error(cmd, "%s '%s' exists and holds %s; this run would replace it with its best model: "
                                "give another %s, or --overwrite to replace it",
                           option, out, why, option);
}

attend_status cli_save_model(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                             const attend_vocab *tgt_vocab, attend_tokenizer tok, const char *run_fp,
                             attend_error *err) {
    attend_st_meta meta[1] = {{"attend.run", run_fp}};
    return attend_model_save_meta(m, path, src_vocab, tgt_vocab, tok, meta, run_fp ? 1 : 0, err);
}
