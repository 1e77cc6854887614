# ------------------------------------------------------------ attend trial
# tests/test_trial.c (built by the glob) checks trial 1 against SciPy
# (tests/ref/trial_*.txt: /usr/bin/python3 tools/make_trial_ref.py) and planted
# answers.

# The committed SciPy references are what SciPy computes today (python3-scipy,
# installed by .ci/run): the script again into a scratch directory, same bytes.
add_test(NAME trial_ref_current
  COMMAND sh -c "rm -rf '${CMAKE_CURRENT_BINARY_DIR}/trial_ref' && mkdir -p '${CMAKE_CURRENT_BINARY_DIR}/trial_ref' && /usr/bin/python3 '${PROJECT_SOURCE_DIR}/tools/make_trial_ref.py' --out '${CMAKE_CURRENT_BINARY_DIR}/trial_ref' && cmp '${CMAKE_CURRENT_BINARY_DIR}/trial_ref/trial_kendall.txt' '${CMAKE_CURRENT_SOURCE_DIR}/ref/trial_kendall.txt' && cmp '${CMAKE_CURRENT_BINARY_DIR}/trial_ref/trial_divergence.txt' '${CMAKE_CURRENT_SOURCE_DIR}/ref/trial_divergence.txt' && echo '1 passed, 0 failed'")
