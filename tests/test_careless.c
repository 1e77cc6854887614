/*
 * test_careless.c — careless users (issue 17, docs/RELIABILITY.md "Careless
 * users: inputs, outputs, resume"), through the library:
 *   - the TSV reader on endless input (/dev/zero) fails at once, with and
 *     without skip_malformed; a directory is a read error naming path:line;
 *     an over-long line that ends is skipped and counted;
 *   - attend_output_check: a missing directory, a name too long, a device or
 *     FIFO, a directory are refused before any work; nothing is left behind;
 *   - attend_path_same / attend_paths_check: the same file under another name,
 *     a hard or symbolic link, a file not yet there;
 *   - attend_st_write leaves a FIFO alone instead of renaming over it, and
 *     removes temporaries left by dead processes (never a live one's);
 *   - checkpoint fingerprints: reordered data, another lr or seed refused,
 *     naming the first difference; anyway = 1 resumes with a note; an older
 *     checkpoint without a fingerprint resumes with a note.
 * Files go to a fresh directory under $TMPDIR (or /tmp), removed at the end.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "attend.h"
#include "harness.h"
#include "../fuzz/fuzz_setup.h"

static char g_dir[256];

static const char *tmp_path(const char *name) {
    static char buf[8][700];
    static int k = 0;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static double now_s(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

static int count_tmp_files(void) {
    DIR *d = opendir(g_dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return (fclose(f) == 0) && ok;
}

/* A pid that has exited (its child reaped), for stale temporaries. */
static long dead_pid(void) {
    pid_t p = fork();
    if (p == 0) _exit(0);
    int status;
    waitpid(p, &status, 0);
    return (long)p;
}

/* ------------------------------------------------------------ TSV reader */

static void test_tsv_endless_input(void) {
    attend_vocab *sv = NULL, *tv = NULL;
    attend_error e;
    attend_vocab_create(&sv, NULL);
    attend_vocab_create(&tv, NULL);
    for (int skip = 0; skip <= 1; skip++) {
        attend_tsv_options o = {ATTEND_TOKENIZE_CHAR, 0, 0, skip, 0};
        attend_dataset *d = NULL;
        int skipped = -1;
        double t0 = now_s();
        attend_status st = attend_dataset_read_tsv(&d, "/dev/zero", sv, tv, 1, &o, &skipped, &e);
        double dt = now_s() - t0;
        printf("  /dev/zero (skip_malformed %d): %s in %.3f s: %s\n", skip, attend_status_name(st), dt, e.msg);
        EXPECT(st == ATTEND_ERR_FORMAT && d == NULL, "skip %d: %s", skip, attend_status_name(st));
        EXPECT(strstr(e.msg, "/dev/zero:1: ") == e.msg, "skip %d: the message names /dev/zero:1: %s", skip, e.msg);
        EXPECT(strstr(e.msg, skip ? "no end of line within 16777216 bytes" : "longer than max_line_bytes=4096"),
               "skip %d: %s", skip, e.msg);
        EXPECT(dt < 2.0, "skip %d: took %.3f s", skip, dt);
    }
    /* a directory: fopen succeeds, reading fails */
    attend_dataset *d = NULL;
    attend_status st = attend_dataset_read_tsv(&d, g_dir, sv, tv, 1, NULL, NULL, &e);
    printf("  directory: %s: %s\n", attend_status_name(st), e.msg);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, ":1: read error: Is a directory"), "%s", e.msg);
    /* limits */
    attend_tsv_options big = {ATTEND_TOKENIZE_CHAR, ATTEND_TSV_MAX_LINE_BYTES + 1, 0, 0, 0};
    st = attend_dataset_read_tsv(&d, "/dev/null", sv, tv, 1, &big, NULL, &e);
    EXPECT(st == ATTEND_ERR_ARG && strstr(e.msg, "above the limit"), "%s", e.msg);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
}

/* An over-long line that ends is skipped with skip_malformed and the lines
 * after it are read, at the right line numbers. */
