#!/usr/bin/env bash
#
# scripts/old-install.sh DEST MAJOR: this system's PostgreSQL 15 with
# bloomidx built and installed, as a relocated copy in DEST that runs inside
# MAJOR's chroot (scripts/chroot.sh), for the upgrade suite: pg_upgrade
# there takes the old cluster's binaries from it.
#
# DEST/usr/lib/postgresql/15 is the old install (bin, lib, share through
# the relocation, as scripts/lib.sh makes for every test run), and
# DEST/syslibs the shared libraries its programs need that the chroot's
# newer Debian does not have (ICU, libxml2, LDAP of Debian 12), found with
# ldd inside the chroot; LD_LIBRARY_PATH=DEST/syslibs (as the chroot sees
# it) makes them run there.  The chroot must exist.  Needs root.
set -euo pipefail

# The whole script is one compound command, which bash reads before running
# it: editing this file during a run does not change the run.
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -eq 2 ]] || { echo "usage: $0 DEST MAJOR" >&2; exit 1; }
DEST=$1
MAJOR=$2
BX_PG_MAJOR=15
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"
bx_is_root || bx_die "the old install is checked in a chroot, which needs root"

BX_PG_MAJOR=15 bash "$REPO/scripts/deps.sh"
bx_log "old install: PostgreSQL 15 with bloomidx in $DEST"
bx_pg_private_install "$DEST"
src=$(mktemp -d "${TMPDIR:-/tmp}/bloomidx-old-src.XXXXXX")
bx_copy_source "$REPO" "$src"
make -C "$src" --no-print-directory -s -j"$(nproc)" PG_CONFIG="$BX_PG_CONFIG" PG_CFLAGS="${PG_CFLAGS:-}"
make -C "$src" --no-print-directory -s install PG_CONFIG="$BX_PG_CONFIG"
rm -rf "$src"

# The libraries the chroot lacks, until none is missing (a copied library
# may need others).  llvmjit.so is left out: the tests run with jit off.
inside=/bloomidx-old
mkdir -p "$DEST/syslibs"
for _ in 1 2 3 4 5; do
    # shellcheck disable=SC2016 # expanded inside the chroot
    missing=$(BX_BIND="$DEST:$inside" bash "$REPO/scripts/chroot.sh" run "$MAJOR" bash -c '
        export LD_LIBRARY_PATH='"$inside"'/syslibs
        for f in '"$inside"'/usr/lib/postgresql/15/bin/* '"$inside"'/usr/lib/postgresql/15/lib/*.so '"$inside"'/syslibs/*; do
            case $f in */llvmjit*) continue ;; esac
            [ -f "$f" ] && ldd "$f" 2>/dev/null
        done | sed -n "s/^[[:space:]]*\([^ ]*\) => not found$/\1/p" | sort -u')
    [[ -z $missing ]] && break
    for soname in $missing; do
        path=$(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64|x86_64/ && !found { print $NF; found = 1 }')
        [[ -n $path ]] || bx_die "the old install needs $soname, which this system does not have either"
        cp -L "$path" "$DEST/syslibs/$soname"
        bx_log "old install: $soname from this system"
    done
done
[[ -z $missing ]] || bx_die "libraries still missing in the PostgreSQL $MAJOR chroot: $missing"
chmod -R a+rX "$DEST"
exit
}
