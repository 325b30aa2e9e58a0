#!/usr/bin/env bash
#
# scripts/chroot.sh: a Debian system with another PostgreSQL major in a
# folder, for building and testing bloomidx on that major.
#
#   bash scripts/chroot.sh create MAJOR        # build it, or bring it up to date
#   bash scripts/chroot.sh run MAJOR CMD...    # run CMD in it, as root
#   bash scripts/chroot.sh path MAJOR          # print its folder
#   bash scripts/chroot.sh majors              # print the majors it knows
#
# Bookworm (the host) carries PostgreSQL 15 only.  The other majors come
# from Debian's archive, each in the suite that carries it, installed into a
# folder with debootstrap:
#
#   17  trixie
#   18  forky         (bookworm's debootstrap has no forky script: sid's is
#                      used; forky's Release may be past its Valid-Until)
#   19  sid, with postgresql-19 from experimental
#
# PostgreSQL 16 is in no Debian suite.
#
# A chroot holds postgresql-MAJOR, its server development files and the
# tools the test suites need (scripts/deps.sh and bench/deps.sh list them),
# never a service running (policy-rc.d forbids starting one).  `create` is
# idempotent: it runs debootstrap only for a folder that lacks a finished
# system, and apt-get only when the package list changed since the last
# time.  `run` gives CMD a mount namespace of its own, with /proc and the
# host's /dev/shm mounted in the chroot, and BX_BIND="HOSTDIR:DIR ..." bind
# mounts (read-only) at DIR inside; they all vanish when CMD ends, so
# nothing is left mounted however CMD ends.  CMD's environment is a clean
# one plus the variables BX_CHROOT_PASS names.
#
# Environment: BX_CHROOT_DIR (default /var/cache/bloomidx/chroot), the
# parent folder of the chroots; BX_DEBIAN_MIRROR (default
# http://deb.debian.org/debian).  Needs root.
set -euo pipefail

# The whole script is one compound command, which bash reads before running
# it: editing this file during a run does not change the run.
{

CHROOT_DIR=${BX_CHROOT_DIR:-/var/cache/bloomidx/chroot}
MIRROR=${BX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
KNOWN_MAJORS="17 18 19"

# What the chroot's tests need: the server and its development files (with
# its compilers for PGXS, clang for bitcode), the TAP tests' perl modules,
# git (scripts/lib.sh copies the source with git ls-files), the benchmark's
# tools, util-linux's runuser, and the package suite's tools (jq and unzip
# for `make dist`; build-essential, debhelper and postgresql-server-dev-all
# for dpkg-buildpackage with pg_buildext; lintian).
# PostgreSQL 19 comes from experimental, the rest of the system from sid.
packages_for() {
    local major=$1 from=""
    [[ $major == 19 ]] && from=/experimental
    echo "postgresql-$major$from postgresql-server-dev-$major$from postgresql-client-$major$from" \
        "libpq5$from libpq-dev$from" \
        "libipc-run-perl perl make gcc git ca-certificates" \
        "python3 gnuplot-nox fonts-dejavu-core util-linux procps" \
        "jq unzip build-essential debhelper dpkg-dev fakeroot lintian postgresql-server-dev-all"
}

die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

log() {
    printf '==> chroot: %s\n' "$*"
}

# suite_of MAJOR: the Debian suite debootstrap installs for MAJOR.
suite_of() {
    case $1 in
        17) echo trixie ;;
        18) echo forky ;;
        19) echo sid ;;
        *) die "no Debian suite carries PostgreSQL $1 (known: $KNOWN_MAJORS; 15 is the host's)" ;;
    esac
}

path_of() {
    suite_of "$1" >/dev/null
    echo "$CHROOT_DIR/pg$1"
}

# The apt options every call inside a chroot takes.
APT_OPTS=(-o Acquire::Check-Valid-Until=false -o DPkg::Lock::Timeout=600
    -o Dpkg::Use-Pty=0 -o APT::Install-Recommends=false)

