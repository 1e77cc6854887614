# ------------------------------------------------------------------- trust
# Issue 7 (docs/RELIABILITY.md): fuzz-corpus replays, the kill -9 / resume test.
#
# fuzz_regress_<name>: every file in fuzz/corpus/<name>/ through the fuzz
# target's entry point, without libFuzzer (fuzz/CMakeLists.txt). Fuzzing
# itself: tools/fuzz.sh SECONDS.
add_subdirectory(${PROJECT_SOURCE_DIR}/fuzz ${CMAKE_BINARY_DIR}/fuzz)
