/*
 * options.h — reading a public options struct that carries its own size
 * (options.c; include/attend/core.h, ATTEND_OPTIONS_INIT). Not installed.
 */
#ifndef ATTEND_CORE_OPTIONS_H
#define ATTEND_CORE_OPTIONS_H

#include "internal.h"

/* Copies an options struct whose caller set src_size (its sizeof, the
 * struct's first field) into dst [dst_size]: the fields the caller knows,
 * zero for the rest; ATTEND_ERR_ARG naming what and who for a size too small
 * or bytes set beyond what this library knows. */
attend_status at_options_read(void *dst, size_t dst_size, const void *src, size_t src_size, const char *what,
                              const char *who, attend_error *err);

#endif
