/* `sysmeter alloc`: the allocation functions of a launched program, interposed by the
 * preload library that `calls` also uses. Off unless SYSMETER_ALLOC_SHM names the run's
 * region: then every wrapper is one predictable branch and a call through a pointer.
 *
 * On, each allocation captures its call stack (the return addresses, DWARF CFI through
 * libgcc's _Unwind_Backtrace, or frame pointers with SYSMETER_ALLOC_UNWIND=fp), finds or
 * inserts it in the shared stack table (lock-free), and adds to that stack's counters of
 * this process image; the pointer goes into a private table (pointer -> stack, size, the
 * allocating thread and its allocation number) so a free finds what it frees. No lock on
 * either path but one taken only when a new peak of live bytes is set.
 *
 * Traps handled: dlsym calls calloc before the real functions are known (a static
 * bootstrap arena serves it); the unwinder and dlopen may allocate (a per-thread busy flag
 * lets the library's own allocations through untouched); a free is removed from the table
 * before the real free, so a block reused at once by another thread is never seen twice; a
 * forked child claims a record of its own (with -f; else it is not counted) and does not
 * count frees of its parent's blocks against its sites. (alloc.h: the layout; docs/alloc.md.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "open_region.h"
#include "wipe_mark.h"

#define API __attribute__((visibility("default")))
#define TABLE_BITS 22
#define TABLE (1ul << TABLE_BITS)
#define TOMB 1ul

struct entry {
    uint64_t ptr, size;
    uint32_t site, seq;
    uint16_t proc, ttag;
    uint32_t mmap;
};

static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
} real;

static int on, resolving, use_fp, follow;
static struct sa_header *hdr;
static struct sa_proc *me;
static uint32_t me_idx, image;
static struct entry *table;
static uintptr_t own_lo, own_hi;
typedef int (*trace_fn)(int (*)(void *, void *), void *);
typedef uintptr_t (*getip_fn)(void *);
typedef int (*unw_backtrace_fn)(void **, int);
typedef int (*unw_policy_fn)(void *, int);
static trace_fn unwind_backtrace;
static getip_fn unwind_getip;
static unw_backtrace_fn unw_backtrace;

static __thread int t_busy __attribute__((tls_model("initial-exec")));
static __thread uint32_t t_seq __attribute__((tls_model("initial-exec")));
static __thread uint16_t t_tag __attribute__((tls_model("initial-exec")));
static uint32_t tags;

/* A small number per thread (a temporary is freed by the thread that allocated it). */
static inline uint16_t thread_tag(void)
{
    if (__builtin_expect(t_tag == 0, 0))
        t_tag = (uint16_t)(__atomic_add_fetch(&tags, 1, __ATOMIC_RELAXED) | 1);
    return t_tag;
}

/* The header page of the run's region, where exec.c notes what the library cannot enter;
 * NULL when `alloc` is off. */
__attribute__((visibility("hidden"))) void *sa_header_page(void) { return hdr; }

/* dlsym's own calloc, before the real one is known. */
static char boot[4096] __attribute__((aligned(16)));
static size_t boot_used;

static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (boot_used + n > sizeof boot)
        return NULL;
    void *p = boot + boot_used;
    boot_used += n;
    return p;
}

static int is_boot(void *p) { return (char *)p >= boot && (char *)p < boot + sizeof boot; }

static void resolve(void)
{
    resolving = 1;
    real.malloc = dlsym(RTLD_NEXT, "malloc");
    real.free = dlsym(RTLD_NEXT, "free");
    real.calloc = dlsym(RTLD_NEXT, "calloc");
    real.realloc = dlsym(RTLD_NEXT, "realloc");
    real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real.memalign = dlsym(RTLD_NEXT, "memalign");
    real.valloc = dlsym(RTLD_NEXT, "valloc");
    real.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
    real.mmap = dlsym(RTLD_NEXT, "mmap");
    real.munmap = dlsym(RTLD_NEXT, "munmap");
    resolving = 0;
}

