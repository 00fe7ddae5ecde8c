# Task Bench on Rill (apps/taskbench, built with -DTASKBENCH_DIR=<checkout>; scripts/bootstrap.sh
# test fetches one): Task Bench's own check, every pattern with the empty kernel on 1, 2 and 4
# ranks and two graphs at once (apps/taskbench/check.sh without "quick" runs every kernel)
if(TARGET taskbench_rill_dtd AND RILL_HAVE_MPI)
    add_test(NAME taskbench_rill_dtd_check
        COMMAND bash ${CMAKE_SOURCE_DIR}/apps/taskbench/check.sh ${CMAKE_BINARY_DIR} quick)
    set_tests_properties(taskbench_rill_dtd_check PROPERTIES LABELS "apps;mpi" TIMEOUT 300
        SKIP_RETURN_CODE 77)
endif()
if(TARGET taskbench_rill_ptg AND RILL_HAVE_MPI) # the same of the PTG implementation
    add_test(NAME taskbench_rill_ptg_check
        COMMAND bash ${CMAKE_SOURCE_DIR}/apps/taskbench/check.sh ${CMAKE_BINARY_DIR} quick ptg)
    set_tests_properties(taskbench_rill_ptg_check PROPERTIES LABELS "apps;mpi;ptg" TIMEOUT 300
        SKIP_RETURN_CODE 77)
endif()
