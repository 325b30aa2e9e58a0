#!/usr/bin/env bash
#
# scripts/check-structure.sh: check the layering rules of src/ (src/README,
# "Layers"), failing with a list of every breach:
#
#   1. a layout's constants (BLOOMIDX_LAYOUT_ROW, BLOOMIDX_SLICED_*, the
#      sliced page kinds and sizes, ...) appear only in page.h, which
#      declares every on-disk struct, in layout.h and layout.c, the one
#      dispatch point, and in that layout's own files (row.c, row.h,
#      row_*.c; sliced.c, sliced.h, sliced_*.c);
#   2. a layout's private header (row.h, sliced.h) is included only by
#      that layout's own files;
#   3. no two files of src/ call each other, directly or around a longer
#      cycle (a file calls another if its object refers to a symbol the
#      other defines);
#   4. the layouts (row*.c, sliced*.c) call no function of the shells
#      (bloomidx.c, am_*.c, inspect.c, cost.c);
#   5. the Makefile's OBJS names every src/*.c file and nothing else, so
#      that a stray file is not linked and a new one is not forgotten;
#   6. the filter variants' flags (BLOOM_VARIANT_*) appear only in the
#      variant table (filter_variant.[ch]), the variants' own files
#      (filter_plain.c, filter_growing.c, filter_counting.c,
#      filter_blocked.c, filter_keyed.c) and the byte format
#      (filter_format.[ch], whose decoder runs, and is fuzzed, outside the
#      server).
#
#   bash scripts/check-structure.sh [PG_CONFIG]
#
# Compiles each file of src/ on its own into a temp dir with PG_CONFIG's
# headers (default: pg_config on PATH, else PostgreSQL 15's) to read the
# symbols; nothing is written into the tree.  Exit status 0 if every rule
# holds, 1 otherwise.  BX_STRUCTURE_SRC names another tree to check (the
# TAP test t/025_structure.pl checks a broken copy with it).
set -euo pipefail

# The whole script is one compound command, which bash reads before running
# it: editing this file during a run does not change the run.
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC=${BX_STRUCTURE_SRC:-$REPO}/src
PG_CONFIG=${1:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}
[[ -x $PG_CONFIG ]] || { echo "error: no pg_config at $PG_CONFIG" >&2; exit 1; }
[[ -d $SRC ]] || { echo "error: no src/ in ${SRC%/src}" >&2; exit 1; }

# Every source file of src/, in its folders, and the handler's header
mapfile -t sources < <(find "$SRC" -name '*.[ch]' | sort)
[[ -f ${SRC%/src}/bloomidx.h ]] && sources+=("${SRC%/src}/bloomidx.h")
mapfile -t cfiles < <(printf '%s\n' "${sources[@]}" | grep '\.c$')

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomidx-structure.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
problems=0

breach() {
    echo "structure: $*"
    problems=$((problems + 1))
}

# Rule 1: layout constants
layout_constants='BLOOMIDX_(LAYOUT_ROW|LAYOUT_SLICED|ROW_[A-Z_]+|SLICED_[A-Z_]+|SLICE|TIDMAP[A-Z_]*|STRIPE[A-Z_]*|MAX_STRIPE[A-Z_]*|PENDING_[A-Z_]+|FROZEN)\b'
constant_file_allowed() {
    case $1 in
        page.h | layout.h | layout.c) return 0 ;;
        row.c | row.h | row_*.c | sliced.c | sliced.h | sliced_*.c) return 0 ;;
    esac
    return 1
}
for f in "${sources[@]}"; do
    name=$(basename "$f")
    constant_file_allowed "$name" && continue
    while IFS= read -r hit; do
        breach "$name:${hit%%:*}: layout constant outside its layout's files: $(grep -oE "$layout_constants" <<<"${hit#*:}" | head -n 1)"
    done < <(grep -nE "$layout_constants" "$f" || true)
done

# Rule 6: filter variant flags
for f in "${sources[@]}"; do
    name=$(basename "$f")
    case $name in
        filter_variant.[ch] | filter_plain.c | filter_growing.c | filter_counting.c | \
            filter_blocked.c | filter_keyed.c | filter_format.[ch]) continue ;;
    esac
    while IFS= read -r hit; do
        breach "$name:${hit%%:*}: filter variant flag outside the variant files: $(grep -oE 'BLOOM_VARIANT_[A-Z_]+' <<<"${hit#*:}" | head -n 1)"
    done < <(grep -nE 'BLOOM_VARIANT_[A-Z_]+' "$f" || true)
done

# Rule 2: private headers
for f in "${sources[@]}"; do
    name=$(basename "$f")
    while IFS= read -r hit; do
        header=$(sed -E 's/.*#include "([^"]*\/)?([^"/]+)".*/\2/' <<<"${hit#*:}")
        case $header in
            row.h)
                case $name in row.c | row.h | row_*.c) continue ;; esac ;;
            sliced.h)
                case $name in sliced.c | sliced.h | sliced_*.c) continue ;; esac ;;
            *) continue ;;
        esac
        breach "$name:${hit%%:*}: includes $header, private to its layout"
    done < <(grep -nE '^#include "([^"]*/)?(row|sliced)\.h"' "$f" || true)
