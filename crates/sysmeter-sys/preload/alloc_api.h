/* The interposed allocation functions and the start-up of `sysmeter alloc` (included by
 * alloc.c, whose statics they use). Each wrapper: off, or inside the library's own
 * allocation (t_busy) -> the real function; on -> the real function, then the record. */

#define ENTER() t_busy = 1
#define LEAVE() t_busy = 0
#define FP() ((uintptr_t *)__builtin_frame_address(0))

/* Off (a `calls` run), each hot wrapper is a test and a jump to the next definition; the
 * rest is out of line, so the off path saves no registers and sets up no frame. */
#define OFF(f) __builtin_expect(on == 0 && real.f != NULL, 1)
#define SLOW __attribute__((noinline))

static SLOW void *malloc_on(size_t n)
{
    READY(malloc);
    if (__builtin_expect(real.malloc == NULL, 0))
        return boot_alloc(n);
    if (!on || t_busy)
        return real.malloc(n);
    ENTER();
    void *p = real.malloc(n);
    record(p, n, FP(), 0);
    LEAVE();
    return p;
}

API void *malloc(size_t n)
{
    if (OFF(malloc))
        return real.malloc(n);
    return malloc_on(n);
}

static SLOW void *calloc_on(size_t a, size_t b)
{
    READY(calloc);
    size_t n;
    if (__builtin_expect(real.calloc == NULL, 0))
        return __builtin_mul_overflow(a, b, &n) ? NULL : boot_alloc(n);
    if (!on || t_busy)
        return real.calloc(a, b);
    ENTER();
    void *p = real.calloc(a, b);
    if (!__builtin_mul_overflow(a, b, &n))
        record(p, n, FP(), 0);
    LEAVE();
    return p;
}

API void *calloc(size_t a, size_t b)
{
    if (OFF(calloc))
        return real.calloc(a, b);
    return calloc_on(a, b);
}

static SLOW void free_on(void *p)
{
    if (p == NULL || is_boot(p))
        return;
    READY(free);
    if (on && !t_busy) {
        ENTER();
        forget(p);
        LEAVE();
    }
    real.free(p);
}

API void free(void *p)
{
    if (OFF(free) && !is_boot(p))
        return real.free(p);
    free_on(p);
}

static void *realloc_boot(void *p, size_t n)
{
    size_t room = (size_t)(boot + sizeof boot - (char *)p);
    void *q = malloc(n);
    if (q)
        memcpy(q, p, n < room ? n : room);
    return q;
}

static SLOW void *realloc_on(void *p, size_t n)
{
    if (p != NULL && is_boot(p))
        return realloc_boot(p, n);
    READY(realloc);
    if (!on || t_busy)
        return real.realloc(p, n);
    ENTER();
    struct entry old;
    int had = p != NULL && me != NULL && table != NULL && take((uint64_t)p, &old);
    void *q = real.realloc(p, n);
    if (q == NULL && n != 0 && p != NULL) {
        if (had && !put((uint64_t)p, old)) /* failed: the old block stays */
            account(&old);
    } else {
        if (had)
            account(&old);
        else if (p != NULL && me != NULL)
            __atomic_fetch_add(&me->foreign_frees, 1, __ATOMIC_RELAXED);
        record(q, n, FP(), 0);
    }
    LEAVE();
    return q;
}

API void *realloc(void *p, size_t n)
{
    if (OFF(realloc) && !is_boot(p))
        return real.realloc(p, n);
    return realloc_on(p, n);
}

API int posix_memalign(void **out, size_t align, size_t n)
{
    READY(posix_memalign);
    if (!on || t_busy)
        return real.posix_memalign(out, align, n);
    ENTER();
    int r = real.posix_memalign(out, align, n);
    if (r == 0)
        record(*out, n, FP(), 0);
    LEAVE();
    return r;
}

