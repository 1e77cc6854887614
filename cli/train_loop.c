/*
 * train_loop.c — the one CLI training loop and its progress display
 * (train_loop.h), used by `attend train` (cli/train.c) and `attend g2p
 * train` (cli/g2p_train.c), and their best-model selection and early
 * stopping (train_best).
 */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include "train_loop.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mpirun.h"
#include "signals.h"

#define MAX_NONFINITE_REPORTS 10

void train_loop_clear(train_loop *lp) {
    if (lp->tty && lp->bar_len) {
        fprintf(stderr, "\r%*s\r", lp->bar_len, "");
        fflush(stderr);
        lp->bar_len = 0;
    }
}

double train_loop_pairs_per_s(const train_loop *lp) {
    return lp->t_train > 0 ? (double)lp->run_samples / lp->t_train : 0;
}

static void format_eta(char *buf, size_t n, double s) {
    if (!(s >= 0) || s > 1e7) snprintf(buf, n, "?");
    else if (s < 60) snprintf(buf, n, "%.0fs", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void draw_bar(train_loop *lp, long step, long total, const char *tag, double sps, double eta) {
    char line[200], e[32];
    int width = 24, filled = total > 0 ? (int)((double)width * (double)step / (double)total) : width;
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    format_eta(e, sizeof e, eta);
    int n = snprintf(line, sizeof line, "[%s] step %ld/%ld%s loss %.4f  %.0f pairs/s  ETA %s", bar, step, total,
                     tag, lp->ema_loss, sps, e);
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    fprintf(stderr, "\r%s", line);
    if (n < lp->bar_len) fprintf(stderr, "%*s", lp->bar_len - n, "");
    fflush(stderr);
    lp->bar_len = n;
}

static const char *nonfinite_name(double x) { return isnan(x) ? "nan" : x > 0 ? "inf" : "-inf"; }

/* The statistics and display of one step. */
static void show_step(train_loop *lp, const attend_step_report *r, double dt) {
    const train_loop_config *c = lp->c;
    lp->t_train += dt;
    lp->run_samples += r->tf.seqs;
    lp->train_time += dt;
    lp->samples += r->tf.seqs;
    if (r->skipped) {
        long skipped = attend_trainer_skipped(c->tr);
        if (skipped <= MAX_NONFINITE_REPORTS) {
            train_loop_clear(lp);
            int loss_ok = isfinite(r->tf.loss);
            fprintf(stderr, "step %ld: %s %s is not finite: update skipped%s\n", r->step,
                    loss_ok ? "gradient norm" : "loss", nonfinite_name(loss_ok ? r->opt.grad_norm : r->tf.loss),
                    skipped == MAX_NONFINITE_REPORTS ? " (further ones only counted)" : "");
        }
    } else {
        lp->loss_sum += r->tf.loss * r->tf.tokens;
        lp->tokens += r->tf.tokens;
        lp->gnorm_sum += r->opt.grad_norm;
        lp->good_steps++;
        lp->ema_loss = lp->have_ema ? 0.9 * lp->ema_loss + 0.1 * r->tf.loss : r->tf.loss;
        lp->have_ema = 1;
    }
    long step = r->step, total = c->total;
    char tag[64] = "";
    if (c->tag) c->tag(c->user, step, tag, sizeof tag);
    if (lp->tty) {
        double now = cli_now();
        if (now - lp->last_draw >= 0.1 || step == total) {
            double eta =
                step > lp->start_step ? (double)(total - step) * lp->t_train / (double)(step - lp->start_step) : -1;
            draw_bar(lp, step, total, tag, train_loop_pairs_per_s(lp), eta);
            lp->last_draw = now;
        }
    } else if (step % c->log_every == 0 || step == total) {
        fprintf(stderr, "step %ld/%ld%s loss %.4f lr %.3g gnorm %.3g pairs/s %.0f\n", step, total, tag,
                lp->tokens ? lp->loss_sum / (double)lp->tokens : NAN, r->opt.lr,
                lp->good_steps ? lp->gnorm_sum / (double)lp->good_steps : NAN,
                lp->train_time > 0 ? (double)lp->samples / lp->train_time : 0);
        lp->loss_sum = lp->gnorm_sum = lp->train_time = 0;
        lp->tokens = lp->samples = lp->good_steps = 0;
    }
}

void train_best_init(train_best *b, int patience, double best) {
    memset(b, 0, sizeof *b);
    b->patience = patience;
    b->best = best;
}

int train_best_update(train_best *b, double score, long step, int *stop) {
    b->last_step = step;
    int better = score < b->best;
    if (better) {
        b->best = score;
        b->best_step = step;
        b->bad = 0;
    } else {
        b->bad++;
    }
    if (b->patience && b->bad >= b->patience) *stop = 1;
    return better;
}

int train_loop_run(const train_loop_config *c, train_loop *lp) {
    memset(lp, 0, sizeof *lp);
    lp->c = c;
    lp->tty = isatty(fileno(stderr));
    lp->start_step = attend_trainer_steps(c->tr);
    attend_error err = {0};
    int stop = 0, rc = 0;
    while (!stop && attend_trainer_steps(c->tr) < c->total) {
        int sig = cli_mpi_share_int(cli_signal_pending()); /* rank 0 decides for every rank */
        if (sig) {
            lp->interrupted = sig;
            break;
        }
        attend_step_report r;
        double t0 = cli_now();
        if (attend_trainer_step(c->tr, &r, &err)) {
            train_loop_clear(lp);
            rc = cli_lib_fail(c->cmd, &err);
            if (err.status == ATTEND_ERR_NONFINITE)
                cli_error(c->cmd, "stopped after %ld non-finite steps in a row (--max-nonfinite %d); "
                        "nothing was saved%s%s", attend_trainer_nonfinite_run(c->tr), c->max_nonfinite,
                        c->checkpoint ? ", the last checkpoint is " : "", c->checkpoint ? c->checkpoint : "");
            return rc;
        }
        show_step(lp, &r, cli_now() - t0);
        if (c->after_step && (rc = c->after_step(c->user, lp, &r, &stop))) return rc;
    }
    train_loop_clear(lp);
    return 0;
}

void train_state_format(const train_state *s, char *buf, size_t n) {
    snprintf(buf, n,
             "early-stopping v1 select=%s patience=%d eval_every=%d best=%a best_step=%ld bad=%d last=%ld "
             "stopped=%d trained_s=%a run=%s",
             s->select[0] ? s->select : "none", s->patience, s->eval_every, s->best.best, s->best.best_step,
             s->best.bad, s->best.last_step, s->stopped, s->trained_s, s->run[0] ? s->run : "none");
}

int train_state_parse(const char *text, train_state *s) {
    train_state t;
    memset(&t, 0, sizeof t);
    char sel[16], run[17];
    int used = 0;
    if (!text || sscanf(text,
                        "early-stopping v1 select=%15s patience=%d eval_every=%d best=%lf best_step=%ld bad=%d "
                        "last=%ld stopped=%d trained_s=%lf run=%16s%n",
                        sel, &t.patience, &t.eval_every, &t.best.best, &t.best.best_step, &t.best.bad,
                        &t.best.last_step, &t.stopped, &t.trained_s, run, &used) != 10 ||
        text[used] != '\0' || t.patience < 0 || t.eval_every < 0 || t.best.best_step < 0 || t.best.bad < 0 ||
        t.best.last_step < 0 || (t.stopped != 0 && t.stopped != 1) || !(t.trained_s >= 0) || isnan(t.best.best))
        return -1;
    snprintf(t.select, sizeof t.select, "%s", strcmp(sel, "none") ? sel : "");
    snprintf(t.run, sizeof t.run, "%s", strcmp(run, "none") ? run : "");
    t.best.patience = t.patience;
    *s = t;
    return 0;
}
