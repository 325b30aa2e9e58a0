#!/usr/bin/env python3
"""Evict relations' files from the OS page cache.

    python3 bench/evict.py DATADIR RELPATH...

Each RELPATH is what pg_relation_filepath() returns for a relation (relative
to the data directory, or absolute). Every segment of every fork (main,
fsm, vm, init: RELPATH, RELPATH.1, ..., RELPATH_fsm, ...) is flushed to disk
with fsync, so that none of its pages is dirty, then dropped from the page
cache with posix_fadvise(POSIX_FADV_DONTNEED). Run it while the server is
stopped (or holds none of the pages dirty in shared buffers): the server's
own shared buffers are not touched. Prints the files and the bytes they
held."""

import glob
import os
import sys


def relation_files(datadir, relpath):
    """The segment files of every fork of a relation."""
    base = relpath if os.path.isabs(relpath) else os.path.join(datadir, relpath)
    files = []
    for fork in ("", "_fsm", "_vm", "_init"):
        first = base + fork
        if not os.path.exists(first):
            continue
        files.append(first)
        files.extend(sorted(glob.glob(first + ".[0-9]*"),
                            key=lambda f: int(f.rsplit(".", 1)[1])))
    return files


def evict_file(path):
    """fsync path, then drop its pages from the page cache; return its size."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        size = os.fstat(fd).st_size
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return size


def evict(datadir, relpaths):
    total = 0
    nfiles = 0
    for relpath in relpaths:
        for f in relation_files(datadir, relpath):
            total += evict_file(f)
            nfiles += 1
    return nfiles, total


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    nfiles, total = evict(sys.argv[1], sys.argv[2:])
    print("evicted %d files, %d bytes" % (nfiles, total))


if __name__ == "__main__":
    main()
