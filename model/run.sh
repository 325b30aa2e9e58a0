#!/bin/bash
# Test the false-positive model of the cost estimates (src/core/fpmodel.c)
# outside the server: model/model_test.c against exact combinatorics, a
# Monte Carlo run of the real probe code (fixed seed) and invariants, with
# model/shim.c standing in for palloc and CHECK_FOR_INTERRUPTS.  Built
# with AddressSanitizer and UndefinedBehaviorSanitizer when the compiler
# has them.
#
# Prints one line per check ("ok N - ..." or "not ok N - ...") and last
# "model: N checks, N passed, N failed"; exits non-zero if a check failed
# or the program did not finish.
# Environment: PG_CONFIG (default pg_config).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
PG_CONFIG=${PG_CONFIG:-pg_config}
inc=$("$PG_CONFIG" --includedir-server)
work=$(mktemp -d "${TMPDIR:-/tmp}/bloommodel.XXXXXX")
trap 'rm -rf "$work"' EXIT

srcs=("$here/model_test.c" "$here/shim.c" "$root/src/core/fpmodel.c")
flags=(-std=gnu11 -g -O1 -Wall -Werror -Wno-ignored-attributes -DFRONTEND -I"$root/src" -I"$root/src/core" -I"$root" -I"$inc")

# Pick a compiler whose sanitizers link; fall back to a plain build.
bx_pick_sanitizer_cc model "$work" gcc clang cc
cc=$BX_CC
san=("${BX_SAN[@]}")

"$cc" "${flags[@]}" "${san[@]}" "${srcs[@]}" -lm -o "$work/model_test"
# The model's allocations live until the planner's memory context ends;
# here nothing frees them in bulk, so leaks are not errors.
ASAN_OPTIONS=detect_leaks=0 "$work/model_test"
