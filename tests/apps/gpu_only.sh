#!/usr/bin/env bash
# gpu_only.sh command...: run the command when this machine has an NVIDIA GPU, else say so
# and exit 77 (CTest's skip code for the GPU-labelled tests).
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "no NVIDIA GPU on this machine (nvidia-smi -L lists none): skipped"
    exit 77
fi
exec "$@"
