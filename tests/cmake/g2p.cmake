# G2P (issue 6): grapheme-to-phoneme on CMUdict — docs/G2P.md.
# tests/test_g2p.c is built by the test_*.c glob; here: where the shipped model
# and the dictionary live (for the `attend g2p` command and the tests), the C
# example in examples/ built against the library, and the CLI cases.

# (attend_cli gets ATTEND_G2P_SOURCE_DIR in the top-level CMakeLists.txt.)
target_compile_definitions(test_g2p PRIVATE ATTEND_G2P_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# Under ASan + UBSan the training cases (test_g2p's, distill, recipe) run 5-10x
# slower: 300 s then leaves no margin on a loaded machine (they took 300+ s there
# while 30 and 20 s in the default build).
set(g2p_timeout 300)
if(ATTEND_SANITIZE)
  set(g2p_timeout 900)
endif()
set_tests_properties(test_g2p PROPERTIES TIMEOUT ${g2p_timeout})

# The example: under 50 lines, a fixed memory budget, no allocation per word;
# linked as a user links it, with the installed form of libattend.a.
add_executable(g2p_say ${PROJECT_SOURCE_DIR}/examples/g2p_say.c)
target_compile_options(g2p_say PRIVATE ${ATTEND_WARN})
target_link_libraries(g2p_say PRIVATE attend_static)
add_test(NAME g2p_example
  COMMAND g2p_say ${PROJECT_SOURCE_DIR}/models/g2p-cmudict.safetensors hello world)
set_tests_properties(g2p_example PROPERTIES
  PASS_REGULAR_EXPRESSION "hello HH EH L OW\nworld W ER L D\n")
add_test(NAME g2p_example_usage COMMAND g2p_say)
set_tests_properties(g2p_example_usage PROPERTIES WILL_FAIL TRUE)

# The command, end to end: tests/data/g2p/cli_test.sh CASE (goldens beside it).
foreach(case say stdin nbest align eval data train stress ensemble bench lexicon ipa text distill recipe errors search wp wprecipe)
  add_test(NAME cli_g2p_${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/data/g2p/cli_test.sh ${case} $<TARGET_FILE:attend_cli>
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli_g2p)
  set_tests_properties(cli_g2p_${case} PROPERTIES TIMEOUT ${g2p_timeout})
endforeach()
