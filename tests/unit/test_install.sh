#!/bin/sh
# Installs the build into a temporary prefix, then builds and runs a program that finds
# it with find_package(Rill CONFIG), and checks rill.pc with pkg-config.
# usage: test_install.sh <build dir> <source dir>
set -e
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/unit/install_consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib:$tmp/prefix/lib64" "$tmp/consumer/consumer"
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib64/pkgconfig" pkg-config --cflags --libs rill
"$tmp/prefix/bin/rill_info" --build >/dev/null
echo "install: find_package(Rill), pkg-config rill and rill_info work from the prefix"
