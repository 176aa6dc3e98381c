/* Start-up of the `calls` preload library: map the region, calibrate the hook, and patch
 * the program's GOT slots of the chosen functions to point at the stubs (calls.c). Only the
 * program's own slots are patched: these are its calls to shared libraries, the same sites
 * the uprobe backend probes at the PLT stubs. With LD_BIND_NOW=1 (set by sysmeter) every
 * slot holds its final target already, IFUNC and vDSO targets included; a RELRO GOT is
 * made writable for the patch and read-only again. */
#define _GNU_SOURCE
#include <elf.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "layout.h"

#define HIDDEN __attribute__((visibility("hidden")))
extern HIDDEN struct sm_header *region;
extern HIDDEN uint64_t sample_mask;
extern HIDDEN uint32_t image;
extern HIDDEN void *real[SM_MAXF];
extern HIDDEN unsigned char untimed[SM_MAXF];
extern HIDDEN char sm_stubs[];
HIDDEN void sm_forked(void);
HIDDEN void sm_functions_init(int fd);

/* Return twice or never: counted, never timed (their return address is left alone). Never
 * timed either: functions that look at their caller's frame. */
static const char *const untimed_names[] = {
    "setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "vfork", "getcontext", "setcontext",
    "swapcontext", "makecontext", "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
    "__cxa_throw", "__cxa_rethrow", "_Unwind_Resume", "_Unwind_RaiseException", "exit",
    "_exit", "_Exit", "quick_exit", "abort", "pthread_exit", "__libc_start_main", "clone",
    "clone3", "fork", "backtrace", "dlsym", "dlvsym", "dlopen", "dlmopen", "dladdr",
    "dladdr1", "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
    "fexecve", "__stack_chk_fail", "__assert_fail", "err", "errx", "verr", "verrx",
    "__cxa_finalize", "__cxa_atexit", NULL};

static int never_timed(const char *name)
{
    for (int i = 0; untimed_names[i]; i++)
        if (strcmp(untimed_names[i], name) == 0)
            return 1;
    return 0;
}

/* The run-wide index of `name`, registered when new; -1 when the table is full. */
static int name_index(const char *name)
{
    while (__atomic_exchange_n(&region->lock, 1, __ATOMIC_ACQUIRE))
        ;
    int n = (int)region->nfuncs, found = -1;
    for (int i = 1; i < n; i++)
        if (strncmp(region->names[i], name, SM_NAME - 1) == 0)
            found = i;
    if (found < 0 && n < SM_MAXF) {
        strncpy(region->names[n], name, SM_NAME - 1);
        __atomic_store_n(&region->nfuncs, n + 1, __ATOMIC_RELEASE);
        found = n;
    }
    __atomic_store_n(&region->lock, 0, __ATOMIC_RELEASE);
    return found;
}

static int wanted(const char *name, const char *globs)
{
    char one[128];
    const char *p = globs;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len > 0 && len < sizeof one) {
            memcpy(one, p, len);
            one[len] = 0;
            if (fnmatch(one, name, 0) == 0)
                return 1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

struct dyn {
    const ElfW(Rela) * jmprel;
    size_t relsz;
    const ElfW(Sym) * symtab;
    const char *strtab;
};

static uintptr_t fix(uintptr_t v, uintptr_t base) { return v < base ? v + base : v; }

static struct dyn read_dynamic(const ElfW(Dyn) * d, uintptr_t base)
{
    struct dyn r = {0};
    for (; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_JMPREL)
            r.jmprel = (const ElfW(Rela) *)fix(d->d_un.d_ptr, base);
        else if (d->d_tag == DT_PLTRELSZ)
            r.relsz = d->d_un.d_val;
        else if (d->d_tag == DT_SYMTAB)
            r.symtab = (const ElfW(Sym) *)fix(d->d_un.d_ptr, base);
        else if (d->d_tag == DT_STRTAB)
            r.strtab = (const char *)fix(d->d_un.d_ptr, base);
    }
    return r;
}

