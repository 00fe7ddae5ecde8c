#!/usr/bin/env bash
# Set up a fresh machine and run Rill: installs the missing system packages (Debian /
# Ubuntu), configures, builds, then either runs the main job (the Cholesky tester with a
# check) or the whole test suite.
#
#   scripts/bootstrap.sh          # main job: testing_dpotrf, checked: on the GPUs when the
#                                 # machine has any (1 process), else on 2 ranks of CPUs
#   scripts/bootstrap.sh test     # whole CTest suite, then again in ASan+UBSan and TSan builds
#
# Environment: RILL_JOBS (parallel build jobs, default: cores), RILL_SKIP_INSTALL=1 (do not
# touch system packages), RILL_SANITIZERS="address thread" (sanitizer builds of `test`),
# RILL_CTEST_JOBS (Release tests run at a time, default 2; the sanitizer suites run one),
# RILL_UCX_WHEEL=path (PyPI's libucx-cu13 wheel, for a machine with the CUDA toolkit and no
# package registry), ucx_DIR=<prefix>/lib/cmake/ucx (a site's own UCX: it wins),
# TASKBENCH_DIR=<a Task Bench checkout> (apps/taskbench and its check in the Release suite).
#
# UCX (the wire between nodes): a site's own UCX when named (ucx_DIR); else with the CUDA
# toolkit PyPI's libucx-cu13 (UCX built with CUDA support) in a virtual environment under
# build/; else (or when PyPI cannot be reached) Debian's libucx-dev.
set -euo pipefail

mode=${1:-main}
case "$mode" in
main | test) ;;
*)
    echo "usage: $0 [main|test]  (got '$mode')" >&2
    exit 2
    ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=${RILL_JOBS:-$(nproc)}
# UCX 1.22 (PyPI's) patches the memory functions when it is loaded, and waits 50 ms after
# each patch for threads to leave the function: 0.4 s at every start of a program linked
# with it, before any thread but the first exists (README, "Between nodes")
export UCX_MEM_BISTRO_GRACE_DURATION=${UCX_MEM_BISTRO_GRACE_DURATION:-0}

# ---------------------------------------------------------------- packages
pkgs=(build-essential cmake pkg-config git libhwloc-dev hwloc libopenmpi-dev openmpi-bin
    libopenblas-dev liblapacke-dev libscalapack-openmpi-dev flex bison libibverbs-dev python3-matplotlib
    python3-jsonschema python3-optuna python3-sklearn)
have_cuda=0
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    have_cuda=1
    pkgs+=(python3-venv)
