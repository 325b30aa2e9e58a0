#!/usr/bin/env bash
#
# scripts/test.sh: build bloomidx and run every test suite on every
# PostgreSQL major this machine can reach, on throwaway clusters.
#
#   bash scripts/test.sh                        # every suite on 15, 17, 18 and 19
#   bash scripts/test.sh --full                 # the same with the long counts
#   PG_MAJOR=18 bash scripts/test.sh            # one major (or a list: "15 19")
#   TESTS="queries 001_replica" bash scripts/test.sh
#   SUITES="regress isolation" bash scripts/test.sh
#
# Each major runs scripts/test-major.sh (build, regress, isolation, limits,
# TAP, fuzz, model, bench smoke): PostgreSQL 15 on this system (Debian 12),
# the others in a Debian chroot that scripts/chroot.sh builds, or brings up
# to date, from Debian's archive (17 from trixie, 18 from forky, 19 from
# experimental), with this tree mounted read-only inside.  Then the upgrade
# suite (upgrade/*.pl): a database of 15 upgraded by pg_upgrade to 17 and to
# the newest major, each in its chroot, with this system's PostgreSQL 15 and
# a bloomidx built for it brought in (scripts/old-install.sh).  PostgreSQL 16 is in no Debian suite, so it is
# not run (src/compat.h covers its API).
#
# The majors and the upgrade suite run as jobs, BX_JOBS at once, while the
# chroots they need are made (or brought up to date) one after the other
# in the background from the start.  Each job's output is shown whole, job
# after job in order (the first unfinished job's as it comes), with its
# time; each suite's line in the summary has its wall and CPU time.  Last,
# one line "N passed, N failed" over every major and suite.  Exit status
# non-zero if anything failed or no test ran.  A job that could not start
# (no root for its chroot, debootstrap failed, out of time) counts one
# failure.
#
# --full (or BX_FULL=1) runs the fuzzers and crash tests at their long
# counts (t/017_corruption_fuzz.pl, t/023_merge_crash.pl, t/002_crash.pl,
# fuzz/run.sh: see there), several times longer, with the time limits
# raised to match.
#
# Environment:
#   PG_MAJOR       majors to run (default "15 17 18 19"); "upgrade" in the
#                  list, or PG_MAJOR unset, runs the upgrade suite
#   SUITES, TESTS, KEEP, SUITE_TIMEOUT, PG_CFLAGS, PROVE_FLAGS, BX_FUZZ_*,
#   BX_MERGE_CRASHES, BX_SEAL_CRASHES, BX_CRASH_ROUNDS: passed to
#                  scripts/test-major.sh and its TAP tests (see those); SUITES
#                  and TESTS also pick the upgrade suite ("upgrade")
#   TOTAL_TIMEOUT  seconds for the whole run (default 5100, inside CI's 90
#                  minutes; 14400 with --full): each job gets what is left
#   BX_JOBS        jobs at once (default twice the number of cores; 1: one
#                  major after the other, each one's output as it comes)
#   BX_CHROOT_DIR  where the chroots live (scripts/chroot.sh)
set -euo pipefail

# The whole script is one compound command, which bash reads before running
# it: editing this file during a run does not change the run.
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HOST_MAJOR=15
ALL_MAJORS="15 17 18 19"
# pg_upgrade from the host's major to these (each in its chroot)
UPGRADE_MAJORS="17 19"

for arg in "$@"; do
    case $arg in
        --full) BX_FULL=1 ;;
        *) echo "error: unknown argument '$arg' (usage: $0 [--full])" >&2; exit 1 ;;
    esac
done
if [[ ${BX_FULL:-0} == 1 ]]; then
    export BX_FULL
    TOTAL_TIMEOUT=${TOTAL_TIMEOUT:-14400}
else
    unset BX_FULL
fi
TOTAL_TIMEOUT=${TOTAL_TIMEOUT:-5100}
[[ $TOTAL_TIMEOUT =~ ^[0-9]+$ ]] || { echo "error: TOTAL_TIMEOUT must be a number of seconds" >&2; exit 1; }

majors=${PG_MAJOR:-$ALL_MAJORS upgrade}
for m in $majors; do
    [[ " $ALL_MAJORS upgrade " == *" $m "* ]] ||
        { echo "error: no PostgreSQL major '$m' here (choose from: $ALL_MAJORS, or upgrade)" >&2; exit 1; }
