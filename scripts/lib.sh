# shellcheck shell=bash
#
# scripts/lib.sh: helpers shared by demo.sh and test.sh (source it, don't run it).
#
# What it provides (all names start with bx_):
#   - logging:            bx_log, bx_die
#   - running as the cluster owner: bx_as_pg (runuser -u postgres when root)
#   - a temp work dir:    bx_make_workdir (removed by bx_cleanup unless KEEP=1)
#   - a source copy:      bx_copy_source (tracked + untracked-but-not-ignored files)
#   - a private PostgreSQL: bx_pg_private_install (relocated copy of the system
#     PostgreSQL, like PostgreSQL's own tmp_install, so `make install` into it
#     touches nothing system-wide and several runs can proceed at once)
#   - bx_run_job: run a long step (build, test suite) with a time limit, in a
#     way that Ctrl-C and TERM stop at once
#   - throwaway clusters: bx_cluster_init, bx_cluster_start, bx_cluster_stop,
#     bx_stop_clusters_under
#   - bx_cleanup: stops every cluster started here (and any server left
#     running under the work dir, e.g. by TAP tests) and removes the work dir.
#     It prints nothing on success, so a script's last line stays its own.
#
# The PostgreSQL server refuses to run as root, so when we are root every
# server-side command (initdb, pg_ctl, make installcheck, ...) runs as the
# `postgres` OS user; otherwise it runs as the current user.

# PostgreSQL major version the project targets, and the system install of it.
BX_PG_MAJOR=${BX_PG_MAJOR:-15}
BX_SYS_BINDIR=/usr/lib/postgresql/$BX_PG_MAJOR/bin
# shellcheck disable=SC2034 # used by demo.sh
BX_SYS_PG_CONFIG=$BX_SYS_BINDIR/pg_config

# OS user that owns clusters when we run as root.
BX_PG_OS_USER=${BX_PG_OS_USER:-postgres}

# State filled in by the functions below.
BX_WORK=""          # temp work dir (bx_make_workdir)
BX_CLUSTERS=()      # data dirs started by bx_cluster_start, for bx_cleanup
BX_CLEANED=0        # bx_cleanup already ran
BX_JOB=""           # process group of the running bx_run_job job

# Print a progress message (to stdout, prefixed so it stands out in CI logs).
bx_log() {
    printf '==> %s\n' "$*"
}

# Print an error to stderr and exit non-zero.
bx_die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

# True when running as root.
bx_is_root() {
    [[ $(id -u) -eq 0 ]]
}

# Run a command as the cluster owner: the postgres OS user when we are root
# (the server refuses root), the current user otherwise.  The command runs
# from "/" so that an unreadable current directory (e.g. /root) does not
# trouble initdb or postgres, with HOME pointing at the work dir.
bx_as_pg() {
    if bx_is_root; then
        (cd / && runuser -u "$BX_PG_OS_USER" -- env HOME="${BX_WORK:-/tmp}" "$@")
    else
        (cd / && "$@")
    fi
}

# Make the ownership of a path right for the cluster owner (no-op unless root).
bx_chown_pg() {
    if bx_is_root; then
        chown -R "$BX_PG_OS_USER": "$@"
    fi
}

# Create the temp work dir ($1 = name prefix) in $TMPDIR (default /tmp), usable
# by the cluster owner.  Sets BX_WORK.
bx_make_workdir() {
    local prefix=${1:-bloomidx}
    BX_WORK=$(mktemp -d "${TMPDIR:-/tmp}/$prefix.XXXXXX")
    chmod 755 "$BX_WORK"
    bx_chown_pg "$BX_WORK"
}

# Copy the source tree $1 into the new dir $2: the files git tracks plus the
# untracked files git does not ignore (so work in progress is tested, build
# outputs are not).  Without git (e.g. an exported tarball) copy everything
# except .git and the usual build outputs.
bx_copy_source() {
    local src=$1 dest=$2
    mkdir -p "$dest"
    if git -C "$src" -c safe.directory='*' rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        # --cached lists tracked files even if deleted in the work tree: keep
        # only the ones that exist.
        (cd "$src" &&
            git -c safe.directory='*' ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' f; do
                [[ -e $f || -L $f ]] && printf '%s\0' "$f"
            done |
            tar --null -T - -cf -) | tar -C "$dest" -xf -
    else
        (cd "$src" && tar -cf - \
            --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
            --exclude=results --exclude=output_iso --exclude=tmp_check \
            --exclude=log --exclude=regression.diffs --exclude=regression.out \
            .) | tar -C "$dest" -xf -
    fi
}

