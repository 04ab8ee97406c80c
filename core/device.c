/* device.c - the device key. */
#include <stdio.h>
#include "device.h"
#include "error.h"

tess_status tess_device_key(const tess_device *d, char *buf, size_t len) {
    int w = snprintf(buf, len, "%s:%s:%s:%d", d->backend, d->name, d->arch, d->units);
    if (w < 0 || (size_t)w >= len) return tess_error(TESS_ERR_ARG, "device key too long");
    return TESS_OK;
}
