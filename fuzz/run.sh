#!/bin/bash
# Fuzz the bloomfilter decoder (src/filter/filter_format.c) outside the server.
#
# 1. A deterministic driver runs 200,000 inputs (1,000,000 with BX_FULL=1:
#    scripts/test.sh --full) of every kind (random bytes, valid filters,
#    mutated filters, text forms) from a fixed seed, built with
#    AddressSanitizer and UndefinedBehaviorSanitizer when the compiler has
#    them.
# 2. If clang's libFuzzer runtime is installed (Debian: libclang-rt-14-dev),
#    libFuzzer then runs the same target, coverage-guided, from seeds the
#    driver writes, for FUZZ_LIBFUZZER_RUNS inputs or FUZZ_LIBFUZZER_SECONDS.
#
# Prints one line per stage and last "fuzz: N inputs, N accepted, N rejected"
# (both stages together); exits non-zero on a crash or a broken invariant.
# Environment: PG_CONFIG, FUZZ_INPUTS (default 200000; 1000000 with
# BX_FULL=1), FUZZ_LIBFUZZER_RUNS (default 5000000), FUZZ_LIBFUZZER_SECONDS
# (default 15; 45 with BX_FULL=1), FUZZ_LIBFUZZER=0 to skip stage 2.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
PG_CONFIG=${PG_CONFIG:-pg_config}
inc=$("$PG_CONFIG" --includedir-server)
if [[ ${BX_FULL:-0} == 1 ]]; then
	inputs=${FUZZ_INPUTS:-1000000}
	lf_seconds=${FUZZ_LIBFUZZER_SECONDS:-45}
else
	inputs=${FUZZ_INPUTS:-200000}
	lf_seconds=${FUZZ_LIBFUZZER_SECONDS:-15}
fi
lf_runs=${FUZZ_LIBFUZZER_RUNS:-5000000}
work=$(mktemp -d "${TMPDIR:-/tmp}/bloomfuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

srcs=("$here/filter_fuzz.c" "$root/src/filter/filter_format.c")
flags=(-std=gnu11 -g -O1 -Wall -Wno-ignored-attributes -DFRONTEND -I"$root/src" -I"$root/src/filter" -I"$root/src/core" -I"$inc")

# Pick a compiler whose sanitizers link; fall back to a plain build.
bx_pick_sanitizer_cc fuzz "$work" clang gcc cc
cc=$BX_CC
san=("${BX_SAN[@]}")

"$cc" "${flags[@]}" "${san[@]}" "${srcs[@]}" -o "$work/driver"
total_in=0; total_acc=0; total_rej=0

add_counts() {
	# parse "fuzz: N inputs, N accepted, N rejected"
	local line=$1 n a r
	n=$(sed -E 's/^fuzz: ([0-9]+) inputs.*/\1/' <<<"$line")
	a=$(sed -E 's/.* ([0-9]+) accepted.*/\1/' <<<"$line")
	r=$(sed -E 's/.* ([0-9]+) rejected.*/\1/' <<<"$line")
	total_in=$((total_in + n)); total_acc=$((total_acc + a)); total_rej=$((total_rej + r))
}

start=$(date +%s)
line=$(ASAN_OPTIONS=detect_leaks=1 "$work/driver" "$inputs" | tail -n 1)
case $line in
	fuzz:*) ;;
	*) echo "fuzz: the driver printed no counts" >&2; exit 1 ;;
esac
echo "driver (deterministic, $cc, $(( $(date +%s) - start )) s): ${line#fuzz: }"
add_counts "$line"

if [ "${FUZZ_LIBFUZZER:-1}" != 0 ] && command -v clang >/dev/null 2>&1 &&
	echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n){return 0;}' |
		clang -fsanitize=fuzzer -x c - -o "$work/lfprobe" >/dev/null 2>&1; then
	clang "${flags[@]}" -DBLOOM_FUZZ_LIBFUZZER -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all "${srcs[@]}" -o "$work/libfuzzer"
	mkdir -p "$work/corpus"
	"$work/driver" --corpus "$work/corpus"
	start=$(date +%s)
	"$work/libfuzzer" -runs="$lf_runs" -max_total_time="$lf_seconds" -seed=1 \
		-max_len=4096 -print_final_stats=0 "$work/corpus" >"$work/lf.out" 2>"$work/lf.err" || {
		cat "$work/lf.err" >&2
		echo "fuzz: libFuzzer found a crash" >&2
		exit 1
	}
	line=$(grep '^fuzz:' "$work/lf.out" | tail -n 1 || true)
	case $line in
		fuzz:*) ;;
		*) echo "fuzz: libFuzzer printed no counts" >&2; cat "$work/lf.err" >&2; exit 1 ;;
	esac
	echo "libfuzzer (coverage-guided, $(( $(date +%s) - start )) s): ${line#fuzz: }"
	add_counts "$line"
else
	echo "libfuzzer: skipped (no clang libFuzzer runtime; Debian package libclang-rt-14-dev)"
fi

echo "fuzz: $total_in inputs, $total_acc accepted, $total_rej rejected"
