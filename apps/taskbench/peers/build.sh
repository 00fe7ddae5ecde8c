#!/usr/bin/env bash
# Build the Task Bench implementations that rill_bench metg runs next to Rill's, in a Task Bench
# checkout (StanfordLegion/task-bench at bf4ad198): MPI (nonblock), OpenMP, StarPU (against
# Debian/Ubuntu's libstarpu-dev 1.3, where installed) and, given a PaRSEC source tree,
# PaRSEC DTD and PTG (Task Bench's parsec/ ported to today's PaRSEC by parsec.patch, which
# this applies to the checkout's parsec/ once; PaRSEC is installed under the checkout).
#   apps/taskbench/peers/build.sh TASKBENCH_DIR [PARSEC_SOURCE_DIR]
# It prints the --system arguments of rill_bench metg for what it built.
set -euo pipefail
TB=$(cd "${1:?usage: build.sh TASKBENCH_DIR [PARSEC_SOURCE_DIR]}" && pwd)
PS=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$TB/core/core_c.h" ] || { echo "build.sh: $TB is not a Task Bench checkout"; exit 2; }
j=$(nproc)
make -C "$TB/core" -j "$j" >/dev/null
make -C "$TB/mpi" nonblock >/dev/null
make -C "$TB/openmp" >/dev/null
systems=("MPI nonblock=$TB/mpi/nonblock"
    "OpenMP=env OMP_NUM_THREADS={cores} OMP_PROC_BIND=true $TB/openmp/main")
starpu=$(ls /usr/lib/x86_64-linux-gnu/libstarpu-1.3.so 2>/dev/null || true)
if [ -n "$starpu" ]; then
    make -C "$TB/starpu" STARPU_DIR=/usr \
        LIB="$starpu ${starpu/libstarpu-1.3/libstarpumpi-1.3} -L../core -lcore_s" main >/dev/null
    systems+=("StarPU=env STARPU_NCPU={cores} STARPU_SILENT=1 $TB/starpu/main")
else
    echo "build.sh: no libstarpu-1.3.so (apt install libstarpu-dev): StarPU left out"
fi
if [ -n "$PS" ]; then
    [ -f "$PS/parsec/parsec.c" ] || { echo "build.sh: $PS is not a PaRSEC source tree"; exit 2; }
    inst=$TB/parsec-install
    # MPI, no GPU; the limits that Task Bench's spread_radix5_period3.jdf needs (its patch.diff)
    cmake -S "$PS" -B "$TB/parsec-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$inst" \
        -DCMAKE_INSTALL_LIBDIR=lib -DPARSEC_DIST_WITH_MPI=ON -DPARSEC_GPU_WITH_CUDA=OFF \
        -DPARSEC_GPU_WITH_HIP=OFF -DPARSEC_GPU_WITH_LEVEL_ZERO=OFF -DSUPPORT_FORTRAN=OFF \
        -DBUILD_TESTING=OFF -DBUILD_TOOLS=OFF -DBUILD_DOCUMENTATION=OFF -DPARSEC_PROF_TRACE=OFF \
        -DPARSEC_WITH_DEVEL_HEADERS=ON -DPARSEC_MAX_LOCAL_COUNT=30 -DPARSEC_MAX_DEP_OUT_COUNT=15 \
        >/dev/null
    cmake --build "$TB/parsec-build" -j "$j" >/dev/null
    cmake --install "$TB/parsec-build" >/dev/null
    if [ ! -f "$TB/parsec/dtd_prune_helper.c" ]; then # the port, once
        patch -s -p1 -d "$TB" <"$here/parsec.patch"
    fi
    make -C "$TB/parsec" PARSEC_DIR="$inst" CORE_DIR="$TB/core" main_dtd main_ptg >/dev/null
    # with several ranks, each on its own core (parsec_rank.sh)
    systems+=("PaRSEC DTD=$here/parsec_rank.sh $TB/parsec/main_dtd -c {cores}"
        "PaRSEC PTG=$here/parsec_rank.sh $TB/parsec/main_ptg -c {cores}")
fi
echo "built; rill_bench metg --system arguments:"
for s in "${systems[@]}"; do printf -- "--system '%s'\n" "$s"; done
