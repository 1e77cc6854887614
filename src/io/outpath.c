/*
 * outpath.c — checks on the files a program is about to write, made before any
 * work starts (docs/RELIABILITY.md, "Careless users"):
 *   - attend_output_check: the target can be written the way attend_st_write
 *     writes it (a temporary "<path>.tmp.<pid>" is created beside it and
 *     removed again), and an existing target is a regular file;
 *   - attend_path_same / attend_paths_check: no output names the same file as
 *     an input or another output (by device and inode for existing files, by
 *     the real path of the directory plus the name for files not yet there);
 *   - attend_output_clean_stale: temporaries "<path>.tmp.<pid>" whose writer
 *     process is gone are removed (attend_st_write calls it before each write).
 */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "internal.h"

static void error_text(char out[128], int e) {
    if (strerror_r(e, out, 128) != 0) snprintf(out, 128, "error %d", e);
}

static const char *at_file_kind(mode_t mode) {
    return S_ISDIR(mode)    ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISREG(mode)  ? "a regular file"
                            : "not a regular file";
}

/* The directory part of path ("." when there is none, "/" for "/name") and
 * the name part; *dir is malloc'ed. */
static int split_path(const char *path, char **dir, const char **name) {
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) : 1;
    if (slash && dl == 0) dl = 1;
    *dir = malloc(dl + 1);
    if (!*dir) return 0;
    memcpy(*dir, slash ? path : ".", dl);
    (*dir)[dl] = '\0';
    *name = slash ? slash + 1 : path;
    return 1;
}

/* A symbolic link to a process's open file, which only an in-place write
 * reaches: a link into /proc (/dev/stdout, /dev/stderr), or one of the links
 * inside /proc itself (/dev/fd/N, /proc/self/fd/N, whose targets are the open
 * files' names). Renaming over the first would replace it (as root,
 * /dev/stdout itself); a temporary beside the second cannot be made at all. */
static int links_into_proc(const char *path) {
    struct stat lb;
    if (lstat(path, &lb) != 0 || !S_ISLNK(lb.st_mode)) return 0;
    char target[64];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0) return 0;
    target[n] = '\0';
    if (strncmp(target, "/proc/", 6) == 0 || strncmp(target, "/dev/fd/", 8) == 0) return 1;
    char *dir = NULL;
    const char *name = NULL;
    if (!split_path(path, &dir, &name)) return 0;
    char *real = realpath(dir, NULL);
    int in_proc = real && strncmp(real, "/proc/", 6) == 0;
    free(real);
    free(dir);
    return in_proc;
}

int attend_outfile_in_place(const char *path) {
    struct stat sb;
    if (!path) return 0;
    return (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) || links_into_proc(path);
}

