#!/usr/bin/env bash
#
# bench/run.sh: benchmark bloomidx beside contrib/bloom, B-trees and a
# sequential scan, in one run on one throwaway cluster, and write the results
# (Markdown, CSV, PNG chart) to bench/results/.
#
#   bash bench/run.sh                # 10,000,000 rows, median of 5 runs
#   bash bench/run.sh --quick        # 1,000,000 rows (development)
#   bash bench/run.sh --smoke        # 20,000 rows, 1 run: checks the pipeline
#   bash bench/run.sh --rows N --runs N --out DIR
#   bash bench/run.sh --cold         # cold-cache queries only (bench/cold.py)
#   bash bench/run.sh --concurrency  # throughput with 1-8 clients only
#   make bench                       # the same as the first line
#
# Steps:
#   1. scripts/deps.sh and bench/deps.sh (gnuplot) install missing Debian
#      packages when run as root.
#   2. A temp work dir with a private relocated copy of PostgreSQL
#      (scripts/lib.sh) and a copy of the source tree, built with -O2 and
#      installed into that copy only.
#   3. A throwaway cluster (as the postgres OS user when root) listening only
#      on a Unix socket, with the settings printed below and in results.md.
#   4. bench/bench.py measures everything (bench/bench.py --help), then
#      bench/plan_choice.sh (the plan-choice grid) runs if it exists.
#   5. bench/bench.py writes results.md, results.csv and chart.png, with the
#      machine, PostgreSQL version and date; the cluster is stopped and the
#      work dir removed (KEEP=1 keeps it).
#
# Results go to bench/results/ for a full default run, and to
# bench/work/<mode>/ (ignored by git) for --quick, --smoke and --rows runs,
# so that development runs never overwrite the committed results.  --out DIR
# chooses the directory.  The last line is "bench: ok (results in DIR)" or
# an error; the exit status is non-zero on any failure.
#
# Environment:
#   KEEP=1        keep the work dir (cluster data, logs)
#   BENCH_NOTE    a sentence added to results.md (e.g. about the machine)
#   BENCH_SOURCE  head (default: build the committed HEAD) or worktree (the
#                 working tree, tracked and untracked-but-not-ignored files)
#   BENCH_CFLAGS  compiler flags of the benchmark build (default -O2); keep
#                 -march=native and the like here, never in the Makefile
#   BENCH_BEFORE  with --cold: a commit whose bloomidx is measured beside the
#                 one built, its library swapped in while the server is down
#   BENCH_IO_CONCURRENCY  with --cold: effective_io_concurrency of the
#                 queries (default: the server's)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

PYTHON=/usr/bin/python3

usage() {
    sed -n '3,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# --- options -------------------------------------------------------------------

mode=full
rows=10000000
runs=5
out=""
rows_given=0
runs_given=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --rows) [[ ${2:-} =~ ^[0-9]+$ ]] || bx_die "--rows needs a number"; rows=$2; rows_given=1; shift 2 ;;
        --runs) [[ ${2:-} =~ ^[0-9]+$ && $2 -ge 1 ]] || bx_die "--runs needs a number >= 1"; runs=$2; runs_given=1; shift 2 ;;
        --quick) mode=quick; shift ;;
        --smoke) mode=smoke; shift ;;
        --cold) mode=cold; shift ;;
        --concurrency) mode=concurrency; shift ;;
        --out) [[ -n ${2:-} ]] || bx_die "--out needs a directory"; out=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) bx_die "unknown option '$1' (see bash bench/run.sh --help)" ;;
    esac
done
case $mode in
    quick) [[ $rows_given -eq 1 ]] || rows=1000000 ;;
    smoke) [[ $rows_given -eq 1 ]] || rows=20000
           [[ $runs_given -eq 1 ]] || runs=1 ;;
    cold) [[ $rows_given -eq 1 ]] || rows=1000000
          [[ $runs_given -eq 1 ]] || runs=3 ;;
    concurrency) [[ $rows_given -eq 1 ]] || rows=1000000 ;;
esac
[[ $rows -ge 1000 ]] || bx_die "--rows must be at least 1000"
if [[ -z $out ]]; then
    if [[ $mode == full && $rows_given -eq 0 ]]; then
        out=$REPO/bench/results
    elif [[ $rows_given -eq 1 ]]; then
        out=$REPO/bench/work/rows-$rows
    else
        out=$REPO/bench/work/$mode
    fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Libpq environment of the caller must not leak in; we set our own below.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)

# --- cluster settings ------------------------------------------------------------

mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
# shared_buffers: large enough to hold the table and the biggest contender
# (about 4 GB for 10M rows); a quarter of the memory at most.
if [[ $mode == smoke ]]; then
    sb_mb=128
