/* subprocess.h - running the system C compiler and other programs. */
#ifndef TESS_SUBPROCESS_H
#define TESS_SUBPROCESS_H

/* The C compiler generated C is built with: $TESSERA_CC, else $CC, else cc. */
const char *tess_c_compiler(void);

/* Runs argv (found on PATH), its stdout and stderr captured together into
 * *output (malloc'd, NULL if out of memory). Returns its exit status,
 * 128 + the signal that ended it, or -1 if it could not start (the reason
 * then in *output). */
int tess_run_capture(char *const argv[], char **output);

#endif
