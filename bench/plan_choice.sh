#!/usr/bin/env bash
#
# bench/plan_choice.sh: the plan-choice grid.  Does the planner pick
# the faster of the index plan and the sequential scan, for bloomidx (four
# option sets) and contrib/bloom (its defaults)?  And for bloomidx's
# operator classes of sets (LIKE, ILIKE, array @> and &&, jsonb @>, beside
# an equality column; both layouts), on a table of their own (tsets)?
#
#   bash bench/plan_choice.sh                     # throwaway cluster, 10M rows
#   bash bench/plan_choice.sh --rows 1000000      # development size
#   bash bench/plan_choice.sh --smoke             # 20,000 rows, 1 run
#   PGHOST=... PGPORT=... PGDATABASE=... bash bench/plan_choice.sh --out DIR
#   options: --rows N --runs N --out DIR --smoke --only CONFIGS
#            --queries NAMES --time-limit SECONDS --remake
#            --host H --port P --dbname D --user U
#
# With a connection (PGHOST, PGPORT or PGDATABASE in the environment, or
# --host/--port/--dbname), it runs on that cluster, which needs the bloomidx
# and contrib bloom and pg_prewarm extensions available (bench/run.sh calls
# it so).  It reuses the tables tbloom and tmixed if they have --rows rows (as
# bench/bench.py makes them, same seeds; one without statistics is
# analyzed), else creates them, and so tsets (seeded, made here only); a
# table of another size is dropped and remade only with --remake.  --only
# makes only the tables its configurations use (bloomidx_sets and
# bloomidx_sets_row: tsets alone).  It creates one index at a time (pc_*), hides
# the table's other indexes inside a transaction that it rolls back, and
# drops its own at the end.
#
# Without a connection it sets up its own throwaway cluster the way
# bench/run.sh does (private relocated PostgreSQL, build of the committed
# HEAD, or of the working tree with BENCH_SOURCE=worktree; cluster settings
# below), and removes it afterwards (KEEP=1 keeps it).
#
# For each query it times the index plan and the seq scan, each forced with
# enable_* settings (EXPLAIN ANALYZE execution time, TIMING OFF, median of
# --runs, default 3, interleaved, after pg_prewarm and, on each connection,
# one untimed run of each plan to be timed; a plan over 5x slower than
# the other and over a second on its first run is not run again), and
# records what the planner picks unforced.  No parallel workers, no JIT.
#
# Output: DIR/plan_choice.csv (one row per index and query) and, on stdout
# (also DIR/plan_choice.txt when run by itself), lines beginning "summary:",
# the first being
#   summary: planner picked the faster plan (or within 10%): bloomidx X/Y (Z%), contrib/bloom X/Y (Z%)
# (bloomidx counting the sets queries too), and, for those alone,
#   summary: sets: planner picked the faster plan (or within 10%): bloomidx X/Y (Z%)
# DIR defaults to bench/results/plan_choice (where bench/run.sh puts the
# same two files) for a full default run by itself, else
# bench/work/plan_choice-ROWS (ignored by git).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

PYTHON=/usr/bin/python3

usage() {
    sed -n '3,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

rows=10000000
runs=3
out=""
smoke=0
rows_given=0
runs_given=0
py_args=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --rows) [[ ${2:-} =~ ^[0-9]+$ ]] || bx_die "--rows needs a number"; rows=$2; rows_given=1; shift 2 ;;
        --runs) [[ ${2:-} =~ ^[0-9]+$ && $2 -ge 1 ]] || bx_die "--runs needs a number >= 1"; runs=$2; runs_given=1; shift 2 ;;
        --out) [[ -n ${2:-} ]] || bx_die "--out needs a directory"; out=$2; shift 2 ;;
        --smoke) smoke=1; shift ;;
        --only | --queries | --time-limit) [[ -n ${2:-} ]] || bx_die "$1 needs a value"; py_args+=("$1" "$2"); shift 2 ;;
        --remake) py_args+=(--remake); shift ;;
        --host) export PGHOST=$2; shift 2 ;;
        --port) export PGPORT=$2; shift 2 ;;
        --dbname) export PGDATABASE=$2; shift 2 ;;
        --user) export PGUSER=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) bx_die "unknown option '$1' (see bash bench/plan_choice.sh --help)" ;;
    esac
done
if [[ $smoke -eq 1 ]]; then
    [[ $rows_given -eq 1 ]] || rows=20000
    [[ $runs_given -eq 1 ]] || runs=1
fi
[[ $rows -ge 1000 ]] || bx_die "--rows must be at least 1000"
standalone=1
[[ -n ${PGHOST:-}${PGPORT:-}${PGDATABASE:-} ]] && standalone=0
if [[ -z $out ]]; then
    if [[ $standalone -eq 1 && $smoke -eq 0 && $rows_given -eq 0 ]]; then
        out=$REPO/bench/results/plan_choice
    else
        out=$REPO/bench/work/plan_choice-$rows
    fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
[[ -x $PYTHON ]] || bx_die "$PYTHON not found"

run_grid() {
    "$PYTHON" "$REPO/bench/plan_choice.py" --rows "$rows" --runs "$runs" \
        --out "$out" --psql "$PSQL" "${py_args[@]}"
}

if [[ $standalone -eq 0 ]]; then
    PSQL=${PSQL:-$(command -v psql || echo "$BX_SYS_BINDIR/psql")}
    run_grid
    exit 0
fi

# --- a throwaway cluster of our own -----------------------------------------------

while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)
mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
sb_mb=$(( rows / 2500 + 256 ))                # as bench/run.sh: 10M rows -> 4256 MB
(( sb_mb > mem_kb / 1024 / 4 )) && sb_mb=$(( mem_kb / 1024 / 4 ))
(( sb_mb < 128 )) && sb_mb=128
SETTINGS=(
    "shared_buffers=${sb_mb}MB"
    max_parallel_workers_per_gather=0
    max_parallel_maintenance_workers=0
    jit=off
    work_mem=4MB
    maintenance_work_mem=1GB
    autovacuum=off
    fsync=off
    synchronous_commit=off
    full_page_writes=off
    max_wal_size=32GB
    checkpoint_timeout=1h
    random_page_cost=4
    effective_cache_size=$((sb_mb * 2))MB
)

bash "$REPO/scripts/deps.sh"
bx_make_workdir bloomidx-plan-choice
bx_install_traps
mkdir -p "$BX_WORK/logs"
bx_log "plan choice: $rows rows, $runs run(s), results to $out"
bx_pg_private_install "$BX_WORK/pg"
bench_copy_source "$BX_WORK/src"
bx_chown_pg "$BX_WORK"
bx_log "build of $SOURCE_DESC"
bench_build "$BX_WORK/src" "${BENCH_CFLAGS:--O2}" "$BX_WORK/logs/build.log"
bench_start_cluster "${SETTINGS[@]}"
PSQL=$BX_PG_BINDIR/psql

rc=0
run_grid 2>&1 | tee "$out/plan_choice.txt" || rc=$?
[[ $rc -eq 0 ]] || { tail -n 20 "$BX_WORK/cluster/server.log" >&2 || true; bx_die "the grid failed"; }
bx_cleanup
