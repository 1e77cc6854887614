/*
 * test_gemm_f64.c — tests/test_gemm.c with attend_real = double (linked
 * against attend_f64): the portable GEMM's double build, which the
 * finite-difference tests rely on, against the same reference and bounds.
 */
#include "test_gemm.c"
