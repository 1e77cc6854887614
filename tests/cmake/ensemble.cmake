# ------------------------------------------------- ensembles and rescoring
# Issue 14 part 6: tests/test_ensemble.c (test_*.c glob) checks the library;
# ensemble_test.sh CASE the commands (case "models" trains what the others read).
foreach(case models ensemble refuse rescore g2p)
  add_test(NAME cli_ensemble_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/ensemble_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/ensemble ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli_ensemble_${case} PROPERTIES TIMEOUT 120)
  if(case STREQUAL "models")
    set_tests_properties(cli_ensemble_${case} PROPERTIES FIXTURES_SETUP ensemble_models)
  else()
    set_tests_properties(cli_ensemble_${case} PROPERTIES FIXTURES_REQUIRED ensemble_models)
  endif()
endforeach()
