# ------------------------------------------------------------------- trust
# Issue 7 (docs/RELIABILITY.md): fuzz-corpus replays, the kill -9 / resume test.
#
# fuzz_regress_<name>: every file in fuzz/corpus/<name>/ through the fuzz
# target's entry point, without libFuzzer (fuzz/CMakeLists.txt). Fuzzing
# itself: tools/fuzz.sh SECONDS.
add_subdirectory(${PROJECT_SOURCE_DIR}/fuzz ${CMAKE_BINARY_DIR}/fuzz)

# crash_test.sh: `attend train` killed with SIGKILL at random points (inside
# checkpoint writes too) and resumed; checkpoints always load, temporary files
# are never read and are cleaned up, the result equals training straight
# through byte for byte; a full disk (ulimit -f) keeps the previous checkpoint;
# (issue 28) the same with --select/--patience (stop step and best model), and
# SIGINT/SIGTERM at random points (exit 130/143, resumed exactly there).
add_test(NAME cli_crash
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/crash_test.sh $<TARGET_FILE:attend_cli> ${CMAKE_CURRENT_BINARY_DIR}/crash)
set_tests_properties(cli_crash PROPERTIES TIMEOUT 300)
