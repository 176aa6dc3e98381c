/* The shared-memory layout of `locks`' in-process lock table (mutex.c), read by
 * crates/sysmeter/src/diagnose/locks/inproc/region.rs: keep both in step.
 * A header, a table of object paths, then one entry per lock of every process of the run. */
#ifndef LK_LAYOUT_H
#define LK_LAYOUT_H
#include <stdint.h>

#define LK_MAGIC 0x314b434f4c534d53ULL /* "SMSLOCK1" */
#define LK_MAX 4096                    /* locks of all processes (power of 2) */
#define LK_PATHS 64                    /* objects that call sites are resolved into */
#define LK_PATH 256                    /* bytes per path */

enum lk_kind { LK_MUTEX = 1, LK_RWLOCK = 2, LK_SPIN = 3, LK_COND = 4 };

struct lk_header {
    uint64_t magic;
    uint32_t max, used; /* entries; claimed so far (atomic) */
    uint32_t overflow;  /* locks that found no free entry */
    uint32_t images;    /* process images that loaded the library */
    uint32_t npaths;    /* paths registered (under `plock`) */
    uint32_t plock;     /* guards the path table */
    uint64_t pad[4];
    char paths[LK_PATHS][LK_PATH]; /* offset 64 */
};

/* A call site: the return address in the caller; once resolved (at the process's exit),
 * the object (`path` + 1, 0 = not resolved) and the file offset. */
struct lk_site {
    uint64_t addr;
    uint64_t offset;
    uint32_t path;
    uint32_t pad;
};

struct lk_lock {
    uint64_t addr;        /* the lock's address; 0 = free entry (claimed by CAS) */
    uint32_t pid, kind;   /* process; enum lk_kind */
    uint32_t last_owner;  /* thread of the last acquisition */
    uint32_t pad0;
    uint64_t locked;      /* acquisitions (condition variable: waits) */
    uint64_t contended;   /* acquisitions that had to wait (condvar: signals + broadcasts) */
    uint64_t changes;     /* acquisitions by another thread than the one before */
    uint64_t wait_ns, wait_max_ns; /* in the lock call when contended (condvar: in wait) */
    uint64_t hold_ns, hold_max_ns; /* acquisition to release */
    struct lk_site site;     /* first acquisition */
    struct lk_site max_site; /* acquisition of the longest hold */
};

#define LK_HEADER_SIZE (64 + LK_PATHS * LK_PATH)
#define LK_SIZE (LK_HEADER_SIZE + (uint64_t)LK_MAX * sizeof(struct lk_lock))
#endif
