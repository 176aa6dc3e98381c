/* `calls --functions`: the hooks a program built with -finstrument-functions calls at the
 * entry and exit of each of its own functions. The program's undefined references to
 * __cyg_profile_func_enter/exit bind to these definitions (the preload comes before libc,
 * whose versions do nothing).
 *
 * Each thread keeps, in its own area of the shared region (struct sm_fthread in layout.h),
 * a shadow stack and a calling-context tree: one node per (calling context, function) with
 * its exact call count, the ticks in the function itself and, for the outermost activation
 * of a recursion only, the ticks with its callees. No malloc and no lock in a hook: the
 * area is the thread's alone, claimed once with one atomic add. Frames whose exit hooks
 * never ran (longjmp; an exception unwound by Clang's code) are popped at the next entry
 * hook by their stack pointer, or by an exit hook whose function is not on top; they keep
 * their count and lose their time. fork copies the stack into a new area of the
 * child. The first area times an empty function through the hooks (the calibration), at
 * start and again at exit. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "layout.h"

_Static_assert(SM_SIZE % 4096 == 0, "the functions area is mapped at SM_SIZE");

#define HIDDEN __attribute__((visibility("hidden")))
#define NONE 0xffffffffu
extern HIDDEN uint32_t image;

HIDDEN struct sm_fhead *fhead;
static uintptr_t fbase;
static struct sm_fthread *fcal_area; /* area 0, when this image calibrated */
static pid_t fcal_pid;
static __thread struct sm_fthread *t_ft __attribute__((tls_model("initial-exec")));
static __thread int t_fclaimed __attribute__((tls_model("initial-exec")));

static inline uint64_t now(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static struct sm_fthread *area(uint32_t n)
{
    return (struct sm_fthread *)((char *)fhead + SM_FHEAD_SIZE) + n;
}

static struct sm_fthread *fclaim(void)
{
    t_fclaimed = 1;
    int64_t n = sm_take(&fhead->nthreads, SM_FTHREADS, &fhead->lost);
    if (n < 0)
        return NULL;
    struct sm_fthread *t = area((uint32_t)n);
    /* Fault every page of the area in now: a first touch inside a hook would land in the
     * caller's time (a few µs each on a VM). */
    for (size_t at = 0; at < sizeof *t; at += 4096)
        __atomic_fetch_add((char *)t + at, 0, __ATOMIC_RELAXED);
    t->pid = (uint32_t)getpid();
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->image = image;
    t->base = fbase;
    __atomic_store_n(&t->claimed, 1, __ATOMIC_RELEASE);
    return t;
}

static inline struct sm_fthread *me(void)
{
    struct sm_fthread *t = t_ft;
    if (__builtin_expect(t != NULL, 1))
        return t;
    if (t_fclaimed || fhead == NULL || !fhead->on)
        return NULL;
    return t_ft = fclaim();
}

static inline uint32_t hash(uint64_t a, uint64_t b, unsigned bits)
{
    uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ b;
    h *= 0xff51afd7ed558ccdULL;
    return (uint32_t)(h >> (64 - bits));
}

/* The node of `fn` under context `parent` (index + 1; 0: the root), made when new. */
static uint32_t node_of(struct sm_fthread *t, uint32_t parent, uint64_t fn)
{
    uint32_t i = hash(parent, fn, 14);
    for (uint32_t k = 0; k < 64; k++, i = (i + 1) & (SM_FNODES - 1)) {
        struct sm_node *n = &t->nodes[i];
        if (n->fn == fn && n->parent == parent)
            return i;
        if (n->fn == 0) {
            n->parent = parent;
            __atomic_store_n(&n->fn, fn, __ATOMIC_RELEASE);
            return i;
        }
    }
    return NONE;
}

static uint32_t active_of(struct sm_fthread *t, uint64_t fn)
{
    uint32_t i = hash(0, fn, 12);
    for (uint32_t k = 0; k < 64; k++, i = (i + 1) & (SM_FACTIVE - 1)) {
        struct sm_active *a = &t->active[i];
        if (a->fn == fn)
            return i;
        if (a->fn == 0) {
            a->fn = fn;
            return i;
        }
    }
    return NONE;
}

/* Pushes `fn` on the stack of `t` (a call in context `parent`); counts it when `count`. */
static void push(struct sm_fthread *t, uint32_t d, uint64_t fn, int count)
{
    uint32_t parent = d ? t->frames[d - 1].node : 0;
    uint32_t node = parent == NONE ? NONE : node_of(t, d ? parent + 1 : 0, fn);
    uint32_t act = active_of(t, fn);
    struct sm_frame *f = &t->frames[d];
    f->fn = fn;
    f->node = node;
    f->act = act;
    f->child = f->desc = 0;
    f->kids = 0;
    f->outer = act == NONE || t->active[act].n == 0;
    if (act != NONE)
        t->active[act].n++;
    if (node == NONE)
        t->full += (uint32_t)count;
    else if (count) /* one instruction: a signal handler's calls cannot lose it */
        __asm__ volatile("addq $1, %0" : "+m"(t->nodes[node].count));
    t->depth = d + 1;
}

static inline uint64_t stack_pointer(void)
{
    uint64_t sp;
    __asm__ volatile("movq %%rsp, %0" : "=r"(sp));
    return sp;
}

static void unwound(struct sm_fthread *t, uint32_t i);

__attribute__((visibility("default"))) void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    struct sm_fthread *t = me();
    if (t == NULL)
        return;
    /* Frames at or below this stack pointer are gone: left by longjmp, or by an exception
     * whose unwinding ran no exit hook (Clang). Live callers are above it; a frame more than
     * 8 MiB below is another stack's (a signal stack), left alone. */
    uint64_t sp = stack_pointer();
    uint32_t d = t->depth;
    while (d > 0 && sp - t->frames[d - 1].sp < (1u << 23) && t->over == 0) {
        unwound(t, d - 1);
        d--;
    }
    t->depth = d;
    if (d >= SM_FDEPTH) {
        t->over++;
        t->deep++;
        return;
    }
    push(t, d, (uint64_t)fn, 1);
    t->frames[d].sp = sp;
    t->frames[d].t0 = now();
}

