#!/usr/bin/env bash
#
# scripts/package-check.sh: the package suite of scripts/test-major.sh.
# bloomidx as users install it, for one PostgreSQL major (BX_PG_MAJOR,
# default 15): the PGXN release archive and the Debian package built from
# it, installed without the source tree and tested there.
#
#   bash scripts/package-check.sh WORKDIR      # WORKDIR: a new folder
#
#   1. `make dist` (scripts/check-meta.sh, then git archive of HEAD) gives
#      bloomidx-VERSION.zip; it is unpacked twice: once to build the
#      package from, once, never built in, to run the tests from.  Without
#      a git repository this system can read (a PGXN unpack; a git worktree
#      seen from a chroot) the zip is skipped, visibly, and both come from
#      a copy of the work tree.  The zip holds HEAD: commit first.
#   2. debian/ from the work tree is added (as a Debian source package adds
#      it to the release archive), debian/control is generated for this
#      major alone (PG_SUPPORTED_VERSIONS), and `dpkg-buildpackage -us -uc
#      -b` builds postgresql-MAJOR-bloomidx (DEB_BUILD_OPTIONS=nocheck: it
#      is tested installed, below).  lintian: no errors; its warnings are
#      listed.
#   3. The package is installed into a clean PostgreSQL:
#        apt      `apt-get install ./postgresql-MAJOR-bloomidx_*.deb` into
#                 the system, then purged at the end (the default in a
#                 chroot of scripts/chroot.sh, each run's own system; runs
#                 in one chroot take turns);
#        private  `dpkg-deb -x` into a private relocated copy of the
#                 system's PostgreSQL (scripts/lib.sh), rid of any bloomidx
#                 file first (the default elsewhere: the system's
#                 PostgreSQL is left alone).
#   4. On a throwaway cluster of that PostgreSQL: CREATE EXTENSION bloomidx
#      VERSION '1.0', ALTER EXTENSION bloomidx UPDATE to default_version, an
#      index answering a query, and the server's mapped bloomidx.so is the
#      package's file (same path and checksum); then `make installcheck`
#      of the regression and isolation suites from the clean unpack, which
#      builds nothing there (checked).  The TAP tests are not run here:
#      they are the tap suite's.
#
# Prints one line per check, "ok N - WHAT" or "not ok N - WHAT", and
# pg_regress's lines, which test-major.sh counts; "# ..." lines are notes
# (times, lintian's findings, skips).  Exit status non-zero if a check
# failed.  Logs of the build and of lintian are in WORKDIR/logs.
#
# Environment: BX_PG_MAJOR; BX_PACKAGE_INSTALL=apt|private (default: apt in
# a chroot of scripts/chroot.sh when root, else private);
# BX_PACKAGE_REGRESS="a b" runs these regression tests only (default: all);
# PG_CFLAGS (the package build reads it, as PGXS does); KEEP=1 keeps
# WORKDIR.
set -euo pipefail

# The whole script is one compound command, which bash reads before running
# it: editing this file during a run does not change the run.
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"