attend_status attend_output_check(const char *path, unsigned flags, attend_error *err) {
    const char *who = "attend_output_check";
    CHECK(path, err, ATTEND_ERR_NULL, "%s: path is NULL", who);
    CHECK(*path, err, ATTEND_ERR_ARG, "%s: the output path is empty", who);
    CHECK((flags & ~ATTEND_OUTPUT_ALLOW_SPECIAL) == 0, err, ATTEND_ERR_ARG, "%s: unknown flags 0x%x", who,
          flags & ~ATTEND_OUTPUT_ALLOW_SPECIAL);
    char why[128];
    struct stat sb;
    if (stat(path, &sb) == 0) {
        CHECK(!S_ISDIR(sb.st_mode), err, ATTEND_ERR_IO, "'%s' is a directory, not a file to write", path);
        if (!S_ISREG(sb.st_mode)) {
            CHECK(flags & ATTEND_OUTPUT_ALLOW_SPECIAL, err, ATTEND_ERR_IO,
                  "'%s' is %s, not a regular file: refusing to replace it", path, at_file_kind(sb.st_mode));
            /* open(2) of a socket fails (ENXIO): found now, not after the work
             * (standard output a socket, as some service managers give) */
            CHECK(!S_ISSOCK(sb.st_mode), err, ATTEND_ERR_IO,
                  "'%s' is a socket, which cannot be opened by name: write to a file, or through a pipe (| cat)",
                  path);
            if (access(path, W_OK) != 0) {
                error_text(why, errno);
                return at_fail(err, ATTEND_ERR_IO, "'%s' (%s) cannot be written: %s", path,
                               at_file_kind(sb.st_mode), why);
            }
            return at_ok(err); /* written in place, no temporary */
        }
        /* a link into /proc (/dev/stdout to a regular file): written in place by
         * the writer, never renamed over (outfile.c), so the same rule as a device */
        if (attend_outfile_in_place(path)) {
            CHECK(flags & ATTEND_OUTPUT_ALLOW_SPECIAL, err, ATTEND_ERR_IO,
                  "'%s' is a link to a process's open file, not a regular file: refusing to replace it", path);
            return at_ok(err);
        }
    } else if (errno != ENOENT) {
        error_text(why, errno);
        return at_fail(err, ATTEND_ERR_IO, "'%s' cannot be written: %s", path, why);
    }
    /* the temporary attend_st_write will use: same directory, same name rule */
    size_t tl;
    CHECK(at_add_size(strlen(path), 32, &tl), err, ATTEND_ERR_ARG, "%s: the path is too long", who);
    char *tmp = malloc(tl);
    CHECK(tmp, err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    snprintf(tmp, tl, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* our own, from an earlier failed write */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    attend_status st = ATTEND_OK;
    if (fd < 0) {
        int e = errno;
        char *dir = NULL;
        const char *name = NULL;
        error_text(why, e);
        if (!split_path(path, &dir, &name)) st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
        else if (e == ENAMETOOLONG)
            st = at_fail(err, ATTEND_ERR_IO, "output file name too long (%zu bytes, and the temporary adds "
                         "\".tmp.%ld\"): %s: '%s'", strlen(name), (long)getpid(), why, path);
        else
            st = at_fail(err, ATTEND_ERR_IO, "'%s' cannot be written: creating a file in directory '%s' failed: %s",
                         path, dir, why);
        free(dir);
    } else {
        close(fd);
        unlink(tmp);
    }
    free(tmp);
    return st ? st : at_ok(err);
}

/* ------------------------------------------------------------ same file */

typedef struct {
    int exists;
    dev_t dev;
    ino_t ino;
    char *canon; /* when !exists: realpath(directory) + "/" + name, or the path */
} file_key;

static attend_status key_of(const char *path, file_key *k, attend_error *err) {
    memset(k, 0, sizeof *k);
    struct stat sb;
    if (stat(path, &sb) == 0) {
        k->exists = 1;
        k->dev = sb.st_dev;
        k->ino = sb.st_ino;
        return ATTEND_OK;
    }
    char *dir = NULL;
    const char *name = NULL;
    CHECK(split_path(path, &dir, &name), err, ATTEND_ERR_ALLOC, "attend_path_same: out of memory");
    char *real = realpath(dir, NULL);
    free(dir);
    size_t n = (real ? strlen(real) : 0) + strlen(name) + strlen(path) + 2;
    k->canon = malloc(n);
    if (!k->canon) {
        free(real);
        return at_fail(err, ATTEND_ERR_ALLOC, "attend_path_same: out of memory");
    }
    if (real) snprintf(k->canon, n, "%s/%s", strcmp(real, "/") ? real : "", name);
    else snprintf(k->canon, n, "%s", path);
    free(real);
    return ATTEND_OK;
}

attend_status attend_path_same(const char *a, const char *b, int *same, attend_error *err) {
    CHECK(a && b && same, err, ATTEND_ERR_NULL, "attend_path_same: %s is NULL", !a ? "a" : !b ? "b" : "same");
    *same = 0;
    file_key ka, kb;
    TRY(key_of(a, &ka, err));
    attend_status st = key_of(b, &kb, err);
    if (st) {
        free(ka.canon);
        return st;
    }
    if (ka.exists && kb.exists) *same = ka.dev == kb.dev && ka.ino == kb.ino;
    else if (!ka.exists && !kb.exists) *same = strcmp(ka.canon, kb.canon) == 0;
    free(ka.canon);
    free(kb.canon);
    return at_ok(err);
}

attend_status attend_paths_check(const attend_path_use *uses, int n, attend_error *err) {
    const char *who = "attend_paths_check";
    CHECK(uses || n == 0, err, ATTEND_ERR_NULL, "%s: uses is NULL", who);
    CHECK(n >= 0, err, ATTEND_ERR_ARG, "%s: n=%d, must be >= 0", who, n);
    for (int i = 0; i < n; i++) /* every pair with an output in it, in order */
        for (int j = 0; j < i; j++) {
            if (!uses[i].path || !uses[j].path || !(uses[i].output || uses[j].output)) continue;
            int same = 0;
            TRY(attend_path_same(uses[j].path, uses[i].path, &same, err));
            const char *ri = uses[i].role ? uses[i].role : "a file", *rj = uses[j].role ? uses[j].role : "a file";
            CHECK(!same, err, ATTEND_ERR_ARG, "%s '%s' and %s '%s' are the same file: writing it would %s", rj,
                  uses[j].path, ri, uses[i].path,
                  uses[i].output && uses[j].output ? "lose one of the two outputs" : "destroy the input");
        }
    for (int i = 0; i < n; i++)
        if (uses[i].path && uses[i].output) TRY(attend_output_check(uses[i].path, uses[i].flags, err));
    return at_ok(err);
}

/* ------------------------------------------------------ stale temporaries */

attend_status attend_output_clean_stale(const char *path, attend_stale_fn fn, void *ctx, int *removed,
                                        attend_error *err) {
    const char *who = "attend_output_clean_stale";
    CHECK(path, err, ATTEND_ERR_NULL, "%s: path is NULL", who);
    if (removed) *removed = 0;
    char *dir = NULL;
    const char *name = NULL;
    CHECK(split_path(path, &dir, &name), err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    int has_dir = strchr(path, '/') != NULL;
    size_t pl = strlen(name) + 5; /* name + ".tmp." */
    char *prefix = malloc(pl + 1);
    DIR *d = prefix ? opendir(dir) : NULL;
    attend_status st = prefix ? ATTEND_OK : at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    if (prefix) snprintf(prefix, pl + 1, "%s.tmp.", name);
    int count = 0;
    for (struct dirent *e; !st && d && (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, pl)) continue;
        const char *rest = e->d_name + pl;
        if (!*rest || strspn(rest, "0123456789") != strlen(rest) || strlen(rest) > 9) continue;
        long pid = strtol(rest, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        size_t fl = strlen(dir) + strlen(e->d_name) + 2;
        char *full = malloc(fl);
        if (!full) {
            st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
            break;
        }
        if (has_dir) snprintf(full, fl, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", e->d_name);
        else snprintf(full, fl, "%s", e->d_name);
        struct stat sb;
        if (lstat(full, &sb) == 0 && S_ISREG(sb.st_mode) && unlink(full) == 0) {
            count++;
            if (fn) fn(ctx, full, pid);
        }
        free(full);
    }
    if (d) closedir(d);
    free(prefix);
    free(dir);
    if (removed) *removed = count;
    return st ? st : at_ok(err);
}

/* ------------------------------------------------------------ free space */

attend_status attend_output_space(const char *path, uint64_t bytes, uint64_t *free_bytes, attend_error *err) {
    const char *who = "attend_output_space";
    CHECK(path, err, ATTEND_ERR_NULL, "%s: path is NULL", who);
    if (free_bytes) *free_bytes = UINT64_MAX;
    char *dir = NULL;
    const char *name = NULL;
    CHECK(split_path(path, &dir, &name), err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    struct statvfs vs;
    int ok = statvfs(dir, &vs) == 0;
    free(dir);
    if (!ok) return at_ok(err); /* unknown: the write itself will tell */
    uint64_t avail = (uint64_t)vs.f_bavail * (uint64_t)(vs.f_frsize ? vs.f_frsize : vs.f_bsize);
    if (free_bytes) *free_bytes = avail;
    CHECK(avail >= bytes, err, ATTEND_ERR_IO,
          "'%s' needs about %llu bytes, and its file system has %llu bytes free: free some space or write elsewhere",
          path, (unsigned long long)bytes, (unsigned long long)avail);
    return at_ok(err);
}
