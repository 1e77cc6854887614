# Out of memory is an error, never a hang (issue 25): the commands under
# `ulimit -v` (tests/cli/oom_test.sh). Not in OpenBLAS builds (OpenBLAS's own
# start-up, before main, hangs under such limits) nor under the sanitizers.
if(NOT ATTEND_SANITIZE AND NOT ATTEND_BACKEND STREQUAL "openblas")
  add_test(NAME cli_oom
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/oom_test.sh $<TARGET_FILE:attend_cli> ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/cli_oom)
  set_tests_properties(cli_oom PROPERTIES TIMEOUT 600)
endif()