[[ $# -eq 1 ]] || bx_die "usage: $0 WORKDIR"
major=$BX_PG_MAJOR
sys_bindir=/usr/lib/postgresql/$major/bin
W=$1
mkdir -p "$W/logs"
W=$(cd "$W" && pwd -P) # the server's /proc/self/maps shows physical paths
BX_WORK=$W
chmod 755 "$W"
bx_chown_pg "$W"

checks=0 failed=0
# ok WHAT: a passed check.  not_ok WHAT: a failed one.
ok() {
    checks=$((checks + 1))
    echo "ok $checks - $*"
}
not_ok() {
    checks=$((checks + 1)) failed=$((failed + 1))
    echo "not ok $checks - $*"
}
# check WHAT CMD...: ok or not_ok by CMD's status.
check() {
    local what=$1
    shift
    if "$@"; then ok "$what"; else not_ok "$what"; fi
}
note() { echo "# $*"; }
# show FILE [LINES]: the last lines of FILE, as notes.
show() {
    if [[ -s $1 ]]; then tail -n "${2:-40}" "$1" | sed 's/^/#   /'; fi
}
# give_up WHAT: a failed check after which nothing else can run.
give_up() {
    not_ok "$*"
    finish
}

installed_pkg=""
LOCK_FD=""
finish() {
    local rc=$?
    trap - EXIT
    ((rc == 0 || failed > 0)) || not_ok "the suite ran to its end (it stopped with exit status $rc)"
    bx_cleanup
    if [[ -n $installed_pkg ]]; then
        local left
        if apt-get "${APT_OPTS[@]}" purge -y -q "$installed_pkg" >"$W.purge.log" 2>&1; then
            left=$(find "/usr/lib/postgresql/$major/lib" "/usr/share/postgresql/$major/extension" \
                -name 'bloomidx*' 2>/dev/null | head -n 3 | tr '\n' ' ')
            check "apt-get purge $installed_pkg leaves no bloomidx file${left:+ (left: $left)}" test -z "$left"
        else
            show "$W.purge.log" 20
            not_ok "apt-get purge $installed_pkg"
        fi
        rm -f "$W.purge.log"
    fi
    [[ -n $LOCK_FD ]] && exec 9>&-
    note "package suite: $SECONDS s"
    echo "package: $checks checks, $((checks - failed)) passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit
}
trap finish EXIT
trap 'bx_kill_job; exit 130' INT
trap 'bx_kill_job; exit 143' TERM

APT_OPTS=(-o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0 -o APT::Install-Recommends=false)
export DEBIAN_FRONTEND=noninteractive

missing=""
for tool in dpkg-buildpackage dpkg-deb pg_buildext lintian jq unzip "$sys_bindir/pg_config"; do
    command -v "$tool" >/dev/null || missing+=" $tool"
done
[[ -z $missing ]] || give_up "tools present (missing:$missing; run scripts/deps.sh as root)"
[[ -f $REPO/debian/control.in ]] || give_up "debian/control.in present"

version=$(jq -r .version "$REPO/META.json")
default_version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$REPO/bloomidx.control")
BUILD=$W/build/bloomidx-$version
TESTDIR=$W/check/bloomidx-$version
mkdir -p "$W/build" "$W/check" "$W/dist"

# --- 1. the release archive ---------------------------------------------------

export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
if git -C "$REPO" rev-parse -q --verify HEAD >/dev/null 2>&1; then
    zip=$W/dist/bloomidx-$version.zip
    if make -C "$W/dist" -f "$REPO/Makefile" --no-print-directory PG_CONFIG="$sys_bindir/pg_config" dist \
        >"$W/logs/dist.log" 2>&1 && [[ -f $zip ]]; then
        grep '^check-meta: ' "$W/logs/dist.log" | sed 's/^/# /' || true
        ok "make dist: bloomidx-$version.zip (scripts/check-meta.sh passed)"
    else
        show "$W/logs/dist.log" 20
        give_up "make dist: bloomidx-$version.zip"
    fi
    changed=$(git -C "$REPO" status --porcelain -- . ':!debian' 2>/dev/null | head -n 5 | tr '\n' ' ')
    [[ -z $changed ]] || note "the work tree differs from HEAD, which the zip holds: $changed"
    if ! unzip -q "$zip" -d "$W/build" || ! unzip -q "$zip" -d "$W/check"; then
        give_up "unzip bloomidx-$version.zip"
    fi
    # What .gitattributes leaves out of the zip, and what a build needs in it.
    stray=""
    for f in .ci .gitattributes debian fuzz model bench/results; do
        [[ -e $BUILD/$f ]] && stray+=" $f"
    done
    check "the zip holds the sources, tests and scripts, and not .ci, debian, fuzz, model or bench/results${stray:+ (holds: $stray)}" \
        test -z "$stray" -a -f "$BUILD/Makefile" -a -f "$BUILD/META.json" -a -d "$BUILD/sql" \
        -a -d "$BUILD/specs" -a -d "$BUILD/t" -a -f "$BUILD/scripts/check-meta.sh"
    # debian/ from the work tree, its files that git tracks or does not ignore.
    (cd "$REPO" && git ls-files -z --cached --others --exclude-standard -- debian |
        tar --null -T - -cf -) | tar -C "$BUILD" -xf -
else
    note "make dist: skipped, $REPO is not a git repository this system can read: the package is built from a copy of the work tree"
    bx_copy_source "$REPO" "$BUILD"
    bx_copy_source "$REPO" "$TESTDIR"
    rm -rf "$TESTDIR/debian"
fi

# --- 2. the Debian package ----------------------------------------------------

start=$SECONDS
(
    cd "$BUILD"
    export PG_SUPPORTED_VERSIONS=$major
    pg_buildext updatecontrol
    DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b -j"$(nproc)"
) >"$W/logs/dpkg-buildpackage.log" 2>&1 </dev/null || true
note "dpkg-buildpackage: $((SECONDS - start)) s"
pkg=postgresql-$major-bloomidx
debversion=$(cd "$BUILD" && dpkg-parsechangelog -S Version)
deb=$W/build/${pkg}_${debversion}_$(dpkg --print-architecture).deb
if [[ -f $deb ]]; then
    ok "dpkg-buildpackage -us -uc -b: $(basename "$deb")"
else
    show "$W/logs/dpkg-buildpackage.log" 60
    give_up "dpkg-buildpackage -us -uc -b: $pkg"
fi

start=$SECONDS
rc=0
bx_chown_pg "$W/logs"
bx_as_pg lintian --fail-on error "$W"/build/bloomidx_"${debversion}"_*.changes >"$W/logs/lintian.log" 2>&1 || rc=$?
grep -E '^[EWI]: ' "$W/logs/lintian.log" | sed 's/^/# lintian: /' || true
errors=$(grep -c '^E: ' "$W/logs/lintian.log" || true)
warnings=$(grep -c '^W: ' "$W/logs/lintian.log" || true)
note "lintian: $((SECONDS - start)) s"
if [[ $rc -eq 0 && $errors -eq 0 ]]; then
    ok "lintian: no errors ($warnings warnings)"
else
    show "$W/logs/lintian.log" 20
    not_ok "lintian: no errors ($errors errors, exit status $rc)"
fi

contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
want="/usr/lib/postgresql/$major/lib/bloomidx.so /usr/share/postgresql/$major/extension/bloomidx.control"
for f in $(cd "$BUILD" && compgen -G 'bloomidx--*.sql'); do
    want+=" /usr/share/postgresql/$major/extension/$f"
done
absent=""
for f in $want; do
    grep -qxF "$f" <<<"$contents" || absent+=" $f"
done
check "the package holds bloomidx.so, bloomidx.control and every bloomidx--*.sql for PostgreSQL $major${absent:+ (absent:$absent)}" \
    test -z "$absent"
depends=$(dpkg-deb -f "$deb" Depends)
check "the package depends on postgresql-$major (Depends: $depends)" \
    grep -qE "(^|, )postgresql-$major( |,|$)" <<<"$depends"

# --- 3. installed into a clean PostgreSQL ---------------------------------------

mode=${BX_PACKAGE_INSTALL:-}
if [[ -z $mode ]]; then
    mode=private
    [[ -f /etc/bloomidx-debootstrap-done ]] && bx_is_root && mode=apt
fi
case $mode in
    apt)
        # One run at a time installs into this system.
        LOCK_FD=9
        exec 9>/var/lock/bloomidx-package-suite.lock
        flock 9
        # A run that was killed may have left its package installed.
        if [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) == *" installed" ]]; then
            note "purging $pkg, left installed by an earlier run"
            apt-get "${APT_OPTS[@]}" purge -y -q "$pkg" >"$W/logs/apt.log" 2>&1 || true
        fi
        if [[ -n $(find "/usr/lib/postgresql/$major/lib" "/usr/share/postgresql/$major/extension" \
            -name 'bloomidx*' 2>/dev/null | head -n 1) ]]; then
            give_up "PostgreSQL $major holds no bloomidx file before the install (dpkg -S: $(dpkg -S "/usr/lib/postgresql/$major/lib/bloomidx.so" 2>&1 || true))"
        fi
        installed_pkg=$pkg
        if apt-get "${APT_OPTS[@]}" install -y -q "$deb" >"$W/logs/apt.log" 2>&1; then
            ok "apt-get install ./$(basename "$deb")"
        else
            show "$W/logs/apt.log" 30
            give_up "apt-get install ./$(basename "$deb")"
        fi
        verify=$(dpkg --verify "$pkg" 2>&1 || true)
        check "dpkg --verify $pkg: every installed file is the package's${verify:+ ($verify)}" test -z "$verify"
        root=""
        bindir=$sys_bindir
        ;;
    private)
        bx_pg_private_install "$W/root"
        root=$W/root
        bindir=$BX_PG_BINDIR
        rm -rf "$root/usr/lib/postgresql/$major/lib/bloomidx.so" \
            "$root/usr/lib/postgresql/$major/lib/bitcode/bloomidx" \
            "$root/usr/lib/postgresql/$major/lib/bitcode/bloomidx.index.bc" \
            "$root/usr/share/postgresql/$major/extension"/bloomidx*
        check "dpkg-deb -x $(basename "$deb") into a private copy of PostgreSQL $major" \
            dpkg-deb -x "$deb" "$root"
        # What apt would do: the package installs here with nothing to add.
        sim=$(apt-get -s -q -o Debug::NoLocking=1 install "$deb" 2>&1 || true)
        others=$(grep '^Inst ' <<<"$sim" | grep -v "^Inst $pkg " | awk '{ print $2 }' | tr '\n' ' ' || true)
        installs=0
        grep -q "^Inst $pkg " <<<"$sim" && installs=1
        check "apt-get -s install ./$(basename "$deb"): its dependencies are met here${others:+ (would add: $others)}" \
            test "$installs" = 1 -a -z "$others"
        [[ $installs == 1 ]] || tail -n 20 <<<"$sim" | sed 's/^/#   /'
        ;;
    *) bx_die "BX_PACKAGE_INSTALL must be apt or private, not '$mode'" ;;