/* Frame `i` ends without its exit hook (longjmp): its count stays, its time is lost. */
static void unwound(struct sm_fthread *t, uint32_t i)
{
    struct sm_frame *f = &t->frames[i];
    if (f->node != NONE)
        t->nodes[f->node].unwound++;
    if (f->act != NONE)
        t->active[f->act].n--;
    if (i > 0) {
        t->frames[i - 1].desc += f->desc + 1;
        t->frames[i - 1].kids++;
    }
}

static void account(struct sm_fthread *t, struct sm_frame *f, uint64_t dt)
{
    struct sm_node *n = &t->nodes[f->node];
    n->timed++;
    n->self += dt - (f->child < dt ? f->child : dt);
    n->kids += f->kids;
    if (f->outer) {
        n->incl += dt;
        n->ocount++;
        n->odesc += f->desc;
    }
}

__attribute__((visibility("default"))) void __cyg_profile_func_exit(void *fn, void *site)
{
    uint64_t t1 = now();
    (void)site;
    struct sm_fthread *t = t_ft;
    if (t == NULL)
        return;
    if (t->over) {
        t->over--;
        return;
    }
    uint32_t d = t->depth, m = d;
    while (m > 0 && t->frames[m - 1].fn != (uint64_t)fn)
        m--;
    if (m == 0)
        return; /* not ours: entered before the area was claimed */
    for (; d > m; d--)
        unwound(t, d - 1);
    struct sm_frame *f = &t->frames[m - 1];
    uint64_t dt = t1 > f->t0 ? t1 - f->t0 : 0;
    if (f->node != NONE)
        account(t, f, dt);
    if (f->act != NONE)
        t->active[f->act].n--;
    if (m > 1) {
        struct sm_frame *p = &t->frames[m - 2];
        p->child += dt;
        p->desc += f->desc + 1;
        p->kids++;
    }
    t->depth = m - 1;
}