done

# The upgrade suite runs unless SUITES or TESTS leave it out.
wants_upgrade() {
    [[ " $majors " == *" upgrade "* ]] || return 1
    if [[ -n ${TESTS:-} ]]; then
        [[ " $TESTS " == *" upgrade "* ]]
        return
    fi
    [[ -z ${SUITES:-} || " $SUITES " == *" upgrade "* ]]
}

# What test-major.sh reads from the environment, passed into the chroots.
PASS_VARS="SUITES TESTS KEEP SUITE_TIMEOUT TOTAL_TIMEOUT PG_CFLAGS CI BX_FULL PROVE_FLAGS
 BX_FUZZ_CORRUPTIONS BX_FUZZ_SEED BX_FUZZ_LAYOUTS BX_MERGE_CRASHES BX_SEAL_CRASHES BX_CRASH_ROUNDS
 BX_PACKAGE_INSTALL BX_PACKAGE_REGRESS BX_CITUS_SOURCES BX_CITUS_CACHE
 FUZZ_INPUTS FUZZ_LIBFUZZER FUZZ_LIBFUZZER_RUNS FUZZ_LIBFUZZER_SECONDS BX_DATA_CHECKSUMS"

total_pass=0
total_fail=0
summary=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/bloomidx-majors.XXXXXX")

# How many jobs (a major's suites, or the upgrade suite to one major) run at
# once: a major's tests keep little more than half a core busy on average
# (they wait on servers starting, stopping and replicating), so twice the
# number of cores keeps the machine busy.
BX_JOBS=${BX_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}
[[ $BX_JOBS =~ ^[1-9][0-9]*$ ]] || { echo "error: BX_JOBS must be a positive number" >&2; exit 1; }

