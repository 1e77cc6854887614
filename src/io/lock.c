/*
 * lock.c — one writer per output: a lock file "<path>.lock" beside the file
 * a run writes (include/attend/io.h, attend_lock_acquire).
 *
 * The lock is an fcntl write lock on the lock file, not on the output itself:
 * the output is replaced by a rename at every save, which would silently drop
 * a lock on its old inode. A process that dies releases its fcntl locks, so a
 * killed run never blocks the next one; the pid it wrote into the lock file
 * tells the next owner whose lock it took over. F_GETLK names a live holder.
 *
 * Release unlinks the lock file while still holding the lock; a process that
 * opened the old file in the meantime finds, once it holds the lock, that the
 * name now points elsewhere (or nowhere) and starts again, so two processes
 * never both believe they hold the lock of one path.
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

#define LOCK_TRIES 8

struct attend_lock {
    int fd;
    char *path; /* the lock file */
};

static void why_text(char out[128], int e) {
    if (strerror_r(e, out, 128) != 0) snprintf(out, 128, "error %d", e);
}

/* The pid written in the lock file (0 when there is none). */
static long read_pid(int fd) {
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    return pid > 0 && (*end == '\n' || *end == '\0') ? pid : 0;
}

attend_status attend_lock_acquire(attend_lock **out, const char *path, long *stale_pid, attend_error *err) {
    const char *who = "attend_lock_acquire";
    CHECK(out && path, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !out ? "out" : "path");
    *out = NULL;
    if (stale_pid) *stale_pid = 0;
    CHECK(*path, err, ATTEND_ERR_ARG, "%s: the path is empty", who);
    size_t n;
    CHECK(at_add_size(strlen(path), 6, &n), err, ATTEND_ERR_ARG, "%s: the path is too long", who);
    attend_lock *l = calloc(1, sizeof *l);
    char *lp = malloc(n);
    if (!l || !lp) {
        free(l);
        free(lp);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    }
    snprintf(lp, n, "%s.lock", path);
    char why[128];
    attend_status st = ATTEND_OK;
    int fd = -1;
    for (int tries = 0;; tries++) {
        if (tries == LOCK_TRIES) {
            st = at_fail(err, ATTEND_ERR_IO, "'%s': its lock file '%s' keeps being replaced by other processes", path,
                         lp);
            break;
        }
        fd = open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
            why_text(why, errno);
            st = at_fail(err, ATTEND_ERR_IO, "'%s' cannot be locked: creating '%s' failed: %s", path, lp, why);
            break;
        }
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (fcntl(fd, F_SETLK, &fl) != 0) {
            int e = errno;
            if (e == EACCES || e == EAGAIN) {
                memset(&fl, 0, sizeof fl);
                fl.l_type = F_WRLCK;
                fl.l_whence = SEEK_SET;
                long holder = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? (long)fl.l_pid : 0;
                if (holder <= 0) holder = read_pid(fd);
                close(fd);
                fd = -1;
                if (!holder) continue; /* released in between: try again */
                st = at_fail(err, ATTEND_ERR_IO, "'%s' is in use by process %ld (lock file %s)", path, holder, lp);
                break;
            }
            why_text(why, e);
            close(fd);
            fd = -1;
            st = at_fail(err, ATTEND_ERR_IO, "'%s' cannot be locked (lock file %s): %s", path, lp, why);
            break;
        }
        /* held: is it still the file at that name? */
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(lp, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) break;
        close(fd); /* unlinked by its last owner while we waited: start again */
        fd = -1;
    }
    if (st) {
        free(lp);
        free(l);
        return st;
    }
    long before = read_pid(fd);
    if (stale_pid && before > 0 && before != (long)getpid()) *stale_pid = before;
    char pid[32];
    int k = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    /* the pid only informs the next owner; a full disk must not refuse the lock */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)k, 0) != k) (void)ftruncate(fd, 0);
    l->fd = fd;
    l->path = lp;
    *out = l;
    return at_ok(err);
}

void attend_lock_release(attend_lock *l) {
    if (!l) return;
    unlink(l->path); /* while still held: see the top of the file */
    close(l->fd);
    free(l->path);
    free(l);
}
