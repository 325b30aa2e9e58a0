#!/usr/bin/env bash
#
# scripts/test-major.sh: build bloomidx and run all its tests on throwaway
# clusters of one PostgreSQL major, the one installed here (BX_PG_MAJOR,
# default 15).  scripts/test.sh runs it for every major, on this system or
# in a chroot of scripts/chroot.sh; run it directly to test the major this
# system has.
#
#   bash scripts/test-major.sh                       # everything
#   TESTS="basic 001_wal" bash scripts/test-major.sh # chosen tests only
#   SUITES="regress isolation" bash scripts/test-major.sh
#   KEEP=1 bash scripts/test-major.sh                # keep the work dir to inspect
#   bash scripts/test-major.sh --full                # long fuzz and crash counts
#
# Steps:
#   1. scripts/deps.sh (installs missing Debian packages when root).
#   2. A temp work dir holding a private relocated copy of PostgreSQL
#      (scripts/lib.sh), so nothing is installed system-wide and several runs
#      can proceed at once, and a copy of the source tree (tracked and
#      untracked-but-not-ignored files).
#   3. As the postgres OS user when root (the server refuses root), in the
#      copy: make && make install, against the private PostgreSQL.
#   4. Suites, each run even if an earlier one failed:
#        regress    pg_regress on sql/*.sql   (make installcheck, REGRESS)
#        isolation  isolation tester on specs/*.spec (make installcheck, ISOLATION)
#        limits     pg_regress on limits/sql/*.sql, against a second build
#                   with -DBLOOMIDX_SMALL_LIMITS on a cluster of its own
#        tap        prove on t/*.pl           (make installcheck, TAP_TESTS);
#                   these start their own clusters (PostgreSQL::Test::Cluster)
#        fuzz       fuzz/run.sh: the bloomfilter decoder, outside the server
#        model      model/run.sh: the cost estimates' false-positive model
#                   (src/core/fpmodel.c), outside the server; each check counts
#        bench      bench/run.sh --smoke
#        package    scripts/package-check.sh: `make dist`'s zip, the Debian
#                   package built from it (dpkg-buildpackage, lintian),
#                   installed without the source tree, CREATE EXTENSION,
#                   ALTER EXTENSION UPDATE from 1.0, regress and isolation
#        citus      citus/*.pl: Citus built from ../shared/citus into the
#                   private PostgreSQL (scripts/citus.sh), a coordinator and
#                   two workers; PostgreSQL 15 only; without the sources a
#                   line "citus skipped: WHY", counted neither way
#      regress and isolation share one throwaway cluster that listens only on
#      a Unix socket in the work dir.  A suite with no tests is skipped.
#   5. On failure: regression.diffs, output_iso/regression.diffs, TAP logs.
#   6. Stop every server, remove the work dir (unless KEEP=1), and print one
#      last line "N passed, N failed" over all suites.  Exit status is
#      non-zero if anything failed or if no test ran.
#
# Environment:
#   BX_PG_MAJOR    the PostgreSQL major to test (default 15), installed under
#                  /usr/lib/postgresql/MAJOR
#   SUITES         subset of "regress isolation limits tap fuzz model bench package citus"
#                  (default: all)
#   TESTS          test names: sql/NAME.sql, specs/NAME.spec, t/NAME.pl, fuzz,
#                  model (the false-positive model's checks, model/run.sh),
#                  bench (the benchmark's smoke run, bench/run.sh --smoke),
#                  package (scripts/package-check.sh) or citus (the citus
#                  suite, citus/*.pl)
#                  (each runs in its own suite); default: all tests
#   KEEP=1         keep the work dir (build copy, logs, cluster data)
#   BX_FULL=1      what --full does: the fuzzers and crash tests at their
#                  long counts (the tests read BX_FULL)
#   SUITE_TIMEOUT  seconds allowed for the build and for each suite (default
#                  3600; 7200 with --full)
#   TOTAL_TIMEOUT  seconds for the whole run (default 4800; 14400 with
#                  --full): a suite gets no more than what is left, so the
#                  summary line is always printed within CI's 90 minutes
#   PG_CFLAGS      extra compiler flags, e.g. PG_CFLAGS=-Werror (read by PGXS)
#   PROVE_FLAGS    extra flags for prove (the tap suite always has --timer)
set -euo pipefail

