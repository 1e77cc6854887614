# ------------------------------ attend align / intervene / trial / m2m / sweep
# tests/cli/analysis_test.sh CASE; align, intervene and trial read the tiny
# reverse model of the cli_train fixture; m2m aligns the CMUdict sample and
# scores the shipped G2P model's attention against data/g2p/hand-alignments.tsv.
# tests/test_intervene.c, test_trial.c, test_adversary.c and test_m2m.c (built by
# the glob) cover the library side. The textbook
# table is golden: after an intended change
#   ./build/attend intervene --textbook > tests/golden/intervene_textbook.txt
# and check every number against seed 000's Tables 14.2 and 14.3.
foreach(case align intervene trial m2m sweep wp)
  add_test(NAME analysis_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/analysis_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli)
  set_tests_properties(analysis_${case} PROPERTIES TIMEOUT 300)
  if(NOT case STREQUAL "sweep" AND NOT case STREQUAL "m2m")
    set_tests_properties(analysis_${case} PROPERTIES FIXTURES_REQUIRED cli_model)
  endif()
endforeach()
