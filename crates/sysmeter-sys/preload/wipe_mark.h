/* The one way every part of the preload library (calls.c, alloc.c, mutex.c) tells a copy of
 * its process apart: a private page that a child made without CLONE_VM (fork, or a raw
 * clone() that never runs pthread_atfork's handlers) gets zeroed (MADV_WIPEONFORK, Linux
 * 4.14). Each part keeps its own mark (the first to see a zero sets it back to 1, so one
 * shared mark would hide the copy from the others). */
#ifndef SM_WIPE_MARK_H
#define SM_WIPE_MARK_H
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A fresh mark holding 1, zeroed in a copy of this process; NULL where the kernel refuses
 * (then only the fork handlers tell a fork apart). The raw system call: this may run
 * inside an allocator hook, before libc's own wrappers are safe to call. */
static inline uint32_t *sm_wiped_mark(void)
{
    long r = syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (r < 0 && r > -4096)
        return NULL;
    uint32_t *m = (uint32_t *)r;
    *m = 1;
    if (madvise(m, 4096, MADV_WIPEONFORK) == 0)
        return m;
    syscall(SYS_munmap, m, 4096);
    return NULL;
}
#endif
