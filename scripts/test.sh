#!/usr/bin/env bash
#
# scripts/test.sh: build bloomidx and run every test suite on every
# PostgreSQL major this machine can reach, on throwaway clusters.
#
#   bash scripts/test.sh                        # every suite on 15, 17, 18 and 19
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
# Prints each major's suites as they finish and, last, one line
# "N passed, N failed" over every major and suite.  Exit status non-zero if
# anything failed or no test ran.  A major whose run could not start
# (no root for its chroot, debootstrap failed) counts one failure.
#
# Environment:
#   PG_MAJOR       majors to run (default "15 17 18 19"); "upgrade" in the
#                  list, or PG_MAJOR unset, runs the upgrade suite
#   SUITES, TESTS, KEEP, SUITE_TIMEOUT, PG_CFLAGS, BX_FUZZ_*: passed to
#                  scripts/test-major.sh (see there); SUITES and TESTS also
#                  pick the upgrade suite ("upgrade")
#   TOTAL_TIMEOUT  seconds for the whole run (default 5100, inside CI's 90
#                  minutes): each major gets what is left
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
PASS_VARS="SUITES TESTS KEEP SUITE_TIMEOUT TOTAL_TIMEOUT PG_CFLAGS CI BX_FUZZ_CORRUPTIONS BX_FUZZ_SEED BX_PACKAGE_INSTALL BX_PACKAGE_REGRESS
 FUZZ_INPUTS FUZZ_LIBFUZZER FUZZ_LIBFUZZER_RUNS FUZZ_LIBFUZZER_SECONDS BX_DATA_CHECKSUMS"

total_pass=0
total_fail=0
summary=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/bloomidx-majors.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

# add_summary MAJOR LOG RC: add the suite lines and totals test-major.sh
# printed last in LOG to ours; a run that printed none counts one failure.
add_summary() {
    local major=$1 log=$2 rc=$3 line p f
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
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

# run_major MAJOR: test-major.sh on this system or in MAJOR's chroot.
run_major() {
    local major=$1 log=$logdir/$1.log rc=0 left
    left=$((TOTAL_TIMEOUT - SECONDS))
    if ((left < 120)); then
        echo "error: TOTAL_TIMEOUT (${TOTAL_TIMEOUT}s) reached, PostgreSQL $major not run" >&2
        total_fail=$((total_fail + 1))
        summary+=("$(printf '%-8s %-10s %4d passed, %4d failed (not run: out of time)' "$major" "-" 0 1)")
        return
    fi
    echo "==> PostgreSQL $major"
    if [[ $major == "$HOST_MAJOR" ]]; then
        TOTAL_TIMEOUT=$left BX_PG_MAJOR=$major bash "$REPO/scripts/test-major.sh" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
    elif [[ $(id -u) -ne 0 ]]; then
        echo "error: PostgreSQL $major runs in a chroot, which needs root" | tee "$log" >&2
        rc=1
    elif ! bash "$REPO/scripts/chroot.sh" create "$major" 2>&1 | tee "$log"; then
        rc=1
    else
        TOTAL_TIMEOUT=$((TOTAL_TIMEOUT - SECONDS)) BX_PG_MAJOR=$major \
            BX_CHROOT_PASS="$PASS_VARS BX_PG_MAJOR" BX_BIND="$REPO:/bloomidx" \
            bash "$REPO/scripts/chroot.sh" run "$major" bash /bloomidx/scripts/test-major.sh 2>&1 |
            tee -a "$log" || rc=${PIPESTATUS[0]}
    fi
    add_summary "$major" "$log" "$rc"
}

for m in $majors; do
    [[ $m == upgrade ]] && continue
    run_major "$m"
done

# run_upgrade MAJOR: the upgrade suite, in MAJOR's chroot, from this
# system's PostgreSQL 15 with bloomidx (scripts/old-install.sh).
run_upgrade() {
    local major=$1 log=$logdir/upgrade-$1.log rc=0 old=$logdir/old-install-$1
    echo "==> upgrade: pg_upgrade from PostgreSQL $HOST_MAJOR to $major"
    if [[ $(id -u) -ne 0 ]]; then
        echo "error: the upgrade suite runs in a chroot, which needs root" | tee "$log" >&2
        rc=1
    elif ! { bash "$REPO/scripts/chroot.sh" create "$major" &&
        bash "$REPO/scripts/old-install.sh" "$old" "$major"; } 2>&1 | tee "$log"; then
        rc=1
    else
        TOTAL_TIMEOUT=$((TOTAL_TIMEOUT - SECONDS)) BX_PG_MAJOR=$major SUITES=upgrade \
            BX_OLD_INSTALL=/bloomidx-old/usr/lib/postgresql/$HOST_MAJOR BX_OLD_LIBS=/bloomidx-old/syslibs \
            BX_CHROOT_PASS="$PASS_VARS BX_PG_MAJOR BX_OLD_INSTALL BX_OLD_LIBS" \
            BX_BIND="$REPO:/bloomidx $old:/bloomidx-old" \
            bash "$REPO/scripts/chroot.sh" run "$major" bash /bloomidx/scripts/test-major.sh 2>&1 |
            tee -a "$log" || rc=${PIPESTATUS[0]}
    fi
    add_summary "$HOST_MAJOR->$major" "$log" "$rc"
}

if wants_upgrade; then
    for m in $UPGRADE_MAJORS; do
        if ((TOTAL_TIMEOUT - SECONDS < 120)); then
            echo "error: TOTAL_TIMEOUT (${TOTAL_TIMEOUT}s) reached, the upgrade suite to $m not run" >&2
            total_fail=$((total_fail + 1))
            summary+=("$(printf '%-8s %-10s %4d passed, %4d failed (not run: out of time)' "$HOST_MAJOR->$m" upgrade 0 1)")
        else
            run_upgrade "$m"
        fi
    done
fi

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
