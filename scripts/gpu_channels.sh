#!/usr/bin/env bash
# On the 2-GPU machine: build, the GPU tests (channels in one process and in two), then
# bench/bench_channels on two processes. Bounded commands; logs under $OUT, a summary last.
#   scripts/gpu_channels.sh [tests|bench|hang|direct|issue11|dist|hop|all]   (default all)
# hop: a traced 4 KiB chain between the two GPUs (rill_trace_timeline around hops 150 and
# 151), the hop and the manager's cost per task with and without device_cuda_timing,
# bench/gpu_hop.sh's table (HOP_TABLE= skips it), the GPU tests (HOP_SUITE=seconds: the whole
# suite instead, within that time); everything packed into $OUT/hop.tgz
# dist: the GPU tests, the testers with -x and --dist diagonal on 2 x 1 GPU, dpotrf N = 65536
# on 2 x 1 GPU (block-cyclic, diagonal, block-cyclic with 64 landing semaphores and no
# bound on landing waiters) next to 1 x 2 GPUs and cusolverMgPotrf, the hop table
# direct: the GPU-direct tests, then the DLA testers on 2 processes x 1 GPU with checks
# (GPU direct, and host-staged with comm_gpu_direct = off) and dpotrf / dgemm figures of
# both next to one process driving both GPUs
# issue11: the GPU-direct tests, bench/gpu_hop.sh's table, dpotrf N = 65536 (NB 2048, 4096)
# on 2 processes x 1 GPU next to 1 process x 2 GPUs and cusolverMgPotrf on the same GPUs
# hang: the one-process signal scenario 8 times in each of 3 settings (as built; lazy
# module loading off; signals by copy), each run bounded: the test's own watchdog prints
# the feeding thread's last step, the progress words and every thread's stack on a hang
out=${OUT:-/tmp/rill-gpu}; mkdir -p "$out"
what=${1:-all}
nvidia-smi -L
mpi=(mpirun --oversubscribe); [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
gen=(); [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" >"$out/configure.log" 2>&1 &&
    timeout 300 cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -30; exit 1; }
export RILL_MCA_runtime_watchdog_s=60 RILL_MCA_runtime_watchdog_action=abort
T=build-gpu/apps/dla
np2=("${mpi[@]}" --bind-to none -np 2)
# the DLA testers with -x on 2 processes x 1 GPU, ragged sizes; $@: more options for each
testers_np2() {
    for cmd in "testing_dpotrf -N 6001 -t 512 -x" "testing_dgemm -M 2999 -N 3001 -K 1501 -t 512 -x" \
        "testing_dposv -N 3001 -t 512 -x --nrhs 7"; do
        echo "== np 2: $cmd -g 1 $*"
        timeout 60 "${np2[@]}" $T/$cmd -g 1 "$@" 2>&1 | grep -E "^ *[0-9]|error|GPU 0:|rank" | tail -4
    done
}
if [ "$what" = hang ]; then
    for setting in "" "CUDA_MODULE_LOADING=EAGER" "RILL_MCA_device_proxy_signal=copy"; do
        pass=0
        for k in 1 2 3 4 5 6 7 8; do
            log=$out/hang_${setting%%=*}_$k.log
            env $setting timeout 90 build-gpu/tests/gpu/test_channels signal >"$log" 2>&1 &&
                pass=$((pass + 1))
        done
        echo "signal, one process, ${setting:-as built}: $pass of 8 passed"
        grep -h "HANG\|signal: side" "$out"/hang_${setting%%=*}_*.log | head -8
    done
    exit 0
fi
if [ "$what" = issue11 ]; then
    # the GPU-direct tests, the hop table, and dpotrf at N = 65536 on 2 processes x 1 GPU
    # next to one process driving both GPUs and to cusolverMgPotrf on the same 2 GPUs
    (cd build-gpu && timeout 200 ctest -R gpu_direct --output-on-failure --timeout 90 \
        >"$out/ctest_direct.log" 2>&1)
    (cd build-gpu && timeout 120 ctest -R "gpu_direct_(late|pingpong)_np2" -V --timeout 60 2>&1 |
        grep -E "rank [01] \(" | sed 's/^[0-9]*: //')
    grep -E "tests passed|\*\*\*Failed|Timeout" "$out/ctest_direct.log" | tail -12
    bash bench/gpu_hop.sh build-gpu 200
    for n in ${RILL_DIRECT_SIZES:-65536}; do
        echo "== cusolverMgPotrf, 2 GPUs: N=$n tile 1024"
        timeout 150 build-gpu/bench/bench_gpu_vendor mgpotrf $n 2 1024 3 2>&1 | tail -2
        for nb in ${RILL_DIRECT_NB:-2048 4096}; do
            echo "== np 2 x 1 GPU (GPU direct): dpotrf N=$n NB=$nb"
            timeout 150 "${np2[@]}" $T/testing_dpotrf -N $n -t $nb --nruns 3 -g 1 2>&1 |
                grep -E "^ *[0-9]|error|GPU 0:"
            echo "== 1 process x 2 GPUs: dpotrf N=$n NB=$nb"
            timeout 150 $T/testing_dpotrf -N $n -t $nb --nruns 3 -g 2 2>&1 |
                grep -E "^ *[0-9]|error|GPU [01]:"
        done
    done
    exit 0
fi
if [ "$what" = hop ]; then
    # where a 4 KiB hop goes: a traced chain (both ranks' events around hop 150), the hop
    # table, then the GPU tests; everything packed into $out/hop.tgz
    timeout 60 "${np2[@]}" build-gpu/bench/bench_gpu_hop 200 4096 \
        --mca profile_trace "$out/hop" >"$out/hop_traced.log" 2>&1
    tail -4 "$out/hop_traced.log"
    for k in 150 151; do
        python3 tools/rill_trace_timeline --name hop --nth $k --before 40 --after 60 \
            "$out"/hop.*.json >"$out/hop_timeline_$k.txt" 2>&1
    done
    head -70 "$out/hop_timeline_150.txt"
    # the receive side's steps, per rank (medians over the chain)
    python3 tools/rill_trace_timeline --gap recv "landing armed" --gap "landing armed" \
        "released here" --gap "released here" launched --gap "landed from a rank:end" hop \
        "$out"/hop.*.json | tee "$out/hop_gaps.txt"
    # the managers' host steps (medians of the phases the trace's slices carry) in the hop
    # chain and in a chain of tasks on one GPU
    RILL_MCA_profile_trace="$out/tasks" timeout 60 build-gpu/bench/bench_gpu_tasks 3000 2>&1 |
        grep "^gpu_tasks"
    python3 - "$out"/hop.*.json "$out"/tasks.*.json <<'EOF' | tee "$out/host_steps.txt"
import json, re, statistics, sys
for f in sys.argv[1:]:
    ev = json.load(open(f))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    groups = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("name") in ("launch", "put", "arm", "slow turn"):
            g = groups.setdefault(e["name"], {"all": []})
            g["all"].append(float(e["dur"]))
            for k, v in re.findall(r"([a-z]+) ([0-9.]+)", str(e.get("args", {}).get("args", ""))):
                g.setdefault(k, []).append(float(v))
    for n, g in groups.items():
        print(f.split("/")[-1], n, "n=%d" % len(g["all"]), "max %.1f;" % max(g["all"]),
              "medians (us):", ", ".join("%s %.1f" % (k, statistics.median(v)) for k, v in g.items()))
EOF
    # what timing every operation with CUDA events costs a hop and a task (alternated)
    for k in $(seq "${HOP_AB:-2}"); do
        for sm in 0 65536; do # small puts by the copy engine, by the SMs (alternated)
            echo "== bench_gpu_hop 200 1048576, device_cuda_put_sm_max $sm"
            timeout 60 "${np2[@]}" build-gpu/bench/bench_gpu_hop 200 1048576 \
                --mca device_cuda_put_sm_max $sm 2>&1 | grep -E "^ +[0-9]+ +200 "
        done
        for t in 1 0; do
            echo "== bench_gpu_hop 200 1048576, device_cuda_timing $t"
            timeout 60 "${np2[@]}" build-gpu/bench/bench_gpu_hop 200 1048576 \
                --mca device_cuda_timing $t 2>&1 | grep -E "^ +[0-9]+ +200 "
        done
    done
    for t in 1 0; do
        echo "== bench_gpu_tasks 100000, device_cuda_timing $t"
        RILL_MCA_device_cuda_timing=$t timeout 60 build-gpu/bench/bench_gpu_tasks 100000 2>&1 |
            grep "^gpu_tasks"
    done
    if [ -n "${HOP_TABLE-1}" ]; then bash bench/gpu_hop.sh build-gpu 200 | tee "$out/hop_table.txt"; fi
    if [ -n "${HOP_SUITE:-}" ]; then # the whole suite, each process with a small zone
        # (without this script's watchdog settings: tests that expect a report and go on set
        # their own)
        (cd build-gpu && env -u RILL_MCA_runtime_watchdog_s -u RILL_MCA_runtime_watchdog_action \
            RILL_MCA_device_cuda_memory_use=3 timeout "$HOP_SUITE" ctest -j "${HOP_J:-6}" \
            --timeout 120 --output-on-failure >"$out/ctest_all.log" 2>&1)
        grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$out/ctest_all.log" | tail -30
    else
        (cd build-gpu && timeout 300 ctest -L gpu -E "channels_signal" --output-on-failure \
            --timeout 90 >"$out/ctest_gpu.log" 2>&1)
        grep -E "tests passed|\*\*\*Failed|Timeout" "$out/ctest_gpu.log" | tail -12
    fi
    (cd "$out" && tar czf hop.tgz --exclude hop.tgz ./*.log ./*.txt ./*.json 2>/dev/null)
    exit 0
fi
if [ "$what" = dist ]; then
    # the GPU tests; the testers with -x on 2 x 1 GPU with the diagonal distribution; dpotrf
    # N = 65536 on 2 x 1 GPU (block-cyclic, diagonal) next to 1 x 2 GPUs and cusolverMgPotrf;
    # bench/gpu_hop.sh's table
    (cd build-gpu && timeout 300 ctest -L gpu -E "channels_signal" --output-on-failure \
        --timeout 90 >"$out/ctest_gpu.log" 2>&1)
    grep -E "tests passed|\*\*\*Failed|Timeout" "$out/ctest_gpu.log" | tail -12
    testers_np2 --dist diagonal
    n=${RILL_DIST_N:-65536}
    echo "== cusolverMgPotrf, 2 GPUs: N=$n tile 1024"
    timeout 150 build-gpu/bench/bench_gpu_vendor mgpotrf $n 2 1024 3 2>&1 | tail -1
    # panels by the inverse (the default with GPUs), and by dtrsm for comparison; with the
    # landing defaults before 1024 semaphores and a bound of 4 landing waiters
    for dist in cyclic diagonal "diagonal --panel trsm" \
        "cyclic --mca device_cuda_landing_semaphores 64 --mca device_cuda_landing_waiters 0"; do
        echo "== np 2 x 1 GPU, --dist $dist: dpotrf N=$n NB=2048"
        timeout 150 "${np2[@]}" $T/testing_dpotrf -N $n -t 2048 --nruns 3 -g 1 --dist $dist 2>&1 |
            grep -E "^ *[0-9]|error|GPU 0:"
    done
    for panel in inverse trsm; do
        echo "== 1 process x 2 GPUs: dpotrf N=$n NB=2048 --panel $panel"
        timeout 150 $T/testing_dpotrf -N $n -t 2048 --nruns 3 -g 2 --panel $panel 2>&1 |
            grep -E "^ *[0-9]|error|GPU [01]:"
    done
    bash bench/gpu_hop.sh build-gpu 200
    exit 0
fi
if [ "$what" = direct ]; then
    (cd build-gpu && timeout 300 ctest -L gpu -E "channels_signal" --output-on-failure \
        --timeout 90 >"$out/ctest_direct.log" 2>&1)
    (cd build-gpu && timeout 120 ctest -R gpu_direct -V --timeout 60 2>&1 | grep -E "rank [01] \(" |
        sed 's/^[0-9]*: //' >"$out/direct_counters.log")
    cat "$out/direct_counters.log"
    grep -E "tests passed|\*\*\*Failed|Timeout|rank [01] \(" "$out/ctest_direct.log" | tail -30
    echo "== np 2, dtd_gpu_early 0: testing_dpotrf -N 6001 -t 512 -x -g 1"
    timeout 60 "${np2[@]}" $T/testing_dpotrf -N 6001 -t 512 -x -g 1 --mca dtd_gpu_early 0 2>&1 |
        grep -E "^ *[0-9]|error|GPU 0:|rank" | tail -3
    for mode in auto off; do
        testers_np2 --mca comm_gpu_direct $mode
        echo "== np 2, comm_gpu_direct $mode: testing_dpotrf -N 8192 -t 1024 -x --dsl ptg -g 1"
        timeout 60 "${np2[@]}" $T/testing_dpotrf -N 8192 -t 1024 -x --dsl ptg -g 1 \
            --mca comm_gpu_direct $mode 2>&1 | grep -E "^ *[0-9]|error|GPU 0:|rank" | tail -4
    done
    # figures: 2 processes x 1 GPU (GPU direct, host-staged) next to 1 process x 2 GPUs
    for n in ${RILL_DIRECT_SIZES:-32768 49152}; do
        for mode in auto off; do
            echo "== np 2 x 1 GPU, comm_gpu_direct $mode: dpotrf N=$n NB=2048"
            timeout 150 "${np2[@]}" $T/testing_dpotrf -N $n -t 2048 --nruns 3 -g 1 \
                --mca comm_gpu_direct $mode 2>&1 | grep -E "^ *[0-9]|error|GPU 0:"
        done
        echo "== 1 process x 2 GPUs: dpotrf N=$n NB=2048"
        timeout 150 $T/testing_dpotrf -N $n -t 2048 --nruns 3 -g 2 2>&1 | grep -E "^ *[0-9]|error|GPU [01]:"
    done
    for mode in "dtd_gpu_early 1" "dtd_gpu_early 0" "comm_gpu_direct off"; do
        echo "== bench_gpu_hop, $mode"
        timeout 120 "${np2[@]}" build-gpu/bench/bench_gpu_hop 200 --mca $mode 2>&1 | tail -7
    done
    echo "== np 2 x 1 GPU: dgemm N=32768 NB=4096 (GPU direct), then 1 process x 2 GPUs"
    timeout 150 "${np2[@]}" $T/testing_dgemm -N 32768 -t 4096 --nruns 3 -g 1 2>&1 | grep -E "^ *[0-9]|error|GPU 0:"
    timeout 150 $T/testing_dgemm -N 32768 -t 4096 --nruns 3 -g 2 2>&1 | grep -E "^ *[0-9]|error|GPU [01]:"
    exit 0
fi
if [ "$what" != bench ]; then
    (cd build-gpu && timeout 330 ctest -L gpu --output-on-failure --timeout 100 \
        >"$out/ctest_gpu.log" 2>&1)
    grep -E "tests passed|\*\*\*Failed|Timeout|Skipped|Passed" "$out/ctest_gpu.log" | tail -40
fi
if [ "$what" != tests ]; then
    # --bind-to none: Open MPI binds each of 2 ranks to one core by default, where the
    # proxy (the GPU manager thread) then shares it with the spinning main thread
    timeout 240 "${mpi[@]}" --bind-to none -np 2 build-gpu/bench/bench_channels \
        >"$out/bench_channels.log" 2>&1
    echo "bench_channels exit $?"
    tail -45 "$out/bench_channels.log"
fi
