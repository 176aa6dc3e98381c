/* The in-process backend of `sysmeter calls`, preloaded into a launched program.
 *
 * At load it maps the run's shared region (a memfd of sysmeter whose path is in SYSMETER_CALLS_SHM),
 * times an empty function through its own hook (the calibration, function 0), and points
 * the program's GOT slots of the chosen functions (SYSMETER_CALLS_FUNCS, globs) at its
 * stubs. Every call is counted in the calling thread's slot of the region; one call in
 * SYSMETER_CALLS_SAMPLE per function and thread (every call when 1) is timed by replacing
 * its return address, which a per-thread shadow stack keeps. The region lives on after
 * `_exit`, a crash or an exec, so sysmeter reads everything when the run ends.
 *
 * Traps handled (docs/calls.md): functions that return twice or never are counted but never
 * timed; a C++ exception restores the real return addresses before the unwinder walks the
 * stack; a longjmp leaves dead shadow entries, dropped when a shallower call is timed; the
 * child of fork claims a new slot, and so does a child of a raw clone() that glibc never
 * saw (a forked copy by its wiped mark page, a CLONE_VM child sharing its parent's TLS by
 * its stack pointer and tid: see not_mine). Built with -mgeneral-regs-only: the hooks keep the
 * caller's vector registers intact without saving them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "layout.h"
#include "wipe_mark.h"

/* Load on glibc older than the one we are built against. */
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");

#define SHADOW 128
#define BARRIER() __asm__ volatile("" ::: "memory")
struct shadow {
    uint64_t *slot; /* where the return address lives */
    uint64_t ret;   /* the real return address */
    uint64_t t0;
    uint32_t idx;
};

extern char sm_stubs[] __attribute__((visibility("hidden")));
extern char sm_ret_tramp[] __attribute__((visibility("hidden")));

#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN struct sm_header *region;
HIDDEN uint64_t sample_mask;
HIDDEN uint32_t image;
HIDDEN void *real[SM_MAXF];
HIDDEN unsigned char untimed[SM_MAXF];

static __thread struct sm_slot *t_slot __attribute__((tls_model("initial-exec")));
static __thread int t_claimed __attribute__((tls_model("initial-exec")));
/* The stack pointer when this thread claimed its slot. A child made by a raw clone(CLONE_VM)
 * without CLONE_SETTLS shares this TLS (t_slot included) but runs on another stack. */
static __thread uintptr_t t_sp __attribute__((tls_model("initial-exec")));
static __thread struct shadow t_sh[SHADOW] __attribute__((tls_model("initial-exec")));
static __thread int t_depth __attribute__((tls_model("initial-exec")));

/* The child of fork counts in a slot of its own. */
HIDDEN void sm_forked(void)
{
    t_slot = NULL;
    t_claimed = 0;
}

