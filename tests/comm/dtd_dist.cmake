# Distributed DTD under mpirun (label mpi): chains below and above comm_short_limit,
# broadcast, a tiled Cholesky on several grids, diverging insertion.
macro(_dist)
    rill_add_test(NAME test_dtd_dist SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_dist.c
        LIBS rill_dsl m LABELS "mpi;dsl" ${ARGN})
endmacro()
foreach(np 2 3 4)
    _dist(NP ${np} TEST test_dtd_chain_small_np${np} ARGS chain 64)
    _dist(NP ${np} TEST test_dtd_chain_large_np${np} ARGS chain 1048576)
    _dist(NP ${np} TEST test_dtd_bcast_np${np} ARGS bcast)
endforeach()
_dist(NP 2 TEST test_dtd_chain_at_limit_np2 ARGS chain 8192)
_dist(NP 3 TEST test_dtd_private_np3 ARGS private)
_dist(NP 2 TEST test_dtd_stall_np2 ARGS stall --mca runtime_watchdog_s 1)
set_tests_properties(test_dtd_stall_np2 PROPERTIES PASS_REGULAR_EXPRESSION
    "rill 0 runtime\\] warning: watchdog.*\n.*\n? *waiting for datum \\(collection 0, key 1\\) version 1 from rank 1.*stall on 2 ranks: correct")
_dist(NP 2 TEST test_dtd_potrf_1x2 ARGS potrf 1 2 96 8)
_dist(NP 2 TEST test_dtd_potrf_2x1 ARGS potrf 2 1 96 8)
_dist(NP 4 TEST test_dtd_potrf_2x2 ARGS potrf 2 2 128 8)
_dist(NP 3 TEST test_dtd_potrf_3x1 ARGS potrf 3 1 96 8)
_dist(NP 3 TEST test_dtd_potrf_1x3 ARGS potrf 1 3 96 8)
foreach(np 2 3)
    add_test(NAME test_dtd_diverge_np${np}
        COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 60 "different task sequences"
            ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np ${np} $<TARGET_FILE:test_dtd_dist> diverge)
    set_tests_properties(test_dtd_diverge_np${np} PROPERTIES LABELS "mpi;dsl" TIMEOUT 90)
endforeach()
