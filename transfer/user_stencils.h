/* user_stencils.h - the stencil files of $TESSERA_STENCIL_PATH: registered
 * at start-up, their failures kept and reported only where a stencil is
 * needed (tess_op_check), so that one bad file does not stop commands that
 * use no stencil. */
#ifndef TESS_USER_STENCILS_H
#define TESS_USER_STENCILS_H

#include "core/tessera.h"

/* Registers every file of the path's directories; a file that fails is
 * remembered, not returned. Fails only when out of memory. Not thread-safe:
 * for start-up (tess_register_builtin). */
tess_status tess_user_stencils_register(void);

/* The failure behind operator `name` (a file defining it that failed), or,
 * for NULL, the first failure of any file or directory; TESS_OK if none.
 * Sets the message. */
tess_status tess_user_stencils_failure(const char *name);

#endif