static void test_tsv_skip_long_line(void) {
    const char *p = tmp_path("long.tsv");
    size_t n = 100000;
    char *text = malloc(n + 64);
    strcpy(text, "ab\tba\n");
    size_t u = strlen(text);
    memset(text + u, 'x', n);
    u += n;
    strcpy(text + u, "\ncd\tdc\nef\n");
    EXPECT(write_text(p, text), "write %s", p);
    free(text);
    attend_vocab *sv = NULL, *tv = NULL;
    attend_vocab_create(&sv, NULL);
    attend_vocab_create(&tv, NULL);
    attend_tsv_options o = {ATTEND_TOKENIZE_CHAR, 0, 0, 1, 0};
    attend_dataset *d = NULL;
    attend_error e;
    int skipped = 0;
    EXPECT(attend_dataset_read_tsv(&d, p, sv, tv, 1, &o, &skipped, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_dataset_size(d) == 2 && skipped == 2, "pairs %d skipped %d (want 2, 2)", attend_dataset_size(d),
           skipped);
    attend_dataset_free(d);
    o.skip_malformed = 0;
    EXPECT(attend_dataset_read_tsv(&d, p, sv, tv, 1, &o, &skipped, &e) == ATTEND_ERR_FORMAT &&
               strstr(e.msg, ":2: line is longer than max_line_bytes=4096"),
           "%s", e.msg);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
}

/* ----------------------------------------------------------- output paths */

static void test_output_check(void) {
    attend_error e;
    /* fine: a new file, an existing regular file; nothing left behind */
    EXPECT(attend_output_check(tmp_path("new.safetensors"), 0, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(write_text(tmp_path("old.safetensors"), "x"), "write");
    EXPECT(attend_output_check(tmp_path("old.safetensors"), 0, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(count_tmp_files() == 0, "a probe file was left");
    EXPECT(access(tmp_path("new.safetensors"), F_OK) != 0, "the check created the target");
    /* a missing directory */
    attend_status st = attend_output_check(tmp_path("missing/m.safetensors"), 0, &e);
    printf("  missing directory: %s\n", e.msg);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "No such file or directory") && strstr(e.msg, "missing"), "%s",
           e.msg);
    /* a name that fits NAME_MAX alone, not with ".tmp.<pid>" */
    char name[256];
    memset(name, 'n', 250);
    name[250] = '\0';
    st = attend_output_check(tmp_path(name), 0, &e);
    printf("  long name: %.120s...\n", e.msg);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "name too long"), "%s", e.msg);
    /* a read-only directory (as root: /sys, where even root cannot create) */
    const char *ro = tmp_path("ro");
    mkdir(ro, 0555);
    chmod(ro, 0555);
    char rofile[800];
    snprintf(rofile, sizeof rofile, "%s/m.safetensors", ro);
    if (geteuid() == 0) snprintf(rofile, sizeof rofile, "/sys/attend-test.safetensors");
    if (access("/sys", F_OK) == 0 || geteuid() != 0) {
        st = attend_output_check(rofile, 0, &e);
        printf("  read-only directory: %s\n", e.msg);
        EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "creating a file in directory"), "%s: %s", rofile, e.msg);
    } else {
        printf("  note: root without /sys: read-only sub-case skipped\n");
    }
    chmod(ro, 0755);
    rmdir(ro);
    /* a directory, a FIFO, a character device */
    st = attend_output_check(g_dir, ATTEND_OUTPUT_ALLOW_SPECIAL, &e);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "is a directory"), "%s", e.msg);
    const char *fifo = tmp_path("fifo");
    EXPECT(mkfifo(fifo, 0644) == 0, "mkfifo: %s", strerror(errno));
    st = attend_output_check(fifo, 0, &e);
    printf("  FIFO: %s\n", e.msg);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "is a FIFO, not a regular file: refusing"), "%s", e.msg);
    EXPECT(attend_output_check(fifo, ATTEND_OUTPUT_ALLOW_SPECIAL, &e) == ATTEND_OK, "allowed FIFO: %s", e.msg);
    st = attend_output_check("/dev/null", 0, &e);
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "a character device"), "%s", e.msg);
    EXPECT(attend_output_check(fifo, 2, &e) == ATTEND_ERR_ARG, "unknown flag");
    remove(fifo);
    EXPECT(count_tmp_files() == 0, "a probe file was left");
}

