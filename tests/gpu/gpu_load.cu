// gpu_load.cu - a GPU load for tests/gpu/real-gpu.bats: a single-precision
// multiply-add loop on every SM for SECONDS seconds (argument 1, default
// 30), so that the device's energy, utilisation and SM activity all rise.
#include <cstdio>
#include <cstdlib>
#include <ctime>

__global__ void burn(float *out, int iters)
{
	float a = threadIdx.x * 0.001f, b = 1.0001f;

	for (int i = 0; i < iters; i++)
		a = a * b + 0.0001f;
	out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 30, sms = 0, blocks;
	float *out;
	time_t end = time(NULL) + seconds;

	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	blocks = sms * 8;
	if (cudaMalloc(&out, (size_t)blocks * 256 * sizeof(float)) != cudaSuccess) {
		fprintf(stderr, "gpu_load: cudaMalloc failed\n");
		return 1;
	}
	while (time(NULL) < end) {
		burn<<<blocks, 256>>>(out, 1 << 20);
		cudaDeviceSynchronize();
	}
	cudaFree(out);
	return 0;
}
