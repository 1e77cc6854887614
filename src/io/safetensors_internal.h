/*
 * safetensors_internal.h — what the safetensors reader (safetensors.c) and
 * writer (safetensors_write.c) share, private to the library.
 */
#ifndef ATTEND_SAFETENSORS_INTERNAL_H
#define ATTEND_SAFETENSORS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define ST_MAX_HEADER 100000000u            /* bytes of JSON header accepted (100 MB) */
#define ST_DEFAULT_MAX_BYTES ((size_t)1 << 30) /* attend_st_open's limit when 0 is given */
#define ST_MAX_NAME 255                     /* bytes of a tensor name we write */
#define ST_JSON_NODES ((size_t)1 << 20)     /* JSON values in a header we read */
#define ST_JSON_DEPTH 16
#define ST_METADATA "__metadata__"

int at_st_host_is_little_endian(void);
/* Reverses the bytes of every elsize-byte element of p [nbytes]. */
void at_st_swap_elements(unsigned char *p, size_t nbytes, size_t elsize);
/* "[2,3,0]" (truncated with "..." when it would not fit). */
void at_st_format_shape(char out[96], int ndim, const int64_t *shape);
/* nbytes = elsize * prod(shape) in size_t; 0 on overflow (or a negative dim). */
int at_st_tensor_nbytes(size_t elsize, int ndim, const int64_t *shape, size_t *nbytes);

#endif
