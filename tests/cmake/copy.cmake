# ------------------------------------------------- copy (pointer-generator)
# Issue 13 part 2: --copy. tests/test_copy.c (PyTorch reference, unseen
# tokens, TSV) and tests/test_copy_f64.c (finite differences) check the
# library; copy_test.sh CASE the commands.
foreach(case usage names sweep)
  add_test(NAME cli_copy_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/copy_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/copy)
  set_tests_properties(cli_copy_${case} PROPERTIES TIMEOUT 120)
endforeach()
