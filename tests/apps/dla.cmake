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

# ---------------------------------------------------------------- error paths
dla_fail_test(dla_err_grid "does not match the 1 ranks" COMMAND testing_dpotrf -N 100 -P 2 -Q 2)
dla_fail_test(dla_err_tile0 "tile size -t must be positive" COMMAND testing_dpotrf -N 100 -t 0)
dla_fail_test(dla_err_negative_n "must be >= 0" COMMAND testing_dgemm -N -5)
dla_fail_test(dla_err_gpu "GPU support is not built yet" COMMAND testing_dposv -N 100 -g 1)
dla_fail_test(dla_err_option "unknown option" COMMAND testing_dpotrf --bogus)
dla_fail_test(dla_err_nonspd "matrix is not positive definite \\(leading minor 151\\)"
    COMMAND testing_dpotrf -N 300 -t 64 --nonspd)
dla_fail_test(dla_err_posv_nonspd "matrix is not positive definite \\(leading minor 101\\)"
    COMMAND testing_dposv -N 200 -t 48 --nonspd -x)

# ---------------------------------------------------------------- several ranks (label mpi)
if(RILL_HAVE_MPI)
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
    dla_fail_test(dla_err_grid_np2 "does not match the 2 ranks" NP 2
        COMMAND testing_dpotrf -N 100 -P 2 -Q 2 -c 1)
    dla_fail_test(dla_err_nonspd_np2 "matrix is not positive definite \\(leading minor 126\\)" NP 2
        COMMAND testing_dpotrf -N 250 -t 64 -P 2 -Q 1 -c 1 --nonspd)
endif()
