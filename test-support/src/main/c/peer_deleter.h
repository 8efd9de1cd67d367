/*
 * What a DLPack consumer does when it is done with a managed tensor: call its deleter, unless the
 * producer left it NULL. Shared by the test peer (peer.c) and the upcall-limits library
 * (upcall_limits.c), which the tests build as separate shared libraries.
 */
#ifndef JDLPACK_PEER_DELETER_H
#define JDLPACK_PEER_DELETER_H

#include "dlpack.h"

static inline void call_deleter(void* managed, int legacy) {
  if (legacy) {
    DLManagedTensor* m = managed;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensorVersioned* m = managed;
    if (m->deleter) m->deleter(m);
  }
}

#endif
