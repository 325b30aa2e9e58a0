#!/usr/bin/env bash
#
# bench/scale.sh: the scale benchmark.  bloomidx against contrib/bloom, GIN
# (btree_gin) and BRIN bloom on a random and a correlated table, at several
# sizes, warm (a pooled session and a fresh connection's first query, with
# the pages each query touched), cold, and under concurrency, in one run on
# one major (bench/scale.py measures, bench/README.md explains).
#
#   bash bench/scale.sh                          # 1M, 10M, 30M and 100M rows, PostgreSQL 15
#   bash bench/scale.sh --major 19               # the same on 19, in its chroot (root)
#   bash bench/scale.sh --major 15,19            # one major after the other
#   bash bench/scale.sh --rows 1000000,10000000  # the sizes (comma-separated)
#   bash bench/scale.sh --quick                  # 1M rows, 3 runs, 5 s a throughput cell
#   bash bench/scale.sh --smoke                  # 20K rows, 1 run: checks the pipeline
#   bash bench/scale.sh --runs N --cold-runs N --seconds N --out DIR
#
# Each size gets a fresh cluster (shared_buffers sized for it, a quarter of
# the memory at most), its tables made, measured and dropped, so that only
# one size's data is on disk at a time.  Results: results.md, results.csv
# and raw-N.json per size, in bench/results/scale/pgMAJOR/ for a default run
# and bench/work/scale-pgMAJOR-<mode>/ (ignored by git) otherwise.  The last
# line is "scale: ok (results in DIR)".
#
# Environment: KEEP=1, BENCH_NOTE, BENCH_SOURCE, BENCH_CFLAGS as bench/run.sh.
set -euo pipefail

# The whole script is one compound command, which bash reads before running
# it: editing this file during a run does not change the run.
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
    sed -n '3,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# --- options -------------------------------------------------------------------

major=${BX_PG_MAJOR:-15}
sizes=1000000,10000000,30000000,100000000
runs=5
cold_runs=3
seconds=10
mode=full
out=""
sizes_given=0
extra=()
args=("$@")
while [[ $# -gt 0 ]]; do
    case $1 in
        --major) [[ ${2:-} =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "error: --major needs a number (or several, comma-separated)" >&2; exit 1; }
                 major=$2; shift 2 ;;
        --rows) [[ ${2:-} =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "error: --rows needs numbers, comma-separated" >&2; exit 1; }
                sizes=$2; sizes_given=1; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --cold-runs) cold_runs=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --quick) mode=quick; shift ;;
        --smoke) mode=smoke; shift ;;
        --out) out=$2; shift 2 ;;
        --contenders|--tables|--cold-queries|--clients) extra+=("$1" "$2"); shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "error: unknown option '$1' (see bash bench/scale.sh --help)" >&2; exit 1 ;;
    esac
done
case $mode in
    quick) [[ $sizes_given -eq 1 ]] || sizes=1000000
           runs=3 cold_runs=1 seconds=5 ;;
    smoke) [[ $sizes_given -eq 1 ]] || sizes=20000
           runs=1 cold_runs=1 seconds=1
           extra+=(--clients 2 --conc-contenders bloomidx --cold-queries 1col,tenant_day) ;;
esac
# Several majors: this command for each, one after the other
if [[ $major == *,* ]]; then
    IFS=, read -r -a majors <<<"$major"
    for m in "${majors[@]}"; do
        margs=()
        skip=0
        for x in "${args[@]}"; do
            if [[ $skip -eq 1 ]]; then skip=0; continue; fi
            case $x in
                --major) skip=1; continue ;;
                --out) skip=1; continue ;;
            esac
            margs+=("$x")
        done
        [[ -n $out ]] && margs+=(--out "$out/pg$m")
        bash "${BASH_SOURCE[0]}" --major "$m" "${margs[@]}" || exit $?
    done
    exit 0
fi
if [[ -z $out ]]; then
    if [[ $mode == full && $sizes_given -eq 0 ]]; then
        out=$REPO/bench/results/scale/pg$major
    else
        out=$REPO/bench/work/scale-pg$major-$mode
        [[ $sizes_given -eq 1 ]] && out+="-${sizes//,/-}"
    fi
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)

# --- another major: the same command in its chroot -------------------------------

# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

