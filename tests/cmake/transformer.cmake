# ------------------------------------------------------ transformer encoder
# Issue 27: the transformer encoder kind. tests/test_transformer.c and
# tests/test_transformer_f64.c (test_*.c glob) check the library, and
# test_model_ref its PyTorch reference (tools/ref_model.py --only tf_);
# transformer_test.sh CASE the command.
foreach(case usage train)
  add_test(NAME cli_transformer_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/transformer_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/transformer)
  set_tests_properties(cli_transformer_${case} PROPERTIES TIMEOUT 120)
endforeach()
