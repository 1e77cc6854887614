/*
 * train_loop.h — the training loop of `attend train` and `attend g2p train`:
 * attend_trainer steps until a total, one progress display (a redrawn bar on
 * a terminal, else a log line every log_every steps), the report of skipped
 * non-finite steps, and a hook after every step where a command adds its own
 * work (checkpoints, evaluations, early stopping, best-model selection).
 *
 * Progress goes to stderr:
 *   terminal  "[####....] step S/TOTAL<tag> loss L  P pairs/s  ETA 1m05s"
 *             (L an exponential moving average, 0.9 old + 0.1 new; redrawn at
 *             most every 0.1 s and at the last step)
 *   log       "step S/TOTAL<tag> loss L lr X gnorm G pairs/s P" (L, G, P
 *             averaged over the steps since the last log line)
 *   skipped   "step S: loss is not finite: update skipped" (the first 10)
 * <tag> is what the tag hook writes (g2p: " epoch E"), empty without one.
 */
#ifndef ATTEND_CLI_TRAIN_LOOP_H
#define ATTEND_CLI_TRAIN_LOOP_H

#include "attend.h"

typedef struct train_loop train_loop;

typedef struct {
    const char *cmd;      /* names the command in messages */
    attend_trainer *tr;
    long total;           /* train until attend_trainer_steps reaches this */
    int log_every;        /* log line period when stderr is not a terminal */
    int max_nonfinite;    /* as given to attend_trainer_set_max_nonfinite (for the stop message) */
    const char *checkpoint; /* the checkpoint path, or NULL (for the stop message) */
    /* After every step (progress shown): the command's own work; clear the
     * bar (train_loop_clear) before printing. Nonzero return: stop with that
     * status; *stop = 1: stop after this step, successfully. May be NULL. */
    int (*after_step)(void *user, train_loop *lp, const attend_step_report *r, int *stop);
    /* Writes text shown after "step S/TOTAL" (NUL-terminated, into buf [n]). May be NULL. */
    void (*tag)(void *user, long step, char *buf, size_t n);
    void *user;
} train_loop_config;

struct train_loop {
    const train_loop_config *c;
    int tty;            /* stderr is a terminal: redraw one line */
    int bar_len;        /* characters of the bar now on screen */
    double last_draw;
    /* since the last log line */
    double loss_sum, gnorm_sum, train_time;
    long tokens, samples, good_steps;
    double ema_loss;    /* for the bar */
    int have_ema;
    /* the whole run */
    long start_step;    /* attend_trainer_steps before the first step */
    double t_train;     /* seconds in attend_trainer_step */
    long run_samples;   /* pairs trained on */
    int interrupted;    /* SIGINT or SIGTERM (cli/signals.h) stopped the loop before a step; else 0 */
};

/* Best-model selection and early stopping, one implementation for `attend
 * train` (dev loss or greedy accuracy) and `attend g2p train` (dev WER): each
 * evaluation gives a score, lower is better; a strictly lower one is the new
 * best (the caller saves the model), any other counts as a bad evaluation,
 * and `patience` bad evaluations in a row stop the run. */
typedef struct {
    int patience;   /* bad evaluations in a row that stop the run; 0: never stop */
    double best;    /* the best score so far (the one to beat) */
    long best_step; /* the step it was reached at (0: before this run, or none) */
    int bad;        /* bad evaluations since the best */
    long last_step; /* the step of the last evaluation recorded (0: none) */
} train_best;

/* Starts with `best` as the score to beat (INFINITY, or a resumed run's). */
void train_best_init(train_best *b, int patience, double best);
/* Records the score of the evaluation at step: 1 when it is a new best, else
 * 0; *stop = 1 when patience has run out (else unchanged). */
int train_best_update(train_best *b, double score, long step, int *stop);

/* What a training command has decided so far, carried in its checkpoints
 * (attend_trainer_set_caller_state) so that a resumed run continues it
 * exactly: the score it selects by ("" when none), the patience and the
 * evaluation period it counted with, the best so far, whether early stopping
 * ended the run, the training time of the whole run, and the fingerprint of
 * the run that wrote the best model. */
typedef struct {
    char select[16];   /* "loss", "token", "seq", "wer"; "" when not selecting */
    int patience, eval_every;
    train_best best;
    int stopped;       /* early stopping ended the run */
    double trained_s;  /* seconds in training steps, all sessions */
    char run[17];      /* attend_trainer_fingerprint of the run that saved the best model ("" none) */
} train_state;

/* One line: "early-stopping v1 select=token patience=3 ...", doubles exact (%a). */
void train_state_format(const train_state *s, char *buf, size_t n);
/* 0 and *s filled, or -1 when text is not such a line. */
int train_state_parse(const char *text, train_state *s);

/* Runs the loop; 0 when it reached total, a hook stopped it or a signal
 * interrupted it (lp->interrupted), else the failing status (the message
 * printed). Before each step the loop looks at cli_signal_pending (rank 0's,
 * under mpirun, so every rank stops at the same step). lp receives the run's
 * numbers. */
int train_loop_run(const train_loop_config *c, train_loop *lp);

/* Clears the bar (nothing unless one is on screen). */
void train_loop_clear(train_loop *lp);

/* Training pairs per second over the run (0 before any step). */
double train_loop_pairs_per_s(const train_loop *lp);

#endif
