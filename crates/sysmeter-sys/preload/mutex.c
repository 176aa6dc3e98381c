/* `locks`' in-process lock table (mutrace's columns), in the preload library: when
 * SYSMETER_LOCKS_SHM names the run's region (a path: open_region.h), the pthread mutex, rwlock, spinlock and
 * condition-variable functions are counted and timed per lock into it; otherwise every hook
 * is one load and a jump to the real function.
 *
 * Per lock: acquisitions, those that had to wait (a try first; on EBUSY the real, blocking
 * call is timed), how often the owner changed, wait and hold time (acquisition to release,
 * from a per-thread stack of held locks), the call site of the first acquisition and of the
 * longest hold. A condition variable's wait releases its mutex inside glibc (no call we
 * see), so the hold ends at the wait and a new one starts at its return. Call sites are
 * return addresses; each process resolves its own into (object, file offset) at exit, so
 * sysmeter names them after the process is gone. Only calls through the dynamic linker are
 * seen (glibc's internal locking and Rust's std, which uses futex directly, are not: the
 * futex view of `locks` covers those). Layout in mutex.h. */
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

#include "open_region.h"
#include "wipe_mark.h"

#include "mutex.h"

/* The hooks replace libc's functions for the whole process (the library is built with
 * hidden visibility by default). */
#define EXPORT __attribute__((visibility("default")))
#define HELD 32

static struct lk_header *lk;
/* getpid() is a system call (~250 ns here): the pid is kept, and renewed in a forked child. */
static uint32_t lk_pid;
static __thread uint32_t t_tid __attribute__((tls_model("initial-exec")));

static void lk_forked(void)
{
    lk_pid = (uint32_t)getpid();
    t_tid = 0; /* the forking thread is the child's only one, under a new id */
}

/* This process's mark (wipe_mark.h): a zero means a copy still counting under its parent's
 * pid and thread. A static 1 until the page exists, or where the kernel refuses it. */
static uint32_t lk_mark_static = 1;
static uint32_t *lk_mark = &lk_mark_static;

/* A copy made by a raw clone() takes its own pid and thread id, as the fork handler would. */
static inline void lk_copied(void)
{
    if (__builtin_expect(*lk_mark == 0, 0)) {
        *lk_mark = 1;
        lk_forked();
    }
}

struct held {
    struct lk_lock *e;
    uint64_t t0, site;
};
static __thread struct held t_held[HELD] __attribute__((tls_model("initial-exec")));
static __thread int t_n __attribute__((tls_model("initial-exec")));

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t tid(void)
{
    if (t_tid == 0)
        t_tid = (uint32_t)syscall(SYS_gettid);
    return t_tid;
}

static void *next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

