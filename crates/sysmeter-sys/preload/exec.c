/* The exec path of the preload library: before a process of the run execs a program, look
 * at what it execs, and when the library cannot enter it (a static program; a setuid or
 * setgid one that changes the process's ids, so the dynamic linker ignores LD_PRELOAD; a
 * process that dropped its privileges and closed what reaches the run, exec_env.h) note it
 * in the run's region (exec_notes.h): sysmeter names it in its first finding instead of
 * counting nothing in silence. A script is judged by its interpreter (`#!`, followed a few
 * levels; `/usr/bin/env NAME` is itself entered and notes NAME when it execs it).
 *
 * execve, execv, execvp, execvpe, posix_spawn and posix_spawnp are interposed; each passes
 * the next image the run's environment (exec_env.h: put back where the program cleared it,
 * `env -i`). They may run in a vfork child: no allocation, no lazy symbol lookup (the real
 * functions are found at load), errno kept. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "exec_env.h"
#include "exec_notes.h"
#include "layout.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define API __attribute__((visibility("default")))
extern HIDDEN struct sm_header *region;
HIDDEN void *sa_header_page(void);

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
static execve_fn real_execve;
static execvpe_fn real_execvpe;
static spawn_fn real_posix_spawn, real_posix_spawnp;

static void exec_resolve(void)
{
    real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
    real_execvpe = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    real_posix_spawn = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
    real_posix_spawnp = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawnp");
}

__attribute__((constructor)) static void exec_init(void)
{
    exec_resolve();
    sm_env_init();
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

/* Notes `path`, exec'd by process `pid`, when the library cannot enter it (`unreachable`:
 * the run's files cannot reach it). */
static void look_before_exec(const char *path, pid_t pid, int unreachable)
{
    struct sm_notes *t = notes();
    if (t == NULL || path == NULL)
        return;
    int saved = errno;
    uint32_t why = why_not(path, 0);
    why = why == 0 && unreachable ? SM_NOT_UNREACHABLE : why;
    if (why != 0) {
        uint32_t i = __atomic_fetch_add(&t->n, 1, __ATOMIC_RELAXED);
        if (i < SM_NOTES) {
            struct sm_note *e = &t->note[i];
            strncpy(e->path, path, SM_NOTE_PATH - 1);
            e->why = why;
            __atomic_store_n(&e->pid, (uint32_t)pid, __ATOMIC_RELEASE);
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
    if (real_execve == NULL || real_execvpe == NULL || real_posix_spawn == NULL ||
        real_posix_spawnp == NULL)
        exec_resolve();
}

/* What one exec or spawn needs on the caller's stack: the rewritten variables, the
 * descriptors passed on, whether the run cannot reach the next image. */
struct sm_exec {
    char buf[SM_ENV_BUF];
    int passed[SM_KEPT + 1];
    int unreachable;
};

/* Room for `envp`'s entries, the run's variables, LD_PRELOAD and the end. */
static size_t room(char *const envp[])
{
    size_t n = 0;
    while (envp != NULL && envp[n] != NULL)
        n++;
    return n + SM_KEPT + 2;
}

static char *const *run_env(struct sm_exec *x, char *const envp[], char **out)
{
    int saved = errno;
    x->unreachable = 0;
    for (int i = 0; i < SM_KEPT + 1; i++)
        x->passed[i] = -1;
    char *const *env = sm_env_for_exec(envp, out, x->buf, x->passed, &x->unreachable);
    errno = saved;
    return env;
}

/* After an exec that returned (it failed) or a spawn. */
static void after(const struct sm_exec *x)
{
    int saved = errno;
    sm_env_after(x->passed);
    errno = saved;
}

API int execve(const char *path, char *const argv[], char *const envp[])
{
    ready();
    struct sm_exec x;
    char *out[room(envp)];
    char *const *env = run_env(&x, envp, out);
    look_before_exec(path, getpid(), x.unreachable);
    int rc = real_execve(path, argv, env);
    after(&x);
    return rc;
}

API int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    char buf[512];
    ready();
    struct sm_exec x;
    char *out[room(envp)];
    char *const *env = run_env(&x, envp, out);
    look_before_exec(on_path(file, buf, sizeof buf), getpid(), x.unreachable);
    int rc = real_execvpe(file, argv, env);
    after(&x);
    return rc;
}

API int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* A spawn's child is noted under its own pid, once it exists. */
static int spawn(spawn_fn real, pid_t *pid, const char *path, const char *file,
                 const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attr,
                 char *const argv[], char *const envp[])
{
    struct sm_exec x;
    char *out[room(envp)];
    char *const *env = run_env(&x, envp, out);
    pid_t child = 0;
    int rc = real(&child, file, actions, attr, argv, env);
    after(&x);
    if (rc == 0)
        look_before_exec(path, child, x.unreachable);
    if (pid != NULL)
        *pid = child;
    return rc;
}

API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    ready();
    return spawn(real_posix_spawn, pid, path, path, actions, attr, argv, envp);
}

API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    char buf[512];
    ready();
    const char *path = on_path(file, buf, sizeof buf);
    return spawn(real_posix_spawnp, pid, path, file, actions, attr, argv, envp);
}
