/*
 * Calls jdlpack deleters where the JVM has the least room: on a pthread with a chosen stack size,
 * and from a C atexit handler, after the JVM has shut down. Used by DeleterUpcallLimitsTest, whose
 * child JVMs load this library.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "dlpack.h"
#include "peer_deleter.h"

#define LIMITS_API __attribute__((visibility("default")))

typedef struct {
  void* managed;
  int legacy;
} job;

static void* run_job(void* arg) {
  job* j = arg;
  call_deleter(j->managed, j->legacy);
  return NULL;
}

/* Calls the deleter on a new pthread whose stack is stack_bytes long, and joins it. */
LIMITS_API int limits_delete_on_stack(void* managed, int legacy, long stack_bytes) {
  pthread_attr_t attr;
  pthread_t thread;
  job j = {managed, legacy};
  if (pthread_attr_init(&attr) != 0) return -1;
  if (pthread_attr_setstacksize(&attr, (size_t)stack_bytes) != 0) return -2;
  if (pthread_create(&thread, &attr, run_job, &j) != 0) return -3;
  pthread_attr_destroy(&attr);
  return pthread_join(thread, NULL);
}

static job at_exit_job;

static void delete_at_exit(void) { call_deleter(at_exit_job.managed, at_exit_job.legacy); }

/* Calls the deleter from an atexit handler, when the process exits. */
LIMITS_API int limits_delete_at_exit(void* managed, int legacy) {
  at_exit_job.managed = managed;
  at_exit_job.legacy = legacy;
  return atexit(delete_at_exit);
}