# The whole script is one compound command, which bash reads before running
# it: editing this file during a run does not change the run.
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Run as a child subreaper (prctl PR_SET_CHILD_SUBREAPER, kept across exec):
# the servers the suites start are orphans once pg_ctl exits, and this shell
# then reaps them, so their CPU time counts in its children's, and each
# suite's CPU time in the summary covers its servers too.  exec keeps the
# process id, which tells the second pass through here from the first.
if [[ ${BX_SUBREAPER:-} != "$$" ]] && perl -e 'require "syscall.ph"' 2>/dev/null; then
    export BX_SUBREAPER=$$
    exec perl -e 'require "syscall.ph"; syscall(&SYS_prctl, 36, 1, 0, 0, 0); exec { $ARGV[0] } @ARGV or die "exec: $!"' \
        bash "${BASH_SOURCE[0]}" "$@"
fi

# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"

ALL_SUITES="regress isolation limits tap fuzz model bench package citus"
# Suites run only when named in SUITES: upgrade needs an old install
# (scripts/test.sh runs it, in the newest major's chroot)
EXTRA_SUITES="upgrade"

for arg in "$@"; do
    case $arg in
        --full) BX_FULL=1 ;;
        *) bx_die "unknown argument '$arg' (usage: $0 [--full])" ;;
    esac
done
if [[ ${BX_FULL:-0} == 1 ]]; then
    export BX_FULL
    SUITE_TIMEOUT=${SUITE_TIMEOUT:-7200}
    TOTAL_TIMEOUT=${TOTAL_TIMEOUT:-14400}
else
    unset BX_FULL
fi
SUITE_TIMEOUT=${SUITE_TIMEOUT:-3600}
TOTAL_TIMEOUT=${TOTAL_TIMEOUT:-4800}
[[ $SUITE_TIMEOUT =~ ^[0-9]+$ && $TOTAL_TIMEOUT =~ ^[0-9]+$ ]] ||
    bx_die "SUITE_TIMEOUT and TOTAL_TIMEOUT must be numbers of seconds"
step_timeout=$SUITE_TIMEOUT # limit of the last step run, for messages

# Settings of the throwaway cluster used by the regress and isolation suites.
CLUSTER_SETTINGS=(
    fsync=off                    # throwaway data: skip the disk flushes
    synchronous_commit=off
    full_page_writes=off
    max_prepared_transactions=10 # for isolation specs that use 2PC
    log_line_prefix="'%m [%p] %q%a '"
)

# Libpq environment of the caller (PGHOST, PGDATABASE, ...) must not leak
# into the tests; we set PGHOST/PGPORT ourselves.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)

# --- which suites and tests --------------------------------------------------

suites=${SUITES:-$ALL_SUITES}
for s in $suites; do
    [[ " $ALL_SUITES $EXTRA_SUITES " == *" $s "* ]] ||
        bx_die "unknown suite '$s' in SUITES (choose from: $ALL_SUITES $EXTRA_SUITES)"
done

# wants SUITE: true if SUITE was asked for.
wants() { [[ " $suites " == *" $1 "* ]]; }

