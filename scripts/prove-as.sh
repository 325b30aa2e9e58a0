#!/bin/sh
#
# scripts/prove-as.sh USER DIR PROVE [ARGS...]: run PROVE ARGS... as the OS
# user USER, after giving it DIR (the TAP tests' tmp_check).  The Makefile
# makes it PGXS's prove when `make installcheck` runs as root: initdb and
# the server refuse root, so the TAP tests' clusters must belong to another
# user.  The environment (PATH, TESTDIR, PGPORT, ...) is kept.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 USER DIR PROVE [ARGS...]" >&2; exit 2; }
user=$1 dir=$2
shift 2
if ! runuser -u "$user" -- test -r . -a -x .; then
    echo "error: the TAP tests run as the OS user $user, who cannot read $(pwd)" >&2
    echo "       (make the source tree readable to $user, or run make installcheck as $user)" >&2
    exit 1
fi
chown -R "$user": "$dir"
exec runuser -u "$user" -- "$@"
