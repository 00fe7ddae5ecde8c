# Distributed DTD under mpirun (label mpi): chains below and above comm_short_limit,
# broadcast, a tiled Cholesky on several grids (and where each distribution puts the tiles),
# diverging insertion.
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
_dist(NP 2 TEST test_dtd_discard_np2 ARGS discard)
_dist(NP 2 TEST test_dtd_stall_np2 ARGS stall --mca runtime_watchdog_s 1)
set_tests_properties(test_dtd_stall_np2 PROPERTIES PASS_REGULAR_EXPRESSION
    "rill 0 runtime\\] warning: watchdog.*\n.*\n? *waiting for datum \\(collection 0, key 1\\) version 1 from rank 1.*stall on 2 ranks: correct")
_dist(NP 2 TEST test_dtd_collstall_np2 ARGS collstall --mca runtime_watchdog_s 1
    --mca runtime_num_cores 1)
# a rank that waits in the collectives of closing keeps running the tasks another rank,
# throttled by its window, waits for (one worker per rank); a hang ends as a failure
foreach(np 2 3)
    foreach(sched lfq gpq)
        _dist(NP ${np} TEST test_dtd_window_${sched}_np${np} TIMEOUT 120 ARGS window 200
            --mca runtime_num_cores 1 --mca dtd_window_size 16 --mca sched ${sched}
            --mca runtime_watchdog_s 20 --mca runtime_watchdog_action abort)
    endforeach()
endforeach()
_dist(NP 2 TEST test_dtd_potrf_1x2 ARGS potrf 1 2 96 8)
_dist(NP 2 TEST test_dtd_potrf_2x1 ARGS potrf 2 1 96 8)
_dist(NP 4 TEST test_dtd_potrf_2x2 ARGS potrf 2 2 128 8)
_dist(NP 3 TEST test_dtd_potrf_3x1 ARGS potrf 3 1 96 8)
_dist(NP 3 TEST test_dtd_potrf_1x3 ARGS potrf 1 3 96 8)
foreach(np 2 3)
    add_test(NAME test_dtd_diverge_np${np}
        COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 60 "different task sequences"
            ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np ${np} $<TARGET_FILE:test_dtd_dist> diverge)
    set_tests_properties(test_dtd_diverge_np${np} PROPERTIES LABELS "mpi;dsl" TIMEOUT 90
        ENVIRONMENT EXPECT_EACH_RANK=${np})
endforeach()
# diverging before the window is full: a rank blocked in its window learns it too (every
# rank says it); the issue's cases (20,000 tasks and the default window; 50 tasks and a
# window of 2) and a divergence midway, or a rank that stops early
macro(_diverge_window np how n)
    add_test(NAME test_dtd_diverge_${how}_${n}_np${np}
        COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 60 "different task sequences"
            ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np ${np} $<TARGET_FILE:test_dtd_dist>
            diverge_window ${how} ${n} ${ARGN})
    set_tests_properties(test_dtd_diverge_${how}_${n}_np${np} PROPERTIES LABELS "mpi;dsl"
        TIMEOUT 90 ENVIRONMENT EXPECT_EACH_RANK=${np})
endmacro()
_diverge_window(2 first 20000)
_diverge_window(2 first 50 --mca dtd_window_size 2)
_diverge_window(3 middle 50 --mca dtd_window_size 2 --mca runtime_num_cores 1)
_diverge_window(2 short 2000 --mca dtd_window_size 16)
_diverge_window(3 first 20000 --mca runtime_num_cores 1)
# the same tasks on every rank, but a rank_of that differs between ranks: the insertion
# hashes hold where each task runs and where each datum lives (this hung before, each rank
# waiting for versions the other never sent)
add_test(NAME test_dtd_diverge_home_np2
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 60 "different task sequences"
        ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2 $<TARGET_FILE:test_dtd_dist>
        diverge_home 20)
set_tests_properties(test_dtd_diverge_home_np2 PROPERTIES LABELS "mpi;dsl" TIMEOUT 90
    ENVIRONMENT EXPECT_EACH_RANK=2)
