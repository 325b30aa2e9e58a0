#!/usr/bin/env bash
#
# scripts/check-meta.sh: check META.json before `make dist`: valid JSON with
# the keys PGXN's meta spec v1.0.0 requires (name, abstract, version,
# maintainer, license, provides with file and version, meta-spec), semantic
# versions, a provided file that exists, and the same release as
# bloomidx.control's default_version.  Needs jq.
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
control=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$REPO/bloomidx.control")
[[ ${version%.*} == "$control" ]] ||
    fail "version $version is not bloomidx.control's default_version $control"
[[ $(jq -r .provides.bloomidx.version "$META") == "$version" ]] ||
    fail "provides.bloomidx.version is not the release's version $version"
[[ $(jq -r .provides.bloomidx.file "$META") == "bloomidx--$control.sql" ]] ||
    fail "provides.bloomidx.file is not bloomidx--$control.sql"

echo "check-meta: $META is a valid PGXN META.json for bloomidx $version"
