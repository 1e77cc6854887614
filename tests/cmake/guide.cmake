# ------------------------------------------------------- guided alignment
# Issue 13 part 5: the TSV's alignment column and --guided-alignment.
# tests/test_guide.c and tests/test_guide_f64.c (test_*.c glob) check the
# library (PyTorch reference: tools/make_guide_ref.py); guide_test.sh CASE the
# command.
foreach(case usage tsv resume task)
  add_test(NAME cli_guide_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/guide_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/guide)
  set_tests_properties(cli_guide_${case} PROPERTIES TIMEOUT 120)
endforeach()
