// gpucheck: the self-test `cudaenv doctor --gpu` compiles with the selected
// nvcc and runs. It lists every device, runs a kernel on each (so a missing
// architecture shows as "no kernel image is available"), and times pinned
// host<->device copies on device 0. Every line it prints is parsed by
// ParseGPUCheck in gpucheck.go; keep the formats in step.
//
// Builds with nvcc 11.8 and newer: only the runtime API, no C++17.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                          \
  do {                                                                       \
    cudaError_t err_ = (call);                                               \
    if (err_ != cudaSuccess) {                                               \
      std::printf("error: %s: %s\n", #call, cudaGetErrorString(err_));       \
      return 1;                                                              \
    }                                                                        \
  } while (0)

__global__ void fill(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3 * i + 1;
}

// Runs fill on the current device and checks every element.
static int kernelCheck(int dev) {
  const int n = 1 << 20;
  int *d = 0;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  fill<<<(n + 255) / 256, 256>>>(d, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  int *h = (int *)std::malloc(n * sizeof(int));
  if (h == 0) {
    std::printf("error: out of host memory\n");
    return 1;
  }
  CHECK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    if (h[i] != 3 * i + 1) {
      std::printf("error: device %d: kernel wrote %d at %d, want %d\n", dev, h[i], i, 3 * i + 1);
      std::free(h);
      return 1;
    }
  }
  std::free(h);
  CHECK(cudaFree(d));
  std::printf("kernel %d: ok\n", dev);
  return 0;
}

// Times reps copies of bytes in one direction and returns GB/s (1e9 bytes).
static int bandwidth(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, double *gbps) {
  const int reps = 10;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaMemcpy(dst, src, bytes, kind)); // warm up
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; i++) CHECK(cudaMemcpyAsync(dst, src, bytes, kind));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  *gbps = ms > 0 ? (double)bytes * reps / (ms / 1000.0) / 1e9 : 0;
  return 0;
}

int main() {
  int driver = 0, runtime = 0, count = 0;
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  std::printf("cuda driver %d.%d runtime %d.%d\n", driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
  CHECK(cudaGetDeviceCount(&count));
  if (count == 0) {
    std::printf("error: no CUDA device\n");
    return 1;
  }
  for (int dev = 0; dev < count; dev++) {
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, dev));
    std::printf("device %d: %s, sm_%d%d, %.1f GiB\n", dev, p.name, p.major, p.minor, p.totalGlobalMem / 1073741824.0);
    CHECK(cudaSetDevice(dev));
    if (kernelCheck(dev) != 0) return 1;
  }

  CHECK(cudaSetDevice(0));
  const size_t bytes = (size_t)256 << 20;
  void *host = 0, *dev = 0;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&dev, bytes));
  double h2d = 0, d2h = 0;
  if (bandwidth(dev, host, bytes, cudaMemcpyHostToDevice, &h2d) != 0) return 1;
  if (bandwidth(host, dev, bytes, cudaMemcpyDeviceToHost, &d2h) != 0) return 1;
  std::printf("h2d %.1f GB/s d2h %.1f GB/s\n", h2d, d2h);
  CHECK(cudaFree(dev));
  CHECK(cudaFreeHost(host));
  return 0;
}
