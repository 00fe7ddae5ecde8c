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
if [ -x "$tmp/prefix/bin/rillcc" ]; then
    [ -x "$tmp/consumer/consumer_ptg" ] || { echo "FAIL: rillcc is installed, rill_add_ptg built nothing"; exit 1; }
    LD_LIBRARY_PATH="$tmp/prefix/lib:$tmp/prefix/lib64" "$tmp/consumer/consumer_ptg"
fi
# pkg-config rill: a program built with its flags alone runs without LD_LIBRARY_PATH (the
# -rpath in Libs; it used to stop with "librill.so.0: cannot open shared object file")
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib64/pkgconfig"
pkg-config --cflags --libs rill
cat >"$tmp/pc.c" <<'EOC'
#include <stdio.h>
#include <string.h>
#include <rill/rill.h>
int main(void)
{
    printf("pkg-config consumer: Rill %s\n", rill_version_string());
    return strcmp(rill_status_string(RILL_ERR_IO), "") == 0;
}
EOC
${CC:-cc} -o "$tmp/pc" "$tmp/pc.c" $(pkg-config --cflags --libs rill)
env -u LD_LIBRARY_PATH "$tmp/pc" || { echo "FAIL: the pkg-config consumer does not run without LD_LIBRARY_PATH"; exit 1; }
"$tmp/prefix/bin/rill_info" --build >/dev/null
echo "install: find_package(Rill), rill_add_ptg, pkg-config rill (a program built with it runs without LD_LIBRARY_PATH) and rill_info work from the prefix"