/* The child of fork continues the parent's stack in an area of its own. */
static void fforked(void)
{
    struct sm_fthread *old = t_ft;
    t_ft = NULL;
    t_fclaimed = 0;
    if (old == NULL)
        return;
    struct sm_fthread *t = me();
    if (t == NULL)
        return;
    for (uint32_t d = 0; d < old->depth; d++) {
        push(t, d, old->frames[d].fn, 0);
        t->frames[d].sp = old->frames[d].sp;
        t->frames[d].t0 = old->frames[d].t0;
        t->frames[d].outer = old->frames[d].outer;
    }
    t->over = old->over;
}

__attribute__((noinline)) static void cal_plain(void) { __asm__ volatile(""); }

__attribute__((noinline)) static void cal_hooked(void)
{
    __cyg_profile_func_enter((void *)cal_hooked, __builtin_return_address(0));
    __asm__ volatile("");
    __cyg_profile_func_exit((void *)cal_hooked, __builtin_return_address(0));
}

/* In area 0: the ticks inside one empty hooked call (a histogram and their sum), and
 * paired blocks of hooked against plain calls (what a call's hooks add to its caller's
 * time), blocks [from, to). Run at start and again at exit, so that a drift of the hooks'
 * cost over the run widens the spread instead of going unseen. */
static void fcalibrate(uint32_t from, uint32_t to)
{
    struct sm_fthread *t = t_ft;
    void (*volatile plain)(void) = cal_plain;
    void (*volatile hooked)(void) = cal_hooked;
    uint32_t at = node_of(t, 0, (uint64_t)cal_hooked);
    if (at == NONE)
        return;
    struct sm_node *n = &t->nodes[at];
    for (int i = 0; i < 2048; i++) {
        uint64_t before = n->self;
        hooked();
        fhead->hist[sm_bucket(n->self - before)]++;
        fhead->sum += n->self - before;
    }
    for (uint32_t b = from; b < to; b++) {
        uint64_t x0 = now();
        for (int i = 0; i < SM_FCALN; i++)
            plain();
        uint64_t x1 = now();
        for (int i = 0; i < SM_FCALN; i++)
            hooked();
        uint64_t x2 = now();
        fhead->block[b] = (int64_t)(x2 - x1) - (int64_t)(x1 - x0);
        fhead->blocks = b + 1;
    }
}

/* The second half of the calibration, when the first image's program exits normally. */
__attribute__((destructor)) static void fcalibrate_end(void)
{
    if (fhead == NULL || fcal_area == NULL || getpid() != fcal_pid)
        return;
    struct sm_fthread *own = t_ft;
    int claimed = t_fclaimed;
    t_ft = fcal_area;
    fcalibrate(SM_FCALB / 2, SM_FCALB);
    t_ft = own;
    t_fclaimed = claimed;
}

static int program_base(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    *(uintptr_t *)out = info->dlpi_addr;
    return 1; /* the program is the first object */
}

/* Called by the library's constructor when SYSMETER_CALLS_FUNCTIONS is set. */
HIDDEN void sm_functions_init(int fd)
{
    void *m = mmap(NULL, SM_FSIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, SM_SIZE);
    if (m == MAP_FAILED)
        return;
    dl_iterate_phdr(program_base, &fbase);
    fhead = m;
    pthread_atfork(NULL, NULL, fforked);
    if (__atomic_fetch_add(&fhead->on, 0, __ATOMIC_RELAXED) == 0) {
        fhead->on = 1;
        fcal_area = me();
        fcal_pid = getpid();
        if (fcal_area != NULL)
            fcalibrate(0, SM_FCALB / 2);
        t_ft = NULL;
        t_fclaimed = 0;
    }
}
