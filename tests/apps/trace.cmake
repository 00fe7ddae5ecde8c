# Traces, graph dumps and statistics of a 2-rank distributed DTD Cholesky, parsed with
# Python's json module (tests/apps/test_trace.py). On the CPUs (-g 0) even where there are
# GPUs: the tasks are checked on worker tracks; test_gpu_dtd_trace covers GPU tracks.
find_package(Python3 COMPONENTS Interpreter)
if(RILL_HAVE_MPI AND Python3_FOUND AND TARGET testing_dpotrf)
    add_test(NAME trace_dpotrf_np2
        COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_trace.py
            ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} --
            $<TARGET_FILE:testing_dpotrf> -N 700 -t 100 -P 2 -Q 1 -c 1 -g 0 -x)
    set_tests_properties(trace_dpotrf_np2 PROPERTIES LABELS "apps;mpi;trace" TIMEOUT 300)
endif()
# the tasks a Cholesky marks urgent, DTD (panels by dtrsm) and PTG, as the trace shows them
if(Python3_FOUND AND TARGET testing_dpotrf)
    add_test(NAME trace_urgent_dtd COMMAND ${Python3_EXECUTABLE}
        ${CMAKE_CURRENT_LIST_DIR}/test_trace_urgent.py $<TARGET_FILE:testing_dpotrf> --panel trsm)
    set_tests_properties(trace_urgent_dtd PROPERTIES LABELS "apps;trace" TIMEOUT 300)
endif()
# --dsl ptg is there only where rillcc is built (flex and bison, or generated sources)
if(Python3_FOUND AND TARGET testing_dpotrf AND RILL_HAVE_RILLCC)
    add_test(NAME trace_urgent_ptg COMMAND ${Python3_EXECUTABLE}
        ${CMAKE_CURRENT_LIST_DIR}/test_trace_urgent.py $<TARGET_FILE:testing_dpotrf> --dsl ptg)
    set_tests_properties(trace_urgent_ptg PROPERTIES LABELS "apps;trace" TIMEOUT 300)
endif()
