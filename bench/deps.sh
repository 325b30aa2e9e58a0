#!/usr/bin/env bash
#
# bench/deps.sh: install the Debian packages the benchmark needs beyond the
# build and test dependencies (scripts/deps.sh), when they are missing.
#
#   gnuplot-nox   draws bench/results/chart.png (pngcairo terminal)
#   python3       /usr/bin/python3 runs bench/bench.py (standard library only)
#   fonts-dejavu-core  a font for the chart's labels
#
# As root: `apt-get update` and `apt-get install -y` only if something is
# missing.  As another user with something missing: fails and says what to
# install.  Safe to run repeatedly.
set -euo pipefail

packages=(gnuplot-nox python3 fonts-dejavu-core)

# True when Debian package $1 is installed (not merely known to dpkg).
is_installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]
}

missing=()
for p in "${packages[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "==> bench deps: all present (${packages[*]})"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    echo "error: missing Debian packages: ${missing[*]}" >&2
    echo "       rerun as root (sudo bash bench/deps.sh), or: apt-get install -y ${missing[*]}" >&2
    exit 1
fi

echo "==> bench deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)
apt-get "${apt_opts[@]}" update -q
apt-get "${apt_opts[@]}" install -y -q --no-install-recommends "${missing[@]}"

still=()
for p in "${missing[@]}"; do
    is_installed "$p" || still+=("$p")
done
if [[ ${#still[@]} -ne 0 ]]; then
    echo "error: still missing after apt-get install: ${still[*]}" >&2
    exit 1
fi
echo "==> bench deps: installed ${missing[*]}"
