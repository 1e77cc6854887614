# ------------------------------------------------- monotonic attention
# Issue 13 part 3: monotonic attention (Raffel et al. 2017). tests/test_monotonic.c
# and tests/test_monotonic_f64.c (test_*.c glob) check the kernels and the model;
# monotonic_test.sh CASE the commands.
foreach(case usage run sweep g2p)
  add_test(NAME cli_monotonic_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/monotonic_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/monotonic)
  set_tests_properties(cli_monotonic_${case} PROPERTIES TIMEOUT 120)
endforeach()
