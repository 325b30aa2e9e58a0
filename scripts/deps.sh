#!/usr/bin/env bash
#
# scripts/deps.sh: install the Debian packages that building and testing
# bloomidx needs, when they are missing.
#
#   postgresql-15             server + contrib (contrib's bloom is used by the demo)
#   postgresql-server-dev-15  PGXS headers and makefiles, for `make`
#   libipc-run-perl           IPC::Run, needed by the TAP tests
#   perl                      prove and Test::More, for the TAP tests
#   make, gcc                 the build
#   jq                        scripts/check-meta.sh (make dist, t/027)
#   unzip                     the package suite unpacks `make dist`'s zip
#   debhelper, dpkg-dev, fakeroot, lintian, postgresql-server-dev-all
#                             the package suite: dpkg-buildpackage with
#                             pg_buildext, lintian
#
# As root: runs `apt-get update` once and `apt-get install -y` only if
# something is missing.  As another user with something missing: fails and
# says which packages to install (rerun as root).  Safe to run repeatedly.
#
# With arguments (`scripts/deps.sh LABEL PACKAGE...`), it does the same for
# those packages instead, without their recommended packages: other tools'
# dependencies (bench/deps.sh), reported under LABEL.
set -euo pipefail

PG_MAJOR=${BX_PG_MAJOR:-15}
label=deps
install_opts=()
packages=(
    "postgresql-$PG_MAJOR"
    "postgresql-server-dev-$PG_MAJOR"
    libipc-run-perl
    perl
    make
    gcc
    jq
    unzip
    debhelper
    dpkg-dev
    fakeroot
    lintian
    postgresql-server-dev-all
)

if [[ $# -gt 0 ]]; then
    label="$1 deps"
    shift
    packages=("$@")
    install_opts=(--no-install-recommends)
fi

# True when Debian package $1 is installed (not merely known to dpkg).
is_installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]
}

missing=()
for p in "${packages[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "==> $label: all present (${packages[*]})"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    echo "error: missing Debian packages: ${missing[*]}" >&2
    echo "       rerun as root (sudo bash $0), or: apt-get install -y ${missing[*]}" >&2
    exit 1
fi

echo "==> $label: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)
apt-get "${apt_opts[@]}" update -q
apt-get "${apt_opts[@]}" install -y -q "${install_opts[@]}" "${missing[@]}"

# Check again: apt-get can succeed without installing what we asked for.
still=()
for p in "${missing[@]}"; do
    is_installed "$p" || still+=("$p")
done
if [[ ${#still[@]} -ne 0 ]]; then
    echo "error: still missing after apt-get install: ${still[*]}" >&2
    exit 1
fi
echo "==> $label: installed ${missing[*]}"
