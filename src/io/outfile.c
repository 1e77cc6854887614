/*
 * outfile.c — the one writer of every file attend writes (models,
 * checkpoints, SVG, HTML, CSV, dictionaries): attend_outfile_* and
 * attend_file_write (include/attend/io.h, "output files").
 *
 * A regular (or missing) target is written through a temporary
 * "<path>.tmp.<pid>" in the target's directory, created with
 * O_CREAT|O_EXCL|O_NOFOLLOW (mode 0666 less the umask), so a link planted at
 * that name is never followed; then fsync, rename over the target, fsync of
 * the directory. Until the rename the previous file is untouched; any failure
 * removes the temporary and names the file and the system's reason.
 *
 * A target that exists and is not a regular file (a FIFO, a device, or a link
 * into /proc such as /dev/stdout) is written in place when the caller allows
 * it (ATTEND_OUTPUT_ALLOW_SPECIAL) and refused otherwise: renaming over it
 * would replace the node.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

#define OUTFILE_BUF (1 << 16)
#define OUTFILE_CREATE_TRIES 3

struct attend_outfile {
    int fd;
    int in_place;  /* writing the target itself (a FIFO or device) */
    int failed;    /* a write failed: commit refuses, the temporary goes */
    char *path;    /* the target */
    char *tmp;     /* the temporary (NULL in place) */
    size_t used;   /* bytes in buf */
    unsigned char buf[OUTFILE_BUF];
};

static void why_text(char out[128], int e) {
    if (strerror_r(e, out, 128) != 0) snprintf(out, 128, "error %d", e);
}

static const char *kind_of(mode_t mode) {
    return S_ISDIR(mode)    ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

/* Writes all of p [n] to fd, through EINTR and short writes. 0 or errno. */
static int write_all(int fd, const unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (w == 0) return EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void outfile_free(attend_outfile *f) {
    if (!f) return;
    free(f->path);
    free(f->tmp);
    free(f);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Creates f->tmp with O_EXCL|O_NOFOLLOW. Something already at that name (our
 * own leftover of an earlier failed attempt in this process, or a link someone
 * planted) is removed (never followed) and creation tried again. */
static attend_status create_temp(attend_outfile *f, attend_error *err) {
    char why[128];
    for (int tries = 0;; tries++) {
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (f->fd >= 0) return ATTEND_OK;
        int e = errno;
        if ((e == EEXIST || e == ELOOP) && tries + 1 < OUTFILE_CREATE_TRIES) {
            struct stat lb;
            if (lstat(f->tmp, &lb) == 0 && !S_ISDIR(lb.st_mode) && unlink(f->tmp) == 0) continue;
        }
        why_text(why, e);
        if (e == EEXIST)
            return at_fail(err, ATTEND_ERR_IO, "cannot create '%s': it exists and keeps coming back (%s)", f->tmp,
                           why);
        return at_fail(err, ATTEND_ERR_IO, "cannot create '%s': %s", f->tmp, why);
    }
}

attend_status attend_outfile_open(attend_outfile **out, const char *path, unsigned flags, attend_error *err) {
    const char *who = "attend_outfile_open";
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    *out = NULL;
    CHECK(path, err, ATTEND_ERR_NULL, "%s: path is NULL", who);
    CHECK(*path, err, ATTEND_ERR_ARG, "%s: the output path is empty", who);
    CHECK((flags & ~ATTEND_OUTPUT_ALLOW_SPECIAL) == 0, err, ATTEND_ERR_ARG, "%s: unknown flags 0x%x", who,
          flags & ~ATTEND_OUTPUT_ALLOW_SPECIAL);
    char why[128];
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    CHECK(!exists || !S_ISDIR(sb.st_mode), err, ATTEND_ERR_IO, "'%s' is a directory, not a file to write", path);
    int special = attend_outfile_in_place(path); /* outpath.c: a FIFO, a device, a link into /proc */
    CHECK(!special || (flags & ATTEND_OUTPUT_ALLOW_SPECIAL), err, ATTEND_ERR_IO,
          "'%s' is %s, not a regular file: refusing to replace it", path,
          exists && !S_ISREG(sb.st_mode) ? kind_of(sb.st_mode) : "a link to a process's open file");
    attend_outfile *f = calloc(1, sizeof *f);
    CHECK(f, err, ATTEND_ERR_ALLOC, "%s: out of memory for the write buffer (%zu bytes)", who, sizeof *f);
    f->fd = -1;
    f->path = dup_str(path);
    if (!f->path) {
        outfile_free(f);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    }
    if (special) {
        f->in_place = 1;
        /* a regular file reached through /proc (/dev/stdout redirected to a
         * file) is appended to, as writes to the stream itself would be */
        f->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (exists && S_ISREG(sb.st_mode) ? O_APPEND : 0));
        if (f->fd < 0) {
            why_text(why, errno);
            outfile_free(f);
            return at_fail(err, ATTEND_ERR_IO, "cannot open '%s' for writing: %s", path, why);
        }
        *out = f;
        return at_ok(err);
    }
    attend_output_clean_stale(path, NULL, NULL, NULL, NULL); /* a failure here only leaves litter */
    size_t tl;
    if (!at_add_size(strlen(path), 32, &tl) || !(f->tmp = malloc(tl))) {
        outfile_free(f);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    }
    snprintf(f->tmp, tl, "%s.tmp.%ld", path, (long)getpid());
    attend_status st = create_temp(f, err);
    if (st) {
        outfile_free(f);
        return st;
    }
    *out = f;
    return at_ok(err);
}

static attend_status fail_write(attend_outfile *f, int e, attend_error *err) {
    char why[128];
    why_text(why, e);
    f->failed = 1;
    return at_fail(err, ATTEND_ERR_IO, "cannot write '%s': %s", f->tmp ? f->tmp : f->path, why);
}

attend_status attend_outfile_write(attend_outfile *f, const void *data, size_t n, attend_error *err) {
    CHECK(f, err, ATTEND_ERR_NULL, "attend_outfile_write: the file is NULL");
    CHECK(data || n == 0, err, ATTEND_ERR_NULL, "attend_outfile_write: data is NULL for %zu bytes", n);
    CHECK(!f->failed, err, ATTEND_ERR_IO, "attend_outfile_write: '%s': an earlier write failed",
          f->tmp ? f->tmp : f->path);
    const unsigned char *p = data;
    if (f->used + n <= OUTFILE_BUF) {
        if (n) memcpy(f->buf + f->used, p, n);
        f->used += n;
        return at_ok(err);
    }
    int e = write_all(f->fd, f->buf, f->used);
    f->used = 0;
    if (!e && n >= OUTFILE_BUF) e = write_all(f->fd, p, n);
    else if (!e) {
        memcpy(f->buf, p, n);
        f->used = n;
    }
    return e ? fail_write(f, e, err) : at_ok(err);
}

void attend_outfile_abort(attend_outfile *f) {
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    if (f->tmp) unlink(f->tmp);
    outfile_free(f);
}

/* fsync of the directory holding path, so that the rename itself is durable.
 * File systems that cannot sync a directory (EINVAL) are not an error. */
static attend_status sync_dir(const char *path, attend_error *err) {
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) : 1;
    if (slash && dl == 0) dl = 1; /* "/name" lives in "/" */
    char *dir = malloc(dl + 1);
    CHECK(dir, err, ATTEND_ERR_ALLOC, "attend_outfile_commit: out of memory");
    memcpy(dir, slash ? path : ".", dl);
    dir[dl] = '\0';
    char why[128];
    attend_status st = ATTEND_OK;
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL)) {
        why_text(why, errno);
        st = at_fail(err, ATTEND_ERR_IO, "'%s' was written, but syncing directory '%s' failed: %s", path, dir, why);
    }
    if (fd >= 0) close(fd);
    free(dir);
    return st;
}

