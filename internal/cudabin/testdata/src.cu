// The fixtures' kernel (see build.sh).
__global__ void add(float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] += b[i];
}

extern "C" int run_add(float *a, const float *b, int n)
{
    add<<<(n + 255) / 256, 256>>>(a, b, n);
    return (int)cudaDeviceSynchronize();
}

#ifdef WITH_MAIN
int main()
{
    float *a;
    if (cudaMalloc(&a, 4) != cudaSuccess)
        return 1;
    return run_add(a, a, 1);
}
#endif
