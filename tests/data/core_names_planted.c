/* A planted core file for tools/core_names.py (test core_mechanism_names_planted):
 * a branch on a mechanism in code (comments and strings may name them). */
struct cfg { int coverage; };
int step(const struct cfg *c) {
    const char *what = "copy and coverage in a string are fine";
    (void)what;
    if (c->coverage) return 1; /* this line must be found */
    return 0;
}
