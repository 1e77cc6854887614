/*
 * mpirun.c — data-parallel `attend train` under mpirun (issue 16; cli/mpirun.h,
 * docs/SCALING.md). Every rank runs the whole command on the whole data; the
 * library cuts each step's batch into gradient shards, this rank computes its
 * share, and the exchange below gives every rank the same tree sum of all
 * the parts, so all apply the same update: the weights stay identical without
 * being broadcast. The exchange reduce-scatters and allgathers in the
 * library's fixed tree order (MPI_Allreduce's order is not guaranteed, and
 * would change with the rank count).
 *
 * Process state (rank, count, capture file) lives in one static struct: the
 * CLI is one process running one command.
 */
#define _POSIX_C_SOURCE 200809L
#include "mpirun.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"

#ifdef ATTEND_MPI
#include <mpi.h>
#endif

static struct {
    int active;          /* MPI initialised and not yet finalised */
    int rank, ranks;
    int agreed;          /* a failure every rank found together: leave, do not abort */
    FILE *capture;       /* ranks > 0: their stderr until the end */
    int real_stderr;     /* the stderr fd before the capture */
    double exchange_s;   /* time in the exchange's transfers */
    double wait_s;       /* time waiting for the slowest rank before it */
    long exchanges;
    size_t exchange_bytes; /* received per exchange by this rank */
    const char *cmd;       /* for messages */
} g = {0, 0, 1, 0, NULL, -1, 0, 0, 0, 0, "train"};

int cli_mpi_rank(void) { return g.rank; }
int cli_mpi_ranks(void) { return g.ranks; }

void cli_mpi_usage(FILE *f) {
    fprintf(f,
            "\n"
            "data-parallel (docs/SCALING.md):\n"
            "  --grad-shards K      cut each batch into K shards whose gradients are summed in a\n"
            "                       fixed order (default: one per rank). The same K gives the\n"
            "                       same model bit for bit on any number of ranks dividing it;\n"
            "                       --batch must be divisible by K\n"
            "Under `mpirun -np N` (a build with -DATTEND_MPI=ON%s) each batch is split\n"
            "over N processes; rank 0 alone prints and writes.\n",
#ifdef ATTEND_MPI
            ", as this one"
#else
            "; not this one"
#endif
    );
}

/* Checks that hold for one process too. */
static int check_shards(const char *cmd, int batch, int *shards) {
    if (*shards == 0) *shards = g.ranks;
    if (*shards > batch)
        return cli_usage_error(cmd, "--grad-shards %d is more than --batch %d rows", *shards, batch);
    if (*shards % g.ranks)
        return cli_usage_error(cmd, "%d ranks do not divide --grad-shards %d (each rank takes the same number of "
                               "shards)", g.ranks, *shards);
    if (batch % *shards)
        return cli_usage_error(cmd, "--batch %d is not divisible by %d gradient shards%s", batch, *shards,
                               *shards == g.ranks && g.ranks > 1 ? " (one per rank; --grad-shards sets another count)"
                                                                 : "");
    return 0;
}

#ifndef ATTEND_MPI

int cli_mpi_begin(const char *cmd, int argc, char **argv, int batch, int *shards) {
    (void)argc, (void)argv;
    return check_shards(cmd, batch, shards);
}

int cli_mpi_trainer(const char *cmd, attend_trainer *tr, int shards) {
    attend_error err = {0};
    if (shards > 1 && attend_trainer_set_parallel(tr, shards, 0, 1, NULL, NULL, &err)) return cli_lib_fail(cmd, &err);
    return 0;
}

int cli_mpi_end(const char *cmd, int rc) {
    (void)cmd;
    return rc;
}

int cli_mpi_any(int flag) { return flag; }
void cli_mpi_share(double *v) { (void)v; }
int cli_mpi_share_int(int v) { return v; }
int cli_mpi_agreed(int rc) { return rc; }

#else /* ATTEND_MPI */

/* Started by a launcher (mpirun, srun, hydra)? A plain `attend train` in an
 * MPI build stays one process and never touches MPI. */
