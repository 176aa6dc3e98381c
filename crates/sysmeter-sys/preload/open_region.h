/* How every part of the preload library (calls, funcs, alloc, locks) reaches the run's
 * shared region: by the path sysmeter puts in the environment, opened by each process image
 * at load, so a region survives a program that closed its descriptors and then execs. */
#ifndef SM_OPEN_REGION_H
#define SM_OPEN_REGION_H
#include <fcntl.h>

/* Opens the run's region named by an environment variable: a path that stays valid while
 * sysmeter runs (`/proc/<sysmeter's pid>/fd/N`, never an inherited descriptor a program may
 * have closed before an exec). Close-on-exec; -1 when it cannot be opened. */
static inline int sm_open_region(const char *path)
{
    return path != NULL && path[0] == '/' ? open(path, O_RDWR | O_CLOEXEC) : -1;
}
#endif