#define REAL(ret, name, ...)                                                                \
    static ret (*real_##name)(__VA_ARGS__);                                                 \
    static inline ret (*get_##name(void))(__VA_ARGS__)                                      \
    {                                                                                       \
        if (__builtin_expect(real_##name == NULL, 0))                                       \
            real_##name = (ret(*)(__VA_ARGS__))next(#name);                                 \
        return real_##name;                                                                 \
    }

REAL(int, pthread_mutex_lock, pthread_mutex_t *)
REAL(int, pthread_mutex_trylock, pthread_mutex_t *)
REAL(int, pthread_mutex_unlock, pthread_mutex_t *)
REAL(int, pthread_rwlock_rdlock, pthread_rwlock_t *)
REAL(int, pthread_rwlock_tryrdlock, pthread_rwlock_t *)
REAL(int, pthread_rwlock_wrlock, pthread_rwlock_t *)
REAL(int, pthread_rwlock_trywrlock, pthread_rwlock_t *)
REAL(int, pthread_rwlock_unlock, pthread_rwlock_t *)
REAL(int, pthread_spin_lock, pthread_spinlock_t *)
REAL(int, pthread_spin_trylock, pthread_spinlock_t *)
REAL(int, pthread_spin_unlock, pthread_spinlock_t *)
REAL(int, pthread_cond_wait, pthread_cond_t *, pthread_mutex_t *)
REAL(int, pthread_cond_timedwait, pthread_cond_t *, pthread_mutex_t *, const struct timespec *)
REAL(int, pthread_cond_signal, pthread_cond_t *)
REAL(int, pthread_cond_broadcast, pthread_cond_t *)

static void max_into(uint64_t *at, uint64_t v)
{
    uint64_t old = __atomic_load_n(at, __ATOMIC_RELAXED);
    while (v > old && !__atomic_compare_exchange_n(at, &old, v, 0, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
        ;
}

/* The entry of (this process, addr), claimed on first sight; NULL when the table is full. */
static struct lk_lock *entry(const void *addr, uint32_t kind, uint64_t site)
{
    lk_copied();
    struct lk_lock *t = (struct lk_lock *)((char *)lk + LK_HEADER_SIZE);
    uint32_t pid = lk_pid;
    uint64_t a = (uint64_t)addr;
    uint64_t h = (a >> 4) * 0x9e3779b97f4a7c15ULL ^ pid;
    for (uint32_t i = 0; i < LK_MAX;) {
        struct lk_lock *e = &t[(h + i) & (LK_MAX - 1)];
        uint64_t cur = __atomic_load_n(&e->addr, __ATOMIC_ACQUIRE);
        if (cur == 0) {
            /* Claim with the pid still 0; if another thread claims it first, look again. */
            if (!__atomic_compare_exchange_n(&e->addr, &cur, a, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
                continue;
            e->kind = kind;
            e->site.addr = site;
            __atomic_fetch_add(&lk->used, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&e->pid, pid, __ATOMIC_RELEASE);
            return e;
        }
        if (cur == a) {
            /* Being claimed by another thread: its pid follows the address. */
            while (__atomic_load_n(&e->pid, __ATOMIC_ACQUIRE) == 0)
                ;
            if (e->pid == pid)
                return e;
        }
        i++;
    }
    __atomic_fetch_add(&lk->overflow, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* An acquisition of `addr` that waited `waited` ns (contended when `busy`). */
static void acquired(const void *addr, uint32_t kind, uint64_t site, int busy, uint64_t waited)
{
    struct lk_lock *e = entry(addr, kind, site);
    if (e == NULL)
        return;
    uint32_t me = tid();
    __atomic_fetch_add(&e->locked, 1, __ATOMIC_RELAXED);
    if (busy) {
        __atomic_fetch_add(&e->contended, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&e->wait_ns, waited, __ATOMIC_RELAXED);
        max_into(&e->wait_max_ns, waited);
    }
    uint32_t before = __atomic_exchange_n(&e->last_owner, me, __ATOMIC_RELAXED);
    if (before != 0 && before != me)
        __atomic_fetch_add(&e->changes, 1, __ATOMIC_RELAXED);
    if (t_n < HELD)
        t_held[t_n] = (struct held){e, now(), site};
    t_n++;
}

/* The release of `addr` by this thread: its hold ends. */
static void released(const void *addr)
{
    uint64_t t = now();
    int top = t_n < HELD ? t_n : HELD;
    for (int i = top - 1; i >= 0; i--) {
        struct lk_lock *e = t_held[i].e;
        if (e->addr != (uint64_t)addr)
            continue;
        uint64_t held = t - t_held[i].t0;
        __atomic_fetch_add(&e->hold_ns, held, __ATOMIC_RELAXED);
        uint64_t old = __atomic_load_n(&e->hold_max_ns, __ATOMIC_RELAXED);
        if (held > old) {
            max_into(&e->hold_max_ns, held);
            e->max_site.addr = t_held[i].site;
        }
        memmove(&t_held[i], &t_held[i + 1], (size_t)(top - 1 - i) * sizeof t_held[0]);
        t_n--;
        return;
    }
    if (t_n > HELD)
        t_n--; /* held past the stack's depth: not timed */
}

/* Try first; if the lock is taken, the blocking call is the wait. */
#define LOCK(name, try, type, kind)                                                         \
    EXPORT int name(type *l)                                                                       \
    {                                                                                       \
        if (lk == NULL)                                                                     \
            return get_##name()(l);                                                         \
        uint64_t site = (uint64_t)__builtin_return_address(0);                              \
        int rc = get_##try()(l);                                                            \
        if (rc != EBUSY) {                                                                  \
            if (rc == 0)                                                                    \
                acquired((const void *)l, kind, site, 0, 0);                                           \
            return rc;                                                                      \
        }                                                                                   \
        uint64_t t0 = now();                                                                \
        rc = get_##name()(l);                                                               \
        if (rc == 0)                                                                        \
            acquired((const void *)l, kind, site, 1, now() - t0);                                      \
        return rc;                                                                          \
    }
#define TRY(name, type, kind)                                                               \
    EXPORT int name(type *l)                                                                       \
    {                                                                                       \
        int rc = get_##name()(l);                                                           \
        if (lk != NULL && rc == 0)                                                          \
            acquired((const void *)l, kind, (uint64_t)__builtin_return_address(0), 0, 0);              \
        return rc;                                                                          \
    }
#define UNLOCK(name, type)                                                                  \
    EXPORT int name(type *l)                                                                       \
    {                                                                                       \
        if (lk != NULL)                                                                     \
            released((const void *)l);                                                                \
        return get_##name()(l);                                                             \
    }

LOCK(pthread_mutex_lock, pthread_mutex_trylock, pthread_mutex_t, LK_MUTEX)
TRY(pthread_mutex_trylock, pthread_mutex_t, LK_MUTEX)
UNLOCK(pthread_mutex_unlock, pthread_mutex_t)
LOCK(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, pthread_rwlock_t, LK_RWLOCK)
LOCK(pthread_rwlock_wrlock, pthread_rwlock_trywrlock, pthread_rwlock_t, LK_RWLOCK)
TRY(pthread_rwlock_tryrdlock, pthread_rwlock_t, LK_RWLOCK)
TRY(pthread_rwlock_trywrlock, pthread_rwlock_t, LK_RWLOCK)
UNLOCK(pthread_rwlock_unlock, pthread_rwlock_t)
LOCK(pthread_spin_lock, pthread_spin_trylock, pthread_spinlock_t, LK_SPIN)
TRY(pthread_spin_trylock, pthread_spinlock_t, LK_SPIN)
UNLOCK(pthread_spin_unlock, pthread_spinlock_t)

/* A wait: the mutex's hold ends here and starts again at the return (glibc releases and
 * takes it back inside, where no hook sees it); the wait is the condition variable's. */
static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs,
                     uint64_t site)
{
    released(m);
    uint64_t t0 = now();
    int rc = abs ? get_pthread_cond_timedwait()(c, m, abs) : get_pthread_cond_wait()(c, m);
    uint64_t waited = now() - t0;
    struct lk_lock *e = entry(c, LK_COND, site);
    if (e != NULL) {
        __atomic_fetch_add(&e->locked, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&e->wait_ns, waited, __ATOMIC_RELAXED);
        max_into(&e->wait_max_ns, waited);
    }
    acquired(m, LK_MUTEX, site, 0, 0);
    return rc;
}

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (lk == NULL)
        return get_pthread_cond_wait()(c, m);
    return cond_wait(c, m, NULL, (uint64_t)__builtin_return_address(0));
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *abs)
{
    if (lk == NULL)
        return get_pthread_cond_timedwait()(c, m, abs);
    return cond_wait(c, m, abs, (uint64_t)__builtin_return_address(0));
}

#define WAKE(name)                                                                          \
    EXPORT int name(pthread_cond_t *c)                                                             \
    {                                                                                       \
        if (lk != NULL) {                                                                   \
            struct lk_lock *e = entry(c, LK_COND, (uint64_t)__builtin_return_address(0));   \
            if (e != NULL)                                                                  \
                __atomic_fetch_add(&e->contended, 1, __ATOMIC_RELAXED);                     \
        }                                                                                   \
        return get_##name()(c);                                                             \
    }
WAKE(pthread_cond_signal)
WAKE(pthread_cond_broadcast)

#include "mutex_sites.h"

__attribute__((destructor)) static void lk_fini(void)
{
    if (lk == NULL)
        return;
    struct lk_lock *t = (struct lk_lock *)((char *)lk + LK_HEADER_SIZE);
    uint32_t pid = (uint32_t)getpid();
    for (uint32_t i = 0; i < LK_MAX; i++)
        if (t[i].addr != 0 && t[i].pid == pid) {
            resolve(&t[i].site);
            resolve(&t[i].max_site);
        }
}

/* Every real function looked up before the program runs, so no hook calls dlsym while
 * another library (the allocator hooks) is inside it. */
__attribute__((constructor(101))) static void lk_resolve(void)
{
    get_pthread_mutex_lock(), get_pthread_mutex_trylock(), get_pthread_mutex_unlock();
    get_pthread_rwlock_rdlock(), get_pthread_rwlock_tryrdlock(), get_pthread_rwlock_wrlock();
    get_pthread_rwlock_trywrlock(), get_pthread_rwlock_unlock();
    get_pthread_spin_lock(), get_pthread_spin_trylock(), get_pthread_spin_unlock();
    get_pthread_cond_wait(), get_pthread_cond_timedwait();
    get_pthread_cond_signal(), get_pthread_cond_broadcast();
}

__attribute__((constructor)) static void lk_init(void)
{
    const char *fd = getenv("SYSMETER_LOCKS_SHM");
    if (fd == NULL)
        return;
    int shm = sm_open_region(fd);
    if (shm < 0)
        return;
    void *m = mmap(NULL, LK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
    close(shm);
    if (m == MAP_FAILED)
        return;
    struct lk_header *h = m;
    if (h->magic != LK_MAGIC || h->max != LK_MAX) {
        munmap(m, LK_SIZE);
        return;
    }
    __atomic_fetch_add(&h->images, 1, __ATOMIC_RELAXED);
    lk_pid = (uint32_t)getpid();
    uint32_t *mark = sm_wiped_mark();
    if (mark != NULL)
        lk_mark = mark;
    pthread_atfork(NULL, NULL, lk_forked);
    lk = h;
}