# Tests per suite: empty means "all of that suite's tests" (if TESTS is unset).
sel_regress="" sel_isolation="" sel_limits="" sel_tap="" sel_fuzz="" sel_model="" sel_bench="" sel_upgrade="" sel_package="" sel_citus=""
if [[ -n ${TESTS:-} ]]; then
    for t in $TESTS; do
        # Accept "name", "sql/name.sql", "specs/name.spec", "t/name.pl".
        n=${t##*/}
        n=${n%.sql} n=${n%.spec} n=${n%.pl}
        if [[ $n == fuzz ]]; then
            sel_fuzz=1
            continue
        fi
        if [[ $n == model ]]; then
            sel_model=1
            continue
        fi
        if [[ $n == bench ]]; then
            sel_bench=1
            continue
        fi
        if [[ $n == upgrade ]]; then
            sel_upgrade=1
            continue
        fi
        if [[ $n == package ]]; then
            sel_package=1
            continue
        fi
        if [[ $n == citus ]]; then
            sel_citus=1
            continue
        fi
        found=0
        [[ -f $REPO/sql/$n.sql ]] && { sel_regress+=" $n"; found=1; }
        [[ -f $REPO/specs/$n.spec ]] && { sel_isolation+=" $n"; found=1; }
        [[ -f $REPO/limits/sql/$n.sql ]] && { sel_limits+=" $n"; found=1; }
        [[ -f $REPO/t/$n.pl ]] && { sel_tap+=" t/$n.pl"; found=1; }
        [[ $found -eq 1 ]] || bx_die "no test named '$n' (looked for sql/$n.sql, specs/$n.spec, limits/sql/$n.sql, t/$n.pl)"
    done
fi

# has_tests SUITE: true if SUITE should run (asked for, and has tests).
has_tests() {
    wants "$1" || return 1
    if [[ -n ${TESTS:-} ]]; then
        local v="sel_$1"
        [[ -n ${!v} ]]
        return
    fi
    case $1 in
        regress) compgen -G "$REPO/sql/*.sql" >/dev/null ;;
        limits) compgen -G "$REPO/limits/sql/*.sql" >/dev/null ;;
        isolation) compgen -G "$REPO/specs/*.spec" >/dev/null ;;
        tap) compgen -G "$REPO/t/*.pl" >/dev/null ;;
        fuzz) [[ -f $REPO/fuzz/run.sh ]] ;;
        model) [[ -f $REPO/model/run.sh ]] ;;
        bench) [[ -f $REPO/bench/run.sh ]] ;;
        upgrade) compgen -G "$REPO/upgrade/*.pl" >/dev/null ;;
        package) [[ -f $REPO/debian/control.in ]] ;;
        citus) compgen -G "$REPO/citus/*.pl" >/dev/null ;;
    esac
}

# --- counting ------------------------------------------------------------------

total_pass=0
total_fail=0
summary=()

# The count_* functions print "PASSED FAILED UNDERSTOOD", the last being 1 if
# the output had the runner's result lines at all.

# Count pg_regress / pg_isolation_regress results in log $1: one line per test.
# Up to 15, "test NAME ... ok 12 ms" (or indented "NAME ... ok" in a parallel
# group), "... FAILED", "... failed (ignored)" (ignored failures count as
# passed); from 16, TAP lines "ok 1 - NAME 12 ms" and "not ok 2 - NAME ...".
count_regress() {
    awk '
        /\.\.\. +ok( |$)/               { p++; next }
        /\.\.\. +failed \(ignored\)/    { p++; next }
        /\.\.\. +FAILED/                { f++; next }
        /^ok +[0-9]+ +[-+] /             { p++; next }
        /^not ok +[0-9]+ +[-+] /         { f++; next }
        END { print p + 0, f + 0, (p + f > 0) }' "$1"
}

# Count model/run.sh's checks in log $1: its last line is
# "model: N checks, N passed, N failed".
count_model() {
    awk '
        /^model: [0-9]+ checks, [0-9]+ passed, [0-9]+ failed$/ { p = $4; f = $6; seen = 1 }
        END { print p + 0, f + 0, seen + 0 }' "$1"
}

# Count prove results in log $1: "Files=N, Tests=N, ..." gives the number of
# assertions run; each "(Wstat: ... Tests: N Failed: F)" line of the summary
# report is a failed test file: F failed assertions, or 1 if it died with
# F = 0 (bad plan, non-zero exit).  A file skipped whole (skip_all) counts
# nothing.
count_tap() {
    awk '
        /^Files=[0-9]+, Tests=[0-9]+/ {
            match($0, /Tests=[0-9]+/); total = substr($0, RSTART + 6, RLENGTH - 6) + 0
            seen = 1
        }
        /\(Wstat: .*Tests: [0-9]+ Failed: [0-9]+\)/ {
            match($0, /Failed: [0-9]+/); n = substr($0, RSTART + 8, RLENGTH - 8) + 0
            failed_asserts += n; failed += (n > 0 ? n : 1)
        }
        END { p = total - failed_asserts; if (p < 0) p = 0; print p, failed + 0, seen + 0 }' "$1"
}