# Make a private, relocated copy of the system PostgreSQL under $1, the way
# PostgreSQL's own tmp_install does: its pg_config (and postgres) derive their
# directories from their own location, so `make install PG_CONFIG=...` installs
# into the copy and a server started from the copy loads what is there.
# Headers are copied too (pg_config --includedir-server is relocated as well).
# Sets BX_PG_CONFIG and BX_PG_BINDIR.
bx_pg_private_install() {
    local root=$1
    local lib=/usr/lib/postgresql/$BX_PG_MAJOR
    local share=/usr/share/postgresql/$BX_PG_MAJOR
    local inc=/usr/include/postgresql
    [[ -x $lib/bin/pg_config ]] || bx_die "$lib/bin/pg_config not found (run scripts/deps.sh as root)"
    [[ -d $inc/$BX_PG_MAJOR/server ]] || bx_die "$inc/$BX_PG_MAJOR/server not found (run scripts/deps.sh as root)"
    mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/usr/include"
    cp -a "$lib" "$root/usr/lib/postgresql/"
    cp -a "$share" "$root/usr/share/postgresql/"
    cp -a "$inc" "$root/usr/include/"
    BX_PG_BINDIR=$root$lib/bin
    BX_PG_CONFIG=$BX_PG_BINDIR/pg_config
    # Check that the relocation took: a wrong answer here would make
    # `make install` write into the system PostgreSQL.
    local got
    got=$("$BX_PG_CONFIG" --sharedir)
    [[ $got == "$root$share" ]] ||
        bx_die "relocated pg_config reports sharedir '$got', expected '$root$share'"
    got=$("$BX_PG_CONFIG" --pkglibdir)
    [[ $got == "$root$lib/lib" ]] ||
        bx_die "relocated pg_config reports pkglibdir '$got', expected '$root$lib/lib'"
}

# Print a port number for a throwaway cluster.  The server listens only on a
# Unix socket in a private dir, so the number just names the socket file and
# cannot clash with another run; PostgreSQL also probes for free shared
# memory keys itself.
bx_pick_port() {
    echo $((40000 + (RANDOM + $$) % 20000))
}

# Create a cluster in data dir $1 with the binaries in $2 (as the cluster
# owner; trust auth, C locale, UTF8: deterministic test output).
bx_cluster_init() {
    local datadir=$1 bindir=$2
    local log
    log=$(dirname "$datadir")/initdb.log
    mkdir -p "$(dirname "$datadir")"
    bx_chown_pg "$(dirname "$datadir")"
    if ! bx_as_pg "$bindir/initdb" -D "$datadir" --auth=trust --no-locale \
            --encoding=UTF8 --no-sync >"$log" 2>&1; then
        cat "$log" >&2
        bx_die "initdb failed for $datadir"
    fi
}

# Start the cluster in $1 with binaries from $2, listening only on a Unix
# socket in dir $3 (no TCP) on port $4, log to $5; any further arguments are
# extra settings "name=value" (e.g. fsync=off).  Settings go to
# postgresql.conf, so a kept cluster (KEEP=1) restarts the same way by hand.
# Waits until the server accepts connections.
bx_cluster_start() {
    local datadir=$1 bindir=$2 sockdir=$3 port=$4 logfile=$5
    shift 5
    mkdir -p "$sockdir"
    chmod 700 "$sockdir"
    bx_chown_pg "$sockdir"
    {
        echo "# added by scripts/lib.sh: private socket, no TCP"
        echo "listen_addresses = ''"
        echo "unix_socket_directories = '$sockdir'"
        echo "port = $port"
        local kv
        for kv in "$@"; do
            echo "${kv%%=*} = ${kv#*=}"
        done
    } | bx_as_pg tee -a "$datadir/postgresql.conf" >/dev/null
    BX_CLUSTERS+=("$datadir|$bindir")
    if ! bx_as_pg "$bindir/pg_ctl" -D "$datadir" -l "$logfile" -w -t 120 start >/dev/null; then
        tail -n 50 "$logfile" >&2 || true
        bx_die "could not start the server in $datadir (log above: $logfile)"
    fi
    # pg_ctl -w waited for "ready"; double-check that the socket answers.
    local i
    for ((i = 0; i < 60; i++)); do
        if bx_as_pg "$bindir/pg_isready" -q -h "$sockdir" -p "$port"; then
            return 0
        fi
        sleep 1
    done
    tail -n 50 "$logfile" >&2 || true
    bx_die "server in $datadir does not accept connections"
}

# Stop the cluster in $1 (binaries in $2): fast shutdown, then immediate, then
# SIGKILL of its postmaster (by the pid in postmaster.pid) as a last resort.
bx_cluster_stop() {
    local datadir=$1 bindir=$2
    [[ -f $datadir/postmaster.pid ]] || return 0
    bx_as_pg "$bindir/pg_ctl" -D "$datadir" -m fast -w -t 60 stop >/dev/null 2>&1 && return 0
    bx_as_pg "$bindir/pg_ctl" -D "$datadir" -m immediate -w -t 30 stop >/dev/null 2>&1 && return 0
    local pid
    pid=$(head -n 1 "$datadir/postmaster.pid" 2>/dev/null || true)
    if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
}

