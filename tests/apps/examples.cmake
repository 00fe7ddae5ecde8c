# The examples run as tests: each checks its own result.
add_test(NAME example_dtd_axpy COMMAND dtd_axpy)
set_tests_properties(example_dtd_axpy PROPERTIES LABELS "apps" TIMEOUT 60)
# README's program (built from README.md): y = 7, exit 0
add_test(NAME example_readme_axpy COMMAND readme_axpy)
set_tests_properties(example_readme_axpy PROPERTIES LABELS "apps" TIMEOUT 60
    PASS_REGULAR_EXPRESSION "^y = 7\n$")
# A bad --mca value: rill_init refuses it, and the example stops there with its own message
# (exit 1), not a cascade of errors about NULL handles and a wrong result with exit code 0.
# FORBID: what the output must not hold (a second call's failure, a result).
foreach(ex dtd_axpy readme_axpy)
    add_test(NAME example_${ex}_bad_mca
        COMMAND env "ALSO=bad value '0' for parameter 'dtd_window_size'"
            "FORBID=NULL|handle|y = |tasks on|rill_data_create|rill_fini"
            sh ${CMAKE_SOURCE_DIR}/tests/apps/expect_exit.sh 60 1
            "rill_init\\(&argc, &argv, &ctx\\) failed: invalid argument"
            $<TARGET_FILE:${ex}> --mca dtd_window_size 0)
    set_tests_properties(example_${ex}_bad_mca PROPERTIES LABELS "apps" TIMEOUT 90)
endforeach()
# docs/dtd.md's distributed example: on 2 and 3 ranks (blocks homed k % nranks), and alone
foreach(np 2 3)
    add_test(NAME example_dtd_distributed_np${np}
        COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np ${np} $<TARGET_FILE:dtd_distributed>)
    set_tests_properties(example_dtd_distributed_np${np} PROPERTIES LABELS "apps;mpi" TIMEOUT 120
        PASS_REGULAR_EXPRESSION "dtd_distributed: ${np} ranks, 72 tasks: correct")
endforeach()
add_test(NAME example_dtd_distributed COMMAND dtd_distributed)
set_tests_properties(example_dtd_distributed PROPERTIES LABELS "apps" TIMEOUT 60
    PASS_REGULAR_EXPRESSION "dtd_distributed: 1 ranks, 72 tasks: correct")
# runtime_device = gpu in a process with no GPU: said at start, and the CPU bodies run
add_test(NAME example_dtd_axpy_device_gpu_no_gpu COMMAND ${CMAKE_SOURCE_DIR}/tests/apps/cpu_only.sh
    $<TARGET_FILE:dtd_axpy> --mca runtime_device gpu)
set_tests_properties(example_dtd_axpy_device_gpu_no_gpu PROPERTIES LABELS "apps" TIMEOUT 60
    SKIP_RETURN_CODE 77
    PASS_REGULAR_EXPRESSION "runtime_device = gpu, but this process has no GPU")
