#!/usr/bin/env bash
#
# scripts/asan-check.sh: build bloomidx with AddressSanitizer and
# UndefinedBehaviorSanitizer and run the regression and isolation suites on
# a throwaway cluster whose server runs with the ASan runtime.
#
#   make asan-check                          # the usual way in
#   bash scripts/asan-check.sh
#   TESTS="queries insert_race" bash scripts/asan-check.sh
#   TESTS=t/017_corruption_fuzz bash scripts/asan-check.sh   # a TAP test
#   make corruption-fuzz-asan                # the corruption fuzzer, 100/layout
#   KEEP=1 bash scripts/asan-check.sh        # keep the work dir
#
# How it works:
#   - Like scripts/test.sh, it works in a temp dir on a private relocated
#     copy of PostgreSQL and a copy of the source tree, so the instrumented
#     library is never installed into the system's PostgreSQL.
#   - The extension is compiled and linked with
#     -fsanitize=address,undefined -fno-sanitize-recover=all; PostgreSQL
#     itself is not instrumented.  The server is started with the ASan
#     runtime in LD_PRELOAD (it must be loaded before any instrumented
#     library) and ASAN_OPTIONS=detect_leaks=0: PostgreSQL frees memory by
#     whole memory contexts and at process exit, which the leak checker
#     would report.  Any sanitizer report aborts the backend.
#   - On Debian 12 a program preloading libasan hangs in bindtextdomain()
#     when one of its libraries (libgpg-error, libkrb5, libgnutls, ...)
#     calls it from a constructor first.  Preloading those libraries ahead
#     of libasan avoids it (hence verify_asan_link_order=0; none of them
#     defines malloc, so ASan's allocator still serves the whole server).
#     The script checks that `postgres -V` runs this way before going on.
#   - The suites run against that server; then its log is searched for
#     sanitizer reports and crashed backends.  Any of them fails the run.
#
# What it finds: out-of-bounds accesses to stack and global memory and to
# memory from malloc (not inside palloc'd chunks or shared buffers, which
# ASan does not see into without a PostgreSQL built for it), use after
# return/scope, and undefined behaviour (shifts, overflow, misaligned or
# null pointers...) in bloomidx's code.
#
# TAP tests (t/NAME.pl) run only when TESTS names them.  Their clusters are
# started by PostgreSQL::Test::Cluster (pg_ctl of the private install), so
# the private install's postgres is replaced by a wrapper script that runs
# the real binary with the same LD_PRELOAD, ASAN_OPTIONS and UBSAN_OPTIONS:
# every server a TAP test starts, and every backend it forks, runs with the
# runtime, and nothing else does.  Afterwards every node's log
# (tmp_check/log/*.log) is searched like the shared cluster's.  The test's
# own environment (BX_FUZZ_* for t/017) passes through.
#
# Environment: TESTS (names of sql/NAME.sql, specs/NAME.spec or
# t/NAME.pl), KEEP=1, SUITE_TIMEOUT (seconds per suite, default 2400).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"

SUITE_TIMEOUT=${SUITE_TIMEOUT:-2400}
SAN_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
ASAN_OPTS="detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:verify_asan_link_order=0"
UBSAN_OPTS="print_stacktrace=1"

# Libpq environment of the caller must not leak into the tests
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)

bash "$REPO/scripts/deps.sh"

asan_runtime=$(gcc -print-file-name=libasan.so)
[[ -e $asan_runtime ]] ||
    bx_die "the ASan runtime (libasan.so) is missing: install gcc's libasan (Debian: libasan8)"

