#!/bin/sh
# A program for rill_tune's test: with -x 3 it hangs, with -x 4 it fails (exit 5), else it
# prints "figure: 10 x".
x=0
while [ $# -gt 0 ]; do
    case "$1" in -x) x=$2; shift ;; esac
    shift
done
[ "$x" = 3 ] && exec sleep 1000
[ "$x" = 4 ] && { echo "x 4 is refused"; exit 5; }
echo "figure: $((x * 10))"
