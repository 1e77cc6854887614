# ---------------------------------------------------------------- data-parallel training
# Issue 16 (docs/SCALING.md): tests/test_parallel.c (built by the test_*.c
# glob, no MPI needed) emulates ranks in one process; cli_grad_shards runs
# --grad-shards in one process (every configuration); with -DATTEND_MPI=ON
# mpi_test.sh CASE runs `attend train` under mpirun -np 1/2/4 (tiny models,
# a few steps; 4 ranks oversubscribe 2 cores).
add_test(NAME cli_grad_shards
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/mpi_test.sh plain $<TARGET_FILE:attend_cli> ${CMAKE_CURRENT_BINARY_DIR}/mpi)
set_tests_properties(cli_grad_shards PROPERTIES TIMEOUT 120)
if(ATTEND_MPI)
  find_program(ATTEND_MPIRUN NAMES mpirun mpiexec)
  if(NOT ATTEND_MPIRUN)
    message(FATAL_ERROR "ATTEND_MPI=ON but mpirun was not found (apt-get install openmpi-bin)")
  endif()
  foreach(case same resume kill signal data options g2p)
    add_test(NAME cli_mpi_${case}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/mpi_test.sh ${case} $<TARGET_FILE:attend_cli>
              ${CMAKE_CURRENT_BINARY_DIR}/mpi)
    set_tests_properties(cli_mpi_${case} PROPERTIES TIMEOUT 120 LABELS mpi)
  endforeach()
endif()
