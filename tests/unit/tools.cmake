# rill_info on the command line, and the installed package.
add_test(NAME rill_info_param COMMAND rill_info --param sched --mca sched gpq)
set_tests_properties(rill_info_param PROPERTIES LABELS unit TIMEOUT 60
    PASS_REGULAR_EXPRESSION "sched = gpq \\(cmdline: --mca\\)")
# --parsable: one line per parameter, tab-separated (name, type, value, source, default,
# allowed, level), nothing else on stdout
add_test(NAME rill_info_parsable COMMAND rill_info --parsable --param sched --mca sched gpq)
set_tests_properties(rill_info_parsable PROPERTIES LABELS unit TIMEOUT 60
    PASS_REGULAR_EXPRESSION "^sched\tenum\tgpq\tcmdline\tlfq\tlfq\\|gpq\tuser\n"
    FAIL_REGULAR_EXPRESSION "Rill |Parameters|=")
add_test(NAME rill_info_param_missing
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 30 "rill_info: [-]+param needs a PATTERN"
        $<TARGET_FILE:rill_info> --param)
set_tests_properties(rill_info_param_missing PROPERTIES LABELS unit TIMEOUT 60)
add_test(NAME rill_info_env COMMAND rill_info --param dtd_window_size)
set_tests_properties(rill_info_env PROPERTIES LABELS unit TIMEOUT 60
    ENVIRONMENT "RILL_MCA_dtd_window_size=12345"
    PASS_REGULAR_EXPRESSION "dtd_window_size = 12345 \\(env: RILL_MCA_dtd_window_size\\)")
add_test(NAME rill_info_topology COMMAND rill_info --topology)
set_tests_properties(rill_info_topology PROPERTIES LABELS unit TIMEOUT 60
    PASS_REGULAR_EXPRESSION "worker 0 -> ")
add_test(NAME rill_info_bad_option
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 30 "unknown option '--bogus'"
        $<TARGET_FILE:rill_info> --bogus)
add_test(NAME rill_info_bad_value
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 30
        "bad value 'fifo' for parameter 'sched'.*one of: lfq, gpq|bad value 'fifo' for parameter 'sched'.*lfq\\|gpq"
        $<TARGET_FILE:rill_info> --param sched --mca sched fifo)
add_test(NAME rill_init_bad_value
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 30 "bad value '0' for parameter 'dtd_window_size'"
        $<TARGET_FILE:dtd_axpy> --mca dtd_window_size 0)
# a runtime report that cannot be written fails the start, naming the path
add_test(NAME runtime_report_bad_path
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 30
        "runtime_report: cannot write /nonexistent/dir/r.json: No such file"
        $<TARGET_FILE:dtd_axpy> --mca runtime_report /nonexistent/dir/r.json)
# every parameter that is not a string, given 'zzz', stops rill_init naming it (one kept
# its default and went on); label script: 65 program starts, 50 s under ASan, where
# rill_init_bad_value keeps the path
add_test(NAME rill_init_every_bad_value
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/params_every_bad.sh $<TARGET_FILE:rill_info>
        $<TARGET_FILE:readme_axpy>)
set_tests_properties(rill_info_bad_option rill_info_bad_value rill_init_bad_value
    runtime_report_bad_path PROPERTIES LABELS unit TIMEOUT 60)
set_tests_properties(rill_init_every_bad_value PROPERTIES LABELS "unit;script" TIMEOUT 120
    PASS_REGULAR_EXPRESSION "\nPASS" FAIL_REGULAR_EXPRESSION "FAIL"
    ENVIRONMENT UCX_MEM_BISTRO_GRACE_DURATION=0)
