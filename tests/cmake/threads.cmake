# ------------------------------------------------------------------ threads
# OpenMP builds only (-DATTEND_OPENMP=ON): the same training steps, decodes and
# kernels at 1 and at 2 threads give byte-identical results.
if(ATTEND_OPENMP_FOUND)
  add_executable(threads_check threads_check.c)
  target_compile_options(threads_check PRIVATE ${ATTEND_WARN})
  target_link_libraries(threads_check PRIVATE attend m)
  add_test(NAME threads_check COMMAND threads_check)
  # passive waiting: with libgomp's default spinning, a second thread whose
  # core another test keeps busy stalls every parallel loop (ctest -j2 on a
  # loaded 2-core machine ran past the timeout)
  set_tests_properties(threads_check PROPERTIES TIMEOUT 120 ENVIRONMENT OMP_WAIT_POLICY=passive)
endif()
