# ------------------------------------------------------------------ threads
# Threaded builds only (-DATTEND_THREADS=ON, the default): the same training
# steps, decodes and kernels at 1 and at 2 threads give byte-identical results.
if(ATTEND_THREADS_FOUND)
  add_executable(threads_check threads_check.c)
  target_compile_options(threads_check PRIVATE ${ATTEND_WARN})
  target_link_libraries(threads_check PRIVATE attend m)
  add_test(NAME threads_check COMMAND threads_check)
  set_tests_properties(threads_check PROPERTIES TIMEOUT 120)
endif()

