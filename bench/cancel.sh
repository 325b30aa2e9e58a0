#!/usr/bin/env bash
#
# bench/cancel.sh: how promptly long statements on bloomidx indexes and
# filters end when statement_timeout fires (cancel latency).
#
#   bash bench/cancel.sh                      # every case
#   bash bench/cancel.sh --cases "scan contains"
#   bash bench/cancel.sh --rows N --elements N --timeout-ms N
#
# Each case runs 3 times under statement_timeout; the overshoot is the time
# past the timeout until the error came back (the median is printed, with
# the 3 runs).  A case that finishes before the timeout is reported as
# such: raise its size.  Cases (--cases takes their first words):
#   scan       "= ANY (array)" bitmap scans of --elements elements on
#              --rows rows: the row and the sliced layout on an index whose
#              bits are all set, so that every element's bits match, and
#              both layouts on an index where no element matches, so that
#              every signature is tested against every element
#   contains   bloom_contains(filter, array) on --array-elements elements
#   agg        bloom_agg(x) over --agg-rows distinct values, work_mem 1GB
#   check      bloomidx_check(index, heapallindexed => true), both
#              layouts, --maint-rows rows of 4,096-bit signatures
#   stats      bloomidx_stats(index), the same indexes
#   vacuum     VACUUM after half the rows are deleted, the same indexes
#   merge      bloomidx_merge(index) of a sliced index whose rows (at most
#              12,000) all wait on pending pages
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
array_elements=20000000
agg_rows=20000000
maint_rows=200000
cases="scan contains agg check stats vacuum merge"
number() { [[ ${2:-} =~ ^[0-9]+$ ]] || bx_die "$1 needs a number"; }
while [[ $# -gt 0 ]]; do
    case $1 in
        --rows) number "$@"; rows=$2; shift 2 ;;
        --elements) number "$@"; elements=$2; shift 2 ;;
        --timeout-ms) number "$@"; timeout_ms=$2; shift 2 ;;
        --array-elements) number "$@"; array_elements=$2; shift 2 ;;
        --agg-rows) number "$@"; agg_rows=$2; shift 2 ;;
        --maint-rows) number "$@"; maint_rows=$2; shift 2 ;;
        --cases) cases=${2:-}; shift 2 ;;
        -h | --help) sed -n '3,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) bx_die "unknown option '$1'" ;;
    esac
done
wants() { [[ " $cases " == *" $1 "* ]]; }
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

bx_log "built: $SOURCE_DESC"
"${PSQL[@]}" -c "CREATE EXTENSION bloomidx"

# measure NAME SQL: the times past the timeout of SQL (its last statement
# is timed; SQL may start with settings and \gset), in ms
measure() {
    local name=$1 sql=$2 i ms over list=""
    for i in 1 2 3; do
        ms=$("${PSQL[@]}" -At 2>&1 <<SQL | awk '/^Time: / { t = $2 } END { print t }'
SET work_mem = '1GB';
$sql
SQL
)
        [[ -n $ms ]] || bx_die "$name: no timing (the statement failed at once?)"
        over=$(awk -v t="$ms" -v lim="$timeout_ms" 'BEGIN { printf "%.0f", t - lim }')
        list+="$over "
    done
    median=$(echo "$list" | tr ' ' '\n' | sed '/^$/d' | sort -n | sed -n 2p)
    if [[ $median -lt 0 ]]; then
        echo "$name: finished before the timeout (${list% } ms from it): raise its size"
    else
        echo "$name: overshoot past statement_timeout = ${timeout_ms} ms: median $median ms (runs: ${list% } ms)"
    fi
}

# The statement under the timeout, timed
timed() {
    printf 'SET statement_timeout = %s;\n\\set ON_ERROR_STOP 0\n\\timing on\n%s\n' "$timeout_ms" "$1"
}

if wants scan; then
bx_log "scan: $rows rows; arrays of $elements elements"
"${PSQL[@]}" <<SQL
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
CREATE TABLE tsparse_s (LIKE tsparse);
INSERT INTO tsparse_s SELECT * FROM tsparse;
CREATE INDEX tsparse_sliced ON tsparse_s USING bloomidx (a)
  WITH (layout = sliced, length = 1024, col1 = 8);
SELECT bloomidx_merge('tsparse_sliced');
VACUUM ANALYZE;
SQL
"${PSQL[@]}" -At -c "SELECT 'fill of the all-bits-set indexes: ' || string_agg(round(fill::numeric, 3)::text, ', ') FROM (SELECT (bloomidx_stats('tfull_row')).fill UNION ALL SELECT (bloomidx_stats('tfull_sliced')).fill) s"

