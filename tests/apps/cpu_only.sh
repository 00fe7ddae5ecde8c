#!/usr/bin/env bash
# cpu_only.sh command...: run the command when this machine has no NVIDIA GPU, else say so
# and exit 77 (skipped): for what a process without GPUs must say.
if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "this machine has an NVIDIA GPU: skipped (the test is for a process without one)"
    exit 77
fi
exec "$@"
