# Benchmarks (bench/, built with RILL_BUILD_BENCH): they are not tests, but a bad argument
# must be refused at once with a message naming the option, the value and the allowed
# range, exit code 2; --help prints the usage (exit 0).
if(NOT TARGET bench_dtd)
    return()
endif()

set(BENCH_EXIT ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh)

# bench_usage_test(name code "regex" [NP np] COMMAND bench args...)
function(bench_usage_test name code expected)
    cmake_parse_arguments(D "" "NP" "COMMAND" ${ARGN})
    list(POP_FRONT D_COMMAND bench)
    if(D_NP)
        add_test(NAME ${name} COMMAND ${BENCH_EXIT} 60 ${code} "${expected}" ${MPIEXEC_EXECUTABLE}
            ${RILL_MPIEXEC_FLAGS} -np ${D_NP} $<TARGET_FILE:${bench}> ${D_COMMAND})
        set(labels "apps;bench;mpi")
    else()
        add_test(NAME ${name} COMMAND ${BENCH_EXIT} 60 ${code} "${expected}"
            $<TARGET_FILE:${bench}> ${D_COMMAND})
        set(labels "apps;bench")
    endif()
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 120)
endfunction()

bench_usage_test(bench_dtd_err_tasks_negative 2
    "option --tasks must be an integer in \\[1, 1000000\\], got '-5'"
    COMMAND bench_dtd --tasks -5)
bench_usage_test(bench_dtd_err_tasks_text 2
    "option --tasks must be an integer in \\[1, 1000000\\], got 'abc'"
    COMMAND bench_dtd --tasks abc)
bench_usage_test(bench_dtd_err_tasks_zero 2
    "option --tasks must be an integer in \\[1, 1000000\\], got '0'"
    COMMAND bench_dtd --tasks 0)
bench_usage_test(bench_dtd_err_tasks_missing 2
    "option --tasks must be an integer in \\[1, 1000000\\], got nothing"
    COMMAND bench_dtd --tasks)
bench_usage_test(bench_dtd_err_reps_zero 2 "option --reps must be an integer in \\[1, 1000\\], got '0'"
    COMMAND bench_dtd --reps 0)
bench_usage_test(bench_dtd_err_unknown 2 "unknown option '--bogus'" COMMAND bench_dtd --bogus)
bench_usage_test(bench_dtd_err_positional 2 "unknown option '100'" COMMAND bench_dtd 100)
bench_usage_test(bench_dtd_help 0 "usage: bench_dtd" COMMAND bench_dtd --help)
bench_usage_test(bench_dtd_err_workers_zero 2
    "option --workers must be a comma-separated list of 1 to 16 worker counts, each in \\[1, 1024\\], got '0'"
    COMMAND bench_dtd --workers 0)
bench_usage_test(bench_dtd_err_workers_empty 2 "option --workers .*, got '1,,2'"
    COMMAND bench_dtd --workers 1,,2)
bench_usage_test(bench_dtd_err_workers_missing 2 "option --workers .*, got nothing"
    COMMAND bench_dtd --workers)
# the worker counts asked for, a row each (3 is in no default run)
bench_usage_test(bench_dtd_workers 0 "^3 +[0-9.]+ " COMMAND bench_dtd --tasks 200 --reps 1
    --workers 3,1)
# a small run goes through (--mca handed to rill_init)
bench_usage_test(bench_dtd_small 0 "^2 +[0-9.]+ " COMMAND bench_dtd --tasks 200 --reps 1
    --mca sched gpq)

if(TARGET bench_comm AND RILL_HAVE_MPI)
    # under mpirun the launcher's exit code is the first failing rank's (Open MPI): 2
    bench_usage_test(bench_comm_err_max_mib 2
        "option --max-mib must be an integer in \\[0, 1024\\], got '-1'" NP 2
        COMMAND bench_comm --max-mib -1)
    bench_usage_test(bench_comm_err_max_mib_text 2
        "option --max-mib must be an integer in \\[0, 1024\\], got 'x'" NP 2
        COMMAND bench_comm --max-mib x)
    bench_usage_test(bench_comm_err_unknown 2 "unknown option '--bogus'" NP 2
        COMMAND bench_comm --bogus)
    bench_usage_test(bench_comm_help 0 "usage: mpirun -np 2 bench_comm" NP 1
        COMMAND bench_comm --help)
endif()
bench_usage_test(bench_dtd_err_csv_missing 2 "option --csv needs a file name"
    COMMAND bench_dtd --csv)
bench_usage_test(bench_dtd_err_csv_unwritable 2 "option --csv: cannot write '/proc/x/y.csv'"
    COMMAND bench_dtd --csv /proc/x/y.csv)
if(TARGET bench_comm AND RILL_HAVE_MPI)
    bench_usage_test(bench_comm_err_csv_unwritable 2 "cannot write '/proc/x/y.csv'" NP 2
        COMMAND bench_comm --csv /proc/x/y.csv)
endif()
if(TARGET bench_ptg)
    bench_usage_test(bench_ptg_err_n_text 2 "N must be an integer in \\[1, 32768\\], got '12abc'"
        COMMAND bench_ptg 12abc)
    bench_usage_test(bench_ptg_err_nb_big 2 "NB must be an integer in \\[1, 100\\], got '200'"
        COMMAND bench_ptg 100 200)
    bench_usage_test(bench_ptg_err_nb_small 2 "NB must be an integer in \\[4, 1000\\], got '1'"
        COMMAND bench_ptg 1000 1)
    bench_usage_test(bench_ptg_err_extra 2 "unexpected argument '5'"
        COMMAND bench_ptg 100 10 1 10 5)
    bench_usage_test(bench_ptg_help 0 "usage: bench_ptg" COMMAND bench_ptg --help)
endif()
