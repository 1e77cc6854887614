# explain_golden.cmake — runs the `attend` CLI and compares one of its output
# streams byte for byte with a golden file, or rewrites the golden file.
#
#   cmake -DCLI=build/attend -DARGS=explain,--list -DGOLDEN=tests/golden/explain_list.txt
#         -DOUT_DIR=build/tests/golden [-DEXPECT_RC=0] [-DSTREAM=stdout|stderr] [-DUPDATE=1]
#         -P tests/golden/explain_golden.cmake
#
# ARGS separates the arguments with commas. The exit status must be EXPECT_RC
# (default 0); STREAM (default stdout) is compared with GOLDEN and the other
# stream must be empty. UPDATE=1 writes the stream to GOLDEN instead of comparing
# (tests/CMakeLists.txt runs it for every golden file: target explain_golden_update).
cmake_minimum_required(VERSION 3.16)

foreach(var CLI ARGS GOLDEN OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "explain_golden.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
if(NOT DEFINED STREAM)
  set(STREAM stdout)
endif()

string(REPLACE "," ";" args "${ARGS}")
get_filename_component(name "${GOLDEN}" NAME_WE)
file(MAKE_DIRECTORY "${OUT_DIR}")
set(out "${OUT_DIR}/${name}.stdout")
set(err "${OUT_DIR}/${name}.stderr")
execute_process(COMMAND "${CLI}" ${args} OUTPUT_FILE "${out}" ERROR_FILE "${err}" RESULT_VARIABLE rc)

string(REPLACE ";" " " shown "${args}")
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  file(READ "${err}" err_text)
  message(FATAL_ERROR "attend ${shown}: exit status ${rc}, expected ${EXPECT_RC}\nstderr:\n${err_text}")
endif()
if(STREAM STREQUAL "stdout")
  set(got "${out}")
  set(other "${err}")
else()
  set(got "${err}")
  set(other "${out}")
endif()
file(SIZE "${other}" other_size)
if(other_size GREATER 0)
  file(READ "${other}" other_text)
  message(FATAL_ERROR "attend ${shown}: unexpected output on the other stream (${other}):\n${other_text}")
endif()

if(UPDATE)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E copy "${got}" "${GOLDEN}" RESULT_VARIABLE copy_rc)
  if(NOT copy_rc EQUAL 0)
    message(FATAL_ERROR "could not write ${GOLDEN}")
  endif()
  message(STATUS "wrote ${GOLDEN}")
  return()
endif()

if(NOT EXISTS "${GOLDEN}")
  message(FATAL_ERROR "golden file ${GOLDEN} is missing (cmake --build <build> --target explain_golden_update)")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${got}" "${GOLDEN}" RESULT_VARIABLE differs)
if(differs)
  find_program(DIFF_PROGRAM diff)
  if(DIFF_PROGRAM) # printed as is, where ctest --output-on-failure shows it
    execute_process(COMMAND "${DIFF_PROGRAM}" -u "${GOLDEN}" "${got}")
  endif()
  message(FATAL_ERROR "attend ${shown}: ${STREAM} differs from ${GOLDEN} (got ${got})")
endif()
message(STATUS "attend ${shown}: ${STREAM} matches ${GOLDEN}")
