# ------------------------------------------------------------------- GEMM
# tests/test_gemm.c (built by the test_*.c glob) checks the portable kernel at
# every level this CPU has and the dispatched shim at the process's level; run
# it again with the shim forced to the lower levels (ATTEND_ISA).
foreach(level baseline avx2)
  add_test(NAME test_gemm_${level} COMMAND test_gemm WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(test_gemm_${level} PROPERTIES ENVIRONMENT "ATTEND_ISA=${level}")
endforeach()

# bench/gemm_bench.c: the portable GEMM against OpenBLAS's sgemm at one thread
# on the model's shapes (docs/PERFORMANCE.md, "Without BLAS"). Here only its
# smoke mode runs (every shape once, the two sides checked against each other)
# so the benchmark cannot rot; no test asserts a timing.
add_executable(gemm_bench ${PROJECT_SOURCE_DIR}/bench/gemm_bench.c)
target_compile_options(gemm_bench PRIVATE ${ATTEND_WARN})
target_link_libraries(gemm_bench PRIVATE attend m)
if(ATTEND_BACKEND STREQUAL "openblas")
  target_compile_definitions(gemm_bench PRIVATE ATTEND_USE_CBLAS)
  target_include_directories(gemm_bench PRIVATE ${CBLAS_INCLUDE_DIR})
endif()
add_test(NAME gemm_bench_smoke COMMAND gemm_bench smoke)
set_tests_properties(gemm_bench_smoke PROPERTIES TIMEOUT 120)

# Which products run (attend_gemm_info, printed by `attend --version`): in an
# OpenBLAS build, generic kernels (what an OpenBLAS older than the CPU picks;
# OPENBLAS_CORETYPE=Prescott reproduces it on any x86-64 CPU) must hand the
# products to the own GEMM, and ATTEND_GEMM forces either side. A build
# without OpenBLAS always says "own".
if(ATTEND_BACKEND STREQUAL "openblas")
  add_test(NAME gemm_backend_generic COMMAND attend_cli --version)
  set_tests_properties(gemm_backend_generic PROPERTIES ENVIRONMENT "OPENBLAS_CORETYPE=Prescott"
    PASS_REGULAR_EXPRESSION "gemm: own \\(OpenBLAS reports Prescott on an AVX")
  add_test(NAME gemm_backend_forced COMMAND attend_cli --version)
  set_tests_properties(gemm_backend_forced PROPERTIES ENVIRONMENT "ATTEND_GEMM=openblas;OPENBLAS_CORETYPE=Prescott"
    PASS_REGULAR_EXPRESSION "gemm: openblas \\(ATTEND_GEMM=openblas; Prescott kernels\\)")
else()
  add_test(NAME gemm_backend_own COMMAND attend_cli --version)
  set_tests_properties(gemm_backend_own PROPERTIES PASS_REGULAR_EXPRESSION "gemm: own,")
endif()
