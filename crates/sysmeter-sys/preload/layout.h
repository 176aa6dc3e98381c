/* The shared-memory layout between the preload library and sysmeter (read by
 * crates/sysmeter/src/diagnose/calls/inproc/region.rs: keep both in step).
 * A header page, then one slot per thread of every process of the run. */
#ifndef SM_LAYOUT_H
#define SM_LAYOUT_H
#include <stdint.h>

#include "open_region.h"

#define SM_MAGIC 0x31534c4c4143534dULL /* "MSCALLS1" */
#define SM_MAXF 64      /* functions per run; index 0 is the calibration function */
#define SM_NAME 48      /* bytes per function name */
#define SM_NB 320       /* histogram buckets of timed calls (ticks) */
#define SM_MAXSLOTS 512 /* threads of all processes */

struct sm_header {
    uint64_t magic;
    uint32_t maxf, maxslots;
    uint32_t nfuncs;   /* names registered so far (atomic) */
    uint32_t nslots;   /* slots claimed so far (atomic) */
    uint32_t lock;     /* guards the name table */
    uint32_t lost;     /* threads that found no free slot */
    uint32_t images;   /* process images that loaded the library */
    uint32_t step;     /* smallest step of the time-stamp counter, ticks */
    uint32_t pad[6];
    char names[SM_MAXF][SM_NAME]; /* offset 64 */
};

struct sm_fn {
    uint64_t count;  /* every call */
    uint64_t timed;  /* calls timed */
    uint64_t sum;    /* ticks of the timed calls */
    uint64_t pad;
    uint32_t hist[SM_NB];
};

struct sm_slot {
    uint32_t claimed, pid, tid, image;
    uint64_t sample_every; /* 1: every call timed */
    char exe[48];
    struct sm_fn fn[SM_MAXF];
};

#define SM_HEADER_SIZE 4096
#define SM_SIZE (SM_HEADER_SIZE + (uint64_t)SM_MAXSLOTS * sizeof(struct sm_slot))

/* `calls --functions`: the hooks of -finstrument-functions (funcs.c) keep, per thread, a
 * calling-context tree of the program's own functions in an area after the slots (read by
 * crates/sysmeter/src/diagnose/calls/inproc/funcs_region.rs: keep both in step). Area 0 is
 * the calibration's (an empty function through the hooks). */
#define SM_FTHREADS 64    /* threads with a tree; more are counted as lost */
#define SM_FDEPTH 4096    /* shadow-stack frames per thread */
#define SM_FACTIVE 4096   /* distinct functions per thread (power of 2) */
#define SM_FNODES 16384   /* tree nodes per thread (power of 2) */
#define SM_FCALB 64       /* paired calibration blocks */
#define SM_FCALN 256      /* calls per calibration block */

struct sm_fhead {
    uint32_t nthreads; /* areas claimed (atomic) */
    uint32_t lost;     /* threads that found no free area */
    uint32_t on;       /* the hooks record */
    uint32_t blocks;   /* calibration blocks done (half at start, half at exit) */
    int64_t block[SM_FCALB]; /* ticks of SM_FCALN hooked calls less as many plain ones */
    uint32_t hist[SM_NB];    /* ticks inside one empty hooked call, per bucket */
    uint64_t sum;            /* ticks inside the empty hooked calls, all of them */
};

struct sm_frame {
    uint64_t fn, t0, child, desc;
    uint64_t sp; /* the stack pointer in the entry hook: deeper frames have lower ones */
    uint32_t node, act, kids, outer;
};

/* One node of the tree: `fn` called from the context `parent` (index + 1; 0: the root). */
struct sm_node {
    uint64_t fn;
    uint32_t parent, pad;
    uint64_t count;   /* calls (at entry) */
    uint64_t timed;   /* calls that returned through the exit hook */
    uint64_t self;    /* ticks in the function itself, of the timed calls */
    uint64_t kids;    /* direct calls made by the timed calls */
    uint64_t incl;    /* ticks of the outermost activations (recursion counted once) */
    uint64_t ocount;  /* outermost activations timed */
    uint64_t odesc;   /* calls made inside the outermost activations, at any depth */
    uint64_t unwound; /* activations left by longjmp (no exit hook) */
};

struct sm_active {
    uint64_t fn, n;
};

struct sm_fthread {
    uint32_t claimed, pid, tid, image;
    uint64_t base;    /* load bias of the program */
    uint32_t depth;   /* frames on the shadow stack */
    uint32_t over;    /* calls deeper than SM_FDEPTH in flight */
    uint32_t full;    /* calls not recorded: the tree was full */
    uint32_t deep;    /* calls not recorded: deeper than SM_FDEPTH */
    uint64_t pad[3];
    struct sm_frame frames[SM_FDEPTH];
    struct sm_active active[SM_FACTIVE];
    struct sm_node nodes[SM_FNODES];
};

#define SM_FHEAD_SIZE 4096
#define SM_FSIZE (SM_FHEAD_SIZE + (uint64_t)SM_FTHREADS * sizeof(struct sm_fthread))

/* Takes the next of `max` records, counted by `*taken`: its index, or -1 (counted in
 * `*lost`) when all are taken. */
static inline int64_t sm_take(uint32_t *taken, uint32_t max, uint32_t *lost)
{
    uint32_t n = __atomic_fetch_add(taken, 1, __ATOMIC_RELAXED);
    if (n >= max) {
        __atomic_fetch_add(lost, 1, __ATOMIC_RELAXED);
        return -1;
    }
    return n;
}

/* Histogram bucket of a duration in ticks: exact below 16, then 8 per octave. */
static inline uint32_t sm_bucket(uint64_t t)
{
    if (t < 16)
        return (uint32_t)t;
    uint32_t e = 63 - (uint32_t)__builtin_clzll(t);
    uint32_t b = 16 + (e - 4) * 8 + (uint32_t)((t >> (e - 3)) & 7);
    return b < SM_NB ? b : SM_NB - 1;
}
#endif
