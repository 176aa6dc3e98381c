/* The exec path of the preload library: before a process of the run execs a program, look
 * at what it execs, and when the library cannot enter it (a static program; a setuid or
 * setgid one that changes the process's ids, so the dynamic linker ignores LD_PRELOAD)
 * note it in the run's region (exec_notes.h): sysmeter names it in its first finding
 * instead of counting nothing in silence. A script is judged by its interpreter (`#!`,
 * followed a few levels; `/usr/bin/env NAME` is itself entered and notes NAME when it
 * execs it).
 *
 * execve, execv, execvp and execvpe are interposed. They may run in a vfork child: no
 * allocation, no lazy symbol lookup (the real functions are found at load), errno kept. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "exec_notes.h"
#include "layout.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define API __attribute__((visibility("default")))
extern HIDDEN struct sm_header *region;
HIDDEN void *sa_header_page(void);

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
static execve_fn real_execve;
static execvpe_fn real_execvpe;
static execvp_fn real_execvp;

__attribute__((constructor)) static void exec_resolve(void)
{
    real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
    real_execvpe = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    real_execvp = (execvp_fn)dlsym(RTLD_NEXT, "execvp");
}

/* Whether the ELF file open at `fd` has no PT_INTERP (static); 0 for anything else. */
static int is_static(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG))
        return 0;
    for (int i = 0; i < eh.e_phnum && i < 64; i++) {
        Elf64_Phdr ph;
        off_t at = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);
        if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph)
            return 0;
        if (ph.p_type == PT_INTERP)
            return 0;
    }
    return 1;
}

/* Whether exec of the file open at `fd` changes the process's ids (setuid or setgid to
 * someone else, on a file system that honours it): the dynamic linker then runs in secure
 * mode and ignores LD_PRELOAD. */
static int changes_ids(int fd)
{
    struct stat st;
    struct statvfs fs;
    if (fstat(fd, &st) != 0 || (fstatvfs(fd, &fs) == 0 && (fs.f_flag & ST_NOSUID)))
        return 0;
    return ((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
           ((st.st_mode & S_ISGID) && st.st_gid != getgid());
}

/* Why the library cannot enter `path` (SM_NOT_*), or 0; `depth` bounds the `#!` chain. */
static uint32_t why_not(const char *path, int depth)
{
    int fd = depth > 4 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char head[128];
    ssize_t n = pread(fd, head, sizeof head - 1, 0);
    uint32_t why = 0;
    if (n > 2 && head[0] == '#' && head[1] == '!') {
        head[n] = 0;
        char *p = head + 2;
        while (*p == ' ' || *p == '\t')
            p++;
        p[strcspn(p, " \t\n")] = 0;
        why = *p == '/' ? why_not(p, depth + 1) : 0;
    } else if (changes_ids(fd)) {
        why = SM_NOT_SETUID;
    } else if (is_static(fd)) {
        why = SM_NOT_STATIC;
    }
    close(fd);
    return why;
}

static struct sm_notes *notes(void)
{
    void *page = region != NULL ? (void *)region : sa_header_page();
    return page == NULL ? NULL : (struct sm_notes *)((char *)page + SM_NOTES_AT);
}

/* Notes `path` when the library cannot enter it. */
static void look_before_exec(const char *path)
{
    struct sm_notes *t = notes();
    if (t == NULL || path == NULL)
        return;
    int saved = errno;
    uint32_t why = why_not(path, 0);
    if (why != 0) {
        uint32_t i = __atomic_fetch_add(&t->n, 1, __ATOMIC_RELAXED);
        if (i < SM_NOTES) {
            struct sm_note *e = &t->note[i];
            strncpy(e->path, path, SM_NOTE_PATH - 1);
            e->why = why;
            __atomic_store_n(&e->pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
        } else {
            __atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
        }
    }
    errno = saved;
}

/* The file execvp would run for `file`: `file` itself when it names a path, else the first
 * executable `dir/file` on PATH (written into `buf`); NULL when none is found. */
static const char *on_path(const char *file, char *buf, size_t len)
{
    if (strchr(file, '/') != NULL)
        return file;
    const char *dirs = getenv("PATH");
    for (const char *d = dirs ? dirs : "/bin:/usr/bin"; *d;) {
        size_t n = strcspn(d, ":");
        if (n + strlen(file) + 2 < len) {
            memcpy(buf, n ? d : ".", n ? n : 1);
            size_t at = n ? n : 1;
            buf[at] = '/';
            strcpy(buf + at + 1, file);
            if (access(buf, X_OK) == 0)
                return buf;
        }
        d += n + (d[n] == ':');
    }
    return NULL;
}

/* The real functions, found at load (or here, if a constructor execs before ours ran). */
static void ready(void)
{
    if (real_execve == NULL || real_execvpe == NULL || real_execvp == NULL)
        exec_resolve();
}

API int execve(const char *path, char *const argv[], char *const envp[])
{
    ready();
    look_before_exec(path);
    return real_execve(path, argv, envp);
}

API int execv(const char *path, char *const argv[])
{
    ready();
    look_before_exec(path);
    return real_execve(path, argv, environ);
}

API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    char buf[512];
    ready();
    look_before_exec(on_path(file, buf, sizeof buf));
    return real_execvpe(file, argv, envp);
}

API int execvp(const char *file, char *const argv[])
{
    char buf[512];
    ready();
    look_before_exec(on_path(file, buf, sizeof buf));
    return real_execvp(file, argv);
}