#define ALIGNED(name, args, call, size)                                                       \
    API void *name args                                                                       \
    {                                                                                         \
        READY(name);                                                                          \
        if (!on || t_busy)                                                                    \
            return real.name call;                                                            \
        ENTER();                                                                              \
        void *p = real.name call;                                                             \
        record(p, size, FP(), 0);                                                             \
        LEAVE();                                                                              \
        return p;                                                                             \
    }
ALIGNED(aligned_alloc, (size_t al, size_t n), (al, n), n)
ALIGNED(memalign, (size_t al, size_t n), (al, n), n)
ALIGNED(valloc, (size_t n), (n), n)
ALIGNED(pvalloc, (size_t n), (n), n)

/* Anonymous, not fixed: memory the program asked for (a fixed map overlays memory it
 * reserved already). The C library's own maps (large malloc blocks, thread stacks) do not
 * come through here. */
API void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    READY(mmap);
    void *p = real.mmap(addr, len, prot, flags, fd, off);
    if (on && !t_busy && p != MAP_FAILED && (flags & MAP_ANONYMOUS) && !(flags & MAP_FIXED)) {
        ENTER();
        record(p, len, FP(), 1);
        LEAVE();
    }
    return p;
}
API void *mmap64(void *, size_t, int, int, int, off_t) __attribute__((alias("mmap")));

/* A map is freed whole when it is unmapped from its start. */
API int munmap(void *addr, size_t len)
{
    READY(munmap);
    if (on && !t_busy && me != NULL && table != NULL) {
        ENTER();
        struct entry e;
        if (take((uint64_t)addr, &e)) {
            if (e.mmap)
                account(&e);
            else if (!put((uint64_t)addr, e))
                account(&e);
        }
        LEAVE();
    }
    return real.munmap(addr, len);
}

/* ---- start-up ---- */

static void *raw_map(size_t len, int flags, int fd)
{
    long r = syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
    return r < 0 && r > -4096 ? NULL : (void *)r;
}

static int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct sa_proc *p = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        lo = a < lo ? a : lo;
        hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
    }
    if (lo >= hi)
        return 0;
    if ((uintptr_t)note_object >= lo && (uintptr_t)note_object < hi) {
        own_lo = lo; /* our own frames are left out of every stack */
        own_hi = hi;
    }
    if (p == NULL || p->nobjs >= SA_OBJS)
        return 0;
    struct sa_obj *o = &p->objs[p->nobjs];
    const char *name = info->dlpi_name;
    if (name == NULL || name[0] == 0) {
        ssize_t n = readlink("/proc/self/exe", o->path, SA_PATH - 1);
        o->path[n > 0 ? n : 0] = 0;
    } else if (name[0] == '/') {
        strncpy(o->path, name, SA_PATH - 1);
    } else {
        return 0; /* the vDSO */
    }
    o->bias = info->dlpi_addr;
    o->lo = lo;
    o->hi = hi;
    __atomic_store_n(&p->nobjs, p->nobjs + 1, __ATOMIC_RELEASE);
    return 0;
}

/* Whether this process is counted: every process with -f (SYSMETER_ALLOC_FOLLOW), else only
 * the launched one (the first to load the library: its pid is the run's root) and the
 * images it execs, never a forked child (so a shell's or a shim's children take no record
 * from the program they start). */
