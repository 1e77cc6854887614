/* cli.h — the `attend` command's subcommands. Each returns the process exit
 * status (0 ok, 1 failure of the work, 2 bad usage). Only the CLI prints. */
#ifndef ATTEND_CLI_H
#define ATTEND_CLI_H

#include <stdio.h>

int cmd_explain(int argc, char **argv);

#endif
