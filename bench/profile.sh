#!/usr/bin/env bash
#
# bench/profile.sh: profile bloomidx beside contrib/bloom with perf, on the
# benchmark's data, to find hotspots before optimizing.
#
#   bash bench/profile.sh                 # 1,000,000 rows; build, insert, scan
#   bash bench/profile.sh --rows N --what "build scan" --indexes "bloomidx bloom"
#
# For each operation (build: CREATE INDEX; insert: INSERT of rows/10 rows into
# a table with the index; scan: the benchmark's 1- and 2-column equality
# queries, 20 times each, as bitmap scans) and each index (bloomidx with
# defaults and with length=80 and 2 bits a column, in the default (sliced)
# layout and with layout = 'row'; contrib/bloom with defaults), `perf record -g` samples the backend, and `perf report` writes
# the top functions (self time) to bench/work/profile/OP_INDEX.txt; the
# operation's time is printed beside it.  Needs root (perf on another user's
# process) and the perf tool (Debian: linux-perf).
#
# BENCH_SOURCE=worktree profiles the working tree instead of the committed
# HEAD.  Set-up and clean-up as bench/run.sh: a private PostgreSQL with bloomidx
# built with -O2 -g (BENCH_CFLAGS), a throwaway cluster, everything removed on
# exit (KEEP=1 keeps the work dir).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

rows=1000000
what="build insert scan"
indexes="bloomidx bloomidx_80x2 bloomidx_row bloomidx_row_80x2 bloom"
while [[ $# -gt 0 ]]; do
    case $1 in
        --rows) [[ ${2:-} =~ ^[0-9]+$ ]] || bx_die "--rows needs a number"; rows=$2; shift 2 ;;
        --what) what=$2; shift 2 ;;
        --indexes) indexes=$2; shift 2 ;;
        -h | --help) sed -n '3,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) bx_die "unknown option '$1'" ;;
    esac
done
command -v perf >/dev/null || bx_die "perf not found (apt-get install linux-perf)"
bx_is_root || bx_die "run as root: perf must attach to the postgres backend"
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)

bash "$REPO/scripts/deps.sh"
out=$REPO/bench/work/profile
mkdir -p "$out"
bx_make_workdir bloomidx-profile
bx_install_traps
bx_pg_private_install "$BX_WORK/pg"
bench_copy_source "$BX_WORK/src"
bx_chown_pg "$BX_WORK"
cflags=${BENCH_CFLAGS:--O2 -g}
bx_log "build (PG_CFLAGS=$cflags)"
bench_build "$BX_WORK/src" "$cflags" "$BX_WORK/build.log"

export PGHOST=$BX_WORK/sock PGUSER=$BX_PG_OS_USER
PGPORT=$(bx_pick_port)
export PGPORT
bx_cluster_init "$BX_WORK/data" "$BX_PG_BINDIR"
bx_cluster_start "$BX_WORK/data" "$BX_PG_BINDIR" "$PGHOST" "$PGPORT" "$BX_WORK/server.log" \
    shared_buffers=$(( rows / 2500 + 256 ))MB max_parallel_workers_per_gather=0 \
    max_parallel_maintenance_workers=0 jit=off fsync=off synchronous_commit=off \
    full_page_writes=off autovacuum=off max_wal_size=32GB maintenance_work_mem=1GB
export PGDATABASE=postgres
PSQL=("$BX_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1)

bx_log "data: tbloom, $rows rows"
"${PSQL[@]}" <<SQL
CREATE EXTENSION bloomidx; CREATE EXTENSION bloom; CREATE EXTENSION pg_prewarm;
SELECT setseed(0.42);
CREATE TABLE tbloom AS SELECT
  (random() * 1000000)::int AS i1, (random() * 1000000)::int AS i2,
  (random() * 1000000)::int AS i3, (random() * 1000000)::int AS i4,
  (random() * 1000000)::int AS i5, (random() * 1000000)::int AS i6
FROM generate_series(1, $rows);
VACUUM (FREEZE, ANALYZE) tbloom;
SQL
v2=$("${PSQL[@]}" -At -c "SELECT i2 FROM tbloom OFFSET $((rows / 2)) LIMIT 1")
v5=$("${PSQL[@]}" -At -c "SELECT i5 FROM tbloom OFFSET $((rows / 2)) LIMIT 1")

declare -A DDL=(
    [bloomidx]="USING bloomidx (i1, i2, i3, i4, i5, i6)"
    [bloomidx_80x2]="USING bloomidx (i1, i2, i3, i4, i5, i6) WITH (length=80, col1=2, col2=2, col3=2, col4=2, col5=2, col6=2)"
    [bloomidx_row]="USING bloomidx (i1, i2, i3, i4, i5, i6) WITH (layout='row')"
    [bloomidx_row_80x2]="USING bloomidx (i1, i2, i3, i4, i5, i6) WITH (layout='row', length=80, col1=2, col2=2, col3=2, col4=2, col5=2, col6=2)"
    [bloom]="USING bloom (i1, i2, i3, i4, i5, i6)"
)

# profile NAME SETUP_SQL MEASURED_SQL: run SETUP_SQL, then MEASURED_SQL under
# perf record attached to the same backend; write the report to NAME.txt.
profile() {
    local name=$1 setup=$2 measured=$3
    local data=$BX_WORK/$name.perf
    "${PSQL[@]}" <<SQL >"$BX_WORK/$name.log" 2>&1
$setup
SELECT pg_backend_pid() AS pid \gset
\setenv BPID :pid
\! perf record -q -g -o $data -p \$BPID >/dev/null 2>&1 & echo \$! > $BX_WORK/perf.pid; sleep 1
\timing on
$measured
\timing off
\! kill -INT \$(cat $BX_WORK/perf.pid); sleep 2
SQL
    local ms
    ms=$(awk '/^Time: / { s += $2 } END { printf "%.1f", s }' "$BX_WORK/$name.log")
    {
        echo "# $name: $ms ms in all (perf report --no-children, self time)"
        perf report -q -i "$data" --no-children --sort dso,symbol --percent-limit 0.7 \
            --stdio -g none 2>/dev/null | sed '/^$/d' | head -n 30
    } >"$out/$name.txt"
    bx_log "$name: $ms ms"
    sed -n '2,13p' "$out/$name.txt"
}

for op in $what; do
    for am in $indexes; do
        case $op in
            build)
                profile "build_$am" "DROP INDEX IF EXISTS p; SELECT pg_prewarm('tbloom');" \
                    "CREATE INDEX p ON tbloom ${DDL[$am]};" ;;
            insert)
                profile "insert_$am" "DROP TABLE IF EXISTS tins; CREATE TABLE tins (LIKE tbloom); CREATE INDEX ON tins ${DDL[$am]};" \
                    "INSERT INTO tins SELECT * FROM tbloom LIMIT $((rows / 10));" ;;
            scan)
                q="SELECT * FROM tbloom WHERE i2 = $v2; SELECT * FROM tbloom WHERE i2 = $v2 AND i5 = $v5;"
                loop=""
                for ((i = 0; i < 20; i++)); do loop+="$q"$'\n'; done
                profile "scan_$am" "DROP INDEX IF EXISTS p; CREATE INDEX p ON tbloom ${DDL[$am]}; SELECT pg_prewarm('p'); SELECT pg_prewarm('tbloom'); SET enable_seqscan = off; $q \\o /dev/null" \
                    "$loop" ;;
            *) bx_die "unknown operation '$op' (build, insert, scan)" ;;
        esac
    done
done
bx_cleanup
echo "profile: reports in $out"
