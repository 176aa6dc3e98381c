#!/usr/bin/env bash
# Compiles the BPF programs of crates/sysmeter/bpf/*.bpf.c into the committed *.bpf.o next
# to them (docs/bpf.md). Needs clang, llvm-strip and libbpf's headers:
#     apt-get install -y clang llvm libbpf-dev
# `cargo build` does not run this: the objects are committed so that a machine without
# clang builds. The output is deterministic (no paths, no DWARF, sorted inputs), so that
# .ci/run can rebuild and compare: `scripts/build-bpf.sh --check` fails when a committed
# object differs from what its source compiles to.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
[ "${1:-}" = "--check" ] && check=1

clang=${CLANG:-clang}
strip=${LLVM_STRIP:-$(command -v llvm-strip || ls /usr/bin/llvm-strip-* 2>/dev/null | head -n1)}
command -v "$clang" >/dev/null || { echo "error: no clang (apt-get install -y clang)" >&2; exit 1; }
[ -n "$strip" ] || { echo "error: no llvm-strip (apt-get install -y llvm)" >&2; exit 1; }
[ -f /usr/include/bpf/bpf_helpers.h ] \
    || { echo "error: no libbpf headers (apt-get install -y libbpf-dev)" >&2; exit 1; }
# linux/bpf.h includes asm/types.h, which Debian keeps under the multiarch directory; the
# BPF target does not search it by itself.
multiarch=/usr/include/$(uname -m)-linux-gnu

status=0
for src in crates/sysmeter/bpf/*.bpf.c; do
    obj=${src%.c}.o
    tmp=$(mktemp)
    # -g makes the BTF that describes the maps (aya needs it); the DWARF is stripped after,
    # and relative paths with -fdebug-prefix-map keep the build directory out of the object.
    (cd "$(dirname "$src")" && "$clang" -O2 -g -target bpfel -D__TARGET_ARCH_x86 \
        -I"$multiarch" -fdebug-prefix-map="$PWD"=. -fno-ident \
        -c "$(basename "$src")" -o "$tmp")
    "$strip" -g "$tmp"
    if [ "$check" = 1 ]; then
        if ! cmp -s "$tmp" "$obj"; then
            echo "error: $obj differs from what $src compiles to with $("$clang" --version | head -n 1);" \
                "run scripts/build-bpf.sh and commit (the committed objects come from Debian 12's clang 14)" >&2
            status=1
        fi
        rm -f "$tmp"
    else
        mv "$tmp" "$obj"
        chmod 644 "$obj"
        echo "built $obj ($(stat -c %s "$obj") bytes)"
    fi
done
exit "$status"
