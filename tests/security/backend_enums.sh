#!/bin/bash
# backend_enums.sh SOURCE_DIR: BackendKind and ComposeFlavour are named only
# by the registry (engines/registry*: its name table, its admin part)
# and the enums' own declaration (common/config.hpp); tests are exempt.
# Everything else asks the registry's functions (common/config.hpp:
# stack_backend, podman_compose, ...; docs/ARCHITECTURE.md, "Rooms and their
# size"), so a backend's branches have one home. Prints each use; exit 1 then.
# backend_enums.sh --selftest: plants a use in a scratch tree and fails
# unless the check above catches and names it.
set -uo pipefail

check() {
    local src=$1 bad=0 file line
    while IFS=: read -r file line _; do
        case $file in
            engines/registry.[ch]pp | engines/registry_*.[ch]pp | common/config.hpp) continue ;;
        esac
        echo "backend_enums: $file:$line names BackendKind or ComposeFlavour; ask the registry (docs/ARCHITECTURE.md, \"Rooms and their size\")"
        bad=1
    done < <(cd "$src" && grep -rnwE 'BackendKind|ComposeFlavour' --include='*.cpp' --include='*.hpp' \
        --include='*.h' --include='*.cc' --exclude-dir=tests --exclude-dir=build --exclude-dir='build-*' . |
        sed 's|^\./||')
    return "$bad"
}

if [ "${1:-}" = --selftest ]; then
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/engines/stack" "$tmp/common" "$tmp/admin/commands" "$tmp/tests/executor"
    printf 'enum class BackendKind { Stack, Compose };\nenum class ComposeFlavour { Docker };\n' \
        >"$tmp/common/config.hpp"
    printf 'bool s(BackendKind k) { return k == BackendKind::Stack; }\n' >"$tmp/engines/registry.cpp"
    printf 'auto f = ComposeFlavour::Docker;\n' >"$tmp/tests/executor/test.cpp"
    printf 'bool ok(const Backend& b) { return stack_backend(b.kind); }\n' >"$tmp/admin/commands/ok.cpp"
    out=$(check "$tmp") || { echo "backend_enums selftest: a clean tree was refused ($out)"; exit 1; }
    declare -A plants=(
        [admin/commands/bad.cpp]="if (b.kind == BackendKind::Compose) {}"
        [engines/stack/bad.hpp]="ComposeFlavour f;"
        [common/config.cpp]="x = ComposeFlavour::PodmanCompose;"
    )
    for planted in "${!plants[@]}"; do
        printf '%s\n' "${plants[$planted]}" >"$tmp/$planted"
        out=$(check "$tmp") && {
            echo "backend_enums selftest: $planted naming an enum was not caught"
            exit 1
        }
        [[ $out == *"$planted:"* ]] || {
            echo "backend_enums selftest: $planted was caught, but not named ($out)"
            exit 1
        }
        rm "$tmp/$planted"
    done
    echo "backend_enums selftest: a clean tree passes; each of ${#plants[@]} planted uses is caught"
    exit 0
fi
[ $# -eq 1 ] || { echo "usage: backend_enums.sh SOURCE_DIR | --selftest" >&2; exit 64; }
check "$1" && echo "backend_enums: BackendKind and ComposeFlavour are named only by the registry"
