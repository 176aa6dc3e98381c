/* The shared-memory layout between the preload library and sysmeter (read by
 * crates/sysmeter/src/diagnose/calls/inproc/region.rs: keep both in step).
 * A header page, then one slot per thread of every process of the run. */
#ifndef SM_LAYOUT_H
#define SM_LAYOUT_H
#include <stdint.h>

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
