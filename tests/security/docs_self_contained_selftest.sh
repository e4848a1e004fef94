#!/bin/bash
# docs_self_contained_selftest.sh CHECKER: proves docs_self_contained.sh can
# fail. It runs the checker on small trees, a plain directory (the walk) and
# a git checkout (git ls-files), each with one kind of outside reference,
# and expects exit 1 naming the file; a clean tree must pass.
set -u
checker=${1:?usage: docs_self_contained_selftest.sh CHECKER}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
failures=0

# A minimal tree that passes: good links, and an outside name only in build/.
make_tree() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/docs" "$tmp/t/src" "$tmp/t/build/x"
    printf '# x\n\nSee [the protocol](docs/PROTOCOL.md#responses), [src](src) and\n[web](https://example.org/a.md).\n' \
        >"$tmp/t/README.md"
    printf '# Protocol\n\n[Back](../README.md), [self](#top)\n\n[ref]: ../src/main.cpp\n\n```\n[not a link](nowhere.md)\n```\n' \
        >"$tmp/t/docs/PROTOCOL.md"
    printf '// docs/PROTOCOL.md, "Responses"\n' >"$tmp/t/src/main.cpp"
    # build*/ is skipped by the walk (generated files).
    printf 'see ../shared/design/protocol.md\n' >"$tmp/t/build/x/generated.txt"
}

# expect NAME WANT_EXIT WANT_TEXT: run the checker on $tmp/t.
expect() {
    local out rc
    out=$(bash "$checker" "$tmp/t" 2>&1)
    rc=$?
    if [ "$rc" -ne "$2" ] || ! grep -qF -- "$3" <<<"$out"; then
        echo "FAIL: $1: exit $rc (want $2), output lacks '$3':"
        sed 's/^/    /' <<<"$out"
        failures=$((failures + 1))
    else
        echo "ok: $1"
    fi
}

for mode in walk git; do
    setup() {
        make_tree
        if [ "$mode" = git ]; then
            git -C "$tmp/t" init -q && printf 'build/\n' >"$tmp/t/.gitignore" &&
                git -C "$tmp/t" add -A >/dev/null
        fi
    }
    track() { [ "$mode" = git ] && git -C "$tmp/t" add -A >/dev/null; return 0; }

    setup
    expect "$mode: a clean tree passes" 0 "files: $([ "$mode" = git ] && echo git || echo a walk)"

    setup
    printf '// Schema: ../shared/design/architecture.md\n' >>"$tmp/t/src/main.cpp"
    track
    expect "$mode: ../shared/design in a comment" 1 "src/main.cpp:2 cites a document outside"

    setup
    printf '# follows shared/recipes/real-systemd-and-podman.md\n' >"$tmp/t/src/run.sh"
    track
    expect "$mode: shared/recipes in a script" 1 "src/run.sh:1 cites"

    setup
    printf 'The commands are cli.md'"'"'s.\n' >>"$tmp/t/docs/PROTOCOL.md"
    track
    expect "$mode: a bare cli.md" 1 "docs/PROTOCOL.md:10 cites"

    setup
    printf 'See [missing](docs/NOPE.md).\n' >>"$tmp/t/README.md"
    track
    expect "$mode: a link to a missing page" 1 "README.md:5 links to docs/NOPE.md, which is not in the repository"

    setup
    printf 'See [design](../../shared/design/x.txt).\n' >>"$tmp/t/docs/PROTOCOL.md"
    track
    expect "$mode: a link out of the repository" 1 "links outside the repository"

    setup
    printf 'See [abs](/etc/passwd).\n' >>"$tmp/t/docs/PROTOCOL.md"
    track
    expect "$mode: an absolute link" 1 "links to an absolute path"

    # Only the top-level build*/ is generated: a source folder whose name
    # starts with "build" (engines/build_input/) is checked like any other.
    setup
    mkdir -p "$tmp/t/src/build_input"
    printf '// see ../shared/design/protocol.md\n' >"$tmp/t/src/build_input/x.cpp"
    track
    expect "$mode: a nested build_input/ folder is checked" 1 "src/build_input/x.cpp:1 cites"

    if [ "$mode" = git ]; then
        # Only tracked files count in a checkout: an untracked scratch file does not.
        setup
        printf 'see protocol.md\n' >"$tmp/t/scratch.txt"
        expect "git: an untracked file is not checked" 0 "ok: nothing"
    fi
done

[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
echo "ok: docs_self_contained.sh fails on every kind of outside reference"
