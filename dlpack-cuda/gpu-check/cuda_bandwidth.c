/*
 * The same-run C baseline of the GPU check: host-to-device and device-to-host cudaMemcpy
 * bandwidth from pinned memory, libcudart loaded with dlopen so the binary runs wherever the
 * runtime library is. Prints "c_h2d_gbps X" and "c_d2h_gbps Y".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*malloc_fn)(void**, size_t);
typedef int (*free_fn)(void*);
typedef int (*memcpy_fn)(void*, const void*, size_t, int);
typedef int (*sync_fn)(void);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)256 << 20;
  int repeats = argc > 2 ? atoi(argv[2]) : 20;
  const char* names[] = {getenv("JDLPACK_CUDART"), "libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11"};
  void* lib = NULL;
  for (int i = 0; i < 5 && !lib; i++) if (names[i]) lib = dlopen(names[i], RTLD_NOW);
  if (!lib) { fprintf(stderr, "no libcudart: %s\n", dlerror()); return 2; }
  malloc_fn cuda_malloc = (malloc_fn)dlsym(lib, "cudaMalloc");
  malloc_fn cuda_malloc_host = (malloc_fn)dlsym(lib, "cudaMallocHost");
  free_fn cuda_free = (free_fn)dlsym(lib, "cudaFree");
  free_fn cuda_free_host = (free_fn)dlsym(lib, "cudaFreeHost");
  memcpy_fn cuda_memcpy = (memcpy_fn)dlsym(lib, "cudaMemcpy");
  sync_fn cuda_sync = (sync_fn)dlsym(lib, "cudaDeviceSynchronize");
  void *host, *device;
  if (cuda_malloc_host(&host, bytes) || cuda_malloc(&device, bytes)) { fprintf(stderr, "allocation failed\n"); return 3; }
  for (int direction = 0; direction < 2; direction++) {
    int kind = direction == 0 ? 1 : 2; /* cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost */
    void* dst = direction == 0 ? device : host;
    void* src = direction == 0 ? host : device;
    cuda_memcpy(dst, src, bytes, kind); /* warm-up */
    cuda_sync();
    double start = now();
    for (int r = 0; r < repeats; r++) cuda_memcpy(dst, src, bytes, kind);
    cuda_sync();
    double seconds = now() - start;
    printf("%s %.2f\n", direction == 0 ? "c_h2d_gbps" : "c_d2h_gbps", (double)bytes * repeats / seconds / 1e9);
  }
  cuda_free(device);
  cuda_free_host(host);
  return 0;
}
