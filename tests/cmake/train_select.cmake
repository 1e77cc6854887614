# ------------------------------------------- best model and early stopping
# Issue 14 part 5: `attend train --select/--patience` (the shared loop's
# train_best, also used by `attend g2p train`): train_select_test.sh CASE.
foreach(case patience select resume usage)
  add_test(NAME cli_train_select_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/train_select_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/train_select)
  set_tests_properties(cli_train_select_${case} PROPERTIES TIMEOUT 120)
endforeach()
if(ATTEND_MPI)
  add_test(NAME cli_mpi_select
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/train_select_test.sh mpi $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/train_select)
  set_tests_properties(cli_mpi_select PROPERTIES TIMEOUT 120 LABELS mpi)
endif()