else
    sb_mb=$(( rows / 2500 + 256 ))          # 10M rows -> 4256 MB
    (( sb_mb > mem_kb / 1024 / 4 )) && sb_mb=$(( mem_kb / 1024 / 4 ))
    (( sb_mb < 128 )) && sb_mb=128
fi
bench_settings "$sb_mb"     # sets SETTINGS (bench/lib.sh)

# --- set-up ----------------------------------------------------------------------

bash "$REPO/scripts/deps.sh"
bash "$REPO/bench/deps.sh"
[[ -x $PYTHON ]] || bx_die "$PYTHON not found (bench/deps.sh installs python3)"

bx_make_workdir bloomidx-bench
bx_install_traps
mkdir -p "$BX_WORK/logs" "$BX_WORK/results"
bx_log "bench: mode $mode, $rows rows, $runs run(s), results to $out"
bx_log "work dir: $BX_WORK"

bx_log "private PostgreSQL $BX_PG_MAJOR install"
bx_pg_private_install "$BX_WORK/pg"

SRC=$BX_WORK/src
bench_copy_source "$SRC"
bx_chown_pg "$BX_WORK"

cflags=${BENCH_CFLAGS:--O2}
bx_log "build: make && make install (PG_CFLAGS=$cflags)"
bench_build "$SRC" "$cflags" "$BX_WORK/logs/build.log"
bench_start_cluster "${SETTINGS[@]}"

# --- cold-cache queries and throughput (bench/cold.py) ---------------------------

# cold_bench ARGS...: the cold-cache queries, into $BX_WORK/results/cold.md
cold_bench() {
    local lib
    lib=$("$BX_PG_CONFIG" --pkglibdir)/bloomidx.so
    local args=(cold --psql "$BX_PG_BINDIR/psql" --pgctl "$BX_PG_BINDIR/pg_ctl"
                --datadir "$BX_WORK/cluster/data" --logfile "$BX_WORK/cluster/server.log"
                --pg-user "$BX_PG_OS_USER" --rows "$rows" --lib-path "$lib"
                --out "$BX_WORK/results/cold.md" "$@")
    [[ -n ${BENCH_IO_CONCURRENCY:-} ]] && args+=(--io-concurrency "$BENCH_IO_CONCURRENCY")
    if [[ -n ${BENCH_BEFORE:-} ]]; then
        local before=$BX_WORK/src-before
        mkdir -p "$before"
        git -C "$REPO" -c safe.directory='*' archive "$BENCH_BEFORE" | tar -x -C "$before"
        bx_chown_pg "$before"
        bx_log "build of $BENCH_BEFORE, for the side-by-side cold runs"
        bx_as_pg make -C "$before" --no-print-directory -j"$(nproc)" \
            PG_CONFIG="$BX_PG_CONFIG" PG_CFLAGS="$cflags" >"$BX_WORK/logs/build-before.log" 2>&1 ||
            bx_die "the build of $BENCH_BEFORE failed (log: $BX_WORK/logs/build-before.log)"
        cp "$lib" "$BX_WORK/bloomidx-after.so"
        args+=(--lib-before "$before/bloomidx.so" --lib-after "$BX_WORK/bloomidx-after.so")
    fi
    "$PYTHON" "$REPO/bench/cold.py" "${args[@]}" || bx_die "the cold-cache runs failed"
}

# conc_bench ARGS...: throughput, into $BX_WORK/results/concurrency.md
conc_bench() {
    "$PYTHON" "$REPO/bench/cold.py" concurrency --psql "$BX_PG_BINDIR/psql" \
        --pgbench "$BX_PG_BINDIR/pgbench" --rows "$rows" --workdir "$BX_WORK/pgbench" \
        --out "$BX_WORK/results/concurrency.md" "$@" || bx_die "the throughput runs failed"
}

if [[ $mode == cold || $mode == concurrency ]]; then
    if [[ $mode == cold ]]; then
        cold_bench --runs "$runs"
        cp "$BX_WORK/results/cold.md" "$BX_WORK/results/cold.json" "$out/"
    else
        conc_bench
        cp "$BX_WORK/results/concurrency.md" "$BX_WORK/results/concurrency.json" "$out/"
    fi
    bx_cleanup
    echo "bench: ok (results in $out)"
    exit 0
fi

# --- measurements ---------------------------------------------------------------

raw=$BX_WORK/results/raw.json
bx_log "measuring (bench/bench.py)"
if ! "$PYTHON" "$REPO/bench/bench.py" measure --mode "$mode" --rows "$rows" \
        --runs "$runs" --psql "$BX_PG_BINDIR/psql" --raw "$raw" \
        --settings="${SETTINGS[*]}" --cflags="$cflags" \
        --source="$SOURCE_DESC" --repo "$REPO" \
        --server-log "$BX_WORK/cluster/server.log"; then
    tail -n 30 "$BX_WORK/cluster/server.log" >&2 || true
    bx_die "the measurements failed"
fi

