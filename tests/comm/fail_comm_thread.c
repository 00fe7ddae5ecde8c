/* LD_PRELOAD library for test_comm_thread_fail_np2: pthread_create fails (EAGAIN) when
 * called from rill_comm_mpi_start_thread (librill's comm thread) in the MPI rank named by
 * RILL_TEST_FAIL_COMM_THREAD_RANK; every other call goes to the real one. librill exports
 * only its API, so the caller is found in the library's full symbol table (.symtab, kept
 * in the build tree), not with dladdr's dynamic one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* Whether offset off of the ELF file path lies inside function name (from .symtab). */
static int in_function(const char *path, uintptr_t off, const char *name)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    const char *f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED)
        return 0;
    int found = 0;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(f + sh[i].sh_offset);
        const char *str = f + sh[sh[i].sh_link].sh_offset;
        for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
            if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && !strcmp(str + sym[k].st_name, name) &&
                off >= sym[k].st_value && off < sym[k].st_value + sym[k].st_size) {
                found = 1;
                break;
            }
    }
    munmap((void *)f, (size_t)st.st_size);
    return found;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    static create_fn real;
    if (!real)
        real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    const char *want = getenv("RILL_TEST_FAIL_COMM_THREAD_RANK");
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    void *caller = __builtin_return_address(0);
    Dl_info info;
    if (want && rank && !strcmp(want, rank) && dladdr(caller, &info) && info.dli_fname &&
        in_function(info.dli_fname, (uintptr_t)caller - (uintptr_t)info.dli_fbase,
                    "rill_comm_mpi_start_thread"))
        return EAGAIN;
    return real ? real(thread, attr, start, arg) : ENOSYS;
}
