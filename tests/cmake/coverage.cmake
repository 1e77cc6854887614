# ------------------------------------------------------------------ coverage
# Issue 13: coverage (Tu et al. 2016, See et al. 2017) and the coverage
# penalty (Wu et al. 2016). tests/test_coverage.c and test_coverage_f64.c
# (test_*.c glob) check the library; coverage_test.sh CASE the commands.
foreach(case train usage sweep g2p)
  add_test(NAME cli_coverage_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/coverage_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/coverage)
  set_tests_properties(cli_coverage_${case} PROPERTIES TIMEOUT 120)
endforeach()