attend_status attend_outfile_commit(attend_outfile *f, attend_error *err) {
    CHECK(f, err, ATTEND_ERR_NULL, "attend_outfile_commit: the file is NULL");
    attend_status st = ATTEND_OK;
    if (f->failed) st = at_fail(err, ATTEND_ERR_IO, "'%s': an earlier write failed", f->tmp ? f->tmp : f->path);
    int e = st ? 0 : write_all(f->fd, f->buf, f->used);
    f->used = 0;
    /* a FIFO or terminal cannot be synced (EINVAL): only a real failure counts */
    if (!st && !e && fsync(f->fd) != 0 && !(f->in_place && (errno == EINVAL || errno == EROFS))) e = errno;
    int fd = f->fd;
    f->fd = -1;
    if (close(fd) != 0 && !st && !e) e = errno;
    if (!st && e) st = fail_write(f, e, err);
    if (!st && !f->in_place && rename(f->tmp, f->path) != 0) {
        char why[128];
        why_text(why, errno);
        st = at_fail(err, ATTEND_ERR_IO, "cannot rename '%s' to '%s': %s", f->tmp, f->path, why);
    }
    if (st) {
        if (f->tmp) unlink(f->tmp);
        outfile_free(f);
        return st;
    }
    if (!f->in_place) st = sync_dir(f->path, err);
    outfile_free(f);
    return st ? st : at_ok(err);
}

attend_status attend_file_write(const char *path, const void *data, size_t n, unsigned flags, attend_error *err) {
    attend_outfile *f = NULL;
    TRY(attend_outfile_open(&f, path, flags, err));
    attend_status st = attend_outfile_write(f, data, n, err);
    if (st) {
        attend_outfile_abort(f);
        return st;
    }
    return attend_outfile_commit(f, err);
}
