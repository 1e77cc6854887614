/*
 * options.c — reading a public options struct that carries its own size
 * (options.h): a struct from an older caller is shorter (the fields it lacks
 * read as 0), one from a newer caller longer (accepted when every byte this
 * library does not know is 0).
 */
#include <string.h>

#include "core/options.h"

attend_status at_options_read(void *dst, size_t dst_size, const void *src, size_t src_size, const char *what,
                              const char *who, attend_error *err) {
    CHECK(src_size >= sizeof(size_t) && src_size <= 65536, err, ATTEND_ERR_ARG,
          "%s: %s.size is %zu: set it to sizeof(%s) (ATTEND_OPTIONS_INIT)", who, what, src_size, what);
    const unsigned char *s = src;
    for (size_t i = dst_size; i < src_size; i++)
        CHECK(s[i] == 0, err, ATTEND_ERR_ARG,
              "%s: %s.size is %zu, this library knows %zu bytes of it, and byte %zu is set: an option it does not "
              "have", who, what, src_size, dst_size, i);
    memset(dst, 0, dst_size);
    memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
    return ATTEND_OK;
}