#define READY(f)                                                                              \
    do {                                                                                      \
        if (__builtin_expect(real.f == NULL, 0) && !resolving)                                \
            resolve();                                                                        \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct sa_stack *stacks(void) { return (struct sa_stack *)((char *)hdr + SA_STACKS_AT); }

static struct sa_site *site(uint32_t proc, uint32_t s)
{
    return (struct sa_site *)((char *)hdr + SA_SITES_AT) + (uint64_t)proc * SA_STACKS + s;
}

/* ---- call stacks ---- */

struct walk {
    uint64_t *pc;
    uint32_t n;
};

static int unwind_one(void *ctx, void *arg)
{
    struct walk *w = arg;
    uintptr_t ip = unwind_getip(ctx);
    if (ip >= own_lo && ip < own_hi)
        return 0; /* our own frames */
    if (ip == 0 || w->n >= SA_DEPTH)
        return 5; /* _URC_END_OF_STACK */
    w->pc[w->n++] = ip;
    return 0;
}

/* Frame pointers: exact for the first frame (the wrapper keeps one), then as far as the
 * program's code keeps them; a chain that does not climb the stack ends the walk. */
static uint32_t walk_fp(uint64_t *pc, uintptr_t *fp)
{
    uint32_t n = 0;
    while (fp && n < SA_DEPTH) {
        uintptr_t ret = fp[1];
        uintptr_t *next = (uintptr_t *)fp[0];
        if (ret == 0)
            break;
        if (ret < own_lo || ret >= own_hi)
            pc[n++] = ret;
        if (next <= fp || (uintptr_t)next - (uintptr_t)fp > (1u << 24) || ((uintptr_t)next & 7))
            break;
        fp = next;
    }
    return n;
}

/* libunwind's walk, which caches each return address's unwind rule per thread. */
static uint32_t walk_unw(uint64_t *pc)
{
    void *raw[SA_DEPTH + 8];
    int got = unw_backtrace(raw, SA_DEPTH + 8);
    uint32_t n = 0;
    for (int i = 0; i < got && n < SA_DEPTH; i++)
        if ((uintptr_t)raw[i] < own_lo || (uintptr_t)raw[i] >= own_hi)
            pc[n++] = (uint64_t)raw[i];
    return n;
}

static uint32_t capture(uint64_t *pc, uintptr_t *fp)
{
    if (unw_backtrace != NULL)
        return walk_unw(pc);
    if (use_fp || unwind_backtrace == NULL)
        return walk_fp(pc, fp);
    struct walk w = {pc, 0};
    unwind_backtrace(unwind_one, &w);
    return w.n;
}

static uint64_t hash_stack(const uint64_t *pc, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ image;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ pc[i]) * 0xff51afd7ed558ccdull;
    return (h ^ (h >> 29)) | 2; /* never 0 */
}

/* The index of this image's stack `pc[0..n)`, inserted when new; 0 when the table is full
 * (stack 0 is the lump of those). */
