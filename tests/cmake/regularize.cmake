# ------------------------------------------------- dropout, label smoothing
# Issue 14 parts 1-2: tests/test_dropout.c (trainer: ranges, determinism,
# resume, shards, inference), test_dropout_f64.c (finite differences) and
# test_dropout_ref.c (PyTorch, tools/make_dropout_ref.py) are built by the
# test_*.c glob; regularize_test.sh CASE the commands.
foreach(case usage resume g2p)
  add_test(NAME cli_regularize_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/regularize_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/regularize)
  set_tests_properties(cli_regularize_${case} PROPERTIES TIMEOUT 120)
endforeach()