static int launched(void) {
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

static uint64_t fnv1a(const char *s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* Every rank leaves MPI with the same status (rank 0 has said why). */
static int leave_agreed(int rc) {
    g.agreed = 1;
    return rc;
}

/* The option that argument i of argv belongs to, for messages. */
static void option_at(char *buf, size_t n, int argc, char **argv, int i) {
    if (i >= argc) snprintf(buf, n, "(fewer arguments)");
    else if (argv[i][0] == '-' || i == 0) snprintf(buf, n, "%s", argv[i]);
    else if (i > 0 && argv[i - 1][0] == '-' && argv[i - 1][1] == '-') snprintf(buf, n, "%s '%s'", argv[i - 1], argv[i]);
    else snprintf(buf, n, "argument %d '%s'", i, argv[i]);
}

/* Ranks other than 0 print nothing: stdout discarded, stderr kept aside and
 * shown only if this rank fails alone. */
static void silence(void) {
    fflush(stdout);
    fflush(stderr);
    if (!freopen("/dev/null", "w", stdout)) { /* keep going: the output is then merely duplicated */
    }
    g.capture = tmpfile();
    if (g.capture) {
        g.real_stderr = dup(2);
        if (g.real_stderr < 0 || dup2(fileno(g.capture), 2) < 0) {
            fclose(g.capture);
            g.capture = NULL;
        }
    }
}

/* Non-zero, with a message naming the rank and the call, if rc is an error. */
static int collective_failed(const char *cmd, const char *what, int rc) {
    if (rc == MPI_SUCCESS) return 0;
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "code %d", rc);
    cli_error(cmd, "rank %d: %s failed: %s", g.rank, what, s);
    return 1;
}

static attend_status mpi_fail(attend_error *err, const char *what, int code) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "code %d", code);
    snprintf(err->msg, sizeof err->msg, "rank %d: %s failed: %.160s", g.rank, what, s);
    err->status = ATTEND_ERR_IO;
    return ATTEND_ERR_IO;
}

/* Buffers of the exchange, sized at the first step. */
static struct {
    int *counts;          /* [4 * ranks] alltoallv send/recv counts and displacements */
    int *gcounts;         /* [2 * ranks] allgatherv counts and displacements */
    attend_real *send;    /* [my nodes * L] my nodes, chunk by chunk */
    attend_real *recv;    /* [all nodes * my chunk] */
} xb;

static attend_status fail_msg(attend_error *err, attend_status st, const char *what) {
    snprintf(err->msg, sizeof err->msg, "rank %d: %s", g.rank, what);
    err->status = st;
    return st;
}

/* The library's exchange, bandwidth-optimal and in the fixed order: the node
 * is cut into one chunk per rank; MPI_Alltoallv hands rank j chunk j of every
 * rank's nodes; rank j sums them in the library's tree (attend_trainer_reduce,
 * element by element the same sums as the whole vectors'); MPI_Allgatherv
 * hands every rank every reduced chunk. Each rank sends and receives
 * 2 (P-1)/P of a gradient, as a ring allreduce does. */
