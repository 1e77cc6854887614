/*
 * peak_rss.c — runs a command and writes its peak resident memory (KiB, from
 * getrusage(RUSAGE_CHILDREN).ru_maxrss) to a file, then exits with the
 * command's status (128 + signal if it was killed). tests/cli/newcomer_test.sh
 * uses it to show that `attend decode` streams: its peak stays put as the
 * input grows tenfold.
 *
 *   peak_rss OUT_FILE COMMAND [ARGS...]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: peak_rss OUT_FILE COMMAND [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("peak_rss: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0) {
        perror("peak_rss: waitpid");
        return 2;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru)) {
        perror("peak_rss: getrusage");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "%ld\n", (long)ru.ru_maxrss) < 0 || fclose(f)) {
        perror(argv[1]);
        return 2;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
