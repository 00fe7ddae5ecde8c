#!/bin/sh
# Run a Task Bench PaRSEC binary (then its arguments). With several ranks on one machine
# (rill_bench starts them with mpirun --bind-to none), rank r runs on core r alone (taskset;
# core r mod the cores when there are more ranks),
# as mpirun --bind-to core would place it: PaRSEC binds its threads within the cores it is
# given, and left with all of them every rank binds its worker to core 0. One rank: as it is.
exe=$1
shift
if [ "${OMPI_COMM_WORLD_SIZE:-1}" -gt 1 ]; then
    exec taskset -c "$((${OMPI_COMM_WORLD_LOCAL_RANK:-0} % $(nproc)))" "$exe" "$@"
fi
exec "$exe" "$@"
