#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

/* deflateInit2 is a macro, which Swift cannot call: this passes the same arguments, with the
   version and stream size it adds, to the function it stands for. */
static inline int czlib_deflate_init(z_streamp stream, int level, int window_bits) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}

/* inflateInit2, for the same reason: tests and tools read back what deflate wrote. */
static inline int czlib_inflate_init(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
#endif