esac
so=$root/usr/lib/postgresql/$major/lib/bloomidx.so

# --- 4. tests against the installed package ------------------------------------

sock=$W/sock
port=$(bx_pick_port)
bx_chown_pg "$W"
bx_cluster_init "$W/cluster/data" "$bindir"
bx_cluster_start "$W/cluster/data" "$bindir" "$sock" "$port" "$W/cluster/server.log" \
    fsync=off synchronous_commit=off full_page_writes=off max_prepared_transactions=10

# sql DB SQL...: each SQL through psql in DB, unaligned, tuples only.
sql() {
    local db=$1 args=()
    shift
    for s in "$@"; do args+=(-c "$s"); done
    bx_as_pg "$bindir/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -d "$db" "${args[@]}" 2>&1
}
extversion="SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"

sql postgres "CREATE DATABASE bx_package" >/dev/null
out=$(sql bx_package "CREATE EXTENSION bloomidx VERSION '1.0'" "$extversion" || true)
check "CREATE EXTENSION bloomidx VERSION '1.0': extversion $out" test "$out" = 1.0
out=$(sql bx_package "ALTER EXTENSION bloomidx UPDATE" "$extversion" || true)
check "ALTER EXTENSION bloomidx UPDATE: extversion $out, default_version $default_version" \
    test "$out" = "$default_version"
