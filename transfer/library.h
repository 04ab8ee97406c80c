/*
 * library.h - portable kernel libraries: the best config of every task
 * tuned on one device, with the device's descriptor and the tessera
 * version, in one JSON document. Importing merges the entries as records of
 * that device, so on the same hardware they are exact hits and elsewhere
 * only priors for the transfer module.
 */
#ifndef TESS_LIBRARY_H
#define TESS_LIBRARY_H

#include <stdio.h>
#include "core/records.h"

tess_status tess_library_export(tess_records *db, const char *device_key, FILE *out, int *count);
/* source_name is used in messages. */
tess_status tess_library_import(tess_records *db, FILE *in, const char *source_name, int *count);
/* Whether the file starting with `head` (its first bytes) is a library rather than JSON lines. */
bool tess_library_detect(const char *head);

#endif