fi
# Debian's UCX (no CUDA support) where no site UCX is named: the wire between nodes on a
# machine without the CUDA toolkit, and the fallback where PyPI cannot be reached
[ -z "${ucx_DIR:-}" ] && pkgs+=(libucx-dev)
install_missing() {
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "== installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
if [ "${RILL_SKIP_INSTALL:-0}" != 1 ]; then
    if command -v dpkg >/dev/null 2>&1; then
        install_missing
    else
        echo "== not a Debian-like system: install ${pkgs[*]} (or equivalents) by hand" >&2
    fi
fi

# ---------------------------------------------------------------- build
build() { # build <dir> <cmake args...>
    local dir=$1
    shift
    echo "== configure $dir $*"
    cmake -S "$top" -B "$dir" -DRILL_WERROR=ON "$@" >"$dir.configure.log" 2>&1 ||
        { cat "$dir.configure.log"; return 1; }
    echo "== build $dir"
    cmake --build "$dir" -j "$jobs" >"$dir.build.log" 2>&1 ||
        { tail -50 "$dir.build.log"; return 1; }
}

mkdir -p build
# UCX with CUDA support from PyPI, in build/ucx-venv (never the system Python); a site's
# own UCX (ucx_DIR) wins
ucx_args=()
if [ -n "${ucx_DIR:-}" ]; then
    ucx_args=(-Ducx_DIR="$ucx_DIR")
elif [ "$have_cuda" = 1 ]; then
    venv=build/ucx-venv
    if [ ! -d "$venv/lib" ] || ! ls -d "$venv"/lib/python3*/site-packages/libucx >/dev/null 2>&1; then
        echo "== installing UCX with CUDA support (PyPI libucx-cu13) into $venv"
        python3 -m venv "$venv" >/dev/null 2>&1 || python3 -m venv --without-pip "$venv"
        if [ -n "${RILL_UCX_WHEEL:-}" ]; then
            "$venv/bin/python" -m pip install -q --no-index --no-deps "$RILL_UCX_WHEEL" ||
                echo "== could not install $RILL_UCX_WHEEL: UCX without CUDA support, if the" \
                    "system has one" >&2
        else
            "$venv/bin/python" -m pip install -q libucx-cu13 ||
                echo "== could not install libucx-cu13 from PyPI (set RILL_UCX_WHEEL to a" \
                    "downloaded wheel): UCX without CUDA support, if the system has one" >&2
        fi
    fi
    d=$(ls -d "$venv"/lib/python3*/site-packages/libucx/lib/cmake/ucx 2>/dev/null | head -1)
    [ -n "$d" ] && ucx_args=(-Ducx_DIR="$top/$d")
fi
# Task Bench (not packaged): its implementation on Rill and its check are built when a
# checkout is named (TASKBENCH_DIR=<checkout>; apps/taskbench/README.md says how to get one)
tb_args=()
[ -n "${TASKBENCH_DIR:-}" ] && tb_args=(-DTASKBENCH_DIR="$TASKBENCH_DIR")
build build/release -DCMAKE_BUILD_TYPE=Release "${ucx_args[@]}" "${tb_args[@]}"

mpi_flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi_flags+=(--allow-run-as-root)

if [ "$mode" = main ]; then
    if command -v nvidia-smi >/dev/null 2>&1 && ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') &&
        [ "$ngpu" -gt 0 ]; then
        # one process per GPU; tiles move GPU to GPU between them (GPU-direct remote
        # dependencies); --bind-to none: Rill splits the node's cores between its processes
        echo "== main job: tiled Cholesky on $ngpu GPU(s), N=16384, NB=1024, one process per GPU, checked"
        exec mpirun "${mpi_flags[@]}" --bind-to none -np "$ngpu" \
            build/release/apps/dla/testing_dpotrf -N 16384 -t 1024 -g 1 -x
    fi
    echo "== main job: tiled Cholesky, N=4000, NB=256, 2 ranks (P=2 x Q=1), 1 core each, checked"
    exec mpirun "${mpi_flags[@]}" -np 2 build/release/apps/dla/testing_dpotrf \
        -N 4000 -t 256 -P 2 -Q 1 -c 1 -x
fi

# ---------------------------------------------------------------- tests
run_ctest() { # run_ctest <dir> <jobs> [ctest options...]
    local dir=$1 jobs=$2
    shift 2
    echo "== ctest in $dir ($jobs at a time${*:+, $*})"
    (cd "$dir" && ctest --output-on-failure --timeout 600 -j "$jobs" "$@")
}
# The Release suite two tests at a time (most of its time is processes starting: 6 min
# one at a time on a 2-core machine, 3 min so); the sanitizer suites one at a time, their
# programs several times slower and their timing tests nearer their limits
run_ctest build/release "${RILL_CTEST_JOBS:-2}"
for san in ${RILL_SANITIZERS-address thread}; do
    # intercept_tls_get_addr=0: GCC 12's LeakSanitizer scans each thread's dynamic TLS
    # blocks; with PyPI's UCX 1.22 (its transport modules dlopen'd; UCX_MODULES=none made
    # it pass too) its tracer crashed at the exit of the 3-rank DTD stress tests ("Tracer
    # caught signal 11"). Untracked, those blocks are no longer roots: a leak check can only
    # grow stricter
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0:intercept_tls_get_addr=0"
    export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    export TSAN_OPTIONS="suppressions=$top/tests/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
    # UCX's memory hooks (UCM patches mmap, madvise and malloc to see memory released) run
    # before the sanitizers' thread state exists: a thread's start crashed inside
    # ucm_madvise under TSan. Its VFS thread (fuse) crashed LeakSanitizer's tracer at exit.
    # Both off in the sanitizer runs (UCX then keeps no registration cache)
    export UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no UCX_VFS_ENABLE=n
    build "build/$san" -DCMAKE_BUILD_TYPE=Debug -DRILL_SANITIZE="$san" -DRILL_BUILD_BENCH=OFF \
        "${ucx_args[@]}"
    # without a GPU the GPU tests only start and skip (the Release suite shows that they
    # do): not again under each sanitizer (52 of them, about a minute per suite); nor the
    # tests of the Python and shell tools (label script), nor the testers' runs on another
    # grid shape or wire of a path another test covers (label shape)
    if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
        run_ctest "build/$san" 1 -LE 'script|shape'
    else
        run_ctest "build/$san" 1 -LE 'gpu|script|shape'
    fi
done
echo "== all test suites passed"
