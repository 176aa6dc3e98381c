/* Where `locks`' in-process table names a call site: each process resolves its own return
 * addresses at exit into (object, file offset), the object registered once in the region's
 * path table. Included by mutex.c alone, after its `lk` (the region's header). */
#ifndef LK_SITES_H
#define LK_SITES_H
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "mutex.h"

/* The object holding `site` and its file offset, for this process's entries at exit. */
struct find {
    uint64_t addr, offset;
    const char *path;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find *f = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uint64_t start = info->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && f->addr >= start && f->addr < start + p->p_memsz) {
            f->offset = f->addr - start + p->p_offset;
            f->path = info->dlpi_name;
            return 1;
        }
    }
    return 0;
}

static uint32_t path_index(const char *path)
{
    char exe[LK_PATH];
    if (path == NULL || path[0] == 0) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = 0;
        path = exe;
    }
    uint32_t zero = 0;
    while (!__atomic_compare_exchange_n(&lk->plock, &zero, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
        zero = 0;
    uint32_t i, found = 0;
    for (i = 0; i < lk->npaths; i++)
        if (strncmp(lk->paths[i], path, LK_PATH) == 0) {
            found = i + 1;
            break;
        }
    if (!found && lk->npaths < LK_PATHS) {
        size_t n = strnlen(path, LK_PATH - 1);
        memcpy(lk->paths[lk->npaths], path, n);
        lk->paths[lk->npaths][n] = 0;
        found = ++lk->npaths;
    }
    __atomic_store_n(&lk->plock, 0, __ATOMIC_RELEASE);
    return found;
}

static void resolve(struct lk_site *s)
{
    if (s->addr == 0 || s->path != 0)
        return;
    struct find f = {s->addr, 0, NULL};
    if (dl_iterate_phdr(find_object, &f) == 0)
        return;
    s->offset = f.offset;
    s->path = path_index(f.path);
}
#endif
