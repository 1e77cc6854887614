# ------------------------------------------------------- instruction sets
# Every hot kernel is compiled at baseline, AVX2 and AVX-512 (AT_KERNEL,
# src/core/isa.h) and dispatched at run time; ATTEND_ISA forces a level.
#
# isa_vectorized: disassembles libattend.a and fails when an AVX2 copy of a
# kernel holds no ymm instruction or an AVX-512 copy no zmm instruction
# (tests/isa/vectorized.sh prints the table), and when a kernel below has no
# copies at all (moved off AT_KERNEL). The strict zmm rule is for gcc, the
# compiler of CI's build/ and build-portable/; clang 14 prefers 256-bit
# vectors even at x86-64-v4, so its AVX-512 copies need vector code of either
# width; under the sanitizers (build-asan/) vectorization is not expected.
set(ATTEND_HOT_KERNELS
  additive_forward additive_backward coverage_forward coverage_backward masked_softmax_rows first_bad_row softmax_backward_rows
  cell_gates_forward cell_gates_backward adam_update sgd_update sum_squares scale scatter_rows tanh_rows
  gemm_run gemm_batched_small pack_run at_rows_sum at_rows_add q8_gemm f16_gemm layernorm_rows layernorm_backward_rows
  step_attention_rows
  at_isa_probe)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT ATTEND_SANITIZE)
  find_program(ATTEND_OBJDUMP NAMES objdump)
  if(ATTEND_OBJDUMP)
    set(ATTEND_ISA_WIDTH "")
    if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
      set(ATTEND_ISA_WIDTH --any-width)
    endif()
    add_test(NAME isa_vectorized
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/isa/vectorized.sh ${ATTEND_ISA_WIDTH} ${ATTEND_OBJDUMP}
              $<TARGET_FILE:attend> ${ATTEND_HOT_KERNELS})
    set_tests_properties(isa_vectorized PROPERTIES SKIP_RETURN_CODE 77)
  else()
    message(WARNING "objdump not found (binutils): the isa_vectorized test is not built")
  endif()
endif()

# isa_check: ATTEND_ISA=baseline|avx2|avx512 really switches the code (each
# child process reports its level and the lane count of a dispatched
# reduction), each level is deterministic, and every level agrees with
# baseline on training steps, greedy/beam decoding and the attention kernels.
add_executable(isa_check isa_check.c)
target_compile_options(isa_check PRIVATE ${ATTEND_WARN})
target_link_libraries(isa_check PRIVATE attend m)
add_test(NAME isa_check COMMAND isa_check WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(isa_check PROPERTIES TIMEOUT 300)
