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
    # port channels between host memory (RILL_HOST_MEMORY: no GPU needed; rill/channel.h
    # needs the CUDA toolkit's headers): 2 ranks, and 4 ranks as 2 simulated nodes over UCX
    # through sockets and over MPI
    if(RILL_HAVE_CUDA)
        rill_add_test(NAME test_host_channel
            SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_host_channel.c LIBS rill CUDA::cudart
            LABELS mpi NP 2 TIMEOUT 60)
        if(RILL_HAVE_UCX)
            rill_add_test(NAME test_host_channel TEST test_host_channel_nodes_ucx_np4 NP 4
                ARGS --mca comm_ranks_per_node 2 --mca comm_net ucx
                MPIEXEC_ARGS -x UCX_TLS=tcp,self -x RILL_TEST_NET_WIRE=ucx LABELS mpi TIMEOUT 90)
        endif()
        rill_add_test(NAME test_host_channel TEST test_host_channel_nodes_mpi_np4 NP 4
            ARGS --mca comm_ranks_per_node 2 --mca comm_net mpi
            MPIEXEC_ARGS -x RILL_TEST_NET_WIRE=mpi LABELS mpi TIMEOUT 90)
        rill_add_test(NAME test_host_channel TEST test_host_channel_one LABELS mpi TIMEOUT 30)
    endif()
    # streams (the GPU managers' host-staged pipeline moves its chunks with them)
    foreach(np 2 3)
        rill_add_test(NAME test_comm_stream SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_stream.c
            LIBS rill_comm LABELS mpi NP ${np} TIMEOUT 60)
    endforeach()

    # issue 38: 4 ranks as 2 simulated nodes, the bytes between nodes over UCX through
    # sockets (UCX_TLS=tcp,self) and over MPI: the same checks, and each peer's bytes on
    # the wire it was given
    if(RILL_HAVE_UCX)
        rill_add_test(NAME test_comm_rdv SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_rdv.c
            LIBS rill_comm LABELS mpi NP 4 TIMEOUT 90 TEST test_comm_rdv_ucx_np4
            ARGS --mca comm_max_requests 3 --mca comm_ranks_per_node 2 --mca comm_net ucx
            MPIEXEC_ARGS -x UCX_TLS=tcp,self -x RILL_TEST_NET_WIRE=ucx)
    endif()
    rill_add_test(NAME test_comm_rdv SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_rdv.c
        LIBS rill_comm LABELS mpi NP 4 TIMEOUT 90 TEST test_comm_rdv_nodes_mpi_np4
        ARGS --mca comm_max_requests 3 --mca comm_ranks_per_node 2 --mca comm_net mpi
        MPIEXEC_ARGS -x RILL_TEST_NET_WIRE=mpi)

    # A rank killed mid-traffic: mpirun must end the job fast and name the rank.
    add_executable(test_comm_kill ${CMAKE_CURRENT_LIST_DIR}/test_comm_kill.c)
    target_link_libraries(test_comm_kill PRIVATE rill_comm)
    foreach(np 2 3 4)
        add_test(NAME test_comm_kill_np${np}
            COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/test_comm_kill.sh ${MPIEXEC_EXECUTABLE} ${np}
                $<TARGET_FILE:test_comm_kill> ${RILL_MPIEXEC_FLAGS})
        set_tests_properties(test_comm_kill_np${np} PROPERTIES LABELS mpi TIMEOUT 60)
    endforeach()

    # Rank 1's comm thread does not start (pthread_create fails there, through a preloaded
    # library): every rank must stop with the reason, none wait for it. Not under the
    # sanitizers, whose runtimes must come first and intercept pthread_create themselves.
    if(RILL_SANITIZE STREQUAL "")
        add_library(rill_fail_comm_thread MODULE ${CMAKE_CURRENT_LIST_DIR}/fail_comm_thread.c)
        target_link_libraries(rill_fail_comm_thread PRIVATE ${CMAKE_DL_LIBS})
        add_test(NAME test_comm_thread_fail_np2
            COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 60
                "rank 1 could not start its comm thread"
                ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2
                -x LD_PRELOAD=$<TARGET_FILE:rill_fail_comm_thread>
                -x RILL_TEST_FAIL_COMM_THREAD_RANK=1 $<TARGET_FILE:rill_info> --peers)
        set_tests_properties(test_comm_thread_fail_np2 PROPERTIES LABELS mpi TIMEOUT 90)
    endif()
endif()
