#!/usr/bin/env bash
#
# bench/sets_data.sh: download the Debian archive's Contents and Packages
# indexes (bookworm, main, amd64) and turn them into COPY-able TSV files for
# the "substrings, arrays and jsonb" benchmark (bench/sets.sh).
#
#   bash bench/sets_data.sh [--data DIR] [--force]
#
# DIR (default $BLOOMIDX_BENCH_DATA or /var/tmp/bloomidx-bench-data, outside
# the repository: nothing here is ever committed) gets:
#   Contents-amd64.gz, Contents-all.gz, Packages.xz   the downloads (cached)
#   contents.tsv   path, section, package: one row per line of both Contents
#                  files (about 7.3M), in a shuffled order (seeded), so that
#                  the first N rows are a uniform sample of the paths
#   packages.tsv   package, section, depends text[], tags text[], stanza
#                  jsonb: one row per stanza of Packages (about 63,000),
#                  shuffled the same way
#   MANIFEST       what was downloaded from where, when, with sha256 sums
#
# Conversions (python3, standard library):
#   - A Contents line is "PATH<spaces>LOCATIONS": LOCATIONS is the last
#     whitespace-separated field (a path may hold spaces), a comma-separated
#     list of section/package; the row takes the first one, its section being
#     everything before the last '/' ("libs", "contrib/libs").
#   - Depends is split on ',' and '|', each alternative stripped of its
#     version constraint "(>= 1.2)", architecture qualifier ":any" and
#     whitespace, and a name given twice kept once; Tag (continuation lines joined) is split on ', '; the
#     stanza holds every field as a jsonb key -> string (continuation lines
#     joined with newlines, as deb822 writes them, less the leading space).
#   - TSV in COPY's text format: backslash, tab, newline and carriage
#     return escaped; arrays as '{"a","b"}' literals.
#
# The TSV files are remade only when missing or older than a download
# (--force remakes them, and downloads again).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
data=${BLOOMIDX_BENCH_DATA:-/var/tmp/bloomidx-bench-data}
force=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --data) [[ -n ${2:-} ]] || { echo "error: --data needs a directory" >&2; exit 1; }; data=$2; shift 2 ;;
        --force) force=1; shift ;;
        -h | --help) sed -n '3,34p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown option '$1'" >&2; exit 1 ;;
    esac
done
case $data in
    "$REPO"/*) echo "error: the data dir must be outside the repository ($data)" >&2; exit 1 ;;
esac
mkdir -p "$data"
cd "$data"

fetch() {
    local url=$1 f
    f=$(basename "$url")
    if [[ $force -eq 1 || ! -s $f ]]; then
        echo "==> downloading $url"
        curl -fsSL --retry 3 -o "$f.part" "$url"
        mv "$f.part" "$f"
        printf '%s\t%s\t%s\t%s\n' "$f" "$url" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
            "$(sha256sum "$f" | cut -d' ' -f1)" >>MANIFEST
    fi
}
fetch "$MIRROR/dists/$SUITE/main/Contents-amd64.gz"
fetch "$MIRROR/dists/$SUITE/main/Contents-all.gz"
fetch "$MIRROR/dists/$SUITE/main/binary-amd64/Packages.xz"

stale() {  # $1 older than (or missing beside) any of the rest
    local out=$1 f
    shift
    [[ $force -eq 1 || ! -s $out ]] && return 0
    for f in "$@"; do [[ $f -nt $out ]] && return 0; done
    return 1
}

if stale contents.tsv Contents-amd64.gz Contents-all.gz; then
    echo "==> contents.tsv"
    python3 - Contents-amd64.gz Contents-all.gz <<'EOF' >contents.tsv.part
import gzip, random, sys

def esc(s):
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))

rows = []
for fn in sys.argv[1:]:
    with gzip.open(fn, "rt", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            parts = line.rsplit(None, 1)
            if len(parts) != 2:
                continue
            path, locs = parts[0].rstrip(), parts[1]
            if path == "FILE" and locs == "LOCATION":
                continue        # the header of old Contents files
            first = locs.split(",")[0]
            if "/" not in first:
                continue
            section, package = first.rsplit("/", 1)
            rows.append("%s\t%s\t%s\n" % (esc(path), esc(section), esc(package)))
random.Random(20261203).shuffle(rows)
out = sys.stdout
out.reconfigure(errors="surrogateescape")
out.writelines(rows)
print("%d rows" % len(rows), file=sys.stderr)
EOF
    mv contents.tsv.part contents.tsv
fi

if stale packages.tsv Packages.xz; then
    echo "==> packages.tsv"
    xz -dc Packages.xz | python3 -c '
import json, random, re, sys

def esc(s):
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))

def arr(xs):
    return "{" + ",".join(
        "\"" + x.replace("\\", "\\\\").replace("\"", "\\\"") + "\""
        for x in xs) + "}"

def stanzas(f):
    fields, last = {}, None
    for line in f:
        line = line.rstrip("\n")
        if not line.strip():
            if fields:
                yield fields
            fields, last = {}, None
        elif line[0] in " \t" and last:
            fields[last] += "\n" + line[1:]
        else:
            k, _, v = line.partition(":")
            last = k
            fields[k] = v.strip()
    if fields:
        yield fields

rows = []
for st in stanzas(sys.stdin):
    deps = []
    for alt in re.split(r"[,|]", st.get("Depends", "")):
        name = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", alt).strip()
        name = name.split(":")[0].strip()
        if name and name not in deps:
            deps.append(name)
    tags = [t.strip() for t in st.get("Tag", "").replace("\n", " ").split(",")]
    tags = [t for t in tags if t]
    rows.append("\t".join([esc(st.get("Package", "")), esc(st.get("Section", "")),
                           esc(arr(deps)), esc(arr(tags)),
                           esc(json.dumps(st, ensure_ascii=False))]) + "\n")
random.Random(20261203).shuffle(rows)
sys.stdout.writelines(rows)
print("%d rows" % len(rows), file=sys.stderr)
' >packages.tsv.part
    mv packages.tsv.part packages.tsv
fi
echo "==> data in $data: $(wc -l <contents.tsv) contents rows, $(wc -l <packages.tsv) packages rows"