if(NOT RILL_SANITIZE)
    add_test(NAME test_install COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh
        ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
    set_tests_properties(test_install PROPERTIES LABELS unit TIMEOUT 300)
endif()
# issue 7: --build tells what is built and usable, not only what configure found
add_test(NAME rill_info_build COMMAND rill_info --build)
set_tests_properties(rill_info_build PROPERTIES LABELS unit TIMEOUT 60
    PASS_REGULAR_EXPRESSION "CUDA toolkit: [^\n]*\n *GPU support: +(tasks with CUDA bodies run on the GPUs|not built)[^\n]*\n *GPU devices: +(no NVIDIA driver loaded|the NVIDIA driver lists)"
    FAIL_REGULAR_EXPRESSION "CUDA: +yes")
# issue 38: whether UCX, the wire between nodes, was found, and which
if(RILL_HAVE_UCX)
    set(_ucx_line "UCX: +UCX [0-9]+\\.[0-9]+[^\n]*: the wire between nodes \\(comm_net\\)")
else()
    set(_ucx_line "UCX: +not built \\(no UCX at configure\\)")
endif()
add_test(NAME rill_info_build_ucx COMMAND rill_info --build)
set_tests_properties(rill_info_build_ucx PROPERTIES LABELS unit TIMEOUT 60
    PASS_REGULAR_EXPRESSION "${_ucx_line}")
# issue 7: no suggestion for a name close to none; a typo still gets one; an empty name
# in RILL_MCA_ is reported
add_test(NAME rill_info_unknown_far COMMAND rill_info --param sched)
set_tests_properties(rill_info_unknown_far PROPERTIES LABELS unit TIMEOUT 60
    ENVIRONMENT "RILL_MCA_foo=1"
    PASS_REGULAR_EXPRESSION "unknown parameter 'foo' \\(environment RILL_MCA_foo\\)"
    FAIL_REGULAR_EXPRESSION "did you mean")
add_test(NAME rill_info_unknown_typo COMMAND rill_info --param sched)
set_tests_properties(rill_info_unknown_typo PROPERTIES LABELS unit TIMEOUT 60
    ENVIRONMENT "RILL_MCA_dtd_windw_size=1"
    PASS_REGULAR_EXPRESSION "unknown parameter 'dtd_windw_size' \\(environment RILL_MCA_dtd_windw_size\\). did you mean 'dtd_window_size'\\?")
add_test(NAME rill_info_env_empty_name COMMAND rill_info --param sched)
set_tests_properties(rill_info_env_empty_name PROPERTIES LABELS unit TIMEOUT 60
    ENVIRONMENT "RILL_MCA_=x"
    PASS_REGULAR_EXPRESSION "the variable RILL_MCA_=x has an empty parameter name")
add_test(NAME rill_info_mca_empty_name
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 30
        "command line: --mca '' '3': the parameter name is empty"
        $<TARGET_FILE:rill_info> --param sched --mca "" 3)
set_tests_properties(rill_info_mca_empty_name PROPERTIES LABELS unit TIMEOUT 60)
# issue 11: how each rank reaches the others' GPU memory, and comm_gpu_direct = off forcing
# host-staged for every peer
if(RILL_HAVE_MPI)
    add_test(NAME rill_info_peers_np2 COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2
        $<TARGET_FILE:rill_info> --peers)
    set_tests_properties(rill_info_peers_np2 PROPERTIES LABELS "unit;mpi" TIMEOUT 120
        PASS_REGULAR_EXPRESSION "rank 0 \\(node 0, [0-9]+ GPU\\(s\\)\\): rank 1: node 0, bytes over mpi \\(the same node\\), GPU tiles (GPU direct|host-staged \\()")
    add_test(NAME rill_info_peers_off_np2 COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS}
        -np 2 $<TARGET_FILE:rill_info> --peers --mca comm_gpu_direct off)
    set_tests_properties(rill_info_peers_off_np2 PROPERTIES LABELS "unit;mpi" TIMEOUT 120
        PASS_REGULAR_EXPRESSION "rank 1 \\(node 0, [0-9]+ GPU\\(s\\)\\): rank 0: node 0, bytes over mpi \\(the same node\\), GPU tiles host-staged \\((comm_gpu_direct = off|Rill was built without CUDA)\\)"
        FAIL_REGULAR_EXPRESSION "GPU direct")
    # (no ';' in a regex: CMake would cut it into a list of looser alternatives)
    # issue 38: 4 ranks as 2 simulated nodes: the node's peer over MPI, the other node's
    # over the net wire (UCX through sockets when built with it), GPU tiles host-staged
    # between nodes, and no GPU port channel (no GPU here)
    if(RILL_HAVE_UCX)
        set(_net "ucx \\(another node, comm_net = auto\\)")
    else()
        set(_net "mpi \\(another node; Rill was built without UCX\\)")
    endif()
    add_test(NAME rill_info_peers_nodes_np4 COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS}
        -np 4 -x UCX_TLS=tcp,self $<TARGET_FILE:rill_info> --peers --mca comm_ranks_per_node 2)
    set_tests_properties(rill_info_peers_nodes_np4 PROPERTIES LABELS "unit;mpi" TIMEOUT 120
        PASS_REGULAR_EXPRESSION "rank 3 \\(node 2, [0-9]+ GPU\\(s\\)\\): rank 0: node 0, bytes over ${_net}, GPU tiles host-staged \\((on another node[^)]*|Rill was built without CUDA)\\), GPU port channels none \\((on another node[^)]*|Rill was built without CUDA)\\). rank 1: node 0, bytes over ${_net}, .*. rank 2: node 2, bytes over mpi \\(the same node \\(of comm_ranks_per_node ranks\\)\\)")
    add_test(NAME rill_info_peers_net_mpi_np4 COMMAND ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS}
        -np 4 $<TARGET_FILE:rill_info> --peers --mca comm_ranks_per_node 2 --mca comm_net mpi)
    set_tests_properties(rill_info_peers_net_mpi_np4 PROPERTIES LABELS "unit;mpi" TIMEOUT 120
        PASS_REGULAR_EXPRESSION "rank 0 \\(node 0, [0-9]+ GPU\\(s\\)\\): rank 1: node 0, bytes over mpi \\(the same node \\(of comm_ranks_per_node ranks\\)\\), .*. rank 2: node 2, bytes over mpi \\(another node, comm_net = mpi\\)"
        FAIL_REGULAR_EXPRESSION "over ucx")
    if(RILL_HAVE_UCX)
        # comm_net = ucx where UCX cannot start: every rank says so at rill_init
        add_test(NAME rill_info_peers_net_ucx_fails_np2
            COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 60 "comm_net = ucx names a wire that does not reach"
                ${MPIEXEC_EXECUTABLE} ${RILL_MPIEXEC_FLAGS} -np 2 -x UCX_TLS=no_such_transport
                $<TARGET_FILE:rill_info> --peers --mca comm_ranks_per_node 1 --mca comm_net ucx)
        set_tests_properties(rill_info_peers_net_ucx_fails_np2 PROPERTIES LABELS "unit;mpi"
            TIMEOUT 90 ENVIRONMENT EXPECT_EACH_RANK=2)
    endif()
