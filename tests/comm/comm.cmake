# Tests of the comm engine (comm/). The MPI ones run under mpirun with 2, 3 and 4 ranks
# (the CPU machine has 2 cores: 3-4 ranks check that idle comm threads do not spin).

# One rank: run directly (an MPI singleton, or the build without MPI).
rill_add_test(NAME test_comm_single SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_single.c
    LIBS rill_comm LABELS "mpi;unit" TIMEOUT 30)

if(RILL_HAVE_MPI)
    foreach(np 2 3 4)
        rill_add_test(NAME test_comm_am SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_am.c
            LIBS rill_comm LABELS mpi NP ${np} TIMEOUT 60)
        rill_add_test(NAME test_comm_aggregate
            SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_aggregate.c
            LIBS rill_comm LABELS mpi NP ${np} TIMEOUT 60)
        # few request slots, so that transfers queue and are served by priority
        rill_add_test(NAME test_comm_rdv SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_rdv.c
            LIBS rill_comm LABELS mpi NP ${np} TIMEOUT 60 ARGS --mca comm_max_requests 3)
        rill_add_test(NAME test_comm_coll SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_coll.c
            LIBS rill_comm LABELS mpi NP ${np} TIMEOUT 60)
    endforeach()

    # A rank killed mid-traffic: mpirun must end the job fast and name the rank.
    add_executable(test_comm_kill ${CMAKE_CURRENT_LIST_DIR}/test_comm_kill.c)
    target_link_libraries(test_comm_kill PRIVATE rill_comm)
    foreach(np 2 3 4)
        add_test(NAME test_comm_kill_np${np}
            COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/test_comm_kill.sh ${MPIEXEC_EXECUTABLE} ${np}
                $<TARGET_FILE:test_comm_kill> ${RILL_MPIEXEC_FLAGS})
        set_tests_properties(test_comm_kill_np${np} PROPERTIES LABELS mpi TIMEOUT 60)
    endforeach()
endif()
