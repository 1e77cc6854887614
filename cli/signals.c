/*
 * signals.c — the command's handling of SIGINT and SIGTERM (signals.h). The
 * handler only records the signal; the training loop looks at it between
 * steps. A second signal restores the default action and raises it again, so
 * an impatient user (or a supervisor's second TERM) stops the process at once;
 * every file write is atomic, so that loses nothing already saved.
 */
#define _POSIX_C_SOURCE 200809L
#include "signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t pending;
static int installed;

static void on_signal(int sig) {
    if (pending) { /* the second one: the default action, now */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    pending = sig;
}

void cli_signals_catch(void) {
    if (installed) return;
    installed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* reads and writes go on; the loop checks between steps */
    /* a signal ignored when we started stays ignored (nohup, a shell's
     * background job without job control): whoever started us chose that */
    const int sigs[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        struct sigaction was;
        if (sigaction(sigs[i], NULL, &was) == 0 && was.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

int cli_signal_pending(void) { return (int)pending; }

const char *cli_signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

int cli_signal_status(int sig) { return 128 + sig; }