# add_summary LABEL LOG RC: add the suite lines and totals test-major.sh
# printed last in LOG to ours; a run that printed none counts one failure.
add_summary() {
    local major=$1 log=$2 rc=$3 line p f
    if [[ $rc -eq $RC_NO_TIME ]]; then
        total_fail=$((total_fail + 1))
        summary+=("$(printf '%-8s %-10s %4d passed, %4d failed (not run: out of time)' "$major" "-" 0 1)")
        return
    fi
    line=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
    if [[ -z $line ]]; then
        total_fail=$((total_fail + 1))
        summary+=("$(printf '%-8s %-10s %4d passed, %4d failed (no summary, exit status %d)' "$major" "-" 0 1 "$rc")")
        return
    fi
    read -r p _ f _ <<<"$line"
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    if [[ $rc -ne 0 && $f -eq 0 ]]; then
        total_fail=$((total_fail + 1))
    fi
    while IFS= read -r l; do
        summary+=("$(printf '%-8s %s' "$major" "${l#    }")")
    done < <(sed -n '/^==> summary$/,/^[0-9]* passed, [0-9]* failed$/p' "$log" | sed '1d;$d')
}

# --- the chroots ----------------------------------------------------------------
#
# The chroots the run needs are created, or brought up to date, one after
# the other in the background from the start (a new one takes minutes of
# downloads), while PostgreSQL 15 runs on this system: $logdir/chroot-M.log
# and, when done, its exit status in $logdir/chroot-M.rc.

# wait_chroot MAJOR: wait until MAJOR's chroot is ready; print its log.
# shellcheck disable=SC2317 # called through start_job
wait_chroot() {
    local major=$1 rc
    while [[ ! -f $logdir/chroot-$major.rc ]]; do
        if ((SECONDS >= TOTAL_TIMEOUT)); then
            echo "error: TOTAL_TIMEOUT (${TOTAL_TIMEOUT}s) reached while the chroot of PostgreSQL $major was made" >&2
            return 1
        fi
        sleep 2
    done
    cat "$logdir/chroot-$major.log"
    rc=$(cat "$logdir/chroot-$major.rc")
    return "$rc"
}

# --- jobs -----------------------------------------------------------------------
#
# A job is a function job_KIND run in the background with its argument, in
# a process group of its own, with its output in $logdir/job-N.log and then
# its time and exit status in job-N.time and job-N.rc (N: its place in the
# list):
#   major M     job_major: scripts/test-major.sh for major M, here or in
#               its chroot
#   upgrade M   job_upgrade: the upgrade suite, from this system's 15 to M,
#               in M's chroot
# Their output is shown job after job, in the order they were asked for:
# that of the first unfinished job as it comes, the others' when their turn
# comes.  A suite of every major goes into scripts/test-major.sh; a new
# kind of job is a job_KIND function and a line where the list is made.

# Exit status of a job that did not start: too little of TOTAL_TIMEOUT left.
RC_NO_TIME=200

# time_left: seconds of TOTAL_TIMEOUT left; fails with a message when fewer
# than 120 are, so that the job does not start.
# shellcheck disable=SC2317 # called through start_job
time_left() {
    local left=$((TOTAL_TIMEOUT - SECONDS))
    if ((left < 120)); then
        echo "error: TOTAL_TIMEOUT (${TOTAL_TIMEOUT}s) reached, $1 not run" >&2
        return 1
    fi
    echo "$left"
}

# job_major MAJOR: test-major.sh on this system or in MAJOR's chroot.
# shellcheck disable=SC2317 # called through start_job
job_major() {
    local major=$1 left
    left=$(time_left "PostgreSQL $major") || return "$RC_NO_TIME"
    echo "==> PostgreSQL $major"
    if [[ $major == "$HOST_MAJOR" ]]; then
        TOTAL_TIMEOUT=$left BX_PG_MAJOR=$major bash "$REPO/scripts/test-major.sh"
    elif [[ $(id -u) -ne 0 ]]; then
        echo "error: PostgreSQL $major runs in a chroot, which needs root" >&2
        return 1
    else
        wait_chroot "$major" || return 1
        left=$(time_left "PostgreSQL $major") || return "$RC_NO_TIME"
        TOTAL_TIMEOUT=$left BX_PG_MAJOR=$major \
            BX_CHROOT_PASS="$PASS_VARS BX_PG_MAJOR" BX_BIND="$REPO:/bloomidx" \
            bash "$REPO/scripts/chroot.sh" run "$major" bash /bloomidx/scripts/test-major.sh
    fi
}

# job_upgrade MAJOR: the upgrade suite, in MAJOR's chroot, from this
# system's PostgreSQL 15 with bloomidx (scripts/old-install.sh).
# shellcheck disable=SC2317 # called through start_job
job_upgrade() {
    local major=$1 old=$logdir/old-install-$1 left
    left=$(time_left "the upgrade suite to $major") || return "$RC_NO_TIME"
    echo "==> upgrade: pg_upgrade from PostgreSQL $HOST_MAJOR to $major"
    if [[ $(id -u) -ne 0 ]]; then
        echo "error: the upgrade suite runs in a chroot, which needs root" >&2
        return 1
    fi
    wait_chroot "$major" || return 1
    bash "$REPO/scripts/old-install.sh" "$old" "$major" || return 1
    left=$(time_left "the upgrade suite to $major") || return "$RC_NO_TIME"
    TOTAL_TIMEOUT=$left BX_PG_MAJOR=$major SUITES=upgrade \
        BX_OLD_INSTALL=/bloomidx-old/usr/lib/postgresql/$HOST_MAJOR BX_OLD_LIBS=/bloomidx-old/syslibs \
        BX_CHROOT_PASS="$PASS_VARS BX_PG_MAJOR BX_OLD_INSTALL BX_OLD_LIBS" \
        BX_BIND="$REPO:/bloomidx $old:/bloomidx-old" \
        bash "$REPO/scripts/chroot.sh" run "$major" bash /bloomidx/scripts/test-major.sh
}

jobs=()     # the jobs asked for, in order: "major 17", "upgrade 19", ...
labels=()   # their labels in the summary: "17", "15->19"
pids=()     # process (and group) id of each started job
for m in $majors; do
    [[ $m == upgrade ]] && continue
    jobs+=("major $m") labels+=("$m")
done
if wants_upgrade; then
    for m in $UPGRADE_MAJORS; do
        jobs+=("upgrade $m") labels+=("$HOST_MAJOR->$m")
    done
fi

# stop_jobs: end every running job's process group (Ctrl-C, TERM).
# shellcheck disable=SC2317 # called by the traps
stop_jobs() {
    local pid
    for pid in "${pids[@]}" ${chroot_pid:-}; do
        [[ -n $pid ]] && kill -TERM -- "-$pid" 2>/dev/null
    done
    wait 2>/dev/null
}
trap 'rm -rf "$logdir"' EXIT
trap 'stop_jobs; rm -rf "$logdir"; exit 130' INT
trap 'stop_jobs; rm -rf "$logdir"; exit 143' TERM

# The chroots, in the order the jobs need them.
chroots=""
if [[ $(id -u) -eq 0 ]]; then
    for j in "${jobs[@]}"; do
        m=${j#* }
        [[ $m != "$HOST_MAJOR" && " $chroots " != *" $m "* ]] && chroots+=" $m"
    done
fi
# The packages the jobs on this system need (PostgreSQL 15's tests and
# benchmark, the upgrade suite's old install), before any job starts: two
# apt-get at once would contend for its locks.  A job that still lacks one
# says so.
if [[ $(id -u) -eq 0 && " ${jobs[*]} " == *" major $HOST_MAJOR "* ]]; then
    BX_PG_MAJOR=$HOST_MAJOR bash "$REPO/scripts/deps.sh" || true
    bash "$REPO/bench/deps.sh" || true
elif [[ $(id -u) -eq 0 && " ${jobs[*]} " == *" upgrade "* ]]; then
    BX_PG_MAJOR=$HOST_MAJOR bash "$REPO/scripts/deps.sh" || true
fi

set -m # job control: each background job gets a process group of its own
if [[ -n $chroots ]]; then
    (
        for m in $chroots; do
            rc=0
            bash "$REPO/scripts/chroot.sh" create "$m" >"$logdir/chroot-$m.log" 2>&1 || rc=$?
            echo "$rc" >"$logdir/chroot-$m.rc"
        done
    ) &
    chroot_pid=$!
fi

# start_job N: start job N in the background.
start_job() {
    local n=$1 kind=${jobs[$1]% *} major=${jobs[$1]#* }
    (
        rc=0 start=$SECONDS
        "job_$kind" "$major" >"$logdir/job-$n.log" 2>&1 </dev/null || rc=$?
        echo "$((SECONDS - start))" >"$logdir/job-$n.time"
        echo "$rc" >"$logdir/job-$n.rc"
    ) &
    pids[n]=$!
}

# show_job N: print what job N's log gained since the last call.
declare -A shown
show_job() {
    local log=$logdir/job-$1.log size
    [[ -f $log ]] || return 0
    size=$(stat -c %s "$log")
    if ((size > ${shown[$1]:-0})); then
        tail -c +$((${shown[$1]:-0} + 1)) "$log" | head -c $((size - ${shown[$1]:-0}))
        shown[$1]=$size
    fi
}

next=0    # the next job to start
head=0    # the first job whose output is not all shown
while ((head < ${#jobs[@]})); do
    running=0
    for ((n = head; n < next; n++)); do
        [[ -f $logdir/job-$n.rc ]] || running=$((running + 1))
    done
    while ((next < ${#jobs[@]} && running < BX_JOBS)); do
        start_job "$next"
        next=$((next + 1)) running=$((running + 1))
    done
    show_job "$head"
    if [[ -f $logdir/job-$head.rc ]]; then
        wait "${pids[head]}" 2>/dev/null || true
        show_job "$head"
        rc=$(cat "$logdir/job-$head.rc")
        echo "==> ${labels[head]}: done in $(cat "$logdir/job-$head.time") s"
        add_summary "${labels[head]}" "$logdir/job-$head.log" "$rc"
        head=$((head + 1))
        continue
    fi
    sleep 1
done
set +m
[[ -n ${chroot_pid:-} ]] && { kill -TERM -- "-$chroot_pid" 2>/dev/null || true; wait "$chroot_pid" 2>/dev/null || true; }

echo
echo "==> summary (major, suite)"
for line in "${summary[@]}"; do echo "    $line"; done
rc=0
if [[ $total_fail -ne 0 ]]; then
    rc=1
elif [[ $total_pass -eq 0 ]]; then
    echo "error: no test ran" >&2
    rc=1
fi
echo "$total_pass passed, $total_fail failed"
exit "$rc"
exit
}
