/*
 * test_adversary_f64.c — test_adversary.c's batched-evaluation test built
 * with attend_real = double (attend_f64): the search with one candidate row
 * per decoder-step call and with 7 or 32 rows a call must give the same
 * adversaries to 1e-9 (in float the GEMM's vector and blocked paths round
 * differently and the search may take another path; test_adversary.c).
 */
#define ADVERSARY_F64_ONLY 1
#include "test_adversary.c"
