#!/usr/bin/env bash
# The parameter registry's fuzzing: bench/fuzz.sh params [SECONDS] (see there).
exec "$(dirname "$0")/fuzz.sh" params "$@"
