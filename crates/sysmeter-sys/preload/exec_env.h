/* The environment of every exec and spawn of a process of the run (included by exec.c
 * alone): what the program passes, with the run's variables put back where it dropped them
 * (`env -i PROG`, `execve(path, argv, (char *[]){NULL})`, posix_spawn with an empty
 * environment) and LD_PRELOAD naming the library again, so the next image is entered as a
 * direct launch's is.
 *
 * A process that dropped its privileges (setuid to nobody, then exec: daemons, sudo -u,
 * su) can no longer open sysmeter's `/proc/<sysmeter pid>/fd/N` paths, which need the
 * right to look into sysmeter's process. A process that runs as root keeps, from its load,
 * one descriptor of the library and one of each region (close-on-exec, numbered from
 * SM_KEEP_FROM up); when, at an exec, a path cannot be opened, that descriptor is passed on
 * (close-on-exec cleared) and named to the next image as `/proc/self/fd/N`, which any
 * process may open; the next image adopts it (close-on-exec again, kept for its own
 * execs). When neither works (the program also closed that descriptor), the library's
 * entry is left out of LD_PRELOAD (the dynamic linker would complain on the program's
 * stderr) and the caller notes the program as not entered (SM_NOT_UNREACHABLE).
 *
 * Runs in vfork children: no allocation, everything on the stack or in statics written at
 * load only. */
#ifndef SM_EXEC_ENV_H
#define SM_EXEC_ENV_H
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SM_KEPT 8         /* the run's SYSMETER_* variables kept */
#define SM_KEEP_FROM 500  /* kept descriptors are numbered from here, out of a program's way */
#define SM_ENV_BUF 4096   /* the variables rewritten for one exec */

extern char **environ;

/* A file the run needs reachable (the library, a region): its variable as found at load
 * ("SYSMETER_ALLOC_SHM=/proc/123/fd/5"; for the library its path alone), the length of the
 * variable's name and `=`, and the descriptor kept of it (-1: none) with its identity. */
struct sm_reach {
    const char *var;
    size_t key_len;
    int fd;
    dev_t dev;
    ino_t ino;
};

static struct sm_reach sm_vars[SM_KEPT];
static int sm_nvars;
static struct sm_reach sm_lib = {NULL, 0, -1, 0, 0};
static char sm_lib_path[512];

/* Keeps a descriptor of `path` for a later exec: the one named `/proc/self/fd/N` is adopted
 * (the last exec passed it on), any other opened while this process may (root). */
static void sm_keep(struct sm_reach *r, const char *path, int flags)
{
    struct stat st;
    int fd = -1;
    if (strncmp(path, "/proc/self/fd/", 14) == 0) {
        fd = atoi(path + 14);
        if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
            fd = -1;
    } else if (geteuid() == 0) {
        int opened = open(path, flags | O_CLOEXEC);
        fd = opened < 0 ? -1 : fcntl(opened, F_DUPFD_CLOEXEC, SM_KEEP_FROM);
        if (opened >= 0)
            close(opened);
    }
    if (fd >= 0 && fstat(fd, &st) == 0) {
        r->fd = fd;
        r->dev = st.st_dev;
        r->ino = st.st_ino;
    }
}

static int sm_is_run_var(const char *e)
{
    return strncmp(e, "SYSMETER_CALLS_", 15) == 0 || strncmp(e, "SYSMETER_ALLOC_", 15) == 0 ||
           strncmp(e, "SYSMETER_LOCKS_", 15) == 0;
}

/* At load: the run's variables (with LD_BIND_NOW in a `calls` run) and the library's path (as the dynamic linker was given
 * it), and the descriptors to keep of them. Nothing when this is no run of sysmeter's. */
static void sm_env_init(void)
{
    const char *bind_now = NULL, *calls = NULL;
    for (char **e = environ; e != NULL && *e != NULL && sm_nvars < SM_KEPT - 1; e++) {
        if (strncmp(*e, "LD_BIND_NOW=", 12) == 0)
            bind_now = *e;
        if (strncmp(*e, "SYSMETER_CALLS_", 15) == 0)
            calls = *e;
        if (!sm_is_run_var(*e))
            continue;
        struct sm_reach *r = &sm_vars[sm_nvars++];
        r->var = *e;
        r->key_len = (size_t)(strchr(*e, '=') - *e) + 1;
        r->fd = -1;
        size_t n = strlen(*e);
        if (n > 4 + r->key_len && strncmp(*e + r->key_len - 5, "_SHM=", 5) == 0)
            sm_keep(r, *e + r->key_len, O_RDWR);
    }
    /* `calls` patches the program's GOT at load: lazy binding would undo it. */
    if (calls != NULL && bind_now != NULL)
        sm_vars[sm_nvars++] = (struct sm_reach){bind_now, 12, -1, 0, 0};
    Dl_info info;
    if (sm_nvars == 0 || dladdr((void *)sm_env_init, &info) == 0 || info.dli_fname == NULL ||
        strlen(info.dli_fname) >= sizeof sm_lib_path)
        return;
    strcpy(sm_lib_path, info.dli_fname);
    sm_lib.var = sm_lib_path;
    sm_keep(&sm_lib, sm_lib_path, O_RDONLY);
}

/* Whether the kept descriptor of `r` still holds the file it was opened on. */
static int sm_kept(const struct sm_reach *r)
{
    struct stat st;
    return r->fd >= 0 && fstat(r->fd, &st) == 0 && st.st_dev == r->dev && st.st_ino == r->ino;
}

