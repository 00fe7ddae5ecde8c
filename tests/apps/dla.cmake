# Dense linear algebra testers (apps/dla): checked runs, ragged tiles, every gemm case,
# error paths (they must fail with a clear message), and multi-rank grids under mpirun.
if(NOT TARGET testing_dpotrf)
    return() # apps/dla is not built without OpenBLAS/LAPACKE
endif()

set(DLA_FAIL ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh)

# dla_test(name [MPI np] COMMAND tester args...)
function(dla_test name)
    cmake_parse_arguments(D "" "NP" "COMMAND" ${ARGN})
    list(POP_FRONT D_COMMAND tester)
    if(D_NP)
        add_test(NAME ${name} COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np ${D_NP}
            $<TARGET_FILE:${tester}> ${D_COMMAND})
        set(labels "apps;mpi")
    else()
        add_test(NAME ${name} COMMAND ${tester} ${D_COMMAND})
        set(labels apps)
    endif()
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 120)
endfunction()

# dla_fail_test(name "regex of the expected message" [NP np] COMMAND tester args...): must
# exit non-zero within 60 s and print the message (tests/expect_fail.sh)
function(dla_fail_test name expected)
    cmake_parse_arguments(D "" "NP" "COMMAND" ${ARGN})
    list(POP_FRONT D_COMMAND tester)
    if(D_NP)
        add_test(NAME ${name} COMMAND ${DLA_FAIL} 60 "${expected}" ${MPIEXEC_EXECUTABLE}
            ${RILL_MPIEXEC_FLAGS} -np ${D_NP} $<TARGET_FILE:${tester}> ${D_COMMAND})
        set(labels "apps;mpi")
    else()
        add_test(NAME ${name} COMMAND ${DLA_FAIL} 60 "${expected}" $<TARGET_FILE:${tester}>
            ${D_COMMAND})
        set(labels apps)
    endif()
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 120)
endfunction()

