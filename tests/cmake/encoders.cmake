# ------------------------------------------ transformer and conv encoders
# Issue 27: the transformer and conv encoder kinds. tests/test_encoders.c and
# tests/test_encoders_f64.c (test_*.c glob) check the library, and
# test_model_ref its PyTorch reference (tools/ref_model.py --only tf_, cv_);
# encoders_test.sh CASE the command.
foreach(case usage train g2p sweep)
  add_test(NAME cli_encoders_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/encoders_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/encoders ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli_encoders_${case} PROPERTIES TIMEOUT 120)
endforeach()
# Issue 27 item 5: the G2P Transformer recipe's smoke mode (tools/g2p_transformer.sh --smoke)
add_test(NAME g2p_transformer_smoke
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/g2p_transformer_test.sh $<TARGET_FILE:attend_cli>
          ${CMAKE_CURRENT_BINARY_DIR}/encoders ${PROJECT_SOURCE_DIR})
set_tests_properties(g2p_transformer_smoke PROPERTIES TIMEOUT 300)