/* The path the next image reaches `r` by (`path` where this process can open it, else the
 * kept descriptor passed on), written at `*at` in the caller's buffer; NULL when neither
 * works. `passed` collects the descriptors whose close-on-exec was cleared. */
static const char *sm_reach_path(const struct sm_reach *r, const char *path, int flags,
                                 char **at, char *end, int *passed)
{
    /* A descriptor adopted from the last exec is close-on-exec here: always passed on. */
    int fd = strncmp(path, "/proc/self/fd/", 14) == 0 ? -1 : open(path, flags | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return path;
    }
    if (!sm_kept(r) || fcntl(r->fd, F_SETFD, 0) != 0)
        return NULL;
    for (int i = 0; i < SM_KEPT + 1; i++)
        if (passed[i] < 0) {
            passed[i] = r->fd;
            break;
        }
    int n = snprintf(*at, (size_t)(end - *at), "/proc/self/fd/%d", r->fd);
    if (n < 0 || *at + n + 1 > end)
        return NULL;
    const char *p = *at;
    *at += n + 1;
    return p;
}

/* `key` + `value` (+ `tail`) written at `*at`; NULL when it does not fit. */
static char *sm_put(char **at, char *end, const char *key, size_t key_len, const char *value,
                    const char *tail)
{
    size_t v = strlen(value), t = tail ? strlen(tail) : 0;
    if (*at + key_len + v + t + 1 > end)
        return NULL;
    char *p = *at;
    memcpy(p, key, key_len);
    memcpy(p + key_len, value, v);
    memcpy(p + key_len + v, tail ? tail : "", t + 1);
    *at += key_len + v + t + 1;
    return p;
}

/* Whether the LD_PRELOAD entry `e` already names the library. */
static int sm_preloads_us(const char *e, const char *lib)
{
    size_t n = strlen(lib);
    for (const char *p = e + 11; (p = strstr(p, lib)) != NULL; p += n)
        if ((p == e + 11 || p[-1] == ':' || p[-1] == ' ') &&
            (p[n] == 0 || p[n] == ':' || p[n] == ' '))
            return 1;
    return 0;
}

/* The LD_PRELOAD entry `e` without the library's path (the one it had at load), written at
 * `*at`; NULL when nothing is left (or `e` is NULL). */
static char *sm_without(const char *e, char **at, char *end)
{
    if (e == NULL || (size_t)(end - *at) < strlen(e) + 1)
        return NULL;
    char *out = *at, *w = out + 11;
    memcpy(out, e, 11);
    size_t lib = strlen(sm_lib_path);
    for (const char *p = e + 11; *p;) {
        size_t n = strcspn(p, ": ");
        if (n > 0 && !(n == lib && strncmp(p, sm_lib_path, n) == 0)) {
            if (w > out + 11)
                *w++ = ':';
            memcpy(w, p, n);
            w += n;
        }
        p += n + (p[n] != 0);
    }
    *w = 0;
    *at = w + 1;
    return w > out + 11 ? out : NULL;
}

/* The environment for an exec: `envp` without LD_PRELOAD and the run's variables, then the
 * run's variables as they reach the next image, then LD_PRELOAD with the library last.
 * `out` has room for every entry of `envp` and SM_KEPT + 2 more. Returns `envp` itself when
 * this is no run; sets `*unreachable` when the library cannot reach the next image. */
static char *const *sm_env_for_exec(char *const envp[], char **out, char *buf, int *passed,
                                    int *unreachable)
{
    if (sm_lib.var == NULL)
        return envp;
    char *at = buf, *end = buf + SM_ENV_BUF;
    const char *preload = NULL;
    size_t n = 0;
    for (char *const *e = envp; e != NULL && *e != NULL; e++) {
        int ours = strncmp(*e, "LD_PRELOAD=", 11) == 0;
        if (ours)
            preload = *e;
        for (int i = 0; i < sm_nvars && !ours; i++)
            ours = strncmp(*e, sm_vars[i].var, sm_vars[i].key_len) == 0;
        if (!ours)
            out[n++] = *e;
    }
    for (int i = 0; i < sm_nvars; i++) {
        const struct sm_reach *r = &sm_vars[i];
        const char *value = r->var + r->key_len;
        if (r->fd >= 0 || strncmp(value, "/proc/", 6) == 0)
            value = sm_reach_path(r, value, O_RDWR, &at, end, passed);
        out[n] = value ? sm_put(&at, end, r->var, r->key_len, value, NULL) : NULL;
        *unreachable |= out[n] == NULL;
        n += out[n] != NULL;
    }
    const char *lib = *unreachable ? NULL : sm_reach_path(&sm_lib, sm_lib_path, O_RDONLY, &at,
                                                          end, passed);
    *unreachable |= lib == NULL;
    /* The program's own preloads, without the library's path of the load (a path this
     * process may no longer reach), then the library as the next image reaches it. */
    int kept = lib != NULL && preload != NULL && sm_preloads_us(preload, lib);
    char *entry = kept ? (char *)preload : sm_without(preload, &at, end);
    if (lib != NULL && !kept)
        entry = entry != NULL ? sm_put(&at, end, entry, strlen(entry), ":", lib)
                              : sm_put(&at, end, "LD_PRELOAD=", 11, lib, NULL);
    if (entry != NULL)
        out[n++] = entry;
    out[n] = NULL;
    return out;
}

/* After an exec or spawn that returned: the descriptors passed on are close-on-exec again. */
static void sm_env_after(const int *passed)
{
    for (int i = 0; i < SM_KEPT + 1; i++)
        if (passed[i] >= 0)
            fcntl(passed[i], F_SETFD, FD_CLOEXEC);
}
#endif
