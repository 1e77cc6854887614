/* status.c — status names, error messages and checked size arithmetic. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *attend_status_name(attend_status status) {
    switch (status) {
    case ATTEND_OK: return "ATTEND_OK";
    case ATTEND_ERR_NULL: return "ATTEND_ERR_NULL";
    case ATTEND_ERR_SHAPE: return "ATTEND_ERR_SHAPE";
    case ATTEND_ERR_MASKED_ROW: return "ATTEND_ERR_MASKED_ROW";
    case ATTEND_ERR_ARG: return "ATTEND_ERR_ARG";
    case ATTEND_ERR_ALLOC: return "ATTEND_ERR_ALLOC";
    case ATTEND_ERR_NONFINITE: return "ATTEND_ERR_NONFINITE";
    case ATTEND_ERR_IO: return "ATTEND_ERR_IO";
    case ATTEND_ERR_FORMAT: return "ATTEND_ERR_FORMAT";
    case ATTEND_ERR_CAPACITY: return "ATTEND_ERR_CAPACITY";
    }
    return "ATTEND_ERR_UNKNOWN";
}

const char *attend_version(void) { return ATTEND_VERSION_STRING; }

attend_status at_fail(attend_error *err, attend_status status, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

attend_status at_ok(attend_error *err) {
    if (err) {
        err->status = ATTEND_OK;
        err->msg[0] = '\0';
    }
    return ATTEND_OK;
}

int at_count(size_t *out, int n, ...) {
    va_list ap;
    size_t total = 1;
    int ok = 1;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        int d = va_arg(ap, int);
        if (d < 1 || !at_mul_size(total, (size_t)d, &total)) ok = 0;
    }
    va_end(ap);
    *out = ok ? total : 0;
    return ok;
}