endif()
# Each layer includes only its own headers and those of the layers below it.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
    add_test(NAME layers COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/unit/check_layers.py
        ${CMAKE_SOURCE_DIR})
    set_tests_properties(layers PROPERTIES LABELS "unit;script" TIMEOUT 60)
    # no library file over 1,500 lines, no function over 150 (tests/unit/check_sizes.py)
    add_test(NAME sizes COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/unit/check_sizes.py
        ${CMAKE_SOURCE_DIR})
    set_tests_properties(sizes PROPERTIES LABELS "unit;script" TIMEOUT 60)
    # librill exports the functions include/rill declares with RILL_API, nothing else
    add_test(NAME exports COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/unit/check_exports.py
        $<TARGET_FILE:rill> ${CMAKE_SOURCE_DIR}/include)
    set_tests_properties(exports PROPERTIES LABELS "unit;script" TIMEOUT 60)
    # tools/rill_bench's readers of the GPU programs' outputs, on excerpts of real ones
    add_test(NAME rill_bench_parse COMMAND ${Python3_EXECUTABLE}
        ${CMAKE_SOURCE_DIR}/tests/unit/test_rill_bench_parse.py ${CMAKE_SOURCE_DIR})
    set_tests_properties(rill_bench_parse PROPERTIES LABELS "unit;script" TIMEOUT 60)
    # tools/rill_tune: a 60-second study of a small dpotrf (every output; best.conf loads as
    # rill_info shows; resumed), a configuration that hangs cut off and recorded, a bad space
    if(TARGET testing_dpotrf)
        add_test(NAME rill_tune_dpotrf COMMAND ${Python3_EXECUTABLE}
            ${CMAKE_SOURCE_DIR}/tests/unit/test_rill_tune.py run ${CMAKE_SOURCE_DIR}/tools/rill_tune
            $<TARGET_FILE:rill_info> ${CMAKE_SOURCE_DIR}/tools/tune/dla_cpu.toml --
            $<TARGET_FILE:testing_dpotrf> -N 600 -c 1)
        set_tests_properties(rill_tune_dpotrf PROPERTIES LABELS "unit;script" TIMEOUT 300)
    endif()
    add_test(NAME rill_tune_hang COMMAND ${Python3_EXECUTABLE}
        ${CMAKE_SOURCE_DIR}/tests/unit/test_rill_tune.py hang ${CMAKE_SOURCE_DIR}/tools/rill_tune
        ${CMAKE_SOURCE_DIR}/tests/unit/tune_data)
    add_test(NAME rill_tune_bad_space COMMAND sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 30
        "empty_list.toml \\[mca\\]: sched: the list of values is empty" ${Python3_EXECUTABLE}
        ${CMAKE_SOURCE_DIR}/tools/rill_tune --space ${CMAKE_SOURCE_DIR}/tests/unit/tune_data/empty_list.toml
        --budget 5 --out ${CMAKE_CURRENT_BINARY_DIR}/rill_tune_bad_space -- true)
    set_tests_properties(rill_tune_hang rill_tune_bad_space PROPERTIES LABELS "unit;script"
        TIMEOUT 120)
    # --mca runtime_report: every rank's JSON report valid against its schema, and saying
    # each parameter's value and source (a file, the environment, --mca); params_verbose
    set(rill_report_check ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/unit/check_runtime_report.py
        ${CMAKE_SOURCE_DIR}/docs/runtime_report.schema.json)
    add_test(NAME runtime_report COMMAND ${rill_report_check} 1 -- $<TARGET_FILE:dtd_axpy>)
    set_tests_properties(runtime_report PROPERTIES LABELS unit TIMEOUT 120 SKIP_RETURN_CODE 77)
    if(RILL_HAVE_MPI)
        add_test(NAME runtime_report_np2 COMMAND ${rill_report_check} 2 ${MPIEXEC_EXECUTABLE}
            ${RILL_MPIEXEC_FLAGS} -np 2 -- $<TARGET_FILE:dtd_distributed>)
        set_tests_properties(runtime_report_np2 PROPERTIES LABELS "unit;mpi" TIMEOUT 120
            SKIP_RETURN_CODE 77)
    endif()
    # tools/rill_bench on the CPU suites (comm on 2 ranks, dtd, ptg): rows, references,
    # appends, bad arguments (the Release build: the driver, not the programs, is under test)
    if(MPIEXEC_EXECUTABLE AND NOT RILL_SANITIZE)
        add_test(NAME rill_bench_cpu_np2 COMMAND ${Python3_EXECUTABLE}
            ${CMAKE_SOURCE_DIR}/tests/unit/test_rill_bench.py ${CMAKE_SOURCE_DIR}
            ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/rill_bench_work)
        set_tests_properties(rill_bench_cpu_np2 PROPERTIES LABELS "unit;mpi" TIMEOUT 240)
    endif()
endif()
# the devices: the CPU always; each GPU with its nearest cores, or why there is none
add_test(NAME rill_info_devices COMMAND rill_info --devices)
set_tests_properties(rill_info_devices PROPERTIES LABELS unit TIMEOUT 60
    PASS_REGULAR_EXPRESSION "devices: cpu .host memory.; no GPU: [a-zA-Z];devices: cpu .host memory., [0-9]+ CUDA GPU")
