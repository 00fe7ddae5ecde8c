# DTD front end: dependencies, schedulers under stress, priorities, windows, errors.
foreach(sched lfq gpq)
    foreach(cores 1 2)
        rill_add_test(NAME test_dtd_random SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_random.c
            LIBS rill_dsl LABELS dsl TEST test_dtd_random_${sched}_${cores}w
            ARGS --tasks 100000 --tiles 500 --reps 3 --mca sched ${sched}
                 --mca runtime_num_cores ${cores})
    endforeach()
endforeach()
# idle workers over the limit of runtime_idle_spinners sleep at once and pushes wake only
# what the spinners cannot take: 6 workers on the machine's cores, 1 of them spinning
foreach(sched lfq gpq)
    rill_add_test(NAME test_dtd_random SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_random.c
        LIBS rill_dsl LABELS dsl TEST test_dtd_random_${sched}_spinners
        ARGS --tasks 50000 --tiles 300 --reps 3 --mca sched ${sched} --mca runtime_num_cores 6
             --mca runtime_idle_spinners 1 --mca runtime_idle_spin_us 500)
endforeach()
foreach(sched lfq gpq)
    rill_add_test(NAME test_dtd_priority SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_priority.c
        LIBS rill_dsl LABELS dsl TEST test_dtd_priority_${sched} ARGS --mca sched ${sched})
endforeach()
rill_add_test(NAME test_dtd_errors SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_errors.c
    LIBS rill_dsl LABELS dsl)
rill_add_test(NAME test_dtd_args SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_args.c
    LIBS rill_dsl LABELS dsl)
rill_add_test(NAME test_dtd_watchdog SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_watchdog.c
    LIBS rill_dsl LABELS dsl TIMEOUT 60)
rill_add_test(NAME test_dtd_watchdog SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_watchdog.c
    LIBS rill_dsl LABELS dsl TIMEOUT 60 TEST test_dtd_watchdog_main ARGS main)
rill_add_test(NAME test_dtd_watchdog SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_watchdog.c
    LIBS rill_dsl LABELS dsl TIMEOUT 60 TEST test_dtd_watchdog_init ARGS init)
rill_add_test(NAME test_dtd_lifetime SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_lifetime.c
    LIBS rill_dsl LABELS dsl)
# an idle process sleeps: 48 workers (on CI's 2 cores) after a graph, their wake-ups counted
rill_add_test(NAME test_dtd_idle SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_idle.c
    LIBS rill_dsl LABELS dsl ARGS --mca runtime_num_cores 48 --mca runtime_bind false)
# taskpools open at once on one datum: each orders its own tasks (the datum's tracker slot)
rill_add_test(NAME test_dtd_taskpools SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_taskpools.c
    LIBS rill_dsl LABELS dsl)
# calls that build, wait for or end the work, made from task bodies, are refused (bodies on
# the main thread with 1 worker, on either thread with 2)
rill_add_test(NAME test_dtd_reentry SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dtd_reentry.c
    LIBS rill_dsl LABELS dsl TEST test_dtd_reentry_1w ARGS --mca runtime_num_cores 1)
rill_add_test(NAME test_dtd_reentry LABELS dsl TEST test_dtd_reentry_2w
    ARGS --mca runtime_num_cores 2)
