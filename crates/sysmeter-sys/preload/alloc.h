/* The shared-memory layout of `sysmeter alloc` (read by
 * crates/sysmeter/src/diagnose/alloc/region.rs: keep both in step). One memfd per run, mapped
 * by every process image of the run that loads the preload library with SYSMETER_ALLOC_SHM
 * set; it outlives `_exit`, crashes and exec chains. In order:
 *
 *   header (4 KiB) | SA_PROCS process records | SA_STACKS call stacks |
 *   SA_PROCS x SA_STACKS site counters (a process's counters per stack)
 *
 * Only touched pages of the memfd take memory; sysmeter reads the used parts. */
#ifndef SA_ALLOC_H
#define SA_ALLOC_H
#include <stdint.h>

#define SA_MAGIC 0x31434f4c4c414d53ULL /* "SMALLOC1" */
#define SA_PROCS 32       /* process images of a run; more are counted as lost */
#define SA_STACKS 32768   /* distinct (image, call stack) pairs; power of 2 */
#define SA_DEPTH 32       /* return addresses kept per stack, innermost first */
#define SA_OBJS 128       /* loaded objects recorded per process image */
#define SA_PATH 120       /* bytes per object path */
#define SA_HIST 48        /* log2 size classes: bucket b holds sizes in [2^(b-1), 2^b) */

struct sa_header {
    uint64_t magic;
    uint32_t nprocs;      /* process records claimed (atomic) */
    uint32_t nstacks;     /* stacks inserted (atomic) */
    uint32_t lost_procs;  /* processes that found no free record */
    uint32_t lost_stacks; /* allocations whose stack found no room (counted at stack 0) */
    uint32_t unwinder;    /* 0: libgcc's DWARF walk, 1: frame pointers, 2: libunwind */
    uint32_t images;      /* process images that loaded the library (atomic) */
    uint32_t root;        /* pid of the first process to load it: the launched one */
};

struct sa_obj {
    uint64_t bias;     /* load bias: runtime address - address stated in the file */
    uint64_t lo, hi;   /* runtime range of its PT_LOAD segments */
    char path[SA_PATH];
};

struct sa_proc {
    uint32_t claimed, pid, ppid, image; /* image: load of the library, 1, 2, ... */
    uint64_t start_ns;   /* CLOCK_MONOTONIC when the library started in this image */
    uint64_t live;       /* bytes live now (allocated here, not yet freed) */
    uint64_t live_count; /* blocks live now */
    uint64_t peak;       /* most bytes live at once */
    uint64_t peak_ns;    /* CLOCK_MONOTONIC when the peak was reached */
    uint64_t allocs, frees, temps;
    uint64_t foreign_frees; /* frees of blocks this image did not see allocated */
    uint64_t untracked;     /* allocations not kept: the pointer table was full */
    uint32_t peak_lock, nobjs;
    uint32_t forked, pad;
    char exe[48];
    uint64_t hist[SA_HIST];  /* allocations per log2 size class */
    struct sa_obj objs[SA_OBJS];
};

struct sa_stack {
    uint64_t hash;
    uint32_t state; /* 0 free, 1 being written, 2 ready */
    uint32_t depth;
    uint32_t image;
    uint32_t pad;
    uint64_t pc[SA_DEPTH];
};

/* One process's counters for one stack. */
struct sa_site {
    uint64_t allocs, bytes;     /* allocations made at this stack, their bytes */
    uint64_t frees, freed;      /* of those, freed (anywhere in this process), their bytes */
    uint64_t temps;             /* freed by the allocating thread before its next allocation */
    uint64_t mmaps;             /* of the allocations, anonymous mmaps */
    uint64_t pad[2];
};

#define SA_HEADER_SIZE 4096
#define SA_PROCS_AT SA_HEADER_SIZE
#define SA_STACKS_AT (SA_PROCS_AT + (uint64_t)SA_PROCS * sizeof(struct sa_proc))
#define SA_SITES_AT (SA_STACKS_AT + (uint64_t)SA_STACKS * sizeof(struct sa_stack))
#define SA_SIZE (SA_SITES_AT + (uint64_t)SA_PROCS * SA_STACKS * sizeof(struct sa_site))
#endif
