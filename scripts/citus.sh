#!/usr/bin/env bash
#
# scripts/citus.sh: build Citus from its release sources and install it into
# a private PostgreSQL, for the citus suite (citus/*.pl) of test-major.sh.
#
#   bash scripts/citus.sh sources        # print the Citus sources dir, or why none
#   bash scripts/citus.sh install PG_CONFIG
#
# Citus is in no Debian suite these machines reach, so its release archives
# (citus-VERSION.tar.gz, made with `git archive`) lie beside the repository,
# in ../shared/citus (BX_CITUS_SOURCES overrides).  They are test inputs:
# never copied into the tree, installed only into the private PostgreSQL of
# a test run (PG_CONFIG of scripts/lib.sh's bx_pg_private_install).
#
# `install` picks the release that accepts the major of PG_CONFIG (13.2.2
# for 15), builds it once per Citus version, PostgreSQL version and hash of
# this script into a cache (BX_CITUS_CACHE, default /var/cache/bloomidx/citus
# when writable, else $TMPDIR), then copies the cached files into the
# private PostgreSQL.  It prints "citus: build N s wall, N s CPU" or
# "citus: cached build ...".  PostgreSQL 15.20's headers export
# have_createdb_privilege(), which 13.2.2 defines static: the patch beside
# the archives is applied when the headers declare it.
#
# Exit status 0 and a line "citus: skip: WHY" when there is nothing to
# test with (no sources, no release for this major); 1 on a build failure.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# citus_sources: the dir holding the archives, if there is one: beside this
# tree, or beside the main tree of a git worktree.
citus_sources() {
    local d common
    if [[ -n ${BX_CITUS_SOURCES:-} ]]; then
        [[ -d $BX_CITUS_SOURCES ]] && (cd "$BX_CITUS_SOURCES" && pwd)
        return
    fi
    for d in "$REPO/../shared/citus" \
        "$(common=$(git -C "$REPO" -c safe.directory='*' rev-parse --path-format=absolute --git-common-dir 2>/dev/null) &&
            echo "$(dirname "$common")/../shared/citus")"; do
        [[ -n $d && -d $d ]] && { (cd "$d" && pwd); return; }
    done
    return 1
}
SOURCES_HINT="no Citus sources (looked in ../shared/citus beside the tree; BX_CITUS_SOURCES overrides)"

# citus_version MAJOR: the release whose configure accepts MAJOR.
citus_version() {
    case $1 in
        15) echo 13.2.2 ;;
        16 | 17 | 18) echo 14.0.1 ;;
        *) return 1 ;;
    esac
}

skip() {
    echo "citus: skip: $*"
    exit 0
}

cmd=${1:-}
case $cmd in
    sources)
        d=$(citus_sources) || skip "$SOURCES_HINT"
        echo "$d"
        ;;
    install)
        pg_config=${2:?usage: citus.sh install PG_CONFIG}
        pgver=$("$pg_config" --version | awk '{print $2}')
        major=${pgver%%.*}
        ver=$(citus_version "$major") || skip "no Citus release accepts PostgreSQL $major"
        # The only one tested so far: 14.0.1 would build for 16-18.
        [[ $major == 15 ]] || skip "the citus suite runs on PostgreSQL 15 only (Citus $ver untested on $major)"
        src=$(citus_sources) || skip "$SOURCES_HINT"
        tarball=$src/citus-$ver.tar.gz
        [[ -f $tarball ]] || skip "no $tarball"
        incdir=$("$pg_config" --includedir-server)
        patch=""
        if grep -q 'have_createdb_privilege' "$incdir/commands/dbcommands.h" 2>/dev/null; then
            patch=$src/citus-pg15.20-have_createdb_privilege.patch
            [[ $ver == 13.2.2 && -f $patch ]] || patch=""
        fi
        recipe=$(cat "${BASH_SOURCE[0]}" ${patch:+"$patch"} | sha256sum | cut -c1-12)
        cache_root=${BX_CITUS_CACHE:-/var/cache/bloomidx/citus}
        if ! mkdir -p "$cache_root" 2>/dev/null || [[ ! -w $cache_root ]]; then
            cache_root=${TMPDIR:-/tmp}/bloomidx-citus-cache
            mkdir -p "$cache_root"
        fi
        key=citus-$ver-pg$pgver-$recipe
        stage=$cache_root/$key
        if [[ -f $stage/.done ]]; then
            echo "citus: cached build $stage"
        else
            # Build as the current user against the server headers; install
            # with DESTDIR into a staging tree that the cache keeps.
            build=$(mktemp -d "${TMPDIR:-/tmp}/citus-build.XXXXXX")
            trap 'rm -rf "$build"' EXIT
            tar -C "$build" -xzf "$tarball"
            cd "$build/citus-$ver"
            [[ -n $patch ]] && patch -s -p1 <"$patch"
            t0=$(date +%s.%N)
            read -r u0 s0 < <(awk '{print $14+$16, $15+$17}' /proc/$$/stat)
            (
                ./configure PG_CONFIG="$pg_config" --without-libcurl >configure.log 2>&1 ||
                    { tail -n 30 configure.log; exit 1; }
                make -j"$(nproc)" with_llvm=no >make.log 2>&1 || { tail -n 40 make.log; exit 1; }
                rm -rf "$stage.tmp"
                make install with_llvm=no DESTDIR="$stage.tmp" >install.log 2>&1 ||
                    { tail -n 30 install.log; exit 1; }
            )
            t1=$(date +%s.%N)
            # CPU of this shell's waited-for children (the build), in ticks.
            read -r u1 s1 < <(awk '{print $14+$16, $15+$17}' /proc/$$/stat)
            hz=$(getconf CLK_TCK)
            cpu=$(awk -v a="$u0" -v b="$s0" -v c="$u1" -v d="$s1" -v hz="$hz" \
                'BEGIN { printf "%.0f", (c + d - a - b) / hz }')
            wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }')
            echo "$wall $cpu" >"$stage.tmp/.done"
            rm -rf "$stage"
            mv "$stage.tmp" "$stage"
            echo "citus: build $wall s wall, $cpu s CPU (Citus $ver, PostgreSQL $pgver${patch:+, patched}) into $stage"
        fi
        # The staging tree holds the system paths that pg_config names; the
        # private PostgreSQL holds them under its root.
        pkglib=$("$pg_config" --pkglibdir) share=$("$pg_config" --sharedir)
        syslib=$(find "$stage" -name citus.so -printf '%h\n' | head -n 1)
        sysext=$(find "$stage" -name citus.control -printf '%h\n' | head -n 1)
        [[ -n $syslib && -n $sysext ]] || { echo "citus: no citus.so or citus.control in $stage" >&2; exit 1; }
        cp -a "$syslib"/. "$pkglib"/
        cp -a "$sysext"/. "$share/extension"/
        echo "citus: Citus $ver installed into $(dirname "$pkglib")"
        ;;
    *)
        echo "usage: citus.sh sources | install PG_CONFIG" >&2
        exit 2
        ;;
esac
