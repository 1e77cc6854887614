#include "cli.h"
int cmd_explain(int argc, char **argv) { (void)argc; (void)argv; return 2; }
