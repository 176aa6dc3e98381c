/* The programs a process of the run exec'd that the library cannot enter (a static program:
 * no dynamic linker to load it; a setuid or setgid one: the dynamic linker ignores
 * LD_PRELOAD there), noted by exec.c in the header page of the run's region at
 * SM_NOTES_AT, the same place in `calls`' and `alloc`'s regions (read by
 * crates/sysmeter/src/diagnose/observe/not_entered.rs: keep both in step). */
#ifndef SM_EXEC_NOTES_H
#define SM_EXEC_NOTES_H
#include <stdint.h>

#define SM_NOTES_AT 3200 /* after calls' name table (64 + 64 x 48), inside the 4 KiB page */
#define SM_NOTES 13
#define SM_NOTE_PATH 56

/* SM_NOT_UNREACHABLE: the process dropped its privileges and closed the descriptors that
 * would reach the run's files (exec_env.h). */
enum { SM_NOT_STATIC = 1, SM_NOT_SETUID = 2, SM_NOT_UNREACHABLE = 3 };

struct sm_note {
    uint32_t pid, why;
    char path[SM_NOTE_PATH]; /* as the program gave it to exec, cut to fit */
};

struct sm_notes {
    uint32_t n;    /* notes taken (atomic); beyond SM_NOTES counted in `lost` */
    uint32_t lost;
    struct sm_note note[SM_NOTES];
};
#endif
