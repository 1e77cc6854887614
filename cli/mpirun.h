/* mpirun.h — data-parallel training (attend train, g2p train) under mpirun (issue 16, docs/SCALING.md).
 * The library knows no MPI: it splits a step into gradient shards summed in a
 * fixed tree and asks for the exchange (attend_trainer_set_parallel); this
 * layer supplies it with MPI, checks at start-up that every rank runs the same
 * command on the same data, keeps ranks other than 0 silent, and turns a
 * rank's failure into the whole job's. Built without ATTEND_MPI (the default)
 * it is a stand-in for one process: --grad-shards still works there. */
#ifndef ATTEND_CLI_MPIRUN_H
#define ATTEND_CLI_MPIRUN_H

#include <stdio.h>

#include "attend.h"

/* First thing after parsing and the usage checks. Under mpirun (an MPI build
 * started by a launcher) joins the job; refuses, on every rank with rank 0
 * naming them, options that differ between ranks, --batch not divisible by the
 * shards or the shards by the ranks. *shards 0 becomes the rank count.
 * Ranks other than 0 then print nothing (stdout is discarded, stderr kept for
 * a failure). Returns 0 or the exit status. */
int cli_mpi_begin(const char *cmd, int argc, char **argv, int batch, int *shards);
/* The help paragraph on --grad-shards and mpirun. */
void cli_mpi_usage(FILE *f);
int cli_mpi_rank(void);   /* 0 without MPI */
int cli_mpi_ranks(void);  /* 1 without MPI */

/* Sets the trainer's shards and this rank's share, and compares the training
 * data's fingerprint across ranks (a rank that read other data is named).
 * Returns 0 or the exit status. */
int cli_mpi_trainer(const char *cmd, attend_trainer *tr, int shards);

/* Agreement in a loop that must stop on every rank at the same step: 1 if
 * flag is set on any rank (flag itself in one process); rank 0's *v on every
 * rank. */
int cli_mpi_any(int flag);
void cli_mpi_share(double *v);
/* Rank 0's v on every rank (v itself in one process): rank 0 decides, e.g.
 * whether a signal stops the run at this step. */
int cli_mpi_share_int(int v);
/* rc is the status every rank reached by one decision (a signal rank 0
 * shared): cli_mpi_end then leaves MPI normally instead of aborting. */
int cli_mpi_agreed(int rc);

/* Last thing: rc is the command's exit status. A failure on one rank alone
 * (its data unreadable, a step failed) shows that rank's messages and aborts
 * the job with MPI_Abort, so no rank waits for it; otherwise leaves MPI and,
 * on rank 0, prints the exchange's cost. Returns rc. */
int cli_mpi_end(const char *cmd, int rc);

#endif