static int counted(int forked)
{
    if (follow)
        return 1;
    uint32_t pid = (uint32_t)getpid(), none = 0;
    __atomic_compare_exchange_n(&hdr->root, &none, pid, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return !forked && __atomic_load_n(&hdr->root, __ATOMIC_ACQUIRE) == pid;
}

static void claim(int forked)
{
    make_mark();
    *proc_mark = 1; /* this process's record from now on (a fork's handler got here first) */
    if (!counted(forked)) {
        me = NULL;
        return;
    }
    uint32_t n = __atomic_fetch_add(&hdr->nprocs, 1, __ATOMIC_RELAXED);
    if (n >= SA_PROCS) {
        __atomic_fetch_add(&hdr->lost_procs, 1, __ATOMIC_RELAXED);
        me = NULL;
        return;
    }
    struct sa_proc *parent = me, *p = (struct sa_proc *)((char *)hdr + SA_PROCS_AT) + n;
    p->pid = (uint32_t)getpid();
    p->ppid = (uint32_t)getppid();
    p->image = image;
    p->forked = (uint32_t)forked;
    p->start_ns = now_ns();
    strncpy(p->exe, program_invocation_short_name, sizeof p->exe - 1);
    if (forked && parent != NULL) {
        memcpy(p->objs, parent->objs, sizeof p->objs);
        p->nobjs = parent->nobjs;
    } else {
        p->nobjs = 0;
        dl_iterate_phdr(note_object, p);
    }
    me = p;
    me_idx = n;
    __atomic_store_n(&p->claimed, 1, __ATOMIC_RELEASE);
}

static void forked_child(void)
{
    if (hdr != NULL)
        claim(1);
}

/* DWARF CFI: libunwind where it is installed (it caches each return address's rule per
 * thread: several times cheaper), else libgcc's _Unwind_Backtrace (always there with C++
 * or Rust; slower: it interprets the CFI at every frame). SYSMETER_ALLOC_UNWIND=gcc forces
 * libgcc's. */
static void choose_unwinder(const char *how)
{
    void *unw = how != NULL && strcmp(how, "gcc") == 0 ? NULL
                                                        : dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (unw != NULL) {
        unw_backtrace = (unw_backtrace_fn)dlsym(unw, "unw_backtrace");
        unw_policy_fn policy = (unw_policy_fn)dlsym(unw, "_ULx86_64_set_caching_policy");
        void *space = dlsym(unw, "_ULx86_64_local_addr_space");
        if (policy != NULL && space != NULL)
            policy(*(void **)space, 2); /* UNW_CACHE_PER_THREAD */
        if (unw_backtrace != NULL) {
            hdr->unwinder = 2;
            return;
        }
    }
    void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    unwind_backtrace = gcc ? (trace_fn)dlsym(gcc, "_Unwind_Backtrace") : NULL;
    unwind_getip = gcc ? (getip_fn)dlsym(gcc, "_Unwind_GetIP") : NULL;
    if (unwind_getip == NULL)
        unwind_backtrace = NULL;
    hdr->unwinder = unwind_backtrace == NULL;
}

__attribute__((constructor)) static void sa_init(void)
{
    const char *path = getenv("SYSMETER_ALLOC_SHM");
    if (path == NULL || hdr != NULL)
        return;
    READY(malloc);
    ENTER();
    int fd = sm_open_region(path);
    struct sa_header *m = fd < 0 ? NULL : raw_map(SA_SIZE, MAP_SHARED, fd);
    if (fd >= 0)
        close(fd);
    table = raw_map(TABLE * sizeof(struct entry), MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1);
    if (m == NULL || m->magic != SA_MAGIC || table == NULL) {
        LEAVE();
        return;
    }
    hdr = m;
    const char *how = getenv("SYSMETER_ALLOC_UNWIND");
    use_fp = how != NULL && strcmp(how, "fp") == 0;
    follow = getenv("SYSMETER_ALLOC_FOLLOW") != NULL;
    hdr->unwinder = 1;
    if (!use_fp)
        choose_unwinder(how);
    image = __atomic_add_fetch(&hdr->images, 1, __ATOMIC_RELAXED);
    claim(0);
    pthread_atfork(NULL, NULL, forked_child);
    on = 1;
    LEAVE();
}

/* At a normal exit, the objects again: libraries opened after start-up get names too. */
__attribute__((destructor)) static void sa_fini(void)
{
    if (me == NULL || me->forked)
        return;
    ENTER();
    me->nobjs = 0;
    dl_iterate_phdr(note_object, me);
    LEAVE();
}
