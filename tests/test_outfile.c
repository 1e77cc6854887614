/*
 * test_outfile.c — the one atomic writer (src/io/outfile.c), the lock files
 * of one writer per output (src/io/lock.c), the free-space check and the
 * safe opening of model files (issue 28, docs/RELIABILITY.md "Nothing lost,
 * no one let in").
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"

static char g_dir[256];

static const char *tmp_path(const char *name) {
    static char buf[8][600];
    static int k = 0;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* The whole file as a string (static buffer), or "" when unreadable. */
static const char *read_text(const char *path) {
    static char buf[4096];
    buf[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static long dead_pid(void) {
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    return (long)p;
}

/* A file replaced whole; umask decides the mode; no temporary left. */
static void test_write_replace(void) {
    attend_error e;
    const char *p = tmp_path("a.txt");
    EXPECT(write_text(p, "old contents"), "write");
    mode_t old = umask(027);
    EXPECT(attend_file_write(p, "new", 3, 0, &e) == ATTEND_OK, "%s", e.msg);
    umask(old);
    EXPECT(!strcmp(read_text(p), "new"), "got '%s'", read_text(p));
    struct stat sb;
    EXPECT(stat(p, &sb) == 0 && (sb.st_mode & 0777) == 0640, "mode %o, expected 0640 from umask 027",
           (unsigned)(sb.st_mode & 0777));
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
    EXPECT(access(tmp, F_OK) != 0, "the temporary is left");
    /* streamed in pieces larger and smaller than the buffer */
    attend_outfile *f = NULL;
    static char big[200000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + i % 26);
    EXPECT(attend_outfile_open(&f, p, 0, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_outfile_write(f, big, 10, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_outfile_write(f, big + 10, 100000, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_outfile_write(f, big + 100010, sizeof big - 100010, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(!strcmp(read_text(p), "new"), "the target changed before commit");
    EXPECT(attend_outfile_commit(f, &e) == ATTEND_OK, "%s", e.msg);
    FILE *r = fopen(p, "rb");
    static char back[200001];
    size_t n = r ? fread(back, 1, sizeof back, r) : 0;
    if (r) fclose(r);
    EXPECT(n == sizeof big && !memcmp(back, big, n), "read back %zu bytes", n);
    /* abort leaves the previous file */
    EXPECT(attend_outfile_open(&f, p, 0, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_outfile_write(f, "xyz", 3, &e) == ATTEND_OK, "%s", e.msg);
    attend_outfile_abort(f);
    EXPECT(access(tmp, F_OK) != 0, "abort left the temporary");
    EXPECT(!strncmp(read_text(p), big, 4000), "abort changed the file");
    attend_outfile_abort(NULL);
    remove(p);
}

/* A symbolic link planted at the temporary's name is removed, never followed:
 * the victim keeps its bytes, the target becomes a regular file. */
static void test_planted_link(void) {
    attend_error e;
    const char *victim = tmp_path("victim"), *p = tmp_path("m.st");
    EXPECT(write_text(victim, "precious"), "write");
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
    EXPECT(symlink(victim, tmp) == 0, "symlink: %s", strerror(errno));
    EXPECT(attend_file_write(p, "model", 5, 0, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(!strcmp(read_text(victim), "precious"), "the victim was overwritten: '%s'", read_text(victim));
    struct stat lb;
    EXPECT(lstat(p, &lb) == 0 && S_ISREG(lb.st_mode), "the target is not a regular file");
    EXPECT(!strcmp(read_text(p), "model"), "got '%s'", read_text(p));
    EXPECT(lstat(tmp, &lb) != 0, "the planted link is still there");
    /* a directory at the temporary's name cannot be removed: an error naming it */
    EXPECT(mkdir(tmp, 0755) == 0, "mkdir");
    attend_status st = attend_file_write(p, "x", 1, 0, &e);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "cannot create") && strstr(e.msg, ".tmp."), "%s: %s",
           attend_status_name(st), e.msg);
    EXPECT(!strcmp(read_text(p), "model"), "the target changed");
    rmdir(tmp);
    remove(victim);
    remove(p);
}

/* A failed write (file-size limit, as a full disk) keeps the previous file,
 * removes the temporary and names the reason. */
static void test_failed_write(void) {
    const char *p = tmp_path("big.svg");
    EXPECT(write_text(p, "<svg>the earlier picture</svg>"), "write");
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        static char big[20000];
        memset(big, 'x', sizeof big);
        attend_error e;
        attend_status st = attend_file_write(p, big, sizeof big, 0, &e);
        _exit(st == ATTEND_ERR_IO && strstr(e.msg, "cannot write") && strstr(e.msg, "File too large") ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's write did not fail with 'File too large'");
    EXPECT(!strcmp(read_text(p), "<svg>the earlier picture</svg>"), "the previous file changed: '%s'", read_text(p));
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)pid);
    EXPECT(access(tmp, F_OK) != 0, "the temporary is left");
    remove(p);
}

/* Non-regular targets: refused without the flag, written in place with it;
 * a directory always refused; an empty path an argument error. */
static void test_special_targets(void) {
    attend_error e;
    const char *fifo = tmp_path("f");
    EXPECT(mkfifo(fifo, 0644) == 0, "mkfifo");
    attend_status st = attend_file_write(fifo, "x", 1, 0, &e);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "is a FIFO, not a regular file"), "%s", e.msg);
    pid_t pid = fork();
    if (pid == 0) {
        const char *got = read_text(fifo);
        _exit(strcmp(got, "through") ? 1 : 0);
    }
    EXPECT(attend_file_write(fifo, "through", 7, ATTEND_OUTPUT_ALLOW_SPECIAL, &e) == ATTEND_OK, "%s", e.msg);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader did not get the bytes");
    struct stat sb;
    EXPECT(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO was replaced");
    remove(fifo);
    EXPECT(attend_file_write(g_dir, "x", 1, ATTEND_OUTPUT_ALLOW_SPECIAL, &e) == ATTEND_ERR_IO &&
               strstr(e.msg, "is a directory"),
           "%s", e.msg);
    EXPECT(attend_file_write("", "x", 1, 0, &e) == ATTEND_ERR_ARG, "%s", e.msg);
    /* /dev/stdout is a link into /proc: never renamed over */
    st = attend_file_write("/dev/stdout", "x", 1, 0, &e);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "not a regular file"), "%s: %s", attend_status_name(st), e.msg);
    /* and the check made before any work says so too */
    st = attend_output_check("/dev/stdout", 0, &e);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "not a regular file"), "%s: %s", attend_status_name(st), e.msg);
    EXPECT(attend_outfile_in_place("/dev/stdout") && !attend_outfile_in_place(g_dir), "attend_outfile_in_place");
    /* the links inside /proc (/dev/fd/N, /proc/self/fd/N: the CLI hands the
     * writer one for an output that is standard output) name the open file
     * itself: written in place (appended to a regular file), never a
     * temporary beside them */
    const char *behind = tmp_path("behind");
    int fd = open(behind, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT(fd >= 0 && write(fd, "ab", 2) == 2, "open %s", behind);
    const char *fmts[2] = {"/dev/fd/%d", "/proc/self/fd/%d"};
    for (int k = 0; k < 2; k++) {
        char via[64];
        snprintf(via, sizeof via, fmts[k], fd);
        EXPECT(attend_outfile_in_place(via), "%s: not written in place", via);
        st = attend_file_write(via, "x", 1, 0, &e);
        EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "not a regular file"), "%s: %s: %s", via,
               attend_status_name(st), e.msg);
        EXPECT(attend_output_check(via, 0, &e) == ATTEND_ERR_IO, "%s: the check before work accepted it", via);
        EXPECT(attend_output_check(via, ATTEND_OUTPUT_ALLOW_SPECIAL, &e) == ATTEND_OK, "%s: %s", via, e.msg);
        EXPECT(attend_file_write(via, k ? "d" : "c", 1, ATTEND_OUTPUT_ALLOW_SPECIAL, &e) == ATTEND_OK, "%s: %s", via,
               e.msg);
    }
    close(fd);
    EXPECT(!strcmp(read_text(behind), "abcd"), "through /dev/fd and /proc/self/fd: '%s', expected 'abcd'",
           read_text(behind));
    remove(behind);
    /* a socket cannot be opened by name: refused by the check before any work */
    const char *sock = tmp_path("s.sock");
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (strlen(sock) < sizeof sa.sun_path && sfd >= 0 && bind(sfd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        st = attend_output_check(sock, ATTEND_OUTPUT_ALLOW_SPECIAL, &e);
        EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "is a socket, which cannot be opened by name"), "%s: %s",
               attend_status_name(st), e.msg);
    } else {
        printf("  (no socket at %s: the socket check skipped)\n", sock);
    }
    if (sfd >= 0) close(sfd);
    remove(sock);
}

