#!/usr/bin/env bash
#
# bench/sets.sh: the "substrings, arrays and jsonb" benchmark: bloomidx's
# set operator classes (text_trgm_ops, array_elem_ops, jsonb_path_ops)
# beside pg_trgm's GIN and GiST, GIN's array_ops and jsonb_path_ops, a
# B-tree and a sequential scan, on Debian's Contents paths and Packages
# stanzas, in one run on one throwaway cluster.
#
#   bash bench/sets.sh                 # every row (about 7.3M paths), median of 5
#   bash bench/sets.sh --rows 200000   # a quick run
#   bash bench/sets.sh --smoke         # 5,000 rows, one run: result equality only
#   bash bench/sets.sh --rows N --runs N --out DIR --data DIR
#
# The data come from bench/sets_data.sh (downloaded once into DIR, default
# /var/tmp/bloomidx-bench-data).  The private PostgreSQL, the build of the
# committed HEAD (BENCH_SOURCE=worktree: the working tree) and the cluster
# are bench/run.sh's (scripts/lib.sh, bench/lib.sh); bench/sets.py measures
# and writes results.md, results.csv and raw.json to DIR (default
# bench/results/sets/ for a full default run, bench/work/sets-<mode>/
# otherwise).  bloomidx contenders whose operator class the built bloomidx
# lacks (before 1.2) are skipped with a note.  The last line is
# "sets: ok (results in DIR)"; a count differing from the sequential
# scan's fails the run.  KEEP=1 keeps the work dir.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

PYTHON=/usr/bin/python3

usage() {
    sed -n '3,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

mode=full
rows=0
runs=5
out=""
data=${BLOOMIDX_BENCH_DATA:-/var/tmp/bloomidx-bench-data}
rows_given=0
runs_given=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --rows) [[ ${2:-} =~ ^[0-9]+$ ]] || bx_die "--rows needs a number"; rows=$2; rows_given=1; shift 2 ;;
        --runs) [[ ${2:-} =~ ^[0-9]+$ && $2 -ge 1 ]] || bx_die "--runs needs a number >= 1"; runs=$2; runs_given=1; shift 2 ;;
        --smoke) mode=smoke; shift ;;
        --out) [[ -n ${2:-} ]] || bx_die "--out needs a directory"; out=$2; shift 2 ;;
        --data) [[ -n ${2:-} ]] || bx_die "--data needs a directory"; data=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) bx_die "unknown option '$1' (see bash bench/sets.sh --help)" ;;
    esac
done
if [[ $mode == smoke ]]; then
    [[ $rows_given -eq 1 ]] || rows=5000
    [[ $runs_given -eq 1 ]] || runs=1
elif [[ $rows_given -eq 1 ]]; then
    mode=rows
fi
if [[ -z $out ]]; then
    case $mode in
        full) out=$REPO/bench/results/sets ;;
        rows) out=$REPO/bench/work/sets-rows-$rows ;;
        *) out=$REPO/bench/work/sets-$mode ;;
    esac
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)

# --- data ---------------------------------------------------------------------------

BLOOMIDX_BENCH_DATA=$data bash "$REPO/bench/sets_data.sh" --data "$data"
nall=$(wc -l <"$data/contents.tsv")
nrows=$rows
[[ $nrows -eq 0 || $nrows -gt $nall ]] && nrows=$nall

# --- cluster ------------------------------------------------------------------------

mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
# shared_buffers: the heap (about 90 bytes a path) and the largest index
# (GiST, about as large as the heap) with room: 4 GB for 7.3M paths.
if [[ $mode == smoke ]]; then
    sb_mb=128
else
    sb_mb=$(( nrows / 2000 + 512 ))
    (( sb_mb > mem_kb / 1024 / 4 )) && sb_mb=$(( mem_kb / 1024 / 4 ))
fi
bench_settings "$sb_mb"     # sets SETTINGS (bench/lib.sh)

bash "$REPO/scripts/deps.sh"
[[ -x $PYTHON ]] || bx_die "$PYTHON not found"

bx_make_workdir bloomidx-sets
bx_install_traps
mkdir -p "$BX_WORK/logs" "$BX_WORK/results" "$BX_WORK/data"
bx_log "sets: mode $mode, $nrows of $nall contents rows, $runs run(s), results to $out"
bx_log "work dir: $BX_WORK"
bx_pg_private_install "$BX_WORK/pg"
# The copy holds whatever bloomidx was installed into the system PostgreSQL
# (another branch's scripts, say bloomidx--1.1--1.2.sql): only the build
# below may provide it.
rm -rf "$("$BX_PG_CONFIG" --sharedir)"/extension/bloomidx[-.]* \
       "$("$BX_PG_CONFIG" --pkglibdir)"/bloomidx.so "$("$BX_PG_CONFIG" --pkglibdir)"/bitcode/bloomidx*
[[ -f $BX_PG_BINDIR/../lib/pg_trgm.so ]] || bx_die "pg_trgm is not in $BX_PG_BINDIR/../lib (postgresql-contrib)"
SRC=$BX_WORK/src
bench_copy_source "$SRC"
bx_chown_pg "$BX_WORK"
cflags=${BENCH_CFLAGS:--O2}
bx_log "build: $SOURCE_DESC (PG_CFLAGS=$cflags)"
bench_build "$SRC" "$cflags" "$BX_WORK/logs/build.log"
bench_start_cluster "${SETTINGS[@]}"

# --- measure and report ---------------------------------------------------------------

raw=$BX_WORK/results/raw.json
measure=(--mode "$mode" --rows "$rows" --runs "$runs" --psql "$BX_PG_BINDIR/psql"
         --data "$data" --work "$BX_WORK/data" --raw "$raw"
         --settings="${SETTINGS[*]}" --cflags="$cflags" --source="$SOURCE_DESC")
if [[ $mode == smoke ]]; then
    measure+=(--smoke --latency-rows 500 --sample-rows 5000 --candidates 40)
fi
rc=0
"$PYTHON" "$REPO/bench/sets.py" measure "${measure[@]}" || rc=$?
if [[ ! -f $raw ]]; then
    tail -n 30 "$BX_WORK/cluster/server.log" >&2 || true
    bx_die "the measurements failed"
fi
cp "$raw" "$out/raw.json"
"$PYTHON" "$REPO/bench/sets.py" report --raw "$raw" --out "$BX_WORK/results" >"$BX_WORK/logs/report.txt" ||
    bx_die "the report failed (the measurements are in $out/raw.json)"
for f in results.md results.csv; do
    cp "$BX_WORK/results/$f" "$out/$f"
done
[[ $rc -eq 0 ]] || bx_die "the measurements failed (exit status $rc; see $out/results.md)"
bx_cleanup
echo "sets: ok (results in $out)"
