# shellcheck shell=bash
#
# bench/lib.sh: helpers shared by bench/run.sh, bench/plan_choice.sh and
# bench/profile.sh (source it after scripts/lib.sh, with REPO set to the
# repository root).

# Copy the source to build into $1: the committed HEAD by default, so that
# half-written files in a shared working tree cannot break or skew a run
# (BENCH_SOURCE=worktree copies the working tree as scripts/test.sh does).
# Sets SOURCE_DESC, which names what was built.
bench_copy_source() {
    local dest=$1
    mkdir -p "$dest"
    if [[ ${BENCH_SOURCE:-head} == head ]] &&
            git -C "$REPO" -c safe.directory='*' rev-parse --verify -q HEAD >/dev/null 2>&1; then
        git -C "$REPO" -c safe.directory='*' archive HEAD | tar -x -C "$dest"
        SOURCE_DESC="commit $(git -C "$REPO" -c safe.directory='*' rev-parse --short HEAD)"
    else
        bx_copy_source "$REPO" "$dest"
        SOURCE_DESC="working tree"
        if git -C "$REPO" -c safe.directory='*' rev-parse --verify -q HEAD >/dev/null 2>&1; then
            SOURCE_DESC+=" at $(git -C "$REPO" -c safe.directory='*' describe --always --dirty)"
        fi
    fi
}

# Build the source in $1 with PG_CFLAGS=$2 and install it into the private
# PostgreSQL, logging to $3; on failure show the log's tail and stop.
bench_build() {
    local src=$1 cflags=$2 log=$3
    if ! { bx_as_pg make -C "$src" --no-print-directory -j"$(nproc)" PG_CONFIG="$BX_PG_CONFIG" PG_CFLAGS="$cflags" &&
           bx_as_pg make -C "$src" --no-print-directory PG_CONFIG="$BX_PG_CONFIG" install; } \
            >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        bx_die "the build failed (log above)"
    fi
}

# Set SETTINGS to the benchmark cluster's settings, shared_buffers $1 MB
# (bench/run.sh and bench/sets.sh; the README of bench/ explains them).
bench_settings() {
    local sb_mb=$1
    SETTINGS=(
        "shared_buffers=${sb_mb}MB"
        max_parallel_workers_per_gather=0
        max_parallel_maintenance_workers=2
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
        log_min_duration_statement=-1
    )
}

# Start a throwaway cluster in $BX_WORK/cluster with the settings given as
# arguments, on a Unix socket in $BX_WORK/sock, with a database "bench";
# exports PGHOST, PGPORT, PGUSER and PGDATABASE for psql.
bench_start_cluster() {
    export PGHOST=$BX_WORK/sock
    PGPORT=$(bx_pick_port)
    export PGPORT PGUSER=$BX_PG_OS_USER
    bx_is_root || PGUSER=$(id -un)
    bx_log "throwaway cluster on socket $PGHOST, port $PGPORT"
    bx_log "cluster settings: $*"
    bx_cluster_init "$BX_WORK/cluster/data" "$BX_PG_BINDIR"
    bx_cluster_start "$BX_WORK/cluster/data" "$BX_PG_BINDIR" "$PGHOST" "$PGPORT" \
        "$BX_WORK/cluster/server.log" "$@"
    bx_as_pg "$BX_PG_BINDIR/createdb" -h "$PGHOST" -p "$PGPORT" bench
    export PGDATABASE=bench
}
