# The G2P page in a browser (issue 15): tools/wasm_build.sh builds the library
# and web/g2p_web.c with Emscripten into one self-contained HTML file, and
# tests/web/web_test.py types words into it in headless Chromium and compares
# the phonemes, heatmap cells, n-best lists and entropies with `attend g2p`.
# Not registered in sanitizer builds (the page itself is built with emcc,
# whatever the native configuration). Without emcc
# or chromium the test prints "SKIP: ... not installed" and shows as skipped;
# .ci/run installs both.
if(NOT ATTEND_SANITIZE)
  add_test(NAME web_g2p_page
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/web/web_test.sh ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/wasm
            $<TARGET_FILE:attend_cli>)
  set_tests_properties(web_g2p_page PROPERTIES TIMEOUT 600 SKIP_REGULAR_EXPRESSION "SKIP: [a-z]+ not installed")
endif()
