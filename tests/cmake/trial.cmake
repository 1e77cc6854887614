# ------------------------------------------------------------ attend trial
# tests/test_trial.c and tests/test_adversary.c (built by the glob) check the
# trials against SciPy (tests/ref/trial_*.txt: /usr/bin/python3
# tools/make_trial_ref.py), planted answers and a brute force; the command's
# end-to-end case is analysis_trial (tests/cmake/analysis.cmake). Here: one
# allocation per call, whatever the number of steps (malloc wrapped as in
# bench_noalloc).
add_executable(trial_noalloc ${CMAKE_CURRENT_SOURCE_DIR}/trial_noalloc.c)
target_compile_options(trial_noalloc PRIVATE ${ATTEND_WARN})
target_link_libraries(trial_noalloc PRIVATE attend)
target_link_options(trial_noalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc)
add_test(NAME trial_noalloc COMMAND trial_noalloc)

# The committed SciPy references are what SciPy computes today (python3-scipy,
# installed by .ci/run): the script again into a scratch directory, same bytes.
add_test(NAME trial_ref_current
  COMMAND sh -c "rm -rf '${CMAKE_CURRENT_BINARY_DIR}/trial_ref' && mkdir -p '${CMAKE_CURRENT_BINARY_DIR}/trial_ref' && /usr/bin/python3 '${PROJECT_SOURCE_DIR}/tools/make_trial_ref.py' --out '${CMAKE_CURRENT_BINARY_DIR}/trial_ref' && cmp '${CMAKE_CURRENT_BINARY_DIR}/trial_ref/trial_kendall.txt' '${CMAKE_CURRENT_SOURCE_DIR}/ref/trial_kendall.txt' && cmp '${CMAKE_CURRENT_BINARY_DIR}/trial_ref/trial_divergence.txt' '${CMAKE_CURRENT_SOURCE_DIR}/ref/trial_divergence.txt' && echo '1 passed, 0 failed'")

# Seed 000's toy through the trials (`attend trial --textbook`): every number
# it prints against an independent computation (tools/toy_trial_ref.py:
# PyTorch's autograd for gradient x input, SciPy's tau-b and JSD, the exact
# adversary by enumerating the feasible polytope's basic solutions).
add_test(NAME trial_textbook_ref
  COMMAND sh -c "$<TARGET_FILE:attend_cli> trial --textbook --epsilon 0.001,0.01,0.05,0.1 > '${CMAKE_CURRENT_BINARY_DIR}/trial_textbook.txt' && /usr/bin/python3 '${PROJECT_SOURCE_DIR}/tools/toy_trial_ref.py' --check '${CMAKE_CURRENT_BINARY_DIR}/trial_textbook.txt'")
