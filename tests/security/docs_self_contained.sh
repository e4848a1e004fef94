#!/bin/bash
# docs_self_contained.sh SRC_DIR: fails when a file of the repository refers
# to a document outside it. The protocol, the architecture and the command
# reference are docs/PROTOCOL.md, docs/ARCHITECTURE.md and docs/COMMANDS.md;
# a user who clones the repository must be able to read everything a comment
# or a page cites. Two checks:
#   1. no file names a design document that lives outside the repository
#      (the patterns below);
#   2. every relative link in a Markdown file ([text](path), [label]: path)
#      points to a file or directory of the repository.
# The files are `git ls-files` when SRC_DIR is a git checkout, else every
# file under SRC_DIR but .git/ and build*/ (a release tarball); the output
# says which.
set -u
LC_ALL=C
export LC_ALL

src=${1:?usage: docs_self_contained.sh SRC_DIR}
src=$(cd "$src" && pwd -P) || exit 2
# This checker and its self-test name the patterns on purpose.
self=tests/security/docs_self_contained.sh
selftest=tests/security/docs_self_contained_selftest.sh

# Names of documents that were never part of the repository.
pattern='shared/design|shared/recipes|shared/peers|\.\./shared|protocol\.md|architecture\.md|cli\.md|background-article'


list=$(mktemp) || exit 2
trap 'rm -f "$list"' EXIT

# safe.directory: the checkout may belong to another uid in CI; git only
# lists our own repository here.
if git -c safe.directory="$src" -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
    [ "$(git -c safe.directory="$src" -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
    git -c safe.directory="$src" -C "$src" ls-files -z >"$list.z" || exit 2
    tr '\0' '\n' <"$list.z" >"$list"
    rm -f "$list.z"
    echo "files: git ls-files in $src ($(wc -l <"$list") files)"
else
    (cd "$src" && find . \( -path ./.git -o -path './build*' \) -prune -o -type f -print |
        sed 's|^\./||' | sort) >"$list"
    echo "files: a walk of $src, without .git/ and build*/ ($(wc -l <"$list") files)"
fi
if [ ! -s "$list" ]; then
    echo "FAIL: no files found under $src"
    exit 1
fi

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# 1. Names of outside documents, in every text file but these two (one grep
# over all of them; -I skips binary files).
while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    lineno=${rest%%:*}
    text=${rest#*:}
    fail "$file:$lineno cites a document outside the repository: $text"
done < <(cd "$src" && grep -vxF -e "$self" -e "$selftest" "$list" | tr '\n' '\0' |
    xargs -0 grep -HInE -- "$pattern" 2>/dev/null)

# 2. Relative links in Markdown files resolve inside the repository.
in_repo() {  # $1: a path relative to src, already normalised
    grep -qxF -- "$1" "$list" && return 0
    # A directory counts when it holds a file of the list.
    awk -v p="$1/" 'index($0, p) == 1 { found = 1; exit } END { exit !found }' "$list"
}
normalise() {  # $1: a path relative to src, possibly with . and .. parts
    local IFS=/ part out=()
    for part in $1; do
        case $part in
            '' | .) ;;
            ..)
                [ ${#out[@]} -gt 0 ] || return 1
                unset 'out[${#out[@]}-1]'
                ;;
            *) out+=("$part") ;;
        esac
    done
    (IFS=/; printf '%s\n' "${out[*]}")
}
# Inline links [text](target "title") and reference definitions
# [label]: target, outside fenced code blocks; one awk over every .md file.
links=0
while IFS=: read -r file lineno target; do
    case $target in
        '' | '#'* | *://* | mailto:*) continue ;;
    esac
    target=${target%%#*}
    [ -n "$target" ] || continue
    links=$((links + 1))
    dir=$(dirname "$file")
    [ "$dir" = . ] && dir=""
    if [ "${target#/}" != "$target" ]; then
        fail "$file:$lineno links to an absolute path: $target"
        continue
    fi
    if ! resolved=$(normalise "${dir:+$dir/}$target") || [ -z "$resolved" ]; then
        fail "$file:$lineno links outside the repository: $target"
        continue
    fi
    in_repo "$resolved" || fail "$file:$lineno links to $target, which is not in the repository"
done < <(cd "$src" && grep -E '\.md$' "$list" | tr '\n' '\0' | xargs -0 awk '
    FNR == 1 { fence = 0 }
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
        line = $0
        while (match(line, /\]\([^) \t]+/)) {
            print FILENAME ":" FNR ":" substr(line, RSTART + 2, RLENGTH - 2)
            line = substr(line, RSTART + RLENGTH)
        }
        if (match($0, /^ {0,3}\[[^]]+\]:[ \t]+[^ \t]+/)) {
            t = substr($0, RSTART, RLENGTH)
            sub(/^ {0,3}\[[^]]+\]:[ \t]+/, "", t)
            sub(/^</, "", t); sub(/>$/, "", t)
            print FILENAME ":" FNR ":" t
        }
    }')
echo "relative Markdown links checked: $links"

if [ "$failures" -gt 0 ]; then
    echo "$failures problem(s): cite docs/PROTOCOL.md, docs/ARCHITECTURE.md or docs/COMMANDS.md instead"
    exit 1
fi
echo "ok: nothing in the repository points at a document outside it"
