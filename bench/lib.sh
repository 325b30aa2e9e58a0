# shellcheck shell=bash
#
# bench/lib.sh: helpers shared by bench/run.sh and bench/profile.sh (source it
# after scripts/lib.sh, with REPO set to the repository root).

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
