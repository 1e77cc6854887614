/* signals.h — SIGINT and SIGTERM during training (issue 28, docs/RELIABILITY.md
 * "Nothing lost"): the first one is only noted, so the run finishes the step it
 * is in, saves what it can and says how to resume; a second one ends the
 * process at once, as the default action would. */
#ifndef ATTEND_CLI_SIGNALS_H
#define ATTEND_CLI_SIGNALS_H

/* Installs the handlers for SIGINT and SIGTERM (idempotent); a signal that
 * was ignored when the process started stays ignored. */
void cli_signals_catch(void);
/* The first signal received since cli_signals_catch (SIGINT or SIGTERM), or 0. */
int cli_signal_pending(void);
/* "SIGINT" or "SIGTERM". */
const char *cli_signal_name(int sig);
/* The exit status of a run stopped by sig: 128 + sig (130, 143). */
int cli_signal_status(int sig);

#endif
