/* outputs.h — the command's side of the output-file checks (docs/RELIABILITY.md,
 * "Careless users"): every command that writes files checks them all before it
 * starts any work, and writes a device or FIFO only when asked to. */
#ifndef ATTEND_CLI_OUTPUTS_H
#define ATTEND_CLI_OUTPUTS_H

#include <stddef.h>

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

#endif
