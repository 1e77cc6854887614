# Quantized weights (int8 / fp16 for inference; docs/FORMAT.md, "Quantized
# model files"). tests/test_quant.c (built by the test_*.c glob) checks the
# kernels at every level this CPU has and the dispatched products at the
# process's level; run it again with the level forced lower (ATTEND_ISA).
foreach(level baseline avx2)
  add_test(NAME test_quant_${level} COMMAND test_quant WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(test_quant_${level} PROPERTIES ENVIRONMENT "ATTEND_ISA=${level}")
endforeach()

# `attend quantize` end to end on the shipped G2P model.
add_test(NAME cli_quantize
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/quantize_test.sh $<TARGET_FILE:attend_cli> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/cli_quantize)
set_tests_properties(cli_quantize PROPERTIES TIMEOUT 300)
