# ------------------------------------------------- pointer permutations
# Issue 13 part 6: pointer models that decode permutations (exclusion mask,
# beam search). tests/test_pointer_perm.c (test_*.c glob) checks the library;
# pointer_perm_test.sh CASE the commands.
foreach(case perm repeat old)
  add_test(NAME cli_pointer_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/pointer_perm_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/pointer_perm)
  set_tests_properties(cli_pointer_${case} PROPERTIES TIMEOUT 120)
endforeach()
