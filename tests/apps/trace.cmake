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
# a trace or task-graph path that cannot be written fails at the start, naming the path,
# never after the whole run with exit 0: a missing folder, and a path that is a folder
if(TARGET testing_dpotrf)
    set(_dir ${CMAKE_CURRENT_BINARY_DIR}/trace_path_is_a_dir)
    file(MAKE_DIRECTORY ${_dir}.0.json ${_dir}.0.dot)
    foreach(param trace dot)
        if(param STREQUAL trace)
            set(_ext json)
        else()
            set(_ext dot)
        endif()
        add_test(NAME trace_bad_path_${param}_missing_dir
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh 60 1
                "profile_${param}: cannot write /nonexistent/dir/tr.0.${_ext}: No such file"
                $<TARGET_FILE:testing_dpotrf> -N 200 -t 50 -c 1 --mca profile_${param}
                /nonexistent/dir/tr)
        add_test(NAME trace_bad_path_${param}_is_a_dir
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh 60 1
                "profile_${param}: cannot write .*trace_path_is_a_dir.0.${_ext}: Is a directory"
                $<TARGET_FILE:testing_dpotrf> -N 200 -t 50 -c 1 --mca profile_${param} ${_dir})
        set_tests_properties(trace_bad_path_${param}_missing_dir trace_bad_path_${param}_is_a_dir
            PROPERTIES LABELS "apps;trace" TIMEOUT 90)
    endforeach()
endif()