out=$(sql bx_package \
    "CREATE TABLE t AS SELECT i, i % 10 AS j FROM generate_series(1, 10000) i" \
    "CREATE INDEX t_bx ON t USING bloomidx (i, j)" \
    "SET enable_seqscan = off" \
    "SELECT count(*) FROM t WHERE i = 15 AND j = 5" \
    "SELECT (regexp_match(pg_read_file('/proc/self/maps'), '(/\S*/bloomidx\.so)'))[1]" || true)
count=$(sed -n 1p <<<"$out") mapped=$(sed -n 2p <<<"$out")
check "an index of the updated extension answers (count $count)" test "$count" = 1
want_sum=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/lib/postgresql/$major/lib/bloomidx.so" | sha256sum)
have_sum=$(sha256sum <"$so" 2>/dev/null || true)
check "the server maps the package's bloomidx.so ($mapped)" \
    test "$mapped" = "$so" -a "$want_sum" = "$have_sum"
out=$(sql bx_package "DROP TABLE t" "DROP EXTENSION bloomidx" "CREATE EXTENSION bloomidx" "$extversion" || true)
check "CREATE EXTENSION bloomidx: extversion $out" test "$out" = "$default_version"

# installcheck SUITE MAKEARGS...: make installcheck in the clean unpack.
installcheck() {
    local suite=$1 rc=0 start=$SECONDS log=$W/logs/$1.log
    shift
    bx_as_pg env PGHOST="$sock" PGPORT="$port" TMPDIR="$W" \
        make -C "$TESTDIR" --no-print-directory PG_CONFIG="$bindir/pg_config" installcheck TAP_TESTS= "$@" \
        >"$log" 2>&1 || rc=$?
    # pg_regress's lines, for test-major.sh to count.
    grep -E '\.\.\. +(ok|FAILED|failed)|^(not )?ok +[0-9]+ +[-+] ' "$log" || true
    note "$suite from the unpack: $((SECONDS - start)) s"
    if [[ $rc -ne 0 ]]; then
        local diffs=$TESTDIR/regression.diffs
        [[ $suite == isolation ]] && diffs=$TESTDIR/output_iso/regression.diffs
        show "$diffs" 150
        grep -qE '\.\.\. +FAILED|^not ok ' "$log" || { show "$log" 20; not_ok "make installcheck ($suite): exit status $rc"; }
    fi
}
bx_chown_pg "$W/check"
regress_args=(ISOLATION=)
[[ -n ${BX_PACKAGE_REGRESS:-} ]] && regress_args+=(REGRESS="$BX_PACKAGE_REGRESS")
installcheck regress "${regress_args[@]}"
# The isolation specs VACUUM and show what it removed; an autovacuum
# worker's ANALYZE of a table the regression suite left (its snapshot
# keeps dead rows everywhere) must not run meanwhile: autovacuum off, its
# workers gone (a minute at most), for that suite only
sql postgres "ALTER SYSTEM SET autovacuum = off" "SELECT pg_reload_conf()" >/dev/null
for _ in $(seq 60); do
    [[ $(sql postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'") == 0 ]] && break
    sleep 1
done
installcheck isolation REGRESS=
sql postgres "ALTER SYSTEM RESET autovacuum" "SELECT pg_reload_conf()" >/dev/null
built=$(find "$TESTDIR" \( -name '*.o' -o -name '*.so' -o -name '*.bc' \) -print | head -n 3 | tr '\n' ' ')
check "make installcheck built nothing in the unpack${built:+ (built: $built)}" test -z "$built"

finish
}
