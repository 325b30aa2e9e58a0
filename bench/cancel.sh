#!/usr/bin/env bash
#
# bench/cancel.sh: how promptly a long "= ANY (array)" bitmap scan of a
# bloomidx index ends when statement_timeout fires (cancel latency).
#
#   bash bench/cancel.sh                      # 20,000 rows, 100,000 elements
#   bash bench/cancel.sh --rows N --elements N --timeout-ms N
#
# For each case (the row and the sliced layout, on an index whose bits are
# all set, so that every element's bits match; and the row layout on an
# index where no element matches, so that every signature is tested
# against every element), the query runs 3 times under statement_timeout;
# the overshoot is the time past the timeout until the error came back
# (the median is printed).  A case that finishes before the timeout is
# reported as such: raise --elements or --rows.
#
# BENCH_SOURCE=worktree measures the working tree instead of the committed
# HEAD.  Set-up and clean-up as bench/run.sh: a private PostgreSQL with
# bloomidx built with -O2 (BENCH_CFLAGS), a throwaway cluster listening on a
# Unix socket only, everything removed on exit (KEEP=1 keeps the work dir).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

rows=20000
elements=100000
timeout_ms=1000
while [[ $# -gt 0 ]]; do
    case $1 in
        --rows) [[ ${2:-} =~ ^[0-9]+$ ]] || bx_die "--rows needs a number"; rows=$2; shift 2 ;;
        --elements) [[ ${2:-} =~ ^[0-9]+$ ]] || bx_die "--elements needs a number"; elements=$2; shift 2 ;;
        --timeout-ms) [[ ${2:-} =~ ^[0-9]+$ ]] || bx_die "--timeout-ms needs a number"; timeout_ms=$2; shift 2 ;;
        -h | --help) sed -n '3,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) bx_die "unknown option '$1'" ;;
    esac
done
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)

bash "$REPO/scripts/deps.sh"
bx_make_workdir bloomidx-cancel
bx_install_traps
bx_pg_private_install "$BX_WORK/pg"
bench_copy_source "$BX_WORK/src"
bx_chown_pg "$BX_WORK"
cflags=${BENCH_CFLAGS:--O2}
bx_log "build (PG_CFLAGS=$cflags)"
bench_build "$BX_WORK/src" "$cflags" "$BX_WORK/build.log"

export PGHOST=$BX_WORK/sock PGUSER=$BX_PG_OS_USER
PGPORT=$(bx_pick_port)
export PGPORT
bx_cluster_init "$BX_WORK/data" "$BX_PG_BINDIR"
bx_cluster_start "$BX_WORK/data" "$BX_PG_BINDIR" "$PGHOST" "$PGPORT" "$BX_WORK/server.log" \
    max_parallel_workers_per_gather=0 jit=off fsync=off autovacuum=off
export PGDATABASE=postgres
PSQL=("$BX_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1)

bx_log "data: $rows rows; arrays of $elements elements"
"${PSQL[@]}" <<SQL
CREATE EXTENSION bloomidx;
CREATE TABLE tfull (a int, b int, c int, d int);
INSERT INTO tfull SELECT i, i + 1, i + 2, i + 3 FROM generate_series(1, $rows) i;
-- 4 columns of 15 bits each in 16: (nearly) every bit of every signature set
CREATE INDEX tfull_row ON tfull USING bloomidx (a, b, c, d)
  WITH (length = 16, col1 = 15, col2 = 15, col3 = 15, col4 = 15);
CREATE TABLE tfull_s (LIKE tfull);
INSERT INTO tfull_s SELECT * FROM tfull;
CREATE INDEX tfull_sliced ON tfull_s USING bloomidx (a, b, c, d)
  WITH (layout = sliced, length = 16, col1 = 15, col2 = 15, col3 = 15, col4 = 15);
SELECT bloomidx_merge('tfull_sliced');
CREATE TABLE tsparse (a int);
INSERT INTO tsparse SELECT i FROM generate_series(1, $rows) i;
CREATE INDEX tsparse_row ON tsparse USING bloomidx (a) WITH (length = 1024, col1 = 8);
VACUUM ANALYZE;
SQL
"${PSQL[@]}" -At -c "SELECT 'fill of the all-bits-set indexes: ' || string_agg(round(fill::numeric, 3)::text, ', ') FROM (SELECT (bloomidx_stats('tfull_row')).fill UNION ALL SELECT (bloomidx_stats('tfull_sliced')).fill) s"

# measure NAME TABLE: the query's times past the timeout, in ms
measure() {
    local name=$1 table=$2 i ms over list=""
    for i in 1 2 3; do
        ms=$("${PSQL[@]}" -At 2>&1 <<SQL | awk '/^Time: / { t = $2 } END { print t }'
SET enable_seqscan = off; SET enable_indexscan = off; SET work_mem = '1GB';
SELECT array_agg(-g) AS arr FROM generate_series(1, $elements) g \gset
SET statement_timeout = $timeout_ms;
\set ON_ERROR_STOP 0
\timing on
SELECT count(*) FROM $table WHERE a = ANY (:'arr'::int[]);
SQL
)
        over=$(awk -v t="$ms" -v lim="$timeout_ms" 'BEGIN { printf "%.0f", t - lim }')
        list+="$over "
    done
    median=$(echo "$list" | tr ' ' '\n' | sed '/^$/d' | sort -n | sed -n 2p)
    if [[ $median -lt 0 ]]; then
        echo "$name: finished before the timeout (${list% } ms from it): raise --elements or --rows"
    else
        echo "$name: overshoot past statement_timeout = ${timeout_ms} ms: median $median ms (runs: ${list% } ms)"
    fi
}
measure "row layout, all bits set" tfull
measure "sliced layout, all bits set" tfull_s
measure "row layout, no element matches" tsparse
bx_cleanup
echo "cancel: ok"
