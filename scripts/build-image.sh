#!/usr/bin/env bash
# Builds the sysmeter container image FROM scratch (deploy/container/Containerfile): the
# binary, /bin/true and the shared libraries `ldd` lists for them, copied into a temporary
# context, then `podman build` (nothing is pulled from a registry).
#
#   scripts/build-image.sh [BINARY] [TAG]
#
# BINARY defaults to target/release/sysmeter built with `--features pg` (so the image can
# store into a PostgreSQL fleet database); TAG defaults to localhost/sysmeter:VERSION.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-}
if [ -z "$binary" ]; then
    cargo build --release --locked -p sysmeter --features pg
    binary=${CARGO_TARGET_DIR:-target}/release/sysmeter
fi
[ -x "$binary" ] || { echo "error: $binary is not an executable; build it or name another" >&2; exit 2; }
command -v podman >/dev/null || { echo "error: podman not found; install the podman package" >&2; exit 2; }
version=$("$binary" --version | awk '{print $2}')
tag=${2:-localhost/sysmeter:$version}

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/rootfs/usr/local/bin" "$context/rootfs/work" "$context/rootfs/tmp"
chmod 1777 "$context/rootfs/tmp"
cp "$binary" "$context/rootfs/usr/local/bin/sysmeter"
# /bin/true: the program os.task spawns and execs (without it the exec costs are skipped).
mkdir -p "$context/rootfs/bin"
cp -L /bin/true "$context/rootfs/bin/true"
# Every library the dynamic linker loads for either, at the path it is loaded from
# (ld-linux included).
ldd "$binary" /bin/true | awk '/=> \// {print $3} /^\t\// {print $1}' | sort -u | while read -r lib; do
    mkdir -p "$context/rootfs$(dirname "$lib")"
    cp -L "$lib" "$context/rootfs$lib"
done
# Names for the numeric ids the image runs as (sysmeter reads its own user for messages).
mkdir -p "$context/rootfs/etc"
printf 'root:x:0:0:root:/work:/sbin/nologin\nnobody:x:65534:65534:nobody:/work:/sbin/nologin\n' \
    >"$context/rootfs/etc/passwd"
cp deploy/container/Containerfile "$context/Containerfile"
podman build --pull=never -t "$tag" -f "$context/Containerfile" "$context"
echo "built $tag"