# Tests to run: all, or those named in TESTS
sel_regress="" sel_isolation="" sel_tap=""
for t in ${TESTS:-}; do
    n=${t##*/}
    n=${n%.sql} n=${n%.spec} n=${n%.pl}
    found=0
    [[ -f $REPO/sql/$n.sql ]] && { sel_regress+=" $n"; found=1; }
    [[ -f $REPO/specs/$n.spec ]] && { sel_isolation+=" $n"; found=1; }
    [[ -f $REPO/t/$n.pl ]] && { sel_tap+=" t/$n.pl"; found=1; }
    [[ $found -eq 1 ]] || bx_die "no test named '$n' (looked for sql/$n.sql, specs/$n.spec and t/$n.pl)"
done

bx_make_workdir bloomidx-asan
bx_install_traps
mkdir -p "$BX_WORK/logs" "$BX_WORK/tmp"
bx_log "work dir: $BX_WORK"
bx_pg_private_install "$BX_WORK/pg"
SRC=$BX_WORK/src
bx_copy_source "$REPO" "$SRC"
bx_chown_pg "$BX_WORK"

# make in the source copy, as the cluster owner, against the private install
pgmake() {
    bx_as_pg env TMPDIR="$BX_WORK/tmp" ${PGHOST:+PGHOST="$PGHOST" PGPORT="$PGPORT"} \
        timeout -k 30 "$SUITE_TIMEOUT" \
        make -C "$SRC" --no-print-directory PG_CONFIG="$BX_PG_CONFIG" "$@"
}

bx_log "build with $SAN_CFLAGS"
if ! { pgmake -j"$(nproc)" PG_CFLAGS="$SAN_CFLAGS" && pgmake install; } >"$BX_WORK/logs/build.log" 2>&1; then
    tail -n 60 "$BX_WORK/logs/build.log" >&2
    bx_die "the sanitizer build failed"
fi
symbols=$(nm -D "$("$BX_PG_CONFIG" --pkglibdir)/bloomidx.so")
grep -q '__asan_report' <<<"$symbols" || bx_die "the installed bloomidx.so is not instrumented"
grep -q '__ubsan_handle' <<<"$symbols" || bx_die "the installed bloomidx.so has no UBSan checks"

# What to preload: the server's libraries that call bindtextdomain() or
# dgettext() (see above), then the ASan runtime
preload=""
for lib in $(ldd "$BX_PG_BINDIR/postgres" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
    imports=$(nm -D "$lib" 2>/dev/null || true)
    if grep -qE ' U (bindtextdomain|dgettext|dcgettext)(@|$)' <<<"$imports"; then
        preload+="$lib "
    fi
done
preload+=$asan_runtime
bx_log "LD_PRELOAD=$preload"
if ! timeout 60 env LD_PRELOAD="$preload" ASAN_OPTIONS="$ASAN_OPTS" "$BX_PG_BINDIR/postgres" -V >/dev/null; then
    bx_die "postgres -V does not run with the ASan runtime preloaded"
fi

# The throwaway cluster, started with the ASan runtime preloaded
PGHOST=$BX_WORK/sock
PGPORT=$(bx_pick_port)
DATA=$BX_WORK/cluster/data
LOG=$BX_WORK/cluster/server.log
bx_log "throwaway cluster on socket $PGHOST, port $PGPORT, with $asan_runtime preloaded"
bx_cluster_init "$DATA" "$BX_PG_BINDIR"
mkdir -p "$PGHOST"
chmod 700 "$PGHOST"
bx_chown_pg "$PGHOST"
{
    echo "# added by scripts/asan-check.sh: private socket, no TCP"
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '$PGHOST'"
    echo "port = $PGPORT"
    echo "fsync = off"
    echo "max_prepared_transactions = 10"
    echo "jit = off    # JIT would inline uninstrumented bitcode"
} | bx_as_pg tee -a "$DATA/postgresql.conf" >/dev/null
BX_CLUSTERS+=("$DATA|$BX_PG_BINDIR")
bx_as_pg env LD_PRELOAD="$preload" ASAN_OPTIONS="$ASAN_OPTS" UBSAN_OPTIONS="$UBSAN_OPTS" \
    "$BX_PG_BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -w -t 120 start >/dev/null ||
    { tail -n 50 "$LOG" >&2; bx_die "could not start the server"; }

# The backends really run with the ASan runtime and the instrumented library
maps=$(bx_as_pg "$BX_PG_BINDIR/psql" -X -At -h "$PGHOST" -p "$PGPORT" -d postgres \
    -c "LOAD 'bloomidx'" -c "SELECT pg_read_file('/proc/self/maps')")
grep -q 'libasan' <<<"$maps" || bx_die "the server does not run with the ASan runtime"
grep -q 'bloomidx.so' <<<"$maps" || bx_die "the server did not load bloomidx.so"

pass=0 fail=0 reports=0
# Count "... ok" and "... FAILED" lines of pg_regress and pg_isolation_regress
count() {
    pass=$((pass + $(grep -cE '\.\.\. +ok( |$)' "$1" || true)))
    fail=$((fail + $(grep -cE '\.\.\. +FAILED' "$1" || true)))
}

# Sanitizer reports and crashed backends in server log $1: added to
# $reports, and a failure
scan_log() {
    local log=$1 n
    n=$(grep -cE 'ERROR: AddressSanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior)Sanitizer|terminated by signal' "$log" || true)
    if [[ $n -ne 0 ]]; then
        echo "----- sanitizer reports in $log -----"
        { grep -nE -A40 'ERROR: AddressSanitizer|runtime error:|terminated by signal' "$log" || true; } | head -n 300
        echo "----- end -----"
        reports=$((reports + n))
        fail=$((fail + 1))
    fi
}

rc=0
if [[ -z ${TESTS:-} || -n $sel_regress ]]; then
    bx_log "suite regress under the sanitizers"
    args=(ISOLATION= TAP_TESTS=)
    [[ -n $sel_regress ]] && args+=(REGRESS="${sel_regress# }")
    pgmake installcheck "${args[@]}" 2>&1 | tee "$BX_WORK/logs/regress.log" || rc=1
    count "$BX_WORK/logs/regress.log"
    [[ -s $SRC/regression.diffs ]] && tail -n 200 "$SRC/regression.diffs"
fi
if [[ -z ${TESTS:-} || -n $sel_isolation ]] && compgen -G "$REPO/specs/*.spec" >/dev/null; then
    bx_log "suite isolation under the sanitizers"
    args=(REGRESS= TAP_TESTS=)
    [[ -n $sel_isolation ]] && args+=(ISOLATION="${sel_isolation# }")
    pgmake installcheck "${args[@]}" 2>&1 | tee "$BX_WORK/logs/isolation.log" || rc=1
    count "$BX_WORK/logs/isolation.log"
    [[ -s $SRC/output_iso/regression.diffs ]] && tail -n 200 "$SRC/output_iso/regression.diffs"
fi

bx_cluster_stop "$DATA" "$BX_PG_BINDIR"
scan_log "$LOG"

if [[ -n $sel_tap ]]; then
    # postgres becomes a wrapper of the real binary, in the same directory
    # (the relocated install finds its files from argv[0])
    real=$BX_PG_BINDIR/postgres.asan-real
    mv "$BX_PG_BINDIR/postgres" "$real"
    {
        echo '#!/bin/bash'
        echo '# scripts/asan-check.sh: the server with the ASan runtime preloaded'
        echo "export LD_PRELOAD=\"$preload\""
        echo "export ASAN_OPTIONS=\"$ASAN_OPTS\" UBSAN_OPTIONS=\"$UBSAN_OPTS\""
        echo "exec -a \"\$0\" \"$real\" \"\$@\""
    } >"$BX_PG_BINDIR/postgres"
    chmod 755 "$BX_PG_BINDIR/postgres"
    bx_chown_pg "$BX_PG_BINDIR/postgres"
    bx_as_pg "$BX_PG_BINDIR/postgres" -V >/dev/null || bx_die "the postgres wrapper does not run"

    bx_log "suite tap under the sanitizers:$sel_tap"
    # BX_ASAN=1: a test may check that its server maps the runtime
    BX_ASAN=1 pgmake installcheck REGRESS= ISOLATION= PROVE_TESTS="${sel_tap# }" 2>&1 |
        tee "$BX_WORK/logs/tap.log" || rc=1
    # prove's "Files=N, Tests=N", less the "Failed: N" of failed files
    tap_tests=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\).*/\1/p' "$BX_WORK/logs/tap.log" | tail -n 1)
    tap_failed=$({ grep -oE 'Failed: [0-9]+\)' "$BX_WORK/logs/tap.log" || true; } | awk '{ n += $2 } END { print n + 0 }')
    pass=$((pass + ${tap_tests:-0} - tap_failed))
    fail=$((fail + tap_failed))
    for log in "$SRC"/tmp_check/log/regress_log_*; do
        grep -qE '(^|\) )not ok ' "$log" 2>/dev/null || continue
        echo "----- $log: failures -----"
        { grep -E -A6 '(^|\) )not ok ' "$log" || true; } | head -n 200
    done
    for log in "$SRC"/tmp_check/log/*.log; do
        if [[ -f $log ]]; then
            scan_log "$log"
        fi
    done
fi
[[ $rc -ne 0 && $fail -eq 0 ]] && fail=1
[[ $pass -eq 0 && $fail -eq 0 ]] && { echo "error: no test ran" >&2; fail=1; }

echo
echo "==> sanitizer reports: $reports"
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