# The smoke run checks the cold-cache pipeline on one contender, and
# bench/scale.py's pipelines
if [[ $mode == smoke ]]; then
    bx_log "cold-cache pipeline (bench/cold.py)"
    cold_bench --runs 1 --contenders bloomidx --queries 1col
    # bench/scale.sh's measurements, in a database of their own: every
    # contender's answers on both of its tables, one cold query and one
    # throughput cell with clients inserting (the pgbench pipeline of
    # --concurrency too)
    bx_log "scale pipeline (bench/scale.py)"
    bx_as_pg "$BX_PG_BINDIR/createdb" -h "$PGHOST" -p "$PGPORT" scale
    mkdir -p "$BX_WORK/pgbench" "$BX_WORK/results/scale"
    bx_chown_pg "$BX_WORK/pgbench"
    PGDATABASE=scale "$PYTHON" "$REPO/bench/scale.py" measure --rows "$rows" --runs 1 \
        --cold-runs 1 --cold-queries tenant_day --cold-contenders bloomidx \
        --seconds 1 --clients 2 --conc-contenders bloomidx --conc-queries 2col \
        --conc-inserting-only --psql "$BX_PG_BINDIR/psql" --pgctl "$BX_PG_BINDIR/pg_ctl" \
        --pgbench "$BX_PG_BINDIR/pgbench" --datadir "$BX_WORK/cluster/data" \
        --logfile "$BX_WORK/cluster/server.log" --pg-user "$BX_PG_OS_USER" \
        --workdir "$BX_WORK/pgbench" --raw "$BX_WORK/results/scale/raw-$rows.json" \
        --settings="${SETTINGS[*]}" --source="$SOURCE_DESC" --cflags="$cflags" \
        >"$BX_WORK/results/scale.log" 2>&1 ||
        { tail -n 30 "$BX_WORK/results/scale.log" >&2; bx_die "the scale pipeline failed"; }
    "$PYTHON" "$REPO/bench/scale.py" report --raw "$BX_WORK/results/scale/raw-$rows.json" \
        --out "$BX_WORK/results/scale" >/dev/null || bx_die "the scale report failed"
    rm -rf "$out/scale"
    cp -r "$BX_WORK/results/scale" "$out/scale"
fi

# The plan-choice grid, owned by bench/plan_choice.sh: it gets the same
# cluster (PGHOST, PGPORT, PGUSER, PGDATABASE in the environment) and the
# options below (and PSQL, the private psql); its lines beginning "summary:"
# go into results.md; its output and plan_choice.csv into plan_choice/.
pc_out=$BX_WORK/results/plan_choice/plan_choice.txt
mkdir -p "$BX_WORK/results/plan_choice"
pc_failed=0
if [[ -f $REPO/bench/plan_choice.sh ]]; then
    bx_log "plan-choice grid (bench/plan_choice.sh)"
    # Median of 3 (the grid is large), 1 in smoke.
    pc_args=(--rows "$rows" --runs "$([[ $mode == smoke ]] && echo 1 || echo 3)" --out "$BX_WORK/results/plan_choice")
    [[ $mode == smoke ]] && pc_args+=(--smoke)
    rc=0
    PSQL=$BX_PG_BINDIR/psql bash "$REPO/bench/plan_choice.sh" "${pc_args[@]}" >"$pc_out" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
        # Keep the measurements: report them, then fail at the end.
        tail -n 30 "$pc_out" >&2
        echo "summary: bench/plan_choice.sh failed (exit status $rc); its output is in plan_choice.txt" >>"$pc_out"
        pc_failed=$rc
    fi
else
    echo "skipped: bench/plan_choice.sh does not exist yet" >"$pc_out"
    bx_log "plan-choice grid skipped: bench/plan_choice.sh does not exist yet"
fi

# --- report ----------------------------------------------------------------------

bx_log "report: results.md, results.csv, chart.png"
rc=0
"$PYTHON" "$REPO/bench/bench.py" report --raw "$raw" --plan-choice "$pc_out" \
    --out "$BX_WORK/results" --chart-script "$REPO/bench/chart.gp" || rc=$?

# plan_choice/ holds the grid's own output (plan_choice.txt, .csv), as a
# standalone bench/plan_choice.sh run writes it.
for f in results.md results.csv chart.png raw.json; do
    if [[ -f $BX_WORK/results/$f ]]; then
        cp "$BX_WORK/results/$f" "$out/$f"
    fi
done
rm -rf "$out/plan_choice"
cp -r "$BX_WORK/results/plan_choice" "$out/plan_choice"
[[ $rc -eq 0 ]] || bx_die "the report failed (exit status $rc; what was written is in $out)"
[[ $pc_failed -eq 0 ]] || bx_die "bench/plan_choice.sh failed (exit status $pc_failed; results in $out)"
bx_cleanup
echo "bench: ok (results in $out)"
