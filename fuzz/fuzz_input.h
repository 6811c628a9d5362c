/* fuzz_input.h - hand a fuzz input to a parser that reads from a path: the
 * bytes go into an anonymous memory file (memfd) named by /proc/self/fd/N, so
 * the parser under test runs its real file path, with no disk I/O. */
#ifndef TS_FUZZ_INPUT_H
#define TS_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static inline int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t n)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) { close(fd); return -1; }
        off += (size_t)w;
    }
    lseek(fd, 0, SEEK_SET);
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