/* Model files: a FIFO is refused at once, without waiting for a writer. */
static void test_open_fifo(void) {
    attend_error e;
    const char *fifo = tmp_path("m.fifo");
    EXPECT(mkfifo(fifo, 0644) == 0, "mkfifo");
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10); /* a blocking open would hang: fail by the alarm instead */
        attend_st_file *f = NULL;
        attend_error ce;
        attend_status st = attend_st_open(&f, fifo, 0, &ce);
        _exit(st == ATTEND_ERR_IO && strstr(ce.msg, "a FIFO, not a regular file") ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "attend_st_open on a FIFO did not fail at once");
    attend_model *m = NULL;
    EXPECT(attend_model_load(&m, "/dev/null", NULL, NULL, NULL, NULL, &e) == ATTEND_ERR_IO &&
               strstr(e.msg, "a character device, not a regular file"),
           "%s", e.msg);
    remove(fifo);
}

/* Locks: a second holder is named; a dead owner's lock file is taken over;
 * release removes the lock file. */
static void test_locks(void) {
    attend_error e;
    const char *p = tmp_path("out.st");
    char lp[700];
    snprintf(lp, sizeof lp, "%s.lock", p);
    int to_child[2], to_parent[2];
    EXPECT(pipe(to_child) == 0 && pipe(to_parent) == 0, "pipe");
    pid_t holder = fork();
    if (holder == 0) {
        attend_lock *l = NULL;
        attend_error ce;
        char c = attend_lock_acquire(&l, p, NULL, &ce) == ATTEND_OK ? 'y' : 'n';
        if (write(to_parent[1], &c, 1) != 1) _exit(2);
        if (read(to_child[0], &c, 1) != 1) _exit(2); /* hold until told */
        attend_lock_release(l);
        _exit(0);
    }
    char c = 0;
    EXPECT(read(to_parent[0], &c, 1) == 1 && c == 'y', "the child could not take the lock");
    attend_lock *l = NULL;
    attend_status st = attend_lock_acquire(&l, p, NULL, &e);
    char want[64];
    snprintf(want, sizeof want, "in use by process %ld", (long)holder);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, want) && strstr(e.msg, ".lock"), "%s: %s", attend_status_name(st),
           e.msg);
    EXPECT(l == NULL, "a refused lock returned a handle");
    c = 'g';
    EXPECT(write(to_child[1], &c, 1) == 1, "write");
    waitpid(holder, NULL, 0);
    EXPECT(access(lp, F_OK) != 0, "release left the lock file");
    long stale = -1;
    EXPECT(attend_lock_acquire(&l, p, &stale, &e) == ATTEND_OK && stale == 0, "%s (stale %ld)", e.msg, stale);
    attend_lock_release(l);
    /* a process killed while holding it: the lock is free, its pid reported */
    long dead = dead_pid();
    char pidtext[32];
    snprintf(pidtext, sizeof pidtext, "%ld\n", dead);
    EXPECT(write_text(lp, pidtext), "write");
    l = NULL;
    EXPECT(attend_lock_acquire(&l, p, &stale, &e) == ATTEND_OK && stale == dead, "%s (stale %ld, dead %ld)", e.msg,
           stale, dead);
    snprintf(pidtext, sizeof pidtext, "%ld\n", (long)getpid());
    EXPECT(!strcmp(read_text(lp), pidtext), "the lock file holds '%s'", read_text(lp));
    attend_lock_release(l);
    attend_lock_release(NULL);
    close(to_child[0]);
    close(to_child[1]);
    close(to_parent[0]);
    close(to_parent[1]);
}

static void test_space(void) {
    attend_error e;
    uint64_t avail = 0;
    const char *p = tmp_path("x.st");
    EXPECT(attend_output_space(p, 1, &avail, &e) == ATTEND_OK && avail > 0, "%s", e.msg);
    attend_status st = attend_output_space(p, UINT64_MAX - 1, NULL, &e);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "bytes free") && strstr(e.msg, "x.st"), "%s", e.msg);
}

int main(void) {
    const char *t = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/attend-outfile-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_write_replace);
    RUN(test_planted_link);
    RUN(test_failed_write);
    RUN(test_special_targets);
    RUN(test_open_fifo);
    RUN(test_locks);
    RUN(test_space);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return harness_summary();
}