# in_root ROOT CMD...: run CMD chrooted in ROOT, in a mount namespace of its
# own with /proc and /dev/shm mounted, plus the BX_BIND mounts.
in_root() {
    local root=$1
    shift
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --mount --propagation private -- bash -euc '
        root=$1
        shift
        mount -t proc proc "$root/proc"
        mkdir -p "$root/dev/shm"
        mount --bind /dev/shm "$root/dev/shm"
        for b in ${BX_BIND:-}; do
            src=${b%%:*} dst=$root${b#*:}
            mkdir -p "$dst"
            mount --bind "$src" "$dst"
            mount -o remount,bind,ro "$dst"
        done
        envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
            HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive)
        for v in ${BX_CHROOT_PASS:-}; do
            [[ -v $v ]] && envs+=("$v=${!v}")
        done
        exec chroot "$root" /usr/bin/env -i "${envs[@]}" "$@"
    ' in_root "$root" "$@"
}

create() {
    local major=$1 suite root want have
    suite=$(suite_of "$major")
    root=$(path_of "$major")
    [[ $(id -u) -eq 0 ]] || die "creating a chroot needs root"
    mkdir -p "$CHROOT_DIR"
    # One creator at a time per chroot.
    exec 9>"$CHROOT_DIR/pg$major.lock"
    flock 9

    if [[ ! -f $root/etc/bloomidx-debootstrap-done ]]; then
        command -v debootstrap >/dev/null 2>&1 ||
            bash "$(dirname "${BASH_SOURCE[0]}")/deps.sh" chroot debootstrap
        rm -rf "$root"
        local script=()
        # bookworm's debootstrap knows no forky: the sid script serves any
        # suite after trixie.
        [[ -f /usr/share/debootstrap/scripts/$suite ]] || script=(/usr/share/debootstrap/scripts/sid)
        log "debootstrap $suite into $root"
        debootstrap --variant=minbase "$suite" "$root" "$MIRROR" "${script[@]}" \
            >"$CHROOT_DIR/pg$major.debootstrap.log" 2>&1 ||
            { tail -n 30 "$CHROOT_DIR/pg$major.debootstrap.log" >&2; die "debootstrap of $suite failed"; }
        printf '#!/bin/sh\n# bloomidx test chroot: start no service\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
        chmod 755 "$root/usr/sbin/policy-rc.d"
        echo "deb $MIRROR $suite main" >"$root/etc/apt/sources.list"
        if [[ $major == 19 ]]; then
            echo "deb $MIRROR experimental main" >>"$root/etc/apt/sources.list"
        fi
        touch "$root/etc/bloomidx-debootstrap-done"
    fi

    want="$(packages_for "$major")"
    have=$(cat "$root/etc/bloomidx-packages" 2>/dev/null || true)
    if [[ $want != "$have" ]]; then
        log "installing PostgreSQL $major and the test tools into $root"
        # shellcheck disable=SC2086 # a list of package names
        in_root "$root" apt-get "${APT_OPTS[@]}" update -q >/dev/null
        # shellcheck disable=SC2086
        in_root "$root" apt-get "${APT_OPTS[@]}" install -y -q $want \
            >"$CHROOT_DIR/pg$major.apt.log" 2>&1 ||
            { tail -n 30 "$CHROOT_DIR/pg$major.apt.log" >&2; die "apt-get install in $root failed"; }
        in_root "$root" apt-get "${APT_OPTS[@]}" clean
        echo "$want" >"$root/etc/bloomidx-packages"
    fi
    [[ -x $root/usr/lib/postgresql/$major/bin/pg_config ]] ||
        die "$root has no PostgreSQL $major after installing it"
    log "PostgreSQL $major ready in $root ($(in_root "$root" "/usr/lib/postgresql/$major/bin/pg_config" --version))"
}

cmd=${1:-}
case $cmd in
    create)
        [[ $# -eq 2 ]] || die "usage: $0 create MAJOR"
        create "$2"
        ;;
    run)
        [[ $# -ge 3 ]] || die "usage: $0 run MAJOR CMD..."
        major=$2
        shift 2
        root=$(path_of "$major")
        [[ -f $root/etc/bloomidx-packages ]] || die "no chroot for PostgreSQL $major: run $0 create $major"
        in_root "$root" "$@"
        ;;
    path)
        [[ $# -eq 2 ]] || die "usage: $0 path MAJOR"
        path_of "$2"
        ;;
    majors)
        echo "$KNOWN_MAJORS"
        ;;
    *)
        die "usage: $0 create|run|path|majors ..."
        ;;
esac
exit
}