static void test_same_file(void) {
    attend_error e;
    int same = -1;
    char a[700], hard[700], sym[700], b[700], n1[700], n1b[700], n2[700], ck[700], ck2[700], model[700];
    snprintf(a, sizeof a, "%s", tmp_path("a.tsv"));
    snprintf(hard, sizeof hard, "%s", tmp_path("hard.tsv"));
    snprintf(sym, sizeof sym, "%s", tmp_path("sym.tsv"));
    snprintf(b, sizeof b, "%s", tmp_path("b.tsv"));
    snprintf(n1, sizeof n1, "%s", tmp_path("n1"));
    snprintf(n1b, sizeof n1b, "%s", tmp_path("sub/../n1"));
    snprintf(n2, sizeof n2, "%s", tmp_path("n2"));
    snprintf(ck, sizeof ck, "%s", tmp_path("ck"));
    snprintf(ck2, sizeof ck2, "%s", tmp_path("./ck"));
    snprintf(model, sizeof model, "%s", tmp_path("model"));
    EXPECT(write_text(a, "ab\tba\n"), "write");
    EXPECT(link(a, hard) == 0 && symlink(a, sym) == 0, "links: %s", strerror(errno));
    char dotted[800];
    snprintf(dotted, sizeof dotted, "%s/./sub/../a.tsv", g_dir);
    mkdir(tmp_path("sub"), 0755);
    const char *pairs[][3] = {{a, a, "1"},  {a, hard, "1"},  {a, sym, "1"}, {a, dotted, "1"},
                              {a, b, "0"},  {n1, n1b, "1"},  {n1, n2, "0"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        EXPECT(attend_path_same(pairs[i][0], pairs[i][1], &same, &e) == ATTEND_OK, "%s", e.msg);
        EXPECT(same == (pairs[i][2][0] == '1'), "'%s' vs '%s': same=%d", pairs[i][0], pairs[i][1], same);
    }
    /* the check names both roles, before touching anything */
    attend_path_use uses[] = {{a, "--train", 0, 0}, {NULL, "--dev", 0, 0}, {ck, "--checkpoint", 1, 0},
                              {sym, "--out", 1, 0}};
    attend_status st = attend_paths_check(uses, 4, &e);
    printf("  %s\n", e.msg);
    EXPECT(st == ATTEND_ERR_ARG && strstr(e.msg, "--train '") && strstr(e.msg, "--out '") &&
               strstr(e.msg, "same file") && strstr(e.msg, "destroy the input"),
           "%s", e.msg);
    uses[3].path = ck2;
    st = attend_paths_check(uses, 4, &e);
    EXPECT(st == ATTEND_ERR_ARG && strstr(e.msg, "--checkpoint '") && strstr(e.msg, "lose one of the two outputs"),
           "%s", e.msg);
    uses[3].path = model;
    EXPECT(attend_paths_check(uses, 4, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(count_tmp_files() == 0, "a probe file was left");
}

static void test_st_write_fifo_and_stale(void) {
    attend_error e;
    float x[2] = {1, 2};
    attend_st_entry ent = {"x", ATTEND_DTYPE_F32, 1, {2}, x};
    const char *fifo = tmp_path("out.fifo");
    EXPECT(mkfifo(fifo, 0644) == 0, "mkfifo");
    attend_status st = attend_st_write(fifo, &ent, 1, NULL, 0, &e);
    struct stat sb;
    EXPECT(st == ATTEND_ERR_IO && strstr(e.msg, "is a FIFO"), "%s: %s", attend_status_name(st), e.msg);
    EXPECT(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO was replaced");
    remove(fifo);
    /* temporaries: a dead writer's removed, a live one's (ours) and odd names kept */
    const char *out = tmp_path("m.safetensors");
    char dead[800], live[800], odd[800];
    snprintf(dead, sizeof dead, "%s.tmp.%ld", out, dead_pid());
    snprintf(live, sizeof live, "%s.tmp.%ld", out, (long)getppid());
    snprintf(odd, sizeof odd, "%s.tmp.12x", out);
    EXPECT(write_text(dead, "d") && write_text(live, "l") && write_text(odd, "o"), "write temporaries");
    EXPECT(attend_st_write(out, &ent, 1, NULL, 0, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(access(dead, F_OK) != 0, "the dead writer's temporary %s is still there", dead);
    EXPECT(access(live, F_OK) == 0 && access(odd, F_OK) == 0, "a live writer's or an odd file was removed");
    /* the public call reports what it removes */
    EXPECT(write_text(dead, "d"), "write");
    int removed = -1;
    EXPECT(attend_output_clean_stale(out, NULL, NULL, &removed, &e) == ATTEND_OK && removed == 1, "removed %d: %s",
           removed, e.msg);
    remove(live);
    remove(odd);
    remove(out);
}

/* ----------------------------------------------------------- fingerprints */

/* A checkpoint of the fuzz setup after 3 steps, and the same checkpoint as an
 * older writer made it (attend.train without the fingerprint fields). */
static void test_resume_fingerprint(void) {
    fuzz_setup s;
    attend_error e, note;
    attend_trainer *tr = NULL;
    if (fuzz_setup_make(&s, &e) || fuzz_setup_trainer(&s, &tr, &e)) {
        EXPECT(0, "setup: %s", e.msg);
        return;
    }
    for (int i = 0; i < 3; i++) attend_trainer_step(tr, NULL, &e);
    const char *ck = tmp_path("fp.ckpt");
    EXPECT(attend_trainer_save(tr, ck, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &e) == ATTEND_OK, "%s", e.msg);
    attend_trainer_free(tr);
    attend_resume_options ro = {s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, 0};

    /* the same data and options: resumed, nothing to note */
    attend_trainer *t2 = NULL;
    fuzz_setup_trainer(&s, &t2, &e);
    EXPECT(attend_trainer_resume_checked(t2, ck, &ro, &note, &e) == ATTEND_OK && note.status == ATTEND_OK &&
               attend_trainer_steps(t2) == 3,
           "%s / %s", e.msg, note.msg);
    attend_trainer_free(t2);

    /* the same pairs in another order */
    attend_dataset *rev = NULL;
    attend_dataset_create(&rev, NULL);
    for (int i = attend_dataset_size(s.data) - 1; i >= 0; i--) {
        const int32_t *src, *tgt;
        int sl, tl;
        attend_dataset_get(s.data, i, &src, &sl, &tgt, &tl, NULL);
        attend_dataset_add(rev, src, sl, tgt, tl, NULL);
    }
    attend_trainer_create(&t2, s.model, &s.opt, rev, 4, 7, &e);
    attend_status st = attend_trainer_resume_checked(t2, ck, &ro, &note, &e);
    printf("  reordered: %s\n", e.msg);
    EXPECT(st == ATTEND_ERR_ARG && strstr(e.msg, "training data hash") && attend_trainer_steps(t2) == 0, "%s",
           e.msg);
    EXPECT(attend_trainer_resume(t2, ck, &e) == ATTEND_ERR_ARG, "plain resume accepted reordered data");
    ro.anyway = 1;
    EXPECT(attend_trainer_resume_checked(t2, ck, &ro, &note, &e) == ATTEND_OK && note.status == ATTEND_ERR_ARG &&
               strstr(note.msg, "resumed anyway") && strstr(note.msg, "training data hash"),
           "anyway: %s / %s", e.msg, note.msg);
    ro.anyway = 0;
    attend_trainer_free(t2);
    attend_dataset_free(rev);

    /* another lr, another seed */
    attend_optim_config o2 = s.opt;
    o2.lr = 2e-2;
    attend_trainer_create(&t2, s.model, &o2, s.data, 4, 7, &e);
    st = attend_trainer_resume_checked(t2, ck, &ro, &note, &e);
    printf("  lr: %s\n", e.msg);
    EXPECT(st == ATTEND_ERR_ARG && strstr(e.msg, "lr is 0.01, in this run 0.02"), "%s", e.msg);
    attend_trainer_free(t2);
    attend_trainer_create(&t2, s.model, &s.opt, s.data, 4, 8, &e);
    st = attend_trainer_resume_checked(t2, ck, &ro, &note, &e);
    printf("  seed: %s\n", e.msg);
    EXPECT(st == ATTEND_ERR_ARG && strstr(e.msg, "seed is 7, in this run 8"), "%s", e.msg);
    attend_trainer_free(t2);

    /* a vocabulary with ids reassigned */
    attend_vocab *v2 = NULL;
    attend_vocab_create(&v2, NULL);
    for (int i = attend_vocab_size(s.vocab) - 1; i >= 4; i--) {
        const char *t = attend_vocab_token(s.vocab, i);
        attend_vocab_add(v2, t, strlen(t), NULL, NULL);
    }
    attend_resume_options rv = {v2, v2, ATTEND_TOKENIZE_CHAR, 0};
    fuzz_setup_trainer(&s, &t2, &e);
    st = attend_trainer_resume_checked(t2, ck, &rv, &note, &e);
    printf("  vocabulary: %s\n", e.msg);
    EXPECT(st == ATTEND_ERR_ARG && strstr(e.msg, "source vocabulary id 4 is 'a', in this run 'e'"), "%s", e.msg);
    attend_trainer_free(t2);
    attend_vocab_free(v2);

    /* an older checkpoint: attend.train without the new fields */
    attend_st_file *f = NULL;
    EXPECT(attend_st_open(&f, ck, 0, &e) == ATTEND_OK, "%s", e.msg);
    if (f) {
        static const char *const keys[] = {"attend.format",    "attend.version",   "attend.config",
                                           "attend.tokenizer", "attend.src_vocab", "attend.tgt_vocab",
                                           "attend.train"};
        int nt = attend_st_count(f), nm = 0;
        attend_st_entry *ents = calloc((size_t)nt, sizeof *ents);
        attend_st_meta meta[8];
        for (int i = 0; i < nt; i++) {
            const attend_st_tensor *t = attend_st_get(f, i);
            ents[i].name = t->name;
            ents[i].dtype = t->dtype;
            ents[i].ndim = t->ndim;
            memcpy(ents[i].shape, t->shape, sizeof t->shape);
            ents[i].data = t->data;
        }
        char old_train[512] = "";
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            const char *v = attend_st_metadata(f, keys[i]);
            if (!v) continue;
            if (!strcmp(keys[i], "attend.train")) {
                const char *cut = strstr(v, ",\"min_lr\"");
                EXPECT(cut != NULL, "attend.train has no min_lr: %s", v);
                snprintf(old_train, sizeof old_train, "%.*s}", cut ? (int)(cut - v) : 0, v);
                v = old_train;
            }
            meta[nm].key = keys[i];
            meta[nm++].value = v;
        }
        const char *old = tmp_path("old.ckpt");
        EXPECT(attend_st_write(old, ents, nt, meta, nm, &e) == ATTEND_OK, "%s", e.msg);
        free(ents);
        attend_st_close(f);
        fuzz_setup_trainer(&s, &t2, &e);
        st = attend_trainer_resume_checked(t2, old, &ro, &note, &e);
        printf("  older checkpoint: %s; note: %s\n", attend_status_name(st), note.msg);
        EXPECT(st == ATTEND_OK && note.status == ATTEND_ERR_FORMAT && strstr(note.msg, "older checkpoint") &&
                   strstr(note.msg, "training data") && attend_trainer_steps(t2) == 3,
               "%s / %s", e.msg, note.msg);
        attend_trainer_free(t2);
        /* what it does record is still compared */
        attend_trainer_create(&t2, s.model, &o2, s.data, 4, 7, &e);
        EXPECT(attend_trainer_resume_checked(t2, old, &ro, &note, &e) == ATTEND_ERR_ARG && strstr(e.msg, "lr is"),
               "%s", e.msg);
        attend_trainer_free(t2);
    }
    fuzz_setup_free(&s);
}

/* Issue 28: a caller's state travels in the checkpoint (and nothing changes
 * when it is refused); the run's fingerprint; model files with extra
 * metadata; the first differing configuration field. */
static void test_caller_state(void) {
    fuzz_setup s;
    attend_error e;
    attend_trainer *tr = NULL;
    if (fuzz_setup_make(&s, &e) || fuzz_setup_trainer(&s, &tr, &e)) {
        EXPECT(0, "setup: %s", e.msg);
        return;
    }
    EXPECT(attend_trainer_caller_state(tr) == NULL, "a new trainer has a caller state");
    for (int i = 0; i < 2; i++) attend_trainer_step(tr, NULL, &e);
    const char *state = "early-stopping v1 select=token best=-0x1.8p-1 \xc3\xa9";
    EXPECT(attend_trainer_set_caller_state(tr, state, &e) == ATTEND_OK, "%s", e.msg);
    const char *ck = tmp_path("caller.ckpt"), *old = tmp_path("old.ckpt");
    EXPECT(attend_trainer_save(tr, ck, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_trainer_set_caller_state(tr, NULL, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_trainer_save(tr, old, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, &e) == ATTEND_OK, "%s", e.msg);
    char fp[17], fp2[17];
    attend_trainer_fingerprint(tr, fp);
    EXPECT(strlen(fp) == 16 && strspn(fp, "0123456789abcdef") == 16, "fingerprint '%s'", fp);
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    EXPECT(attend_trainer_set_caller_state(tr, big, &e) == ATTEND_ERR_ARG, "4999 bytes accepted: %s", e.msg);
    EXPECT(attend_trainer_set_caller_state(tr, "\xff", &e) == ATTEND_ERR_ARG, "invalid UTF-8 accepted");
    attend_trainer_free(tr);

    attend_trainer *t2 = NULL;
    fuzz_setup_trainer(&s, &t2, &e);
    attend_trainer_fingerprint(t2, fp2);
    EXPECT(!strcmp(fp, fp2), "the same data and options, fingerprints %s and %s", fp, fp2);
    EXPECT(attend_trainer_resume(t2, ck, &e) == ATTEND_OK, "%s", e.msg);
    const char *got = attend_trainer_caller_state(t2);
    EXPECT(got && !strcmp(got, state), "restored '%s'", got ? got : "(null)");
    EXPECT(attend_trainer_resume(t2, old, &e) == ATTEND_OK && attend_trainer_caller_state(t2) == NULL,
           "a checkpoint without one left '%s'", attend_trainer_caller_state(t2));
    attend_trainer_free(t2);
    /* another seed: another fingerprint */
    attend_trainer *t3 = NULL;
    attend_trainer_create(&t3, s.model, &s.opt, s.data, 4, 8, &e);
    attend_trainer_fingerprint(t3, fp2);
    EXPECT(strcmp(fp, fp2), "seeds 7 and 8 gave one fingerprint %s", fp);
    attend_trainer_free(t3);

    /* model files with extra metadata, read back; the file's own keys refused */
    const char *mp = tmp_path("meta.safetensors");
    attend_st_meta meta[1] = {{"attend.run", fp}};
    EXPECT(attend_model_save_meta(s.model, mp, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, meta, 1, &e) == ATTEND_OK,
           "%s", e.msg);
    attend_st_file *f = NULL;
    EXPECT(attend_st_open(&f, mp, 0, &e) == ATTEND_OK, "%s", e.msg);
    const char *run = attend_st_metadata(f, "attend.run");
    EXPECT(run && !strcmp(run, fp), "attend.run '%s'", run ? run : "(none)");
    attend_st_close(f);
    attend_st_meta own[1] = {{"attend.config", "{}"}};
    EXPECT(attend_model_save_meta(s.model, mp, s.vocab, s.vocab, ATTEND_TOKENIZE_CHAR, own, 1, &e) == ATTEND_ERR_ARG,
           "attend.config accepted: %s", e.msg);

    /* the first differing field, both values */
    attend_model_config a = *attend_model_get_config(s.model), b = a;
    char field[32], va[32], vb[32];
    EXPECT(!attend_model_config_diff(&a, &b, 1, field, va, vb), "equal configurations differ in %s", field);
    b.normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    b.coverage = 1;
    EXPECT(attend_model_config_diff(&a, &b, 0, field, va, vb) && !strcmp(field, "coverage") && !strcmp(va, "0") &&
               !strcmp(vb, "1"),
           "got %s %s %s", field, va, vb);
    b = a;
    b.max_batch = a.max_batch + 1;
    EXPECT(!attend_model_config_diff(&a, &b, 0, field, va, vb), "capacities compared without the flag");
    EXPECT(attend_model_config_diff(&a, &b, 1, field, va, vb) && !strcmp(field, "max_batch"), "got %s", field);
    b = a;
    b.encoder = ATTEND_ENCODER_TRANSFORMER; /* the encoder kinds' fields (issue 27) */
    b.heads = 2;
    EXPECT(attend_model_config_diff(&a, &b, 0, field, va, vb) && !strcmp(field, "encoder") && !strcmp(va, "rnn") &&
               !strcmp(vb, "transformer"),
           "got %s %s %s", field, va, vb);
    b = a;
    b.kernel = 3;
    EXPECT(attend_model_config_diff(&a, &b, 0, field, va, vb) && !strcmp(field, "kernel") && !strcmp(vb, "3"),
           "got %s %s %s", field, va, vb);
    b = a;
    b.dec_layers = 1; /* 0 and 1 are both one layer */
    EXPECT(!attend_model_config_diff(&a, &b, 1, field, va, vb), "dec_layers 0 and 1 differ");
    remove(ck);
    remove(old);
    remove(mp);
    fuzz_setup_free(&s);
}

int main(void) {
    const char *t = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/attend-test-careless-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(g_dir)) return 1;
    RUN(test_tsv_endless_input);
    RUN(test_tsv_skip_long_line);
    RUN(test_output_check);
    RUN(test_same_file);
    RUN(test_st_write_fifo_and_stale);
    RUN(test_resume_fingerprint);
    RUN(test_caller_state);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return harness_summary();
}