static void patch_slots(struct dyn *r, uintptr_t base, const char *globs)
{
    for (size_t i = 0; i < r->relsz / sizeof(ElfW(Rela)); i++) {
        const ElfW(Rela) *rel = &r->jmprel[i];
        if (ELF64_R_TYPE(rel->r_info) != R_X86_64_JUMP_SLOT)
            continue;
        const char *name = r->strtab + r->symtab[ELF64_R_SYM(rel->r_info)].st_name;
        if (!wanted(name, globs))
            continue;
        int idx = name_index(name);
        if (idx < 0)
            continue;
        void **got = (void **)(base + rel->r_offset);
        real[idx] = *got;
        untimed[idx] = (unsigned char)never_timed(name);
        *got = sm_stubs + 16 * idx;
    }
}

static int patch_program(struct dl_phdr_info *info, size_t size, void *globs)
{
    (void)size;
    const ElfW(Dyn) *dynamic = NULL;
    uintptr_t relro = 0, relro_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_GNU_RELRO) {
            relro = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)4095;
            relro_end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    if (dynamic == NULL)
        return 1;
    struct dyn r = read_dynamic(dynamic, info->dlpi_addr);
    if (r.jmprel == NULL || r.symtab == NULL || r.strtab == NULL)
        return 1;
    if (relro)
        mprotect((void *)relro, relro_end - relro, PROT_READ | PROT_WRITE);
    patch_slots(&r, info->dlpi_addr, globs);
    if (relro)
        mprotect((void *)relro, relro_end - relro, PROT_READ);
    return 1; /* the program is the first object: stop */
}

__attribute__((noinline)) static void empty(void) { __asm__ volatile(""); }

/* Times an empty function through the same hook and mode as the program's calls: the
 * hook's own share of a timed call, subtracted by sysmeter. */
static void calibrate(void)
{
    real[0] = (void *)empty;
    void (*volatile through)(void) = (void (*)(void))(void *)sm_stubs;
    uint64_t calls = 4096 * (sample_mask + 1);
    if (calls > (1u << 20))
        calls = 1u << 20;
    for (uint64_t i = 0; i < calls; i++)
        through();
}

/* The smallest step of the time-stamp counter: on some VMs it advances ~24 ticks at a time,
 * a floor on what any timed call can resolve. */
static uint32_t counter_step(void)
{
    uint64_t best = UINT32_MAX, prev, now;
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    prev = ((uint64_t)hi << 32) | lo;
    for (int i = 0; i < 1000; i++) {
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        now = ((uint64_t)hi << 32) | lo;
        if (now > prev && now - prev < best)
            best = now - prev;
        prev = now;
    }
    return (uint32_t)best;
}

/* The region's path is in SYSMETER_CALLS_SHM (layout.h: sm_open_region). */
__attribute__((constructor)) static void sm_init(void)
{
    const char *fd = getenv("SYSMETER_CALLS_SHM");
    const char *globs = getenv("SYSMETER_CALLS_FUNCS");
    const char *every = getenv("SYSMETER_CALLS_SAMPLE");
    if (fd == NULL || globs == NULL)
        return;
    int shm = sm_open_region(fd);
    if (shm < 0)
        return;
    void *m = mmap(NULL, SM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
    if (m == MAP_FAILED || ((struct sm_header *)m)->magic != SM_MAGIC) {
        close(shm);
        return;
    }
    uint64_t n = every ? strtoull(every, NULL, 10) : 64;
    sample_mask = (n >= 1 && (n & (n - 1)) == 0) ? n - 1 : 63;
    region = m;
    image = __atomic_add_fetch(&region->images, 1, __ATOMIC_RELAXED);
    pthread_atfork(NULL, NULL, sm_forked);
    uint32_t step = counter_step();
    if (region->step == 0 || step < region->step)
        region->step = step;
    calibrate();
    dl_iterate_phdr(patch_program, (void *)globs);
    if (getenv("SYSMETER_CALLS_FUNCTIONS") != NULL)
        sm_functions_init(shm);
    close(shm);
}
