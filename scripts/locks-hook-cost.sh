#!/usr/bin/env bash
# The cost of `locks`' in-process pthread hooks: a loop of uncontended
# pthread_mutex_lock+unlock pairs timed by the program itself, run plain, under
# `sysmeter calls` (the preload library loaded, its lock hooks off: what calls and alloc
# runs pay) and under `sysmeter locks` (every pair recorded). Needs root (locks) and cc.
# usage: scripts/locks-hook-cost.sh [SYSMETER] [PAIRS] [ROUNDS]
set -euo pipefail
sysmeter=${1:-target/release/sysmeter}
pairs=${2:-10000000}
rounds=${3:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/loop.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.2f ns per lock+unlock\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
    return 0;
}
C
cc -O2 -o "$dir/loop" "$dir/loop.c" -lpthread
uptime
for r in $(seq "$rounds"); do
    echo "round $r: plain $("$dir/loop" "$pairs")"
    echo "round $r: library loaded, hooks off $("$sysmeter" calls --no-store -e clock_gettime -- "$dir/loop" "$pairs" 2>/dev/null)"
    echo "round $r: recorded by locks $("$sysmeter" locks --no-store -- "$dir/loop" "$pairs" 2>/dev/null)"
done