static uint32_t stack_index(const uint64_t *pc, uint32_t n)
{
    uint64_t h = hash_stack(pc, n);
    struct sa_stack *t = stacks();
    for (uint32_t probe = 0; probe < 256; probe++) {
        uint32_t i = (uint32_t)(h + probe) & (SA_STACKS - 1);
        if (i == 0)
            continue;
        struct sa_stack *s = &t[i];
        uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (st == 0) {
            uint32_t zero = 0;
            if (__atomic_compare_exchange_n(&s->state, &zero, 1, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                s->hash = h;
                s->depth = n;
                s->image = image;
                memcpy(s->pc, pc, n * sizeof *pc);
                __atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
                __atomic_fetch_add(&hdr->nstacks, 1, __ATOMIC_RELAXED);
                return i;
            }
            st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        }
        /* Being written by another thread: wait, but not forever (a fork may have copied
         * the table while a thread that is not in the child was writing). */
        for (uint32_t spin = 0; st == 1 && spin < (1u << 22); spin++)
            st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (st != 2)
            break;
        if (s->hash == h && s->depth == n && s->image == image &&
            memcmp(s->pc, pc, n * sizeof *pc) == 0)
            return i;
    }
    __atomic_fetch_add(&hdr->lost_stacks, 1, __ATOMIC_RELAXED);
    return 0;
}

/* ---- the pointer table (private to the process; a fork copies it) ---- */

static inline uint64_t slot_of(uint64_t p) { return ((p >> 4) ^ (p >> 26)) & (TABLE - 1); }

static int put(uint64_t p, struct entry e)
{
    for (uint64_t k = 0, i = slot_of(p); k < 4096; k++, i = (i + 1) & (TABLE - 1)) {
        uint64_t cur = __atomic_load_n(&table[i].ptr, __ATOMIC_RELAXED);
        if (cur > TOMB)
            continue;
        if (__atomic_compare_exchange_n(&table[i].ptr, &cur, TOMB + 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            e.ptr = TOMB + 1;
            table[i] = e;
            __atomic_store_n(&table[i].ptr, p, __ATOMIC_RELEASE);
            return 1;
        }
    }
    return 0;
}

/* Takes `p` out of the table into `*e`; 0 when it is not there. */
static int take(uint64_t p, struct entry *e)
{
    for (uint64_t k = 0, i = slot_of(p); k < 4096; k++, i = (i + 1) & (TABLE - 1)) {
        uint64_t cur = __atomic_load_n(&table[i].ptr, __ATOMIC_ACQUIRE);
        if (cur == 0)
            return 0;
        if (cur != p)
            continue;
        *e = table[i];
        if (__atomic_compare_exchange_n(&table[i].ptr, &cur, TOMB, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return 1;
        return 0;
    }
    return 0;
}

/* ---- recording ---- */

static uint32_t size_class(uint64_t n) { return n == 0 ? 0 : 64 - __builtin_clzll(n); }

static void new_peak(uint64_t live)
{
    while (__atomic_exchange_n(&me->peak_lock, 1, __ATOMIC_ACQUIRE))
        ;
    if (live > me->peak) {
        me->peak = live;
        me->peak_ns = now_ns();
    }
    __atomic_store_n(&me->peak_lock, 0, __ATOMIC_RELEASE);
}

/* This process's mark (wipe_mark.h): a zero means a copy still counting in its parent's
 * record. A static 1 until the page exists, or where the kernel refuses it. */
static uint32_t mark_static = 1;
static uint32_t *proc_mark = &mark_static;

static void claim(int forked);

static void make_mark(void)
{
    if (proc_mark != &mark_static)
        return;
    uint32_t *m = sm_wiped_mark();
    if (m != NULL)
        proc_mark = m;
}

/* A copy made by a raw clone() claims a record of its own, as a fork's handler would. */
static inline void copied(void)
{
    if (__builtin_expect(*proc_mark == 0, 0)) {
        *proc_mark = 1;
        claim(1);
    }
}

static void record(void *p, uint64_t size, uintptr_t *fp, uint32_t mmap_kind)
{
    if (p == NULL || me == NULL || table == NULL)
        return;
    copied();
    if (me == NULL)
        return;
    uint64_t pc[SA_DEPTH];
    uint32_t s = stack_index(pc, capture(pc, fp));
    struct entry e = {0, size, s, ++t_seq, (uint16_t)me_idx, thread_tag(),
                      mmap_kind};
    if (!put((uint64_t)p, e)) {
        __atomic_fetch_add(&me->untracked, 1, __ATOMIC_RELAXED);
        return;
    }
    struct sa_site *c = site(me_idx, s);
    __atomic_fetch_add(&c->allocs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->bytes, size, __ATOMIC_RELAXED);
    if (mmap_kind)
        __atomic_fetch_add(&c->mmaps, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&me->allocs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&me->hist[size_class(size) % SA_HIST], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&me->live_count, 1, __ATOMIC_RELAXED);
    uint64_t live = __atomic_add_fetch(&me->live, size, __ATOMIC_RELAXED);
    if (live > __atomic_load_n(&me->peak, __ATOMIC_RELAXED))
        new_peak(live);
}

/* Counts the free of the block `e` described. */
static void account(const struct entry *e0)
{
    struct entry copy = *e0, *e = &copy;
    if (e->proc != me_idx) { /* the parent's block, freed by a forked child */
        __atomic_fetch_add(&me->foreign_frees, 1, __ATOMIC_RELAXED);
        return;
    }
    struct sa_site *c = site(me_idx, e->site);
    __atomic_fetch_add(&c->frees, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->freed, e->size, __ATOMIC_RELAXED);
    if (e->seq == t_seq && e->ttag == thread_tag() && !e->mmap) {
        __atomic_fetch_add(&c->temps, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&me->temps, 1, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(&me->frees, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&me->live_count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&me->live, e->size, __ATOMIC_RELAXED);
}

/* Forgets `p` before the real free: a block reused at once must not meet its old entry. */
static void forget(void *p)
{
    struct entry e;
    if (p == NULL || me == NULL || table == NULL)
        return;
    copied();
    if (me == NULL)
        return;
    if (take((uint64_t)p, &e))
        account(&e);
    else
        __atomic_fetch_add(&me->foreign_frees, 1, __ATOMIC_RELAXED);
}

#include "alloc_api.h"