# Stop every server whose data dir lies under $1 and still has a live
# postmaster (e.g. TAP test nodes left behind by a killed test), using the
# binaries in $2.
bx_stop_clusters_under() {
    local dir=$1 bindir=$2 pidfile pid
    [[ -d $dir ]] || return 0
    while IFS= read -r -d '' pidfile; do
        pid=$(head -n 1 "$pidfile" 2>/dev/null || true)
        if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
            bx_cluster_stop "$(dirname "$pidfile")" "$bindir"
        fi
    done < <(find "$dir" -name postmaster.pid -print0 2>/dev/null)
}

# Stop all clusters started by this script and remove the work dir (kept
# when KEEP=1).  Safe to call twice; used both explicitly and as EXIT trap.
bx_cleanup() {
    [[ $BX_CLEANED -eq 1 ]] && return 0
    BX_CLEANED=1
    bx_kill_job
    local entry
    for entry in "${BX_CLUSTERS[@]}"; do
        bx_cluster_stop "${entry%%|*}" "${entry#*|}"
    done
    if [[ -n $BX_WORK && -d $BX_WORK ]]; then
        bx_stop_clusters_under "$BX_WORK" "${BX_PG_BINDIR:-$BX_SYS_BINDIR}"
        if [[ ${KEEP:-0} == 1 ]]; then
            echo "KEEP=1: work dir kept: $BX_WORK" >&2
        else
            rm -rf "$BX_WORK"
        fi
    fi
}

# Run CMD... (a shell function is fine) as a background job in its own
# process group, its output shown and appended to LOG, and end the whole group
# after TIMEOUT seconds.  Running it in the background keeps this script able
# to react to Ctrl-C or TERM at once (bash defers traps while a foreground
# command runs): the traps end the group (bx_kill_job).  Returns the
# command's exit status, or 124 if it timed out.
# Usage: bx_run_job TIMEOUT LOG CMD...
bx_run_job() {
    local timeout=$1 log=$2
    shift 2
    local start=$SECONDS rc=0 timed_out=0
    set -m # job control: the job gets a process group of its own
    ("$@" </dev/null 2>&1 | tee -a "$log") &
    BX_JOB=$!
    set +m
    while kill -0 "$BX_JOB" 2>/dev/null; do
        if ((SECONDS - start >= timeout)); then
            echo "error: timed out after ${timeout}s: $*" | tee -a "$log" >&2
            bx_kill_job
            timed_out=1
            break
        fi
        sleep 1
    done
    wait "$BX_JOB" || rc=$?
    BX_JOB=""
    if [[ $timed_out -eq 1 ]]; then
        return 124
    fi
    return "$rc"
}

# End the process group of the running bx_run_job job, if any: TERM, then
# KILL if some of it is still there after 30 s.
bx_kill_job() {
    [[ -n ${BX_JOB:-} ]] || return 0
    kill -TERM -- "-$BX_JOB" 2>/dev/null || return 0
    local i
    for ((i = 0; i < 30; i++)); do
        kill -0 -- "-$BX_JOB" 2>/dev/null || return 0
        sleep 1
    done
    kill -KILL -- "-$BX_JOB" 2>/dev/null || true
}

# Install the traps: on EXIT run bx_cleanup; on INT/TERM first end the
# running job, then exit (which runs bx_cleanup).
bx_install_traps() {
    trap bx_cleanup EXIT
    trap 'bx_kill_job; exit 130' INT
    trap 'bx_kill_job; exit 143' TERM
}

# Pick the first of the compilers COMPILER... whose AddressSanitizer and
# UndefinedBehaviorSanitizer runtimes link, probing in dir DIR; sets BX_CC
# to it and BX_SAN to its sanitizer flags.  With none, BX_CC=cc and BX_SAN
# empty, and a warning under LABEL.  Used by fuzz/run.sh and model/run.sh.
# Usage: bx_pick_sanitizer_cc LABEL DIR COMPILER...
bx_pick_sanitizer_cc() {
    local label=$1 dir=$2 c
    shift 2
    BX_SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || continue
        if echo 'int main(void){return 0;}' | "$c" "${BX_SAN[@]}" -x c - -o "$dir/probe" >/dev/null 2>&1; then
            BX_CC=$c
            return 0
        fi
    done
    BX_CC=cc
    BX_SAN=()
    echo "$label: no sanitizer runtime found, building without sanitizers" >&2
}