if [[ $major != 15 && ${BX_IN_CHROOT:-0} != 1 ]]; then
    bx_is_root || bx_die "PostgreSQL $major runs in a chroot (scripts/chroot.sh), which needs root"
    root=$(bash "$REPO/scripts/chroot.sh" path "$major")
    [[ -x $root/usr/lib/postgresql/$major/bin/postgres ]] ||
        bx_die "no PostgreSQL $major chroot in $root (bash scripts/chroot.sh create $major)"
    # The source as bench_copy_source picks it, mounted read-only inside
    stage=$(mktemp -d "${TMPDIR:-/tmp}/bloomidx-scale-src.XXXXXX")
    bench_copy_source "$stage/src"
    inner=/tmp/bloomidx-scale-$$
    bx_log "scale: PostgreSQL $major in $root (results to $out)"
    rc=0
    BX_IN_CHROOT=1 BX_PG_MAJOR=$major BENCH_SOURCE=worktree BENCH_SOURCE_DESC=$SOURCE_DESC \
        BX_CHROOT_PASS="BX_IN_CHROOT BX_PG_MAJOR BENCH_SOURCE BENCH_SOURCE_DESC BENCH_CFLAGS BENCH_NOTE KEEP" \
        BX_BIND="$stage/src:/bloomidx" \
        bash "$REPO/scripts/chroot.sh" run "$major" bash /bloomidx/bench/scale.sh "${args[@]}" --out "$inner" || rc=$?
    cp -r "$root$inner/." "$out/" 2>/dev/null || true
    rm -rf "$root$inner" "$stage"
    [[ $rc -eq 0 ]] || bx_die "the run in the chroot failed (exit status $rc; what it wrote is in $out)"
    echo "scale: ok (results in $out)"
    exit 0
fi

# From here on, this major's PostgreSQL is on this system (or in this chroot)
[[ $BX_PG_MAJOR == "$major" ]] || bx_die "BX_PG_MAJOR is $BX_PG_MAJOR, --major $major"
PYTHON=/usr/bin/python3

while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)

bash "$REPO/scripts/deps.sh"
bash "$REPO/bench/deps.sh"
[[ -x $PYTHON ]] || bx_die "$PYTHON not found (bench/deps.sh installs python3)"

bx_make_workdir bloomidx-scale
bx_install_traps
mkdir -p "$BX_WORK/logs" "$BX_WORK/results" "$BX_WORK/pgbench"
bx_chown_pg "$BX_WORK/pgbench"
bx_log "scale: PostgreSQL $major, sizes $sizes, $runs run(s), results to $out"
bx_log "work dir: $BX_WORK"
bx_pg_private_install "$BX_WORK/pg"
SRC=$BX_WORK/src
bench_copy_source "$SRC"
[[ -n ${BENCH_SOURCE_DESC:-} ]] && SOURCE_DESC=$BENCH_SOURCE_DESC
bx_chown_pg "$BX_WORK"
cflags=${BENCH_CFLAGS:--O2}
bx_log "build: make && make install (PG_CFLAGS=$cflags)"
bench_build "$SRC" "$cflags" "$BX_WORK/logs/build.log"

mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
raws=()
IFS=, read -r -a size_list <<<"$sizes"
for rows in "${size_list[@]}"; do
    [[ $rows -ge 1000 ]] || bx_die "--rows must be at least 1000"
    # shared_buffers: the table and the largest index (GIN's, about 75 MB a
    # million rows) if a quarter of the memory holds them
    sb_mb=$(( rows / 8000 + rows / 13000 + 128 ))
    (( sb_mb > mem_kb / 1024 / 4 )) && sb_mb=$(( mem_kb / 1024 / 4 ))
    bench_settings "$sb_mb"
    # A fresh cluster for each size
    if [[ -d $BX_WORK/cluster/data ]]; then
        bx_cluster_stop "$BX_WORK/cluster/data" "$BX_PG_BINDIR"
        rm -rf "$BX_WORK/cluster"
    fi
    bench_start_cluster "${SETTINGS[@]}"
    raw=$BX_WORK/results/raw-$rows.json
    bx_log "measuring $rows rows (bench/scale.py)"
    rc=0
    "$PYTHON" "$REPO/bench/scale.py" measure --rows "$rows" --runs "$runs" \
        --cold-runs "$cold_runs" --seconds "$seconds" "${extra[@]}" \
        --psql "$BX_PG_BINDIR/psql" --pgctl "$BX_PG_BINDIR/pg_ctl" \
        --pgbench "$BX_PG_BINDIR/pgbench" --datadir "$BX_WORK/cluster/data" \
        --logfile "$BX_WORK/cluster/server.log" --pg-user "$BX_PG_OS_USER" \
        --workdir "$BX_WORK/pgbench" --raw "$raw" --settings="${SETTINGS[*]}" \
        --source="$SOURCE_DESC" --cflags="$cflags" 2>&1 | tee "$BX_WORK/logs/measure-$rows.log" ||
        rc=$?
    if [[ -f $raw ]]; then
        cp "$raw" "$out/"
        raws+=("$raw")
    fi
    if [[ $rc -ne 0 ]]; then
        tail -n 30 "$BX_WORK/cluster/server.log" >&2 || true
        [[ ${#raws[@]} -gt 0 ]] &&
            "$PYTHON" "$REPO/bench/scale.py" report --raw "${raws[@]}" --out "$out" >/dev/null || true
        bx_die "the measurements of $rows rows failed (what was measured is in $out)"
    fi
    "$PYTHON" "$REPO/bench/scale.py" report --raw "${raws[@]}" --out "$out" >/dev/null
done

"$PYTHON" "$REPO/bench/scale.py" report --raw "${raws[@]}" --out "$out" >/dev/null ||
    bx_die "the report failed"
bx_cleanup
echo "scale: ok (results in $out)"
exit 0
}
