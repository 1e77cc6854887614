# Issue 19 (a newcomer's first hour) and the streaming and per-line parts of
# issue 17: --format text|tsv|jsonl, per-line problems, bounded and streaming
# input (tests/cli/newcomer_test.sh CASE), and the doc test that runs every
# command line of README.md and of each command's --help (tools/doc_test.sh).
add_executable(jsonl_flat cli/jsonl_flat.c)
target_compile_options(jsonl_flat PRIVATE ${ATTEND_WARN})
add_executable(peak_rss cli/peak_rss.c)
target_compile_options(peak_rss PRIVATE ${ATTEND_WARN})

foreach(case format_decode format_other unknown long stream memory steps)
  add_test(NAME cli_newcomer_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/newcomer_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${PROJECT_SOURCE_DIR} ${CLI_TEST_WORK} $<TARGET_FILE:jsonl_flat> $<TARGET_FILE:peak_rss>)
  set_tests_properties(cli_newcomer_${case} PROPERTIES TIMEOUT 300 FIXTURES_REQUIRED cli_model)
endforeach()
if(ATTEND_SANITIZE)
  foreach(case memory long)
    set_tests_properties(cli_newcomer_${case} PROPERTIES ENVIRONMENT "ATTEND_SANITIZED=1")
  endforeach()
endif()

# The doc test: every command line of README.md, of docs/*.md and of each
# --help, run as written in build/tests/doc_test, with the output the pages show
# under a `$ ` prompt compared (the lines it only checks are listed, with
# reasons, in tools/doc_test.sh). It trains what the README trains (about 80 s,
# most of it `attend demo`), so it is not registered in the sanitizer builds,
# which train 10-30x slower.
if(NOT ATTEND_SANITIZE)
  add_test(NAME doc_test
    COMMAND bash ${PROJECT_SOURCE_DIR}/tools/doc_test.sh ${PROJECT_SOURCE_DIR} $<TARGET_FILE:attend_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/doc_test)
  set_tests_properties(doc_test PROPERTIES TIMEOUT 600)
else()
  message(STATUS "attend: doc_test is not registered in sanitizer builds (it trains the README's models)")
endif()
