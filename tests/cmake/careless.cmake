# ---------------------------------------------------------------- careless users
# Issue 17 (docs/RELIABILITY.md, "Careless users: inputs, outputs, resume"):
# tests/test_careless.c (built by the test_*.c glob) checks the library side;
# careless_test.sh CASE checks `attend train` end to end, one case per problem.
foreach(case endless device same badout resume fsize analysis)
  add_test(NAME cli_careless_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/careless_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/careless)
  set_tests_properties(cli_careless_${case} PROPERTIES TIMEOUT 120)
endforeach()
