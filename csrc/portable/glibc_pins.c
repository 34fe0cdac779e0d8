/* Portable wheel only (CMake option PYDP_PORTABLE_WHEEL, x86_64 glibc): lets the extension built on a
 * new glibc load on glibc 2.17 (manylinux2014).
 *
 * The linker binds every reference to the newest version of a glibc symbol that the build host has. The
 * extension (and the libstdc++ linked statically into it) refers to a few symbols whose newest version
 * is younger than 2.17. Each is defined here as a hidden symbol of the extension, so that every object
 * of the link binds to this definition instead:
 *   - math and pthread functions that glibc re-versioned (exp, log, log2, pow @2.29; lgamma @2.23; the
 *     pthread functions moved from libpthread into libc @2.34): forwarded to the x86_64 base version
 *     GLIBC_2.2.5, which every glibc still provides. The base versions of exp, log, log2 and pow set
 *     errno on overflow; the results are the same. On glibc < 2.34 the pthread functions live in
 *     libpthread.so.0, which the extension therefore lists as needed.
 *   - symbols that old glibc lacks: getentropy (2.25: getrandom system call, /dev/urandom where the
 *     kernel has no getrandom), arc4random (2.36, used by libstdc++'s std::random_device) and
 *     __libc_single_threaded (2.32, libstdc++'s shortcut for reference counts; 0 means "maybe several
 *     threads", so reference counts always use atomic operations, which is always correct).
 * tools/build-wheel asks auditwheel for manylinux_2_17 explicitly, so a build host whose glibc or GCC
 * brings a new symbol version that is not handled here fails loudly instead of producing a newer tag. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PYDP_HIDDEN __attribute__((visibility("hidden")))

/* `name` forwarded to `name@version`: pydp_pinned_<name> is an undefined symbol bound to that version. */
#define PYDP_PIN(ret, name, version, params, args)                  \
    extern ret pydp_pinned_##name params;                           \
    __asm__(".symver pydp_pinned_" #name "," #name "@" version);    \
    PYDP_HIDDEN ret name params { return pydp_pinned_##name args; }

PYDP_PIN(double, exp, "GLIBC_2.2.5", (double x), (x))
PYDP_PIN(double, log, "GLIBC_2.2.5", (double x), (x))
PYDP_PIN(double, log2, "GLIBC_2.2.5", (double x), (x))
PYDP_PIN(double, pow, "GLIBC_2.2.5", (double x, double y), (x, y))
PYDP_PIN(double, lgamma, "GLIBC_2.2.5", (double x), (x))
PYDP_PIN(int, pthread_create, "GLIBC_2.2.5", (unsigned long* thread, const void* attr, void* (*start)(void*), void* arg),
         (thread, attr, start, arg))
PYDP_PIN(int, pthread_join, "GLIBC_2.2.5", (unsigned long thread, void** result), (thread, result))
PYDP_PIN(int, pthread_detach, "GLIBC_2.2.5", (unsigned long thread), (thread))
PYDP_PIN(int, pthread_once, "GLIBC_2.2.5", (int* once, void (*init)(void)), (once, init))
PYDP_PIN(int, __pthread_key_create, "GLIBC_2.2.5", (unsigned* key, void (*destructor)(void*)), (key, destructor))

PYDP_HIDDEN char __libc_single_threaded = 0;

/* getentropy's contract: at most 256 bytes, all of them or -1 with errno set. */
PYDP_HIDDEN int getentropy(void* buffer, size_t length) {
    unsigned char* out = (unsigned char*)buffer;
    size_t got = 0;
    if (length > 256) {
        errno = EIO;
        return -1;
    }
#ifdef SYS_getrandom
    while (got < length) {
        const long n = syscall(SYS_getrandom, out + got, length - got, 0);
        if (n > 0) {
            got += (size_t)n;
        } else if (n < 0 && errno == ENOSYS) {
            break;
        } else if (!(n < 0 && errno == EINTR)) {
            return -1;
        }
    }
#endif
    if (got < length) {
        const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -1;
        while (got < length) {
            const ssize_t n = read(fd, out + got, length - got);
            if (n > 0) {
                got += (size_t)n;
            } else if (!(n < 0 && errno == EINTR)) {
                close(fd);
                errno = EIO;
                return -1;
            }
        }
        close(fd);
    }
    return 0;
}

/* arc4random cannot fail; neither can the operating system's entropy source on a working system. */
PYDP_HIDDEN uint32_t arc4random(void) {
    uint32_t r = 0;
    while (getentropy(&r, sizeof r) != 0) {
    }
    return r;
}