# a task that fails on rank 1 fails the taskpool on every rank (rank 0's wait returned
# success though its tasks ran on the failed task's tile)
foreach(np 2 3)
    _dist(NP ${np} TEST test_dtd_fail_remote_np${np} ARGS fail_remote)
endforeach()
# a rank that leaves the sequence (rill_fini without the second taskpool, an allgather before
# its wait) while another waits at a taskpool's end: the waiting rank's reminders make it say
# so (these hung for ever, the watchdog warning on both sides)
foreach(how fini coll)
    add_test(NAME test_dtd_leave_${how}_np2
        COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 60 "ranks diverged: rank 0 waits at the end of taskpool"
            ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2 $<TARGET_FILE:test_dtd_dist>
            leave ${how})
    set_tests_properties(test_dtd_leave_${how}_np2 PROPERTIES LABELS "mpi;dsl" TIMEOUT 90)
endforeach()
# Random distributed graphs against a sequential run: 2-4 ranks, 1-2 workers per rank,
# both schedulers, windows from 16 to 8000 drawn per repetition. A hang ends as a
# failure carrying the watchdog's report. tests/stress/dtd_stress.sh runs it longer.
rill_add_test(NAME test_dtd_stress SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_stress.c
    LIBS rill_dsl LABELS "mpi;dsl;stress" NP 2 TEST _stress_build_only ARGS --reps 1 --tasks 10)
set_tests_properties(_stress_build_only PROPERTIES DISABLED TRUE)
set(_seed 1)
# about a minute in all in a release build; sanitizer builds run fewer repetitions
if(RILL_SANITIZE)
    set(_reps 6)
else()
    set(_reps 60)
endif()
foreach(np 2 3 4)
    foreach(cores 1 2)
        foreach(sched lfq gpq)
            add_test(NAME test_dtd_stress_np${np}_${cores}w_${sched}
                COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np ${np}
                    $<TARGET_FILE:test_dtd_stress> --reps ${_reps} --tasks 5000 --seed ${_seed}
                    --mca runtime_num_cores ${cores} --mca sched ${sched}
                    --mca runtime_watchdog_s 20 --mca runtime_watchdog_action abort)
            set_tests_properties(test_dtd_stress_np${np}_${cores}w_${sched} PROPERTIES
                LABELS "mpi;dsl;stress" TIMEOUT 180)
            math(EXPR _seed "${_seed} + 1")
        endforeach()
    endforeach()
endforeach()
# issue 38: the same on 4 ranks as 2 simulated nodes, the tiles between nodes over UCX
# through sockets and over MPI (tiles of 8 B and more by rendezvous: comm_short_limit 8)
set(_nets mpi)
if(RILL_HAVE_UCX)
    list(APPEND _nets ucx)
endif()
foreach(net ${_nets})
    add_test(NAME test_dtd_stress_nodes_${net}_np4
        COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 4 -x UCX_TLS=tcp,self
            $<TARGET_FILE:test_dtd_stress> --reps ${_reps} --tasks 2000 --seed ${_seed}
            --mca runtime_num_cores 1 --mca comm_ranks_per_node 2 --mca comm_net ${net}
            --mca comm_short_limit 8
            --mca runtime_watchdog_s 20 --mca runtime_watchdog_action abort)
    set_tests_properties(test_dtd_stress_nodes_${net}_np4 PROPERTIES LABELS "mpi;dsl;stress"
        TIMEOUT 180)
    math(EXPR _seed "${_seed} + 1")
endforeach()
# collectives the ranks do not make alike: each rank says so (not only MPI's truncation)
foreach(how alone sizes)
    add_test(NAME test_comm_collmismatch_${how}_np2
        COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 60 "in the same order"
            ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2 $<TARGET_FILE:test_dtd_dist>
            collmismatch ${how})
    set_tests_properties(test_comm_collmismatch_${how}_np2 PROPERTIES LABELS "mpi;dsl"
        TIMEOUT 90 ENVIRONMENT EXPECT_EACH_RANK=2)
endforeach()
