/*
 * alignment.h — the alignment column of a TSV line ("i-j" links, guided
 * alignment training): its parser, private to the library (data.c's TSV
 * reader). Not installed.
 */
#ifndef ATTEND_IO_ALIGNMENT_H
#define ATTEND_IO_ALIGNMENT_H

#include <stddef.h>
#include <stdint.h>

#include "../internal.h" /* relative: tests include this header too */

/* The most links a column of n bytes can hold ("0-0" and a separator each). */
static inline size_t at_alignment_max_links(size_t n) { return n / 4 + 1; }

/*
 * Parses the alignment column s [n] (no tab, CR or LF): links "i-j" (source
 * position i, target position j, 0-based decimal, at most 9 digits each)
 * separated by runs of ASCII spaces; an empty or all-space column has no
 * links. Writes them to links [at_alignment_max_links(n), 2] as (i, j) pairs,
 * their count in *n_links. Checks 0 <= i < src_len and 0 <= j < tgt_len.
 * Errors are ATTEND_ERR_FORMAT with the offending link quoted and its byte
 * offset (n counted from base, the column's offset in its line).
 */
attend_status at_alignment_parse(const char *s, size_t n, size_t base, int src_len, int tgt_len, int32_t *links,
                                 int *n_links, attend_error *err);

#endif