# cpu_ticks: the CPU time (user + system, in clock ticks) of the processes
# this shell has reaped (its jobs and, as it is a subreaper, their servers),
# and so far of the servers it started that still run (with the backends
# they reaped).
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu_ticks() {
    local st entry pid ticks
    read -r -a st <"/proc/$$/stat"
    ticks=$((st[15] + st[16]))
    for entry in "${BX_CLUSTERS[@]}"; do
        pid=$(head -n 1 "${entry%%|*}/postmaster.pid" 2>/dev/null || true)
        [[ $pid =~ ^[0-9]+$ ]] || continue
        read -r -a st 2>/dev/null <"/proc/$pid/stat" || continue
        ticks=$((ticks + st[13] + st[14] + st[15] + st[16]))
    done
    echo "$ticks"
}

# mark_time: start the clock of the next suite (record reads it).
mark_time() {
    mark_secs=$SECONDS mark_cpu=$(cpu_ticks)
}

# took: set took to "N s, cpu N s" since mark_time, and mark_time again.
took() {
    local secs=$((SECONDS - mark_secs)) cpu=$(($(cpu_ticks) - mark_cpu))
    took="$secs s, cpu $(((cpu + CLK_TCK / 2) / CLK_TCK)) s"
    mark_time
}

# record SUITE RC PASS FAIL UNDERSTOOD: add a suite's counts to the totals,
# with its time since the last suite was recorded (wall and CPU).
# A suite that exited non-zero without a counted failure (crash, timeout,
# setup error) counts one failure; so does one that exited zero without the
# runner's result lines, since then its output was not understood.
record() {
    local suite=$1 rc=$2 p=$3 f=$4 understood=$5 note=""
    if [[ $rc -ne 0 && $f -eq 0 ]]; then
        f=1 note=" (exit status $rc)"
        [[ $rc -eq 124 ]] && note=" (timed out after ${step_timeout}s)"
    elif [[ $rc -eq 0 && $understood -eq 0 ]]; then
        f=1 note=" (no result lines found in its output)"
    fi
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    took
    summary+=("$(printf '%-10s %4d passed, %4d failed  (%s)%s' "$suite" "$p" "$f" "$took" "$note")")
}

# show_file FILE [LINES]: print the last LINES (default 200) lines of FILE.
show_file() {
    local file=$1 lines=${2:-200}
    [[ -s $file ]] || return 0
    echo "----- $file (last $lines lines) -----"
    tail -n "$lines" "$file"
    echo "----- end of $file -----"
}

# finish: stop servers, remove the work dir, print the totals, exit.
finish() {
    bx_cleanup
    echo
    echo "==> summary"
    local line
    for line in "${summary[@]}"; do echo "    $line"; done
    local rc=0
    if [[ $total_fail -ne 0 ]]; then
        rc=1
    elif [[ $total_pass -eq 0 ]]; then
        echo "error: no test ran" >&2
        rc=1
    fi
    echo "$total_pass passed, $total_fail failed"
    exit "$rc"
}

# --- set-up --------------------------------------------------------------------

bash "$REPO/scripts/deps.sh"

bx_make_workdir bloomidx-test
bx_install_traps
mkdir -p "$BX_WORK/logs" "$BX_WORK/tmp"
bx_log "work dir: $BX_WORK"

bx_log "private PostgreSQL $BX_PG_MAJOR install"
bx_pg_private_install "$BX_WORK/pg"

SRC=$BX_WORK/src
bx_log "copying the source tree to $SRC"
bx_copy_source "$REPO" "$SRC"
bx_chown_pg "$BX_WORK"

# pgmake ARGS...: make in the source copy, as the cluster owner, against the
# private PostgreSQL.
# shellcheck disable=SC2317 # called through bx_run_job
pgmake() {
    # TMPDIR inside the work dir: TAP tests make their socket dirs there (and
    # keep them when a test fails), so removing the work dir removes them too.
    local envs=(TMPDIR="$BX_WORK/tmp")
    [[ -n ${PGHOST:-} ]] && envs+=(PGHOST="$PGHOST" PGPORT="$PGPORT")
    bx_as_pg env "${envs[@]}" \
        make -C "$SRC" --no-print-directory PG_CONFIG="$BX_PG_CONFIG" "$@"
}

