# --------------------------------------------- readout and Table 8.1 (issue 27)
# The readout decoder kind and the shift/bag tasks: tests/test_readout.c and
# tests/test_encoders_f64.c (test_*.c glob) check the library; readout_test.sh
# CASE the commands (`attend readout`, `attend train --task bag`, decode of a
# readout model); table81_quick runs tools/table81.py --quick end to end
# (tiny sizes: the pipeline, TSVs and SVGs, not the numbers).
foreach(case usage run)
  add_test(NAME cli_readout_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/readout_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/readout)
  set_tests_properties(cli_readout_${case} PROPERTIES TIMEOUT 120)
endforeach()
if(NOT ATTEND_SANITIZE)
  find_program(ATTEND_T81_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT ATTEND_T81_PYTHON3)
    set(ATTEND_T81_PYTHON3 /usr/bin/python3)
  endif()
  add_test(NAME table81_quick
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/table81_quick.sh ${ATTEND_T81_PYTHON3}
            ${PROJECT_SOURCE_DIR}/tools/table81.py $<TARGET_FILE:attend_cli> ${CMAKE_CURRENT_BINARY_DIR}/table81)
  set_tests_properties(table81_quick PROPERTIES TIMEOUT 300
    ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python")
endif()
