/* outputs.h — the command's side of the output-file checks (docs/RELIABILITY.md,
 * "Careless users"): every command that writes files checks them all before it
 * starts any work, and writes a device or FIFO only when asked to. */
#ifndef ATTEND_CLI_OUTPUTS_H
#define ATTEND_CLI_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "attend.h"

/* Ignores SIGXFSZ (a file-size limit then makes write() fail with EFBIG, which
 * the writers report and clean up after, instead of killing the process), then
 * attend_paths_check(uses, n). On failure prints "attend CMD: <message>" (and,
 * for a non-regular target, how to allow it: special_hint, may be NULL) and
 * returns 1; else 0. */
int cli_check_outputs(const char *cmd, const attend_path_use *uses, int n, const char *special_hint);

/* The files of a training command, checked with cli_check_outputs: the data
 * (data_role names its option; dev may be NULL) and resume are inputs, the
 * checkpoint and out outputs (out with out_flags); resume may be the
 * checkpoint itself (continuing it in place). NULL paths are skipped. */
int cli_check_train_files(const char *cmd, const char *data_role, const char *data, const char *dev,
                          const char *resume, const char *checkpoint, const char *out, unsigned out_flags,
                          const char *special_hint);

/* Removes the temporaries of path left by dead processes, printing
 * "<label>: removed FILE, left by process PID, which is gone" for each. */
void cli_clean_stale(const char *label, const char *path);

/* Writing target through the library's atomic writer, which refuses
 * non-regular files: cli_output_begin gives the path to hand to the writer,
 * target itself for a regular (or missing) file, else a fresh regular file in
 * $TMPDIR (or /tmp) whose bytes cli_output_finish then copies into target in
 * place (a FIFO, /dev/stdout) and removes. buf holds the temporary's name.
 * cli_output_finish with ok = 0 only removes the temporary. Both return 0 on
 * success, else print "attend CMD: ..." and return 1. */
int cli_output_begin(const char *cmd, const char *target, char *buf, size_t cap, const char **write_path);
int cli_output_finish(const char *cmd, const char *target, const char *write_path, int ok);

/* An output written in place that is this process's standard output
 * (--out /dev/stdout, --svg /dev/fd/1, or the FIFO or file fd 1 is): the
 * command's report would interleave with the file's bytes (and, stdout being
 * buffered, overwrite them in a regular file). cli_stdout_claim looks at the
 * n paths (NULL ones skipped) after the checks before any work; for the one
 * that is standard output it moves the report to standard error (fd 1 becomes
 * a copy of fd 2) and keeps the original standard output as a private
 * descriptor, which cli_write_path then names ("/dev/fd/N") for that path
 * (and returns every other path unchanged). At most one path can be standard
 * output (attend_paths_check refuses two names of one file). Returns 0, or 1
 * after a message. The CLI is single-threaded: the claim is process state. */
int cli_stdout_claim(const char *cmd, const char *const *paths, int n);
const char *cli_write_path(const char *path);

/* ------------------------------------------------ training runs (issue 28) */

/* An existing checkpoint is never replaced without being asked: when
 * checkpoint exists and is not the --resume file, a usage error naming
 * --resume and --overwrite (returns 2); else 0. */
int cli_check_checkpoint_reuse(const char *cmd, const char *checkpoint, const char *resume, int overwrite);

/* One writer per output: takes the lock files of the n paths (NULL ones
 * skipped) into locks [n]; a path another process holds is an error naming
 * it ("'m.st' is in use by process 123 (lock file m.st.lock)"), returns 1
 * after releasing what it took. A lock of a process that is gone is taken
 * over with a note. */
int cli_lock_outputs(const char *cmd, const char *const *paths, int n, attend_lock **locks);
void cli_unlock_outputs(attend_lock **locks, int n);

/* Free space for the outputs a run will write, before it trains: paths [n]
 * (NULL ones and in-place targets skipped) need bytes [n] each, named by what
 * [n] ("the model"); outputs on one file system need their sum. Returns 0, or
 * 1 after "attend CMD: not enough free space: ...". */
int cli_check_space(const char *cmd, const char *const *paths, const uint64_t *bytes, const char *const *what, int n);

/* The size a model file of m with these vocabularies takes, at most (its
 * tensors and a bound on the JSON header); a checkpoint adds the optimizer's
 * moments (two per parameter at most) and the data order. */
uint64_t cli_model_file_bytes(const attend_model *m, const attend_vocab *src_vocab, const attend_vocab *tgt_vocab);
uint64_t cli_checkpoint_bytes(const attend_model *m, const attend_vocab *src_vocab, const attend_vocab *tgt_vocab,
                              int data_size);

/* A best-model output (--select, g2p train's --out) that already exists must
 * be a model this run (or the run its checkpoint continues, run_fp2; may be
 * NULL) wrote: the same configuration and run fingerprint (metadata
 * "attend.run", attend_trainer_fingerprint). Anything else would be replaced
 * by this run's first evaluation: a usage error naming the difference and
 * --overwrite (returns 2), unless overwrite. 0 when out does not exist. */
int cli_check_best_out(const char *cmd, const char *option, const char *out, const attend_model *m,
                       const char *run_fp, const char *run_fp2, int overwrite);

/* Saves m to path with the run's fingerprint (metadata "attend.run"). */
attend_status cli_save_model(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                             const attend_vocab *tgt_vocab, attend_tokenizer tok, const char *run_fp,
                             attend_error *err);

#endif