# The planner's share: the same query's planning time (no timeout)
plan_ms=$("${PSQL[@]}" -At <<SQL | sed -n 's/^Planning Time: \([0-9.]*\) ms$/\1/p'
SELECT array_agg(-g) AS arr FROM generate_series(1, $elements) g \gset
EXPLAIN (SUMMARY ON, COSTS OFF) SELECT count(*) FROM tsparse WHERE a = ANY (:'arr'::int[]);
SQL
)
echo "planning time of a scan's query, within the statement's time: $plan_ms ms"
# The timed statement runs a generic plan, made beforehand: planning a
# query with the array as a constant takes the time above, in the
# planner's estimates of = ANY (no interrupt checks there, and none of
# bloomidx's), which would hide the scan's own latency
scan() {
    measure "scan: $1" "SET enable_seqscan = off; SET enable_indexscan = off;
SET plan_cache_mode = force_generic_plan;
PREPARE q(int[]) AS SELECT count(*) FROM $2 WHERE a = ANY (\$1);
SELECT array_agg(-g) AS arr FROM generate_series(1, $elements) g \gset
$(timed "EXECUTE q(:'arr');")"
}
scan "row layout, all bits set" tfull
scan "sliced layout, all bits set" tfull_s
scan "row layout, no element matches" tsparse
scan "sliced layout, no element matches" tsparse_s
fi

if wants contains; then
bx_log "contains: an array of $array_elements elements"
"${PSQL[@]}" <<SQL
CREATE TABLE carr AS SELECT array_agg(g) AS a FROM generate_series(1, $array_elements) g;
ALTER TABLE carr ALTER a SET STORAGE EXTERNAL;
CREATE TABLE cfilt AS SELECT bloom_agg(g) AS f FROM generate_series(1, 1000) g;
SQL
measure "bloom_contains(filter, array of $array_elements)" \
    "$(timed "SELECT cardinality(bloom_contains(f, a)) FROM carr, cfilt;")"
"${PSQL[@]}" -c "DROP TABLE carr, cfilt"
fi

if wants agg; then
measure "bloom_agg over $agg_rows distinct values" \
    "$(timed "SELECT length(bloom_agg(g)::bytea) FROM generate_series(1, $agg_rows) g;")"
fi

if wants check || wants stats || wants vacuum; then
bx_log "maintenance: $maint_rows rows, 4,096-bit signatures"
"${PSQL[@]}" <<SQL
CREATE TABLE tm_row (id int, a int, b int, c int, d int);
INSERT INTO tm_row SELECT i, i, i + 1, i + 2, i + 3 FROM generate_series(1, $maint_rows) i;
CREATE TABLE tm_sliced (LIKE tm_row);
INSERT INTO tm_sliced SELECT * FROM tm_row;
CREATE INDEX tm_row_bx ON tm_row USING bloomidx (a, b, c, d) WITH (length = 4096);
CREATE INDEX tm_sliced_bx ON tm_sliced USING bloomidx (a, b, c, d)
  WITH (layout = sliced, length = 1024);
SELECT bloomidx_merge('tm_sliced_bx');
VACUUM ANALYZE tm_row, tm_sliced;
SQL
for layout in row sliced; do
    if wants check; then
        measure "bloomidx_check, $layout layout, heapallindexed" \
            "$(timed "SELECT bloomidx_check('tm_${layout}_bx', true);")"
    fi
    if wants stats; then
        measure "bloomidx_stats, $layout layout" \
            "$(timed "SELECT count(*) FROM bloomidx_stats('tm_${layout}_bx');")"
    fi
    if wants vacuum; then
        "${PSQL[@]}" -c "DELETE FROM tm_$layout WHERE id % 2 = 0"
        measure "VACUUM, $layout layout, half the rows deleted" \
            "SET maintenance_work_mem = '1GB';
$(timed "VACUUM tm_$layout;")"
    fi
done
fi

if wants merge; then
# The pending list holds at most 256 pages (of 60 signatures of 1,024 bits)
merge_rows=$((maint_rows < 12000 ? maint_rows : 12000))
bx_log "merge: $merge_rows rows on pending pages"
"${PSQL[@]}" <<SQL
CREATE TABLE tmerge (a int, b int, c int, d int);
CREATE INDEX tmerge_bx ON tmerge USING bloomidx (a, b, c, d)
  WITH (layout = sliced, length = 1024);
INSERT INTO tmerge SELECT i, i + 1, i + 2, i + 3 FROM generate_series(1, $merge_rows) i;
SQL
"${PSQL[@]}" -At -c "SELECT 'pending pages before the merge: ' || pending_pages FROM bloomidx_stats('tmerge_bx')"
measure "bloomidx_merge, sliced layout" \
    "$(timed "SELECT bloomidx_merge('tmerge_bx');")"
fi

bx_cleanup
echo "cancel: ok"
