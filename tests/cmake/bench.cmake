# ---------------------------------------------------------------- benchmarks
# bench/bench.c is attend's side of the PyTorch comparison (bench/run.sh runs
# it against tools/torch_peer.py and writes the table in docs/PERFORMANCE.md).
# Here it only runs its smoke mode (every benchmark path at tiny sizes) so the
# benchmark cannot rot; no test ever asserts a timing.
add_executable(attend_bench ${PROJECT_SOURCE_DIR}/bench/bench.c)
target_compile_options(attend_bench PRIVATE ${ATTEND_WARN})
find_package(Threads REQUIRED)
target_link_libraries(attend_bench PRIVATE attend Threads::Threads)
add_test(NAME bench_smoke COMMAND attend_bench smoke)
set_tests_properties(bench_smoke PROPERTIES TIMEOUT 120)

# No allocation inside a training step or a decode step after warm-up: every
# malloc/calloc/realloc the library's objects make is counted (--wrap).
add_executable(bench_noalloc ${PROJECT_SOURCE_DIR}/bench/noalloc.c)
target_compile_options(bench_noalloc PRIVATE ${ATTEND_WARN})
target_link_libraries(bench_noalloc PRIVATE attend)
target_link_options(bench_noalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc)
add_test(NAME bench_noalloc COMMAND bench_noalloc)