# build: make && make install in the source copy.
# shellcheck disable=SC2317 # called through bx_run_job
build() {
    pgmake -j"$(nproc)" && pgmake install
}

# run_step LOG CMD...: run CMD as a job (bx_run_job) that ends after
# SUITE_TIMEOUT seconds, or sooner if TOTAL_TIMEOUT comes first (then 124
# at once if less than 30 s are left).  Returns CMD's status.
run_step() {
    local log=$1
    shift
    step_timeout=$SUITE_TIMEOUT
    local left=$((TOTAL_TIMEOUT - SECONDS))
    ((left < step_timeout)) && step_timeout=$left
    if ((step_timeout < 30)); then
        echo "error: TOTAL_TIMEOUT (${TOTAL_TIMEOUT}s) reached, not running: $*" | tee -a "$log" >&2
        step_timeout=0
        return 124
    fi
    bx_run_job "$step_timeout" "$log" "$@"
}

# run_suite LOG MAKEARGS...: make installcheck with MAKEARGS (run_step).
run_suite() {
    local log=$1
    shift
    run_step "$log" pgmake installcheck "$@"
}

bx_log "build: make && make install"
mark_time
rc=0
run_step "$BX_WORK/logs/build.log" build || rc=$?
took
bx_log "build: $took"
if [[ $rc -ne 0 ]]; then
    why="exit status $rc"
    [[ $rc -eq 124 ]] && why="timed out after ${step_timeout}s"
    echo "error: the build failed ($why)" >&2
    total_fail=1
    summary+=("build      failed ($why)")
    finish
fi

# --- regress and isolation: one throwaway cluster ----------------------------

if has_tests regress || has_tests isolation; then
    PGHOST=$BX_WORK/sock
    PGPORT=$(bx_pick_port)
    bx_log "throwaway cluster on socket $PGHOST, port $PGPORT"
    bx_cluster_init "$BX_WORK/cluster/data" "$BX_PG_BINDIR"
    bx_cluster_start "$BX_WORK/cluster/data" "$BX_PG_BINDIR" "$PGHOST" "$PGPORT" \
        "$BX_WORK/cluster/server.log" "${CLUSTER_SETTINGS[@]}"
fi

if has_tests regress; then
    bx_log "suite regress (pg_regress)"
    log=$BX_WORK/logs/regress.log
    args=(ISOLATION= TAP_TESTS=)
    [[ -n $sel_regress ]] && args+=(REGRESS="${sel_regress# }")
    rc=0
    run_suite "$log" "${args[@]}" || rc=$?
    read -r p f u < <(count_regress "$log")
    record regress "$rc" "$p" "$f" "$u"
    if [[ $rc -ne 0 || $f -ne 0 ]]; then
        show_file "$SRC/regression.diffs" 300
        show_file "$BX_WORK/cluster/server.log" 40
    fi
elif wants regress; then
    bx_log "suite regress: no tests (sql/*.sql), skipped"
fi

if has_tests isolation; then
    bx_log "suite isolation (isolation tester)"
    log=$BX_WORK/logs/isolation.log
    args=(REGRESS= TAP_TESTS=)
    [[ -n $sel_isolation ]] && args+=(ISOLATION="${sel_isolation# }")
    rc=0
    run_suite "$log" "${args[@]}" || rc=$?
    read -r p f u < <(count_regress "$log")
    record isolation "$rc" "$p" "$f" "$u"
    if [[ $rc -ne 0 || $f -ne 0 ]]; then
        show_file "$SRC/output_iso/regression.diffs" 300
        show_file "$BX_WORK/cluster/server.log" 40
    fi
elif wants isolation; then
    bx_log "suite isolation: no tests (specs/*.spec), skipped"
fi

