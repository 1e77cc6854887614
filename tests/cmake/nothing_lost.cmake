# ----------------------------------------------------------- nothing lost
# Issue 28 (docs/RELIABILITY.md, "Nothing lost, no one let in"): signals,
# locks, atomic outputs, safe temporaries and inputs, early stopping that
# resumes bit for bit, messages. tests/test_outfile.c (built by the test_*.c
# glob) checks the library's writer, locks and free-space check;
# nothing_lost_test.sh CASE one row of the issue's table each, end to end.
foreach(case oom patience signal overwrite atomic fifo stdout symlink lock space terminal configdiff selectout emptyeval
        messages)
  add_test(NAME cli_nothing_lost_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/nothing_lost_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/nothing_lost)
  set_tests_properties(cli_nothing_lost_${case} PROPERTIES TIMEOUT 300)
  # the oom case skips itself in sanitizer builds and where OpenBLAS is linked
  # (its start-up hangs under ulimit -v before main: tests/cmake/oom.cmake)
  if(ATTEND_SANITIZE)
    set_tests_properties(cli_nothing_lost_${case} PROPERTIES ENVIRONMENT "ATTEND_SANITIZED=1")
  elseif(ATTEND_BACKEND STREQUAL "openblas")
    set_tests_properties(cli_nothing_lost_${case} PROPERTIES ENVIRONMENT "ATTEND_OPENBLAS=1")
  endif()
endforeach()