done

# Rule 5: OBJS
makefile=${SRC%/src}/Makefile
if [[ -f $makefile ]]; then
    objs=$(sed -n '/^OBJS *=/,/[^\\]$/p' "$makefile" | tr -s ' \t\\' '\n' |
        grep -E '^src/.*\.o$' | sed 's/\.o$/.c/' | sort)
    files=$(cd "${SRC%/src}" && find src -name '*.c' | sort)
    for f in $(comm -13 <(echo "$objs") <(echo "$files")); do
        breach "Makefile: OBJS does not name $f"
    done
    for f in $(comm -23 <(echo "$objs") <(echo "$files")); do
        breach "Makefile: OBJS names ${f%.c}.o, which has no source"
    done
fi

# Rules 3 and 4: who calls whom, from each file's object
inc=$("$PG_CONFIG" --includedir-server)
cflags=(-c -O0 -w -I"${SRC%/src}" -I"$SRC" -I"$SRC/core" -I"$SRC/filter" -I"$inc" -I"$("$PG_CONFIG" --includedir)")
for f in "${cfiles[@]}"; do
    name=$(basename "$f" .c)
    if ! gcc "${cflags[@]}" -o "$tmp/$name.o" "$f" 2>"$tmp/$name.err"; then
        cat "$tmp/$name.err" >&2
        breach "$name.c: does not compile on its own"
        continue
    fi
    nm --defined-only -g "$tmp/$name.o" | awk '$2 ~ /^[TDRB]$/ { print $3 }' >"$tmp/$name.def"
    nm -u "$tmp/$name.o" | awk '{ print $2 }' | sort -u >"$tmp/$name.undef"
done

: >"$tmp/edges"
for undef in "$tmp"/*.undef; do
    from=$(basename "$undef" .undef)
    for def in "$tmp"/*.def; do
        to=$(basename "$def" .def)
        [[ $from == "$to" ]] && continue
        sym=$(sort -u "$def" | comm -12 - "$undef" | head -n 1)
        [[ -n $sym ]] || continue
        echo "$from $to" >>"$tmp/edges"
        echo "$from $to $sym" >>"$tmp/calls"
    done
done

# Mutual calls, then longer cycles (tsort names the files of each loop)
while read -r a b; do
    if [[ $a < $b ]] && grep -qx "$b $a" "$tmp/edges"; then
        breach "$a.c and $b.c call each other ($(awk -v a="$a" -v b="$b" '$1 == a && $2 == b { print $3 }' "$tmp/calls") and $(awk -v a="$a" -v b="$b" '$1 == b && $2 == a { print $3 }' "$tmp/calls"))"
    fi
done <"$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/tsort.err"; then
    loop=$(grep -v 'input contains a loop' "$tmp/tsort.err" | sed 's/^tsort: //' | tr '\n' ' ')
    breach "src/ files call each other around a cycle: $loop"
fi

# The layouts call no shell
while read -r from to sym; do
    case $from in row | row_* | sliced | sliced_*) ;; *) continue ;; esac
    case $to in bloomidx | am_* | inspect | cost)
        breach "$from.c calls $sym of $to.c: a layout depends on a shell" ;;
    esac
done < <(cat "$tmp/calls" 2>/dev/null || true)

if [[ $problems -gt 0 ]]; then
    echo "structure: $problems problem(s)"
    exit 1
fi
echo "structure: ok (${#cfiles[@]} files, $(wc -l <"$tmp/edges") calls between files)"
exit 0
}