# The shared cluster is no longer needed: free its memory before TAP.
if [[ -n ${PGHOST:-} ]]; then
    bx_cluster_stop "$BX_WORK/cluster/data" "$BX_PG_BINDIR"
    unset PGHOST PGPORT
fi

# --- limits: pg_regress on a build with small format limits ------------------
#
# limits/sql/*.sql test what only an index of billions of rows would reach
# (the sliced layout's stripe lists filling up), on a second build of the
# same source with -DBLOOMIDX_SMALL_LIMITS (see src/core/page.h), installed into
# a second private PostgreSQL with a cluster of its own.  The build also has
# the throwaway third layout (-DBLOOMIDX_TEST_LAYOUT, src/layout/test/),
# which limits/sql/test_layout.sql runs the differential queries on, and
# checks every WAL record that marks its changes (-DBLOOMIDX_CHECK_DELTA_WAL,
# src/core/deltawal.c) against the pages it changed.

# build_limits: make && make install of the small-limits build (without
# the JIT's bitcode, which the main build already compiles).
# shellcheck disable=SC2317 # called through bx_run_job
build_limits() {
    bx_as_pg make -C "$LIMITS_SRC" --no-print-directory PG_CONFIG="$BX_PG_CONFIG" with_llvm=no \
        PG_CFLAGS="-DBLOOMIDX_SMALL_LIMITS -DBLOOMIDX_TEST_LAYOUT -DBLOOMIDX_CHECK_DELTA_WAL ${PG_CFLAGS:-}" -j"$(nproc)" &&
        bx_as_pg make -C "$LIMITS_SRC" --no-print-directory PG_CONFIG="$BX_PG_CONFIG" with_llvm=no install
}

