/* glibc compatibility for the wheel's binaries (linked only with STABLERT_STATIC_CXX_RUNTIME).
 *
 * With libstdc++ linked statically, GCC 12's libstdc++.a pulls in std::random_device's code
 * (random.o, through the copy-on-write string instantiations), which refers to arc4random,
 * new in glibc 2.36. StableRT never uses std::random_device, but the reference alone would
 * make the wheel need glibc 2.36 (manylinux_2_36). This definition satisfies it inside the
 * binary, so the dynamic symbol table asks glibc for nothing newer than GLIBC_2.34
 * (docs/decisions.md, "The wheel").
 *
 * Ownership: none (no state). Thread-safety: safe (getrandom(2) and read(2) are).
 * Failure: like glibc's arc4random, aborts when the kernel gives no random bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

__attribute__((visibility("hidden"))) uint32_t arc4random(void) {
  uint32_t value = 0;
  unsigned char* out = (unsigned char*)&value;
  size_t filled = 0;
  while (filled < sizeof value) {
    ssize_t got = getrandom(out + filled, sizeof value - filled, 0); /* GLIBC_2.25 */
    if (got > 0) {
      filled += (size_t)got;
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  if (filled < sizeof value) { /* kernels before 3.17 have no getrandom */
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && filled < sizeof value) {
      ssize_t got = read(fd, out + filled, sizeof value - filled);
      if (got > 0) {
        filled += (size_t)got;
      } else if (!(got < 0 && errno == EINTR)) {
        break;
      }
    }
    if (fd >= 0) close(fd);
  }
  if (filled < sizeof value) abort();
  return value;
}