static inline uint64_t ticks(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* A slot for thread `tid` of this process (no TLS touched: the raw clone's path uses it). */
static struct sm_slot *claim_for(uint32_t tid)
{
    int64_t n = sm_take(&region->nslots, SM_MAXSLOTS, &region->lost);
    if (n < 0)
        return NULL;
    struct sm_slot *s = (struct sm_slot *)((char *)region + SM_HEADER_SIZE) + n;
    s->pid = (uint32_t)getpid();
    s->tid = tid;
    s->image = image;
    s->sample_every = sample_mask + 1;
    strncpy(s->exe, program_invocation_short_name, sizeof s->exe - 1);
    __atomic_store_n(&s->claimed, 1, __ATOMIC_RELEASE);
    return s;
}

/* This process's mark (wipe_mark.h): a zero means a copy whose t_slot is its parent's. Until
 * the page exists (or where the kernel refuses), the mark is a static 1 and only
 * pthread_atfork tells a fork apart. */
static uint32_t mark_static = 1;
static uint32_t *proc_mark = &mark_static;

static void make_mark(void)
{
    if (__atomic_load_n(&proc_mark, __ATOMIC_ACQUIRE) != &mark_static)
        return;
    uint32_t *m = sm_wiped_mark(), *expected = &mark_static;
    if (m != NULL && !__atomic_compare_exchange_n(&proc_mark, &expected, m, 0, __ATOMIC_RELEASE,
                                                  __ATOMIC_RELAXED))
        munmap(m, 4096);
}

static struct sm_slot *claim(void)
{
    t_claimed = 1;
    make_mark();
    *proc_mark = 1; /* this process's slots from now on (a fork's handler got here first) */
    t_sp = (uintptr_t)__builtin_frame_address(0);
    return claim_for((uint32_t)syscall(SYS_gettid));
}

/* Threads of raw clone(CLONE_VM) children, which share a parent's TLS: their slots by tid. */
#define OTHERS 64
static struct {
    uint32_t tid;
    struct sm_slot *slot;
} others[OTHERS];
static uint32_t others_full;
#define NO_SLOT ((struct sm_slot *)1)

static struct sm_slot *other_slot(uint32_t tid)
{
    for (int i = 0; i < OTHERS; i++) {
        uint32_t t = __atomic_load_n(&others[i].tid, __ATOMIC_ACQUIRE), free_tid = 0;
        if (t == 0 && __atomic_compare_exchange_n(&others[i].tid, &free_tid, tid, 0,
                                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            struct sm_slot *s = claim_for(tid);
            __atomic_store_n(&others[i].slot, s ? s : NO_SLOT, __ATOMIC_RELEASE);
            return s;
        }
        if (t == 0)
            t = free_tid; /* another thread took the entry first: it is theirs or ours */
        if (t == tid) {
            struct sm_slot *s;
            while ((s = __atomic_load_n(&others[i].slot, __ATOMIC_ACQUIRE)) == NULL)
                ;
            return s == NO_SLOT ? NULL : s;
        }
    }
    uint32_t no = 0;
    if (__atomic_compare_exchange_n(&others_full, &no, 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        __atomic_fetch_add(&region->lost, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* 8 MiB (the default stack limit) either side of where a thread claimed its slot is still
 * its stack; beyond, the caller may be another thread sharing this TLS. */
#define STACK_REACH ((uintptr_t)8 << 20)

/* The slot of a caller whose stack (at `sp`) or process is not its TLS's: a forked copy
 * (the mark wiped) claims its own, as pthread_atfork's handler would have had it; a raw
 * clone(CLONE_VM) child (another tid) counts in a slot of its own, untimed (its shadow
 * stack would be its parent's); the same thread far down its stack or on a signal stack
 * keeps its slot. Costs a gettid per call of such a child. */
static struct sm_slot *not_mine(struct sm_slot *s, int *untimed)
{
    if (__atomic_load_n(proc_mark, __ATOMIC_RELAXED) == 0) {
        sm_forked();
        return t_slot = claim();
    }
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    if (tid == s->tid)
        return s;
    *untimed = 1;
    return other_slot(tid);
}

/* Drops shadow entries of frames that are gone: at or below `slot` on this stack. */
static void prune(uint64_t *slot)
{
    while (t_depth > 0) {
        uint64_t *top = t_sh[t_depth - 1].slot;
        if (top > slot || (char *)slot - (char *)top > (1 << 24))
            break;
        t_depth--;
    }
}

__attribute__((visibility("hidden"))) void *sm_enter(uint64_t idx, uint64_t *slot)
{
    struct sm_slot *s = t_slot;
    int other = 0;
    if (__builtin_expect(s == NULL, 0)) {
        if (t_claimed || region == NULL)
            return real[idx];
        s = t_slot = claim();
        if (s == NULL)
            return real[idx];
    } else if (__builtin_expect(*proc_mark == 0 || (uintptr_t)slot - t_sp + STACK_REACH >
                                                       2 * STACK_REACH,
                                0)) {
        s = not_mine(s, &other);
        if (s == NULL)
            return real[idx];
    }
    /* One instruction (xadd, no lock: only this thread writes its slot), so a signal
     * handler's call of the same function cannot lose a count. */
    uint64_t n = 1;
    __asm__ volatile("xaddq %0, %1" : "+r"(n), "+m"(s->fn[idx].count));
    if ((n & sample_mask) == 0 && !untimed[idx] && !other) {
        prune(slot);
        int d = t_depth;
        if (d < SHADOW) {
            /* A signal handler may time calls of its own at any instruction, pushing and
             * popping entries at index d. So: fill the entry, push it, fill it again (a
             * handler between the first fill and the push left its own data there), and
             * change the return address only if the entry is still pushed. */
            struct shadow *e = &t_sh[d];
            e->slot = slot;
            e->ret = *slot;
            e->idx = (uint32_t)idx;
            e->t0 = 0;
            BARRIER();
            t_depth = d + 1;
            BARRIER();
            e->slot = slot;
            e->ret = *slot;
            e->idx = (uint32_t)idx;
            e->t0 = 0;
            BARRIER();
            if (t_depth == d + 1) {
                *slot = (uint64_t)sm_ret_tramp;
                e->t0 = ticks();
            }
        }
    }
    return real[idx];
}

static void die(const char *why)
{
    ssize_t r = write(2, why, strlen(why));
    (void)r;
    abort();
}

__attribute__((visibility("hidden"))) uint64_t sm_leave(uint64_t sp)
{
    uint64_t t1 = ticks();
    uint64_t *slot = (uint64_t *)(sp - 8);
    int d = t_depth;
    while (d > 0 && t_sh[d - 1].slot != slot)
        d--;
    if (d == 0)
        die("sysmeter calls: a timed call returned through a frame it does not know\n");
    /* Copy the entry before popping it: a signal handler's timed call would reuse it. */
    struct shadow e = t_sh[d - 1];
    BARRIER();
    t_depth = d - 1;
    if (e.t0 != 0 && t1 > e.t0) {
        struct sm_fn *f = &t_slot->fn[e.idx];
        uint64_t dt = t1 - e.t0;
        f->timed++;
        f->sum += dt;
        f->hist[sm_bucket(dt)]++;
    }
    return e.ret;
}

/* Puts back the real return addresses of this thread's timed calls (newest first: a slot
 * reused by a newer live frame is restored from that frame's entry). */
static void restore_all(void)
{
    for (int d = t_depth; d > 0; d--) {
        struct shadow *e = &t_sh[d - 1];
        if (*e->slot == (uint64_t)sm_ret_tramp)
            *e->slot = e->ret;
    }
    t_depth = 0;
}

typedef int (*raise_fn)(void *);
/* The unwinder must see real return addresses, or a C++ throw through a timed call ends in
 * std::terminate; the calls in flight lose their time, never their count. */
__attribute__((visibility("default"))) int _Unwind_RaiseException(void *exc)
{
    static raise_fn next;
    restore_all();
    if (next == NULL)
        next = (raise_fn)dlsym(RTLD_NEXT, "_Unwind_RaiseException");
    return next(exc);
}

typedef int (*forced_fn)(void *, void *, void *);
__attribute__((visibility("default"))) int _Unwind_ForcedUnwind(void *exc, void *stop, void *arg)
{
    static forced_fn next;
    restore_all();
    if (next == NULL)
        next = (forced_fn)dlsym(RTLD_NEXT, "_Unwind_ForcedUnwind");
    return next(exc, stop, arg);
}