if has_tests limits; then
    bx_log "suite limits (pg_regress on a -DBLOOMIDX_SMALL_LIMITS build)"
    log=$BX_WORK/logs/limits.log
    main_pg_config=$BX_PG_CONFIG main_pg_bindir=$BX_PG_BINDIR
    bx_pg_private_install "$BX_WORK/pg-limits"
    LIMITS_SRC=$BX_WORK/src-limits
    bx_copy_source "$REPO" "$LIMITS_SRC"
    bx_chown_pg "$BX_WORK"
    rc=0
    run_step "$log" build_limits || rc=$?
    if [[ $rc -eq 0 ]]; then
        PGHOST=$BX_WORK/sock-limits
        PGPORT=$(bx_pick_port)
        mkdir -p "$PGHOST" && bx_chown_pg "$PGHOST"
        bx_cluster_init "$BX_WORK/cluster-limits/data" "$BX_PG_BINDIR"
        bx_cluster_start "$BX_WORK/cluster-limits/data" "$BX_PG_BINDIR" "$PGHOST" "$PGPORT" \
            "$BX_WORK/cluster-limits/server.log" "${CLUSTER_SETTINGS[@]}"
        limits_tests=${sel_limits# }
        [[ -n $limits_tests ]] ||
            limits_tests=$(cd "$REPO/limits/sql" && ls -- *.sql | sed 's/\.sql$//' | tr '\n' ' ')
        run_step "$log" bx_as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" TMPDIR="$BX_WORK/tmp" \
            make -C "$LIMITS_SRC" --no-print-directory PG_CONFIG="$BX_PG_CONFIG" installcheck \
            ISOLATION= TAP_TESTS= REGRESS="$limits_tests" \
            REGRESS_OPTS="--inputdir=limits --outputdir=limits" || rc=$?
        bx_cluster_stop "$BX_WORK/cluster-limits/data" "$BX_PG_BINDIR"
        unset PGHOST PGPORT
    fi
    read -r p f u < <(count_regress "$log")
    record limits "$rc" "$p" "$f" "$u"
    if [[ $rc -ne 0 || $f -ne 0 ]]; then
        show_file "$LIMITS_SRC/limits/regression.diffs" 300
        show_file "$BX_WORK/cluster-limits/server.log" 40
    fi
    BX_PG_CONFIG=$main_pg_config BX_PG_BINDIR=$main_pg_bindir
elif wants limits; then
    bx_log "suite limits: no tests (limits/sql/*.sql), skipped"
fi

# --- TAP: each test starts its own clusters ------------------------------------

if has_tests tap; then
    bx_log "suite tap (prove)"
    log=$BX_WORK/logs/tap.log
    # --timer: each test file's time in the log
    args=(REGRESS= ISOLATION= PROVE_FLAGS="--timer ${PROVE_FLAGS:-}")
    [[ -n $sel_tap ]] && args+=(PROVE_TESTS="${sel_tap# }")
    rc=0
    run_suite "$log" "${args[@]}" || rc=$?
    # A killed test may leave its nodes running.
    bx_stop_clusters_under "$SRC/tmp_check" "$BX_PG_BINDIR"
    read -r p f u < <(count_tap "$log")
    record tap "$rc" "$p" "$f" "$u"
    if [[ $rc -ne 0 || $f -ne 0 ]]; then
        # Logs of the failed test files: t/NAME.pl logs to
        # tmp_check/log/regress_log_NAME, its nodes to NAME_<node>.log.
        # Without prove's summary (killed, timed out) show the test that
        # was running: the newest regress_log.
        failed_tests=$(sed -n 's|^t/\([^ ]*\)\.pl  *(Wstat:.*|\1|p' "$log" | sort -u)
        if [[ -z $failed_tests ]]; then
            # shellcheck disable=SC2012 # names are ours: t/NAME.pl
            failed_tests=$(ls -t "$SRC/tmp_check/log"/regress_log_* 2>/dev/null |
                head -n 1 | sed 's|.*/regress_log_||')
        fi
        for n in $failed_tests; do
            show_file "$SRC/tmp_check/log/regress_log_$n" 100
            for nodelog in "$SRC/tmp_check/log/${n}"_*.log; do
                show_file "$nodelog" 30
            done
        done
    fi
elif wants tap; then
    bx_log "suite tap: no tests (t/*.pl), skipped"
fi

# --- upgrade: pg_upgrade from an old install (BX_OLD_INSTALL) to this one ------

if has_tests upgrade; then
    bx_log "suite upgrade (prove on upgrade/*.pl, from $(basename "${BX_OLD_INSTALL:-?}"))"
    log=$BX_WORK/logs/upgrade.log
    rc=0
    if [[ -z ${BX_OLD_INSTALL:-} || ! -x ${BX_OLD_INSTALL:-}/bin/postgres ]]; then
        echo "error: the upgrade suite needs BX_OLD_INSTALL, an old PostgreSQL with bloomidx (scripts/test.sh makes one)" | tee "$log" >&2
        rc=1
    else
        run_suite "$log" REGRESS= ISOLATION= PROVE_TESTS="$(cd "$REPO" && echo upgrade/*.pl)" || rc=$?
        bx_stop_clusters_under "$SRC/tmp_check" "$BX_PG_BINDIR"
    fi
    read -r p f u < <(count_tap "$log")
    record upgrade "$rc" "$p" "$f" "$u"
    if [[ $rc -ne 0 || $f -ne 0 ]]; then
        for n in "$SRC"/tmp_check/log/regress_log_*; do
            show_file "$n" 100
        done
        for n in "$SRC"/tmp_check/log/*_{old,new1,new2}.log "$SRC"/tmp_check/*/pgdata/pg_upgrade_output.d/*/log/*.log; do
            [[ -f $n ]] && show_file "$n" 40
        done
    fi
elif wants upgrade; then
    bx_log "suite upgrade: no tests (upgrade/*.pl), skipped"
fi

# --- fuzz: the bloomfilter decoder, built and run outside the server ---------

if has_tests fuzz; then
    bx_log "suite fuzz (fuzz/run.sh)"
    log=$BX_WORK/logs/fuzz.log
    rc=0
    run_step "$log" env TMPDIR="$BX_WORK/tmp" PG_CONFIG="$BX_PG_CONFIG" \
        bash "$SRC/fuzz/run.sh" || rc=$?
    # One test: it passes when run.sh exits 0 after its closing count line.
    if [[ $rc -eq 0 ]] && grep -q '^fuzz: [0-9]* inputs' "$log"; then
        record fuzz "$rc" 1 0 1
    else
        record fuzz "$rc" 0 1 1
        show_file "$log" 50
    fi
elif wants fuzz; then
    bx_log "suite fuzz: no fuzz/run.sh, skipped"
fi

# --- model: the false-positive model, built and run outside the server ------

if has_tests model; then
    bx_log "suite model (model/run.sh)"
    log=$BX_WORK/logs/model.log
    rc=0
    run_step "$log" env TMPDIR="$BX_WORK/tmp" PG_CONFIG="$BX_PG_CONFIG" \
        bash "$SRC/model/run.sh" || rc=$?
    # One test per check; a run that stopped early counts one failure.
    read -r p f u < <(count_model "$log")
    record model "$rc" "$p" "$f" "$u"
    if [[ $rc -ne 0 || $f -ne 0 ]]; then
        grep -A1 '^not ok' "$log" | head -n 40 || true
        show_file "$log" 20
    fi
elif wants model; then
    bx_log "suite model: no model/run.sh, skipped"
fi

# --- bench: the benchmark's smoke run (20,000 rows, one run) -------------------

if has_tests bench; then
    bx_log "suite bench (bench/run.sh --smoke)"
    log=$BX_WORK/logs/bench.log
    rc=0
    run_step "$log" env TMPDIR="$BX_WORK/tmp" \
        bash "$SRC/bench/run.sh" --smoke --out "$BX_WORK/bench-smoke" || rc=$?
    # One test: it passes when the whole pipeline ran (no timing is checked).
    if [[ $rc -eq 0 ]] && grep -q '^bench: ok' "$log"; then
        record bench "$rc" 1 0 1
    else
        record bench "$rc" 0 1 1
        show_file "$log" 50
    fi
elif wants bench; then
    bx_log "suite bench: no bench/run.sh, skipped"
fi

# --- package: the PGXN zip and the Debian package, installed and tested ---------

if has_tests package; then
    bx_log "suite package (scripts/package-check.sh)"
    log=$BX_WORK/logs/package.log
    rc=0
    run_step "$log" env BX_PG_MAJOR="$BX_PG_MAJOR" TMPDIR="$BX_WORK/tmp" \
        bash "$REPO/scripts/package-check.sh" "$BX_WORK/package" || rc=$?
    # Its checks print "ok N - ..." / "not ok N - ...", as pg_regress does.
    read -r p f u < <(count_regress "$log")
    record package "$rc" "$p" "$f" "$u"
elif wants package; then
    bx_log "suite package: no debian/control.in, skipped"
fi

# --- citus: Citus from ../shared/citus, a coordinator and two workers ---------

if has_tests citus; then
    bx_log "suite citus (scripts/citus.sh, then prove on citus/*.pl)"
    log=$BX_WORK/logs/citus.log
    rc=0
    # From the tree itself, not the copy: it finds ../shared/citus beside it.
    run_step "$log" env TMPDIR="$BX_WORK/tmp" bash "$REPO/scripts/citus.sh" install "$BX_PG_CONFIG" || rc=$?
    if [[ $rc -eq 0 ]] && grep -q '^citus: skip: ' "$log"; then
        summary+=("$(printf '%-10s skipped: %s' citus "$(sed -n 's/^citus: skip: //p' "$log" | tail -n 1)")")
    else
        if [[ $rc -eq 0 ]]; then
            bx_chown_pg "$BX_WORK/pg"
            run_suite "$log" REGRESS= ISOLATION= PROVE_TESTS="$(cd "$REPO" && echo citus/*.pl)" || rc=$?
            bx_stop_clusters_under "$SRC/tmp_check" "$BX_PG_BINDIR"
        fi
        read -r p f u < <(count_tap "$log")
        record citus "$rc" "$p" "$f" "$u"
        if [[ $rc -ne 0 || $f -ne 0 ]]; then
            for n in "$SRC"/tmp_check/log/regress_log_* "$SRC"/tmp_check/log/*_{coord,w1,w2}.log; do
                [[ -f $n ]] && show_file "$n" 60
            done
        fi
    fi
elif wants citus; then
    bx_log "suite citus: no tests (citus/*.pl), skipped"
fi

finish
exit
}
