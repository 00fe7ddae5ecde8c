# Allocation-failure sweep: each allocation (and thread start) made by Rill fails in turn,
# in a forked child per N (test_alloc_sweep.c); link-time wrapping counts the calls of
# the static Rill layers and of the test only (alloc_inject.c), not of MPI, hwloc or libc.
# Not in fuzz builds: clang links the ASan runtime statically there, and wrapping malloc
# would reach into it.
if(NOT RILL_FUZZ)
    rill_add_test(NAME test_alloc_sweep
        SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_alloc_sweep.c ${CMAKE_CURRENT_LIST_DIR}/alloc_inject.c
        LIBS rill_dsl LABELS unit alloc TIMEOUT 900)
    # (children run several at once, ALLOC_SWEEP_JOBS, without GPUs; _gpu: the runtime
    # scenario with the GPUs on, where there is one, skipped elsewhere)
    add_test(NAME test_alloc_sweep_gpu COMMAND test_alloc_sweep --gpu)
    set_tests_properties(test_alloc_sweep_gpu PROPERTIES LABELS "unit;alloc;gpu" TIMEOUT 900
        SKIP_RETURN_CODE 77)
    set(RILL_ALLOC_WRAPPED malloc calloc realloc posix_memalign aligned_alloc strdup strndup
        pthread_create)
    if(RILL_HAVE_MPI)
        # a one-rank Rill's MPI calls, answered by a stand-in (alloc_inject.c)
        list(APPEND RILL_ALLOC_WRAPPED MPI_Initialized MPI_Finalized MPI_Init_thread
            MPI_Query_thread MPI_Comm_dup MPI_Comm_set_errhandler MPI_Comm_rank MPI_Comm_size
            MPI_Comm_split_type MPI_Comm_free MPI_Comm_get_attr MPI_Finalize MPI_Abort)
    endif()
    list(TRANSFORM RILL_ALLOC_WRAPPED PREPEND "LINKER:--wrap=")
    target_link_options(test_alloc_sweep PRIVATE ${RILL_ALLOC_WRAPPED})
endif()
