#!/usr/bin/env bash
#
# scripts/check-meta.sh: check META.json before `make dist`: valid JSON with
# the keys PGXN's meta spec v1.0.0 requires (name, abstract, version,
# maintainer, license, provides with file and version, meta-spec), semantic
# versions, a provided file that exists, and one release everywhere it is
# written, so that the numbers cannot drift apart:
#
#   META.json        version and provides.bloomidx.version   1.2.0
#   CHANGELOG.md     the first "## X.Y.Z" heading            1.2.0
#   bloomidx.control default_version                         1.2
#   debian/changelog the newest entry's upstream version     1.2.0 (-1)
#
# The provided file is the newest full install script (bloomidx--X.Y.sql),
# from which update scripts (bloomidx--A--B.sql) lead to default_version,
# and the Makefile's DATA installs every script of the tree.  Needs jq.
#
#   bash scripts/check-meta.sh [META.json]
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
META=${1:-$REPO/META.json}
command -v jq >/dev/null || { echo "check-meta: jq is needed" >&2; exit 2; }

fail() { echo "check-meta: $META: $*" >&2; exit 1; }

jq -e . "$META" >/dev/null || fail "not valid JSON"

semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'

for key in name abstract version maintainer license provides meta-spec; do
    jq -e --arg k "$key" 'has($k)' "$META" >/dev/null || fail "no \"$key\""
done
jq -e '.name | type == "string" and test("^[^/\\\\\\s]{2,}$")' "$META" >/dev/null ||
    fail "name must be a string of 2 or more characters, no slash, backslash or space"
jq -e '.abstract | type == "string" and length > 0' "$META" >/dev/null || fail "empty abstract"
jq -e --arg re "$semver" '.version | type == "string" and test($re)' "$META" >/dev/null ||
    fail "version is not a semantic version"
jq -e '.maintainer | (type == "string" and length > 0) or (type == "array" and length > 0 and all(type == "string"))' \
    "$META" >/dev/null || fail "maintainer must be a string or a list of strings"
jq -e '.license == "postgresql"' "$META" >/dev/null || fail "license is not \"postgresql\""
jq -e '."meta-spec".version == "1.0.0"' "$META" >/dev/null || fail "meta-spec version is not 1.0.0"
jq -e '.provides | type == "object" and length > 0' "$META" >/dev/null || fail "provides is empty"
jq -e --arg re "$semver" '.provides | to_entries | all(.value.file and (.value.version | test($re)))' \
    "$META" >/dev/null || fail "every provided extension needs a file and a semantic version"
jq -e '.prereqs.runtime.requires.PostgreSQL' "$META" >/dev/null || fail "no PostgreSQL runtime prerequisite"
jq -e '.release_status | IN("stable", "testing", "unstable")' "$META" >/dev/null ||
    fail "release_status must be stable, testing or unstable"

while read -r file; do
    [[ -f $REPO/$file ]] || fail "provided file $file does not exist"
done < <(jq -r '.provides[].file' "$META")

version=$(jq -r .version "$META")
release=${version%%[-+]*}
control=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$REPO/bloomidx.control")
[[ ${release%.*} == "$control" ]] ||
    fail "version $version is not bloomidx.control's default_version $control"
[[ $(jq -r .provides.bloomidx.version "$META") == "$version" ]] ||
    fail "provides.bloomidx.version is not the release's version $version"

changelog=$(sed -n 's/^## \([0-9][^ ]*\).*/\1/p' "$REPO/CHANGELOG.md" | head -n 1)
[[ $changelog == "$version" ]] ||
    fail "version $version is not CHANGELOG.md's newest release ${changelog:-(none)}"
if [[ -f $REPO/debian/changelog ]]; then
    debian=$(sed -n '1s/^bloomidx (\([^)]*\)).*/\1/p' "$REPO/debian/changelog")
    debian=${debian#*:}
    [[ ${debian%-*} == "$version" ]] ||
        fail "version $version is not debian/changelog's upstream version ${debian:-(none)}"
fi

# The provided file: a full install script, with update scripts from its
# version to default_version.
file=$(jq -r .provides.bloomidx.file "$META")
[[ $file =~ ^bloomidx--([0-9]+(\.[0-9]+)*)\.sql$ ]] ||
    fail "provides.bloomidx.file $file is not a full install script bloomidx--X.Y.sql"
from=${BASH_REMATCH[1]}
path=$from
while [[ $from != "$control" ]]; do
    next=$(cd "$REPO" && compgen -G "bloomidx--$from--*.sql" | sed "s/^bloomidx--$from--\(.*\)\.sql$/\1/" |
        sort -V | tail -n 1)
    [[ -n $next ]] ||
        fail "no update script leads from $file (version $path) to default_version $control"
    from=$next path+=" -> $next"
done
newest=$(cd "$REPO" && compgen -G 'bloomidx--*.sql' | grep -v -- '--.*--' |
    sed 's/^bloomidx--\(.*\)\.sql$/\1/' | sort -V | tail -n 1)
[[ $file == "bloomidx--$newest.sql" ]] ||
    fail "provides.bloomidx.file $file is not the newest full install script bloomidx--$newest.sql"

# Every script is installed.
data=" $(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$REPO/Makefile" | sed -n 's/^DATA *= *//p' | tr -s '[:space:]' ' ') "
for f in $(cd "$REPO" && compgen -G 'bloomidx--*.sql'); do
    [[ $data == *" $f "* ]] || fail "the Makefile's DATA does not install $f"
done

echo "check-meta: $META is a valid PGXN META.json for bloomidx $version" \
    "(CHANGELOG.md, bloomidx.control${debian:+, debian/changelog} agree; $file: $path)"