static attend_status exchange(void *user, attend_trainer *tr, const attend_real *part, attend_real *sum,
                              attend_error *err) {
    (void)user;
    int P = g.ranks, me = g.rank;
    size_t L = attend_trainer_node_len(tr);
    if (L > (size_t)INT32_MAX / 2) return fail_msg(err, ATTEND_ERR_CAPACITY, "a gradient over MPI's int counts");
    size_t my_nodes = attend_trainer_part_len(tr, me) / L, all_nodes = 0;
    for (int r = 0; r < P; r++) all_nodes += attend_trainer_part_len(tr, r) / L;
#define CHUNK_A(j) ((size_t)(j) * L / (size_t)P)
#define CHUNK_N(j) (CHUNK_A((j) + 1) - CHUNK_A(j))
    if (!xb.counts) {
        xb.counts = malloc(6 * (size_t)P * sizeof *xb.counts);
        xb.send = malloc((my_nodes ? my_nodes : 1) * L * sizeof *xb.send);
        xb.recv = malloc(all_nodes * (CHUNK_N(0) + 1) * sizeof *xb.recv);
        if (!xb.counts || !xb.send || !xb.recv) return fail_msg(err, ATTEND_ERR_ALLOC, "out of memory for the exchange");
        xb.gcounts = xb.counts + 4 * P;
    }
    if (all_nodes * (CHUNK_N(0) + 1) > (size_t)INT32_MAX)
        return fail_msg(err, ATTEND_ERR_CAPACITY, "the exchange's counts exceed MPI's int counts");
    int *scount = xb.counts, *sdispl = scount + P, *rcount = sdispl + P, *rdispl = rcount + P;
    size_t off = 0, roff = 0;
    for (int j = 0; j < P; j++) { /* to rank j: chunk j of each of my nodes */
        scount[j] = (int)(my_nodes * CHUNK_N(j));
        sdispl[j] = (int)off;
        for (size_t k = 0; k < my_nodes; k++, off += CHUNK_N(j))
            memcpy(xb.send + off, part + k * L + CHUNK_A(j), CHUNK_N(j) * sizeof *xb.send);
        /* from rank j: my chunk of each of its nodes */
        size_t their = attend_trainer_part_len(tr, j) / L;
        rcount[j] = (int)(their * CHUNK_N(me));
        rdispl[j] = (int)roff;
        roff += their * CHUNK_N(me);
        xb.gcounts[j] = (int)CHUNK_N(j);
        xb.gcounts[P + j] = (int)CHUNK_A(j);
    }
    MPI_Datatype t = sizeof(attend_real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT;
    /* a barrier first, so that the transfer's time is not the wait for the
     * slowest rank's gradient (one latency-bound message round, ~microseconds) */
    double t0 = MPI_Wtime();
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_fail(err, "MPI_Barrier", rc);
    double t1 = MPI_Wtime();
    g.wait_s += t1 - t0;
    t0 = t1;
    rc = MPI_Alltoallv(xb.send, scount, sdispl, t, xb.recv, rcount, rdispl, t, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_fail(err, "MPI_Alltoallv", rc);
    /* rank order is DFS order: the received nodes are the tree's leaves in order */
    attend_status st = attend_trainer_reduce(tr, xb.recv, CHUNK_N(me), sum + CHUNK_A(me), err);
    if (st) return st;
    rc = MPI_Allgatherv(MPI_IN_PLACE, 0, t, sum, xb.gcounts, xb.gcounts + P, t, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_fail(err, "MPI_Allgatherv", rc);
    g.exchange_s += MPI_Wtime() - t0;
    g.exchanges++;
    g.exchange_bytes = (roff - my_nodes * CHUNK_N(me) + L - CHUNK_N(me)) * sizeof(attend_real);
#undef CHUNK_A
#undef CHUNK_N
    return ATTEND_OK;
}

int cli_mpi_begin(const char *cmd, int argc, char **argv, int batch, int *shards) {
    if (!launched()) return check_shards(cmd, batch, shards);
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        cli_error(cmd, "MPI_Init failed");
        return 1;
    }
    g.active = 1;
    g.cmd = cmd;
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.ranks);
    /* a failed collective is reported and ends the job, not only this rank */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (g.rank > 0) silence();

    /* the same command everywhere: rank 0's argument hashes to all, each rank
     * reports the first argument where it differs */
    int n = argc;
    if (collective_failed(cmd, "MPI_Bcast", MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD))) return 1;
    /* a failure from here on is this rank's alone: 1 makes cli_mpi_end abort the job */
    uint64_t *h = calloc((size_t)(n > argc ? n : argc) + 1, sizeof *h);
    int *firsts = malloc((size_t)g.ranks * sizeof *firsts);
    if (!h || !firsts) {
        free(h);
        free(firsts);
        cli_error(cmd, "rank %d: out of memory", g.rank);
        return 1;
    }
    int first = -1;
    for (int i = 0; i < argc; i++) h[i] = fnv1a(argv[i]);
    int rc = MPI_Bcast(h, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    for (int i = 0; first < 0 && i < (n < argc ? n : argc); i++)
        if (h[i] != fnv1a(argv[i])) first = i;
    if (first < 0 && n != argc) first = n < argc ? n : argc;
    free(h);
    if (!collective_failed(cmd, "MPI_Bcast", rc))
        rc = MPI_Allgather(&first, 1, MPI_INT, firsts, 1, MPI_INT, MPI_COMM_WORLD);
    if (collective_failed(cmd, "MPI_Allgather", rc)) {
        free(firsts);
        return 1;
    }
    int bad = 0;
    for (int r = 1; r < g.ranks; r++) {
        if (firsts[r] < 0) continue;
        if (g.rank == 0) {
            char opt[160];
            option_at(opt, sizeof opt, argc, argv, firsts[r]);
            cli_error(cmd, "rank %d was started with other options than rank 0: they differ at %s (rank 0's "
                    "value); every rank must run the same command", r, opt);
        }
        bad = 1;
    }
    free(firsts);
    if (bad) return leave_agreed(2);
    /* the same on every rank now, so every rank decides alike; rank 0 says why */
    rc = check_shards(cmd, batch, shards);
    if (rc) return leave_agreed(rc);
    return 0;
}

int cli_mpi_trainer(const char *cmd, attend_trainer *tr, int shards) {
    attend_error err = {0};
    if (!g.active) {
        if (shards > 1 && attend_trainer_set_parallel(tr, shards, 0, 1, NULL, NULL, &err))
            return cli_lib_fail(cmd, &err);
        return 0;
    }
    if (attend_trainer_set_parallel(tr, shards, g.rank, g.ranks, exchange, NULL, &err)) return cli_lib_fail(cmd, &err);
    /* the same data everywhere: a rank may see another file under the same name */
    uint64_t mine = attend_trainer_data_fingerprint(tr);
    uint64_t *all = malloc((size_t)g.ranks * sizeof *all);
    if (!all) {
        cli_error(cmd, "rank %d: out of memory", g.rank);
        return 1;
    }
    int mrc = MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    if (mrc != MPI_SUCCESS) {
        free(all);
        mpi_fail(&err, "MPI_Allgather", mrc);
        return cli_lib_fail(cmd, &err);
    }
    int bad = 0;
    for (int r = 1; r < g.ranks; r++)
        if (all[r] != all[0]) {
            if (g.rank == 0)
                cli_error(cmd, "rank %d read other training data than rank 0 (fingerprint %016llx, rank 0's "
                        "%016llx): every rank needs the same data", r, (unsigned long long)all[r], (unsigned long long)all[0]);
            bad = 1;
        }
    free(all);
    if (bad) return leave_agreed(1);
    if (g.rank == 0) {
        printf("data-parallel: %d ranks, %d gradient shards per step, %zu reals per tree node\n", g.ranks, shards,
               attend_trainer_node_len(tr));
        fflush(stdout);
    }
    return 0;
}

/* A collective that fails inside a loop leaves the ranks out of step: end the job. */
static void or_abort(int rc, const char *what) {
    if (rc == MPI_SUCCESS) return;
    collective_failed(g.cmd, what, rc);
    cli_mpi_end(g.cmd, 1);
}

int cli_mpi_any(int flag) {
    int any = flag;
    if (g.active) or_abort(MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return any;
}

void cli_mpi_share(double *v) {
    if (g.active) or_abort(MPI_Bcast(v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
}

int cli_mpi_share_int(int v) {
    if (g.active) or_abort(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return v;
}

int cli_mpi_agreed(int rc) { return leave_agreed(rc); }

/* Shows this rank's captured messages on the real stderr, each line prefixed
 * with the rank. */
static void replay(void) {
    if (!g.capture || g.real_stderr < 0) return;
    fflush(stderr);
    rewind(g.capture);
    char line[1024];
    FILE *out = fdopen(g.real_stderr, "w");
    if (!out) return;
    int bol = 1;
    while (fgets(line, sizeof line, g.capture)) {
        if (bol) fprintf(out, "[rank %d] ", g.rank);
        fputs(line, out);
        bol = strchr(line, '\n') != NULL;
    }
    fflush(out);
}

int cli_mpi_end(const char *cmd, int rc) {
    if (!g.active) return rc;
    if (rc && !g.agreed && g.ranks > 1) {
        /* this rank alone failed: the others may wait for it in a collective */
        replay();
        MPI_Abort(MPI_COMM_WORLD, rc);
        return rc;
    }
    if (g.rank == 0 && g.exchanges > 0) {
        printf("exchange: %ld steps, %.3f ms per step transferring %zu bytes received per rank, %.3f ms per step "
               "waiting for the slowest rank\n",
               g.exchanges, 1e3 * g.exchange_s / (double)g.exchanges, g.exchange_bytes,
               1e3 * g.wait_s / (double)g.exchanges);
        if (cli_finish(cmd, 0)) rc = rc ? rc : 1;
    }
    MPI_Finalize();
    g.active = 0;
    free(xb.counts);
    free(xb.send);
    free(xb.recv);
    return rc;
}

#endif /* ATTEND_MPI */