# dla_usage_test(name "regex of the expected message" COMMAND tester args...): a bad option:
# must exit 2 at once with the message (tests/apps/expect_exit.sh)
function(dla_usage_test name expected)
    cmake_parse_arguments(D "" "" "COMMAND" ${ARGN})
    list(POP_FRONT D_COMMAND tester)
    add_test(NAME ${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh 60 2 "${expected}"
        $<TARGET_FILE:${tester}> ${D_COMMAND})
    set_tests_properties(${name} PROPERTIES LABELS apps TIMEOUT 120)
endfunction()

# dla_row_test(name "regex of a result row" COMMAND tester args...): must exit 0 and print a
# row matching the regex (and no FAIL, no error)
function(dla_row_test name row)
    cmake_parse_arguments(D "" "" "COMMAND" ${ARGN})
    list(POP_FRONT D_COMMAND tester)
    add_test(NAME ${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh 60 0 "${row}"
        $<TARGET_FILE:${tester}> ${D_COMMAND})
    set_tests_properties(${name} PROPERTIES LABELS apps TIMEOUT 120
        FAIL_REGULAR_EXPRESSION " FAIL|error:")
endfunction()

# ---------------------------------------------------------------- one rank
dla_test(dla_dpotrf COMMAND testing_dpotrf -N 300 -t 64 -x)
dla_test(dla_dpotrf_ragged COMMAND testing_dpotrf -N 250 -t 64 -x)
dla_test(dla_dpotrf_1core COMMAND testing_dpotrf -N 250 -t 48 -c 1 --nruns 2 -x)
dla_test(dla_dpotrf_gpq COMMAND testing_dpotrf -N 200 -t 32 -x -- sched gpq)
dla_test(dla_dpotrf_onetile COMMAND testing_dpotrf -N 50 -t 64 -x)
dla_test(dla_dpotrf_seed COMMAND testing_dpotrf -N 130 -t 16 -x --seed 12345)
foreach(ta N T)
    foreach(tb N T)
        dla_test(dla_dgemm_${ta}${tb} COMMAND testing_dgemm -M 200 -N 150 -K 250 -t 64
            --transA ${ta} --transB ${tb} -x)
    endforeach()
endforeach()
dla_test(dla_dgemm_square COMMAND testing_dgemm -N 300 -t 64 --alpha -2 --beta 0 -x)
dla_test(dla_dgemm_k0 COMMAND testing_dgemm -M 70 -N 50 -K 0 -t 32 --beta 3 -x)
dla_test(dla_dposv COMMAND testing_dposv -N 300 -t 64 --nrhs 3 -x)
dla_test(dla_dposv_ragged COMMAND testing_dposv -N 250 -t 64 -x)
dla_test(dla_dposv_wide COMMAND testing_dposv -N 200 -t 48 --nrhs 100 -x)
# LU with partial pivoting: every --kind, ragged sizes; pivot: A(0, 0) = 0, which fails
# without interchanges; singular: column N / 2 zero, info N / 2 + 1 as LAPACK's
dla_test(dla_dgetrf COMMAND testing_dgetrf -N 300 -t 64 -x)
dla_test(dla_dgetrf_ragged COMMAND testing_dgetrf -N 250 -t 64 -x)
dla_test(dla_dgetrf_dd COMMAND testing_dgetrf -N 200 -t 48 --kind dd -x)
dla_test(dla_dgetrf_pivot COMMAND testing_dgetrf -N 201 -t 32 --kind pivot -x)
dla_row_test(dla_dgetrf_singular "^# info 151 \\(LAPACK's on the same matrix: 151\\)$"
    COMMAND testing_dgetrf -N 300 -t 64 --kind singular -x)
dla_row_test(dla_dgetrf_ref "^ +150 +- +1 +1 .* -$" COMMAND testing_dgetrf -N 150 --ref)
# panels taller than a task takes (30 tiles): gathered into a buffer by copy tasks
dla_test(dla_dgetrf_tall COMMAND testing_dgetrf -N 400 -t 10 --kind pivot -x)
# 30 tile rows, the one-task panel's most: a rank's lower tiles of a column go in several SWAP_PAIR
# tasks (one took 4 + 29 arguments and failed); N = 0 checked (LAPACK refused ld 0)
dla_test(dla_dgetrf_mt30 COMMAND testing_dgetrf -N 300 -t 10 --kind pivot -x)
dla_row_test(dla_dgetrf_n0 "^ +0 +256 +1 +1 .* PASS$" COMMAND testing_dgetrf -N 0 -x)
dla_usage_test(dla_err_dgetrf_kind "option --kind needs random, dd, pivot or singular, got 'x'"
    COMMAND testing_dgetrf -N 100 --kind x)
# dgesv: dgetrf, then the interchanges and two triangular solves (dgetrs) on B; several
# right-hand sides, ragged; singular: LAPACK's info, B left as it was
dla_test(dla_dgesv COMMAND testing_dgesv -N 300 -t 64 --nrhs 3 -x)
dla_test(dla_dgesv_ragged COMMAND testing_dgesv -N 250 -t 64 --nrhs 70 --kind pivot -x)
dla_row_test(dla_dgesv_singular "^# info 126 \\(LAPACK's on the same matrix: 126\\), B unchanged$"
    COMMAND testing_dgesv -N 250 -t 64 --kind singular -x)
dla_row_test(dla_dgesv_ref "^ +150 +- +1 +1 .* PASS$" COMMAND testing_dgesv -N 150 --ref -x)

# --ref -x checks the reference's result like Rill's (the row says PASS, not -)
dla_row_test(dla_dpotrf_ref_check "^ +200 +- +1 +1 .* [0-9.e+-]+ +PASS$"
    COMMAND testing_dpotrf -N 200 --ref -x)
dla_row_test(dla_dgemm_ref_check "^ +90 +70 +50 +- +1 +1 .* [0-9.e+-]+ +PASS$"
    COMMAND testing_dgemm -M 90 -N 70 -K 50 --transA T --ref -x)
dla_row_test(dla_dposv_ref_check "^ +150 +- +1 +1 .* [0-9.e+-]+ +PASS$"
    COMMAND testing_dposv -N 150 --nrhs 4 --ref -x --no-mem-check)
# gemm rows say M, N and K
dla_row_test(dla_dgemm_row_mnk "^ +M +N +K +NB +P +Q .*status$"
    COMMAND testing_dgemm -M 70 -N 50 -K 30 -t 32 -x)
dla_row_test(dla_dgemm_row_mnk_values "^ +70 +50 +30 +32 +1 +1 .* PASS$"
    COMMAND testing_dgemm -M 70 -N 50 -K 30 -t 32 -x)
# --mca name value before -- goes to rill_init (a bad value is refused by the runtime)
dla_row_test(dla_dpotrf_mca "^ +100 +32 +1 +1 .* PASS$"
    COMMAND testing_dpotrf --mca sched gpq -N 100 -t 32 -x)
dla_fail_test(dla_err_mca_value "bogus.*sched|sched.*bogus"
    COMMAND testing_dpotrf -N 100 --mca sched bogus)
dla_usage_test(dla_err_mca_dangling "option --mca needs a name and a value"
    COMMAND testing_dpotrf -N 100 --mca sched)

# ---------------------------------------------------------------- error paths
dla_fail_test(dla_err_grid "does not match the 1 ranks" COMMAND testing_dpotrf -N 100 -P 2 -Q 2)
dla_fail_test(dla_err_dist "option --dist needs cyclic, diagonal or skewed, got 'skew'"
    COMMAND testing_dpotrf -N 100 --dist skew)
# 641 x 6700417 = 2^32 + 1: 1 in 32-bit arithmetic
dla_fail_test(dla_err_grid_overflow "641 x 6700417 = 4294967297 does not match the 1 ranks"
    COMMAND testing_dpotrf -N 100 -P 641 -Q 6700417)
# every numeric option: an error naming the option and its range, exit 2
# the testers' option ranges are the runtime's: -c past runtime_num_cores' 4096 is the
# tester's usage error naming -c (it used to pass the tester and fail in rill_init)
dla_usage_test(dla_err_cores_over "option -c must be an integer in \\[0, 4096\\], got '5000'"
    COMMAND testing_dpotrf -N 100 -c 5000)
dla_usage_test(dla_err_gpus_over "option -g must be an integer in \\[0, 8\\], got '9'"
    COMMAND testing_dgemm -N 100 -g 9)
dla_usage_test(dla_err_tile0 "option -t must be an integer in \\[1, 1073741824\\], got '0'"
    COMMAND testing_dpotrf -N 100 -t 0)
dla_usage_test(dla_err_negative_n "option -N must be an integer in \\[0, 1073741824\\], got '-5'"
    COMMAND testing_dgemm -N -5)
dla_usage_test(dla_err_negative_m "option -M must be an integer in \\[0, 1073741824\\], got '-5'"
    COMMAND testing_dgemm -N 100 -M -5)
dla_usage_test(dla_err_negative_k "option -K must be an integer in \\[0, 1073741824\\], got '-1'"
    COMMAND testing_dgemm -N 100 -K -1)
dla_usage_test(dla_err_n_range
    "option -N must be an integer in \\[0, 1073741824\\], got '2147483647'"
    COMMAND testing_dpotrf -N 2147483647)
dla_usage_test(dla_err_p0 "option -P must be an integer in \\[1, 1073741824\\], got '0'"
    COMMAND testing_dpotrf -N 100 -P 0)
dla_usage_test(dla_err_nruns0 "option --nruns must be an integer in \\[1, 1000000\\], got '0'"
    COMMAND testing_dposv -N 100 --nruns 0)
dla_usage_test(dla_err_seed_negative "option --seed must be an integer in \\[0, 18446744073709551615\\]"
    COMMAND testing_dpotrf -N 100 --seed -1)
dla_usage_test(dla_err_missing_value "option -t needs a value: an integer in \\[1, 1073741824\\]"
    COMMAND testing_dpotrf -N 100 -t)
dla_usage_test(dla_err_warmup "option --warmup must be an integer in \\[0, 100\\], got '101'"
    COMMAND testing_dpotrf -N 100 --warmup 101)
# untimed runs before the timed ones (the default with GPUs): the timed runs' results check
dla_row_test(dla_dpotrf_warmup "warm-up: 2 untimed run"
    COMMAND testing_dpotrf -N 200 -t 48 --warmup 2 --nruns 2 -x)
dla_row_test(dla_dgemm_warmup "warm-up: 1 untimed run"
    COMMAND testing_dgemm -M 130 -N 90 -K 70 -t 32 --warmup 1 -x)
# NaN and Inf results fail the check (the norms of NaN data were negative: "PASS" or "-")
dla_fail_test(dla_err_gemm_alpha_inf "check failed: the result contains NaN or Inf"
    COMMAND testing_dgemm -N 100 --alpha inf -x)
dla_fail_test(dla_err_gemm_alpha_nan " nan +FAIL$" COMMAND testing_dgemm -N 100 -t 32 --alpha nan -x)
dla_fail_test(dla_err_gemm_beta_nan "check failed: the result contains NaN or Inf"
    COMMAND testing_dgemm -M 60 -N 50 -K 40 -t 16 --beta nan -x)
dla_fail_test(dla_err_gemm_ref_inf "check failed: the result contains NaN or Inf"
    COMMAND testing_dgemm -N 100 --alpha -inf --ref -x)
# the checks' norms and dense checks without a runtime: NaN and Inf propagate and fail
rill_add_test(NAME test_dla_check SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dla_check.c
    LIBS rill_dla LABELS apps TIMEOUT 60)
# memory: refused at once, before allocating, with the figures (sizes far beyond any node)
dla_fail_test(dla_err_memory
    "not enough memory: this run needs about 7\\.3 TiB on this node .* but .* are available"
    COMMAND testing_dpotrf -N 1000000)
dla_fail_test(dla_err_memory_tile "needs about 3\\.6 TiB .*tiles at NB x NB = 700000 x 700000"
    COMMAND testing_dpotrf -N 700000 -t 700000)
dla_fail_test(dla_err_memory_overflow "does not fit in 64-bit byte counts \\(size_t overflow\\)"
    COMMAND testing_dgemm -N 1073741824 -t 1073741824)
dla_fail_test(dla_err_gpu "[-]g 1: this process runs on 0 GPU\\(s\\): device_cuda_enabled is false"
    COMMAND testing_dposv -N 100 -g 1 --mca device_cuda_enabled false)
dla_fail_test(dla_err_option "unknown option" COMMAND testing_dpotrf --bogus)
dla_usage_test(dla_err_panel "option --panel needs auto, trsm or inverse, got 'lu'"
    COMMAND testing_dpotrf -N 100 --panel lu)
dla_usage_test(dla_err_trmm_block
    "option --gpu-trmm-block must be 0 \\(the whole tile\\) or at least 64, got 32"
    COMMAND testing_dpotrf -N 100 --gpu-trmm-block 32)
dla_usage_test(dla_err_trinv_leaf
    "option --gpu-trinv-leaf must be an integer in \\[64, [0-9]+\\], got '16'"
    COMMAND testing_dposv -N 100 --gpu-trinv-leaf 16)
dla_fail_test(dla_err_nonspd "matrix is not positive definite \\(leading minor 151\\)"
    COMMAND testing_dpotrf -N 300 -t 64 --nonspd)
dla_fail_test(dla_err_posv_nonspd "matrix is not positive definite \\(leading minor 101\\)"
    COMMAND testing_dposv -N 200 -t 48 --nonspd -x)
dla_fail_test(dla_err_nonspd_inverse "matrix is not positive definite \\(leading minor 151\\)"
    COMMAND testing_dpotrf -N 300 -t 64 --nonspd --panel inverse)

# ---------------------------------------------------------------- panels by the inverse
# (--panel inverse: a dtrtri per panel, then dtrmm per tile; the GPUs' default): ragged
# tiles, two runs (the inverse tiles reused), one tile (no panel to solve), dposv
dla_test(dla_dpotrf_inverse COMMAND testing_dpotrf -N 301 -t 48 -x --nruns 2 --panel inverse)
dla_test(dla_dpotrf_inverse_onetile COMMAND testing_dpotrf -N 40 -t 64 -x --panel inverse)
dla_test(dla_dposv_inverse COMMAND testing_dposv -N 251 -t 32 --nrhs 3 -x --panel inverse)

# ---------------------------------------------------------------- on a GPU (label gpu)
# Skipped (77) without one. Panels by the inverse (the default with GPUs) and by dtrsm;
# a workspace too small for 64 columns of a tile makes the GPU's dtrmm fall back to
# cuBLAS's in place, and its dtrtri to one solve.
if(RILL_HAVE_CUDA)
    function(dla_gpu_test name)
        add_test(NAME ${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu_only.sh ${ARGN})
        set_tests_properties(${name} PROPERTIES LABELS "apps;gpu" TIMEOUT 300
            SKIP_RETURN_CODE 77 RESOURCE_LOCK rill_gpus PASS_REGULAR_EXPRESSION " PASS"
            FAIL_REGULAR_EXPRESSION " FAIL|error")
    endfunction()
    dla_gpu_test(dla_dpotrf_gpu_inverse $<TARGET_FILE:testing_dpotrf> -N 3001 -t 512 -g 1 -x
        --nruns 2)
    # dgetrf on the GPU: the panel (cuSOLVER's getrf on the gathered tile column, the pivot
    # record by dla_lu.cu's kernels), the interchanges (kernels), the trsm and gemm updates;
    # ragged, a matrix that needs pivoting, a singular one (info as LAPACK's), 30 tile rows
    dla_gpu_test(dla_dgetrf_gpu $<TARGET_FILE:testing_dgetrf> -N 3001 -t 512 -g 1 -x)
    dla_gpu_test(dla_dgetrf_gpu_pivot $<TARGET_FILE:testing_dgetrf> -N 2999 -t 100 -g 1
        --kind pivot -x)
    dla_gpu_test(dla_dgetrf_gpu_singular $<TARGET_FILE:testing_dgetrf> -N 2000 -t 256 -g 1
        --kind singular -x)
    set_tests_properties(dla_dgetrf_gpu_singular PROPERTIES
        PASS_REGULAR_EXPRESSION "# info 1001 \\(LAPACK's on the same matrix: 1001\\)")
    dla_gpu_test(dla_dgesv_gpu $<TARGET_FILE:testing_dgesv> -N 3001 -t 512 -g 1 --nrhs 600 -x)
    if(RILL_HAVE_RILLCC) # the PTG version, every task on the GPU; 34 tile rows
        dla_gpu_test(dla_dgetrf_gpu_ptg $<TARGET_FILE:testing_dgetrf> -N 3001 -t 512 -g 1
            --kind pivot -x --dsl ptg)
        dla_gpu_test(dla_dgetrf_gpu_ptg_34 $<TARGET_FILE:testing_dgetrf> -N 3400 -t 100 -g 1
            --kind pivot -x --dsl ptg)
        dla_gpu_test(dla_dgetrf_gpu_tall $<TARGET_FILE:testing_dgetrf> -N 3400 -t 100 -g 1
            --kind pivot -x)
    endif()
    if(RILL_HAVE_MPI) # dgetrf over 2 processes of one GPU each (the GPUs there are)
        set(lu_runs dtd)
        if(RILL_HAVE_RILLCC)
            list(APPEND lu_runs ptg)
        endif()
        foreach(dsl ${lu_runs})
            add_test(NAME dla_dgetrf_gpu_${dsl}_np2 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu_only.sh
                ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2 $<TARGET_FILE:testing_dgetrf>
                -N 4001 -t 500 -P 2 -Q 1 -g 1 -c 1 --kind pivot -x --dsl ${dsl})
            set_tests_properties(dla_dgetrf_gpu_${dsl}_np2 PROPERTIES LABELS "apps;gpu;mpi"
                TIMEOUT 300 SKIP_RETURN_CODE 77 RESOURCE_LOCK rill_gpus
                PASS_REGULAR_EXPRESSION " PASS" FAIL_REGULAR_EXPRESSION " FAIL|error")
        endforeach()
    endif()
    # tiles of 1536: the GPU's dtrtri recursion (halves of 768, leaves of 384)
    dla_gpu_test(dla_dpotrf_gpu_recursive $<TARGET_FILE:testing_dpotrf> -N 9500 -t 1536 -g 1
        -x)
    dla_gpu_test(dla_dpotrf_gpu_trsm $<TARGET_FILE:testing_dpotrf> -N 3001 -t 512 -g 1 -x
        --panel trsm)
    dla_gpu_test(dla_dpotrf_gpu_smallws $<TARGET_FILE:testing_dpotrf> -N 15000 -t 3000 -g 1 -x
        --mca device_cuda_workspace 1M)
    dla_gpu_test(dla_dposv_gpu_inverse $<TARGET_FILE:testing_dposv> -N 2501 -t 400 -g 1 -x
        --nrhs 5)
    # the inverse panel's kernels cut otherwise: dtrmm in one gemm over the whole tile,
    # dtrtri leaves of 64 (the recursion's deepest)
    dla_gpu_test(dla_dpotrf_gpu_blocks $<TARGET_FILE:testing_dpotrf> -N 4001 -t 768 -g 1 -x
        --gpu-trmm-block 0 --gpu-trinv-leaf 64)
    if(RILL_HAVE_MPI)
        # 4 ranks (sharing the GPUs there are) with a landing and a put stream per peer rank
        # (the default 4 lanes: each GPU's landings on 3 lanes, completed in any order between
        # them), and with one of each per GPU (_onelane)
        foreach(lanes 4 1)
            set(name dla_dpotrf_gpu_np4)
            if(lanes EQUAL 1)
                set(name dla_dpotrf_gpu_onelane_np4)
            endif()
            add_test(NAME ${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu_only.sh
                ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 4 $<TARGET_FILE:testing_dpotrf>
                -N 4001 -t 500 -P 2 -Q 2 -g 1 -c 1 -x --mca device_cuda_remote_lanes ${lanes})
            set_tests_properties(${name} PROPERTIES LABELS "apps;gpu;mpi"
                TIMEOUT 300 SKIP_RETURN_CODE 77 RESOURCE_LOCK rill_gpus
                PASS_REGULAR_EXPRESSION " PASS" FAIL_REGULAR_EXPRESSION " FAIL|error")
        endforeach()
        # 64 landing semaphores and no bound on the tasks enqueued while their tile lands
        # (the defaults before 1024 and 4): most landings reserved on request, a quarter of
        # the semaphores kept for those; 32 tile rows, more landings than semaphores
        add_test(NAME dla_dpotrf_gpu_sems64_np2 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu_only.sh
            ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2 $<TARGET_FILE:testing_dpotrf>
            -N 8000 -t 250 -P 2 -Q 1 -g 1 -c 1 -x --mca device_cuda_landing_semaphores 64
            --mca device_cuda_landing_waiters 0)
        set_tests_properties(dla_dpotrf_gpu_sems64_np2 PROPERTIES LABELS "apps;gpu;mpi"
            TIMEOUT 300 SKIP_RETURN_CODE 77 RESOURCE_LOCK rill_gpus
            PASS_REGULAR_EXPRESSION " PASS" FAIL_REGULAR_EXPRESSION " FAIL|error")
        # landings reserved ahead (their consumers released long before the bytes) and at
        # most 2 such consumers enqueued per GPU at once (4 by default)
        add_test(NAME dla_dpotrf_gpu_waiters_np4 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu_only.sh
            ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 4 $<TARGET_FILE:testing_dpotrf>
            -N 6001 -t 400 -P 2 -Q 2 -g 1 -c 1 -x --mca device_cuda_landing_waiters 2)
        set_tests_properties(dla_dpotrf_gpu_waiters_np4 PROPERTIES LABELS "apps;gpu;mpi"
            TIMEOUT 300 SKIP_RETURN_CODE 77 RESOURCE_LOCK rill_gpus
            PASS_REGULAR_EXPRESSION " PASS" FAIL_REGULAR_EXPRESSION " FAIL|error")
        # PTG on GPUs, 2 ranks: its tiles GPU to GPU (CUDA IPC on one node; _net: as two
        # simulated nodes over UCX through sockets, when UCX is built in)
        set(ptg_runs "ptg_np2")
        if(RILL_HAVE_UCX)
            list(APPEND ptg_runs "ptg_net_np2")
        endif()
        foreach(run ${ptg_runs})
            set(net "")
            set(net_mca "")
            if(run STREQUAL "ptg_net_np2")
                set(net -x UCX_TLS=tcp,cuda_copy,self)
                set(net_mca --mca comm_ranks_per_node 1 --mca comm_net ucx)
            endif()
            add_test(NAME dla_dpotrf_gpu_${run} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu_only.sh
                ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2 ${net}
                $<TARGET_FILE:testing_dpotrf> -N 4001 -t 500 -P 1 -Q 2 -g 1 -c 1 -x --dsl ptg
                ${net_mca})
            set_tests_properties(dla_dpotrf_gpu_${run} PROPERTIES LABELS "apps;gpu;mpi;ptg"
                TIMEOUT 300 SKIP_RETURN_CODE 77 RESOURCE_LOCK rill_gpus
                PASS_REGULAR_EXPRESSION " PASS" FAIL_REGULAR_EXPRESSION " FAIL|error")
        endforeach()
        # one rank's GPU cannot start (a zone larger than the GPU): every rank stops at
        # rill_init with a message naming it, none hangs in the collectives that follow
        add_test(NAME dla_err_gpu_init_np2 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu_only.sh
            ${DLA_FAIL} 60 "rank 1 could not start its GPUs" ${MPIEXEC_EXECUTABLE}
            ${RILL_MPIEXEC_FLAGS} -np 1 $<TARGET_FILE:testing_dpotrf> -N 100 -g 1 : -np 1
            -x RILL_MCA_device_cuda_memory_size=4T $<TARGET_FILE:testing_dpotrf> -N 100 -g 1)
        set_tests_properties(dla_err_gpu_init_np2 PROPERTIES LABELS "apps;gpu;mpi" TIMEOUT 120
            SKIP_RETURN_CODE 77 RESOURCE_LOCK rill_gpus)
    endif()
endif()

# ---------------------------------------------------------------- several ranks (label mpi)
if(RILL_HAVE_MPI)
    # a parameter from which each rank decides alone how tiles move between ranks differs:
    # every rank stops at rill_init naming it (rank 1 would send host to host tiles that rank
    # 0 awaits GPU to GPU, and both would wait)
    add_test(NAME dla_err_params_differ_np2 COMMAND ${DLA_FAIL} 60
        "parameter runtime_device differs between ranks \\(rank 1: cpu, from env RILL_MCA_runtime_device"
        ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 1 $<TARGET_FILE:testing_dpotrf> -N 100
        -c 1 : -np 1 -x RILL_MCA_runtime_device=cpu $<TARGET_FILE:testing_dpotrf> -N 100 -c 1)
    set_tests_properties(dla_err_params_differ_np2 PROPERTIES LABELS "apps;mpi" TIMEOUT 120)
    dla_test(dla_dpotrf_np4_2x2 NP 4 COMMAND testing_dpotrf -N 300 -t 64 -P 2 -Q 2 -c 1 -x)
    dla_test(dla_dgemm_np4_2x2 NP 4 COMMAND testing_dgemm -M 200 -N 150 -K 250 -t 64 -P 2 -Q 2
        -c 1 --transA T -x)
    dla_test(dla_dposv_np4_2x2 NP 4 COMMAND testing_dposv -N 250 -t 64 -P 2 -Q 2 -c 1 --nrhs 2 -x)
    dla_test(dla_dpotrf_np2_1x2 NP 2 COMMAND testing_dpotrf -N 250 -t 64 -P 1 -Q 2 -c 1 -x)
    dla_test(dla_dpotrf_np2_2x1 NP 2 COMMAND testing_dpotrf -N 250 -t 64 -P 2 -Q 1 -c 1 -x)
    dla_test(dla_dgemm_np2_1x2 NP 2 COMMAND testing_dgemm -N 200 -t 64 -P 1 -Q 2 -c 1 -x)
    dla_test(dla_dgemm_np2_2x1 NP 2 COMMAND testing_dgemm -N 200 -t 64 -P 2 -Q 1 -c 1
        --transB T -x)
    dla_test(dla_dpotrf_np3_3x1 NP 3 COMMAND testing_dpotrf -N 300 -t 48 -P 3 -Q 1 -c 1 -x)
    dla_test(dla_dposv_np3_3x1 NP 3 COMMAND testing_dposv -N 250 -t 48 -P 3 -Q 1 -c 1 -x)
    dla_test(dla_dgetrf_np2_2x1 NP 2 COMMAND testing_dgetrf -N 250 -t 48 -P 2 -Q 1 -c 1
        --kind pivot -x)
    dla_test(dla_dgetrf_np2_1x2 NP 2 COMMAND testing_dgetrf -N 233 -t 40 -P 1 -Q 2 -c 1 -x)
    dla_test(dla_dgetrf_np3_3x1 NP 3 COMMAND testing_dgetrf -N 250 -t 40 -P 3 -Q 1 -c 1
        --kind singular -x)
    dla_test(dla_dgetrf_np4_2x2 NP 4 COMMAND testing_dgetrf -N 300 -t 64 -P 2 -Q 2 -c 1 -x)
    dla_test(dla_dgetrf_tall_np2_2x1 NP 2 COMMAND testing_dgetrf -N 345 -t 10 -P 2 -Q 1 -c 1
        --kind pivot -x)
    dla_test(dla_dgesv_np2_2x1 NP 2 COMMAND testing_dgesv -N 250 -t 48 -P 2 -Q 1 -c 1
        --nrhs 5 --kind pivot -x)
    dla_test(dla_dgesv_np3_3x1 NP 3 COMMAND testing_dgesv -N 250 -t 40 -P 3 -Q 1 -c 1
        --kind singular -x)
    dla_test(dla_dgesv_np4_2x2 NP 4 COMMAND testing_dgesv -N 301 -t 40 -P 2 -Q 2 -c 1 --nrhs 45
        -x)
    # the diagonal distribution (--dist diagonal: grid row (i + j) % P), ragged sizes
    dla_test(dla_dpotrf_np2_diag NP 2 COMMAND testing_dpotrf -N 301 -t 64 -c 1 --dist diagonal -x)
    dla_test(dla_dgemm_np3_diag NP 3 COMMAND testing_dgemm -M 203 -N 151 -K 99 -t 32 -c 1
        --dist diagonal -x)
    dla_test(dla_dposv_np4_2x2_diag NP 4 COMMAND testing_dposv -N 251 -t 48 -P 2 -Q 2 -c 1
        --dist diagonal --nrhs 3 -x)
    # the skewed distribution (grid row (i + j + j / P) % P on a P x 1 grid, (i + i /
    # lcm(P, Q)) % P on others) is the testers' default for the factorizations (the tests
    # above without --dist take it): block-cyclic on P x 1 and 2 x 2, skewed named on 4 x 1,
    # ragged sizes
    dla_test(dla_dpotrf_np2_2x1_cyclic NP 2 COMMAND testing_dpotrf -N 301 -t 32 -c 1
        --dist cyclic -x)
    dla_test(dla_dpotrf_np3_3x1_cyclic NP 3 COMMAND testing_dpotrf -N 333 -t 32 -c 1
        --dist cyclic -x)
    dla_test(dla_dposv_np4_skewed NP 4 COMMAND testing_dposv -N 251 -t 32 -P 4 -Q 1 -c 1
        --dist skewed --nrhs 2 -x)
    dla_test(dla_dpotrf_np4_2x2_cyclic NP 4 COMMAND testing_dpotrf -N 301 -t 32 -P 2 -Q 2 -c 1
        --dist cyclic -x)
    dla_test(dla_dpotrf_np3_inverse NP 3 COMMAND testing_dpotrf -N 301 -t 48 -c 1 --nruns 2
        --dist diagonal --panel inverse -x)
    dla_test(dla_dposv_np2_1x2_inverse NP 2 COMMAND testing_dposv -N 251 -t 48 -P 1 -Q 2 -c 1
        --nrhs 2 --panel inverse -x)
    # issue 38: 4 ranks as 2 simulated nodes (comm_ranks_per_node 2): the tiles between
    # nodes over UCX through sockets (UCX_TLS=tcp,self), and over MPI; DTD and PTG, ragged
    # sizes, most tiles by rendezvous (comm_short_limit 64)
    set(_nets mpi)
    if(RILL_HAVE_UCX)
        list(APPEND _nets ucx)
    endif()
    foreach(net ${_nets})
        set(_on -x UCX_TLS=tcp,self)
        set(_mca --mca comm_ranks_per_node 2 --mca comm_net ${net} --mca comm_short_limit 64)
        foreach(dsl dtd ptg)
            add_test(NAME dla_dpotrf_nodes_${net}_${dsl}_np4 COMMAND ${MPIEXEC_EXECUTABLE}
                ${RILL_MPIEXEC_FLAGS} -np 4 ${_on} $<TARGET_FILE:testing_dpotrf> -N 301 -t 32
                -P 2 -Q 2 -c 1 --dsl ${dsl} -x ${_mca})
            add_test(NAME dla_dgemm_nodes_${net}_${dsl}_np4 COMMAND ${MPIEXEC_EXECUTABLE}
                ${RILL_MPIEXEC_FLAGS} -np 4 ${_on} $<TARGET_FILE:testing_dgemm> -M 203 -N 151
                -K 99 -t 32 -P 2 -Q 2 -c 1 --transA T --dsl ${dsl} -x ${_mca})
            set_tests_properties(dla_dpotrf_nodes_${net}_${dsl}_np4
                dla_dgemm_nodes_${net}_${dsl}_np4 PROPERTIES LABELS "apps;mpi" TIMEOUT 120
                PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL")
        endforeach()
        add_test(NAME dla_dposv_nodes_${net}_np4 COMMAND ${MPIEXEC_EXECUTABLE}
            ${RILL_MPIEXEC_FLAGS} -np 4 ${_on} $<TARGET_FILE:testing_dposv> -N 251 -t 48 -P 2
            -Q 2 -c 1 --nrhs 3 -x ${_mca})
        set_tests_properties(dla_dposv_nodes_${net}_np4 PROPERTIES LABELS "apps;mpi"
            TIMEOUT 120 PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL")
    endforeach()
    # one rank cannot start its runtime after MPI is up (a core list naming no core of
    # its): both stop at rill_init, the other naming it, neither hangs nor crashes in MPI
    add_test(NAME dla_err_init_np2 COMMAND ${DLA_FAIL} 60
        "rank 1 could not start its runtime \\(topology, workers, watchdog\\)"
        ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 1 $<TARGET_FILE:testing_dpotrf> -N 100
        -c 1 : -np 1 -x RILL_MCA_runtime_core_list=999 $<TARGET_FILE:testing_dpotrf> -N 100
        -c 1)
    set_tests_properties(dla_err_init_np2 PROPERTIES LABELS "apps;mpi" TIMEOUT 120)
    dla_fail_test(dla_err_grid_np2 "does not match the 2 ranks" NP 2
        COMMAND testing_dpotrf -N 100 -P 2 -Q 2 -c 1)
    dla_fail_test(dla_err_nonspd_np2 "matrix is not positive definite \\(leading minor 126\\)" NP 2
        COMMAND testing_dpotrf -N 250 -t 64 -P 2 -Q 1 -c 1 --nonspd)
    # two ranks on this node: twice one rank's tiles; both stop
    dla_fail_test(dla_err_memory_np2 "not enough memory: this run needs about .* \\(2 rank\\(s\\) x"
        NP 2 COMMAND testing_dpotrf -N 1000000 -P 2 -Q 1 -c 1)
    # one worker per rank and tiny tiles fill the DTD window: a rank waiting in the
    # collectives of closing must keep running what the other rank waits for (these hung)
    dla_test(dla_dpotrf_window_np2 NP 2 COMMAND testing_dpotrf -N 90 -t 1 -c 1 -x
        -- runtime_watchdog_s 30 runtime_watchdog_action abort)
    dla_test(dla_dgemm_window_np2 NP 2 COMMAND testing_dgemm -M 100 -N 100 -K 1 -t 1 -c 1 -x
        -- runtime_watchdog_s 30 runtime_watchdog_action abort)
    dla_test(dla_dposv_window_np2 NP 2 COMMAND testing_dposv -N 300 -t 6 -c 1 -x
        -- runtime_watchdog_s 30 runtime_watchdog_action abort)
    dla_fail_test(dla_err_gemm_inf_np2 "check failed: the result contains NaN or Inf" NP 2
        COMMAND testing_dgemm -N 100 -t 32 -P 2 -Q 1 -c 1 --alpha inf -x)
endif()


# dpotrf and dgemm written in PTG (apps/dla/*.rill, --dsl ptg): checked like the DTD
# versions on ragged sizes, on one rank and several
if(RILL_HAVE_RILLCC)
    dla_test(dla_dpotrf_ptg COMMAND testing_dpotrf -N 300 -t 64 -g 0 -x --dsl ptg)
    dla_test(dla_dpotrf_ptg_ragged COMMAND testing_dpotrf -N 251 -t 48 -g 0 -x --nruns 2 --dsl ptg)
    dla_test(dla_dpotrf_ptg_onetile COMMAND testing_dpotrf -N 40 -t 64 -g 0 -x --dsl ptg)
    dla_test(dla_dgemm_ptg COMMAND testing_dgemm -M 300 -N 250 -K 190 -t 64 -g 0 -x --dsl ptg)
    dla_test(dla_dgemm_ptg_trans
        COMMAND testing_dgemm -N 301 -t 64 --transA T --transB T -g 0 -x --dsl ptg)
    dla_test(dla_dgemm_ptg_k0 COMMAND testing_dgemm -M 100 -N 90 -K 0 -t 32 --beta 0 -g 0 -x --dsl ptg)
    dla_usage_test(dla_err_dsl "option --dsl needs dtd or ptg, not pt" COMMAND testing_dpotrf --dsl pt)
    # dgetrf and dgesv in PTG (apps/dla/dgetrf.rill): ragged, a matrix that fails without
    # pivoting over 34 tile rows (above the DTD panel's 30), a singular one (LAPACK's info),
    # one tile; on 2 x 1, 1 x 2, 3 x 1, 2 x 2 and the diagonal distribution
    dla_test(dla_dgetrf_ptg COMMAND testing_dgetrf -N 250 -t 64 -x --dsl ptg)
    dla_test(dla_dgetrf_ptg_pivot34 COMMAND testing_dgetrf -N 500 -t 15 --kind pivot -x --dsl ptg)
    dla_row_test(dla_dgetrf_ptg_singular "^# info 151 \\(LAPACK's on the same matrix: 151\\)$"
        COMMAND testing_dgetrf -N 300 -t 64 --kind singular -x --dsl ptg)
    dla_test(dla_dgetrf_ptg_onetile COMMAND testing_dgetrf -N 50 -t 64 -x --dsl ptg)
    dla_test(dla_dgesv_ptg COMMAND testing_dgesv -N 250 -t 64 --nrhs 70 --kind pivot -x --dsl ptg)
    if(RILL_HAVE_MPI)
        dla_test(dla_dgetrf_ptg_np2_2x1 NP 2 COMMAND testing_dgetrf -N 250 -t 48 -P 2 -Q 1 -c 1
            --kind pivot -x --dsl ptg)
        dla_test(dla_dgetrf_ptg_np2_1x2 NP 2 COMMAND testing_dgetrf -N 233 -t 40 -P 1 -Q 2 -c 1
            -x --dsl ptg)
        dla_test(dla_dgetrf_ptg_np3_3x1 NP 3 COMMAND testing_dgetrf -N 250 -t 40 -P 3 -Q 1 -c 1
            --kind singular -x --dsl ptg)
        dla_test(dla_dgetrf_ptg_np4_2x2 NP 4 COMMAND testing_dgetrf -N 301 -t 30 -P 2 -Q 2 -c 1
            --kind pivot -x --dsl ptg)
        dla_test(dla_dgetrf_ptg_np4_diag NP 4 COMMAND testing_dgetrf -N 277 -t 32 -P 4 -Q 1 -c 1
            --dist diagonal -x --dsl ptg)
        dla_test(dla_dgesv_ptg_np4_2x2 NP 4 COMMAND testing_dgesv -N 301 -t 40 -P 2 -Q 2 -c 1
            --nrhs 45 -x --dsl ptg)
        set_property(TEST dla_dgetrf_ptg_np2_2x1 dla_dgetrf_ptg_np2_1x2 dla_dgetrf_ptg_np3_3x1
            dla_dgetrf_ptg_np4_2x2 dla_dgetrf_ptg_np4_diag dla_dgesv_ptg_np4_2x2 APPEND PROPERTY
            LABELS ptg)
    endif()
    if(RILL_HAVE_MPI) # PTG across ranks: the dpotrf's tiles travel as activations
        add_test(NAME dla_dpotrf_ptg_np2 COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2
            $<TARGET_FILE:testing_dpotrf> -N 600 -t 96 -P 2 -Q 1 -g 0 -x --nruns 2 --dsl ptg)
        add_test(NAME dla_dpotrf_ptg_np4 COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 4
            $<TARGET_FILE:testing_dpotrf> -N 301 -t 32 -P 2 -Q 2 -g 0 -x --dsl ptg)
        # inverse panels (TRTRI's NEW tile W to the other ranks' dtrmms), ragged
        add_test(NAME dla_dpotrf_ptg_inverse_np3 COMMAND ${MPIEXEC_EXECUTABLE}
            ${RILL_MPIEXEC_FLAGS} -np 3 $<TARGET_FILE:testing_dpotrf> -N 777 -t 50 -P 3 -Q 1 -g 0
            -x --dsl ptg --panel inverse)
        set_tests_properties(dla_dpotrf_ptg_np2 dla_dpotrf_ptg_np4 dla_dpotrf_ptg_inverse_np3 PROPERTIES
            LABELS "apps;mpi;ptg" TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL")
        # dgemm: READ_A / READ_B send each tile once per rank (in several messages when
        # the targets do not fit in one: 50 GEMMs per rank below; exposed for GETs at 64 B)
        add_test(NAME dla_dgemm_ptg_np2 COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2
            $<TARGET_FILE:testing_dgemm> -M 64 -N 800 -K 100 -t 8 -P 1 -Q 2 -g 0 -x --nruns 2
            --dsl ptg --mca comm_short_limit 64)
        add_test(NAME dla_dgemm_ptg_np4 COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 4
            $<TARGET_FILE:testing_dgemm> -N 301 -t 32 -P 2 -Q 2 --transA T --transB T -g 0 -x
            --dsl ptg)
        set_tests_properties(dla_dgemm_ptg_np2 dla_dgemm_ptg_np4 PROPERTIES
            LABELS "apps;mpi;ptg" TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL")
    endif()
endif()

# Runs of a path another test covers on another grid shape, or over the other wire between
# simulated nodes (each wire keeps one DTD and one PTG run, and dposv one), or a distribution
# another run keeps (3 x 1 by dpotrf, diag by dpotrf on 2 ranks, inverse by PTG on 3 ranks;
# dgesv's interchanges and solves on 2 x 1 and 3 x 1 by dgetrf's and its own 2 x 2; the PTG
# dgetrf's grids by its 2 x 2 run with a matrix that needs pivoting, and its 1-rank runs):
# label shape, which the sanitizer suites leave out; the Release suite runs them all
foreach(t dla_dpotrf_np4_2x2_cyclic dla_dpotrf_np3_3x1_cyclic dla_dposv_np4_skewed
        dla_dposv_np4_2x2_diag dla_dpotrf_nodes_mpi_dtd_np4 dla_dpotrf_nodes_ucx_ptg_np4
        dla_dgemm_nodes_mpi_dtd_np4 dla_dgemm_nodes_ucx_ptg_np4 dla_dposv_nodes_mpi_np4
        dla_dposv_np3_3x1 dla_dgemm_np3_diag dla_dpotrf_np3_inverse dla_dgesv_np2_2x1
        dla_dgesv_np3_3x1 dla_dgetrf_ptg_pivot34 dla_dgetrf_ptg_onetile dla_dgesv_ptg
        dla_dgetrf_ptg_np2_2x1 dla_dgetrf_ptg_np2_1x2 dla_dgetrf_ptg_np3_3x1
        dla_dgetrf_ptg_np4_diag dla_dgesv_ptg_np4_2x2)
    if(TEST ${t})
        set_property(TEST ${t} APPEND PROPERTY LABELS shape)
    endif()
endforeach()
