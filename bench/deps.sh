#!/usr/bin/env bash
#
# bench/deps.sh: install the Debian packages the benchmark needs beyond the
# build and test dependencies (scripts/deps.sh), when they are missing.
#
#   gnuplot-nox        draws bench/results/chart.png (pngcairo terminal)
#   python3            /usr/bin/python3 runs bench/bench.py (standard library only)
#   fonts-dejavu-core  a font for the chart's labels
#
# As root: `apt-get update` and `apt-get install -y` only if something is
# missing.  As another user with something missing: fails and says what to
# install.  Safe to run repeatedly.
set -euo pipefail

exec bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/deps.sh" bench \
    gnuplot-nox python3 fonts-dejavu-core
