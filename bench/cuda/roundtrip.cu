// The peer of host/examples/overhead.rs: the wall-clock time of "reduce and bring the scalar
// home" with CUB: cub::DeviceReduce::Sum on a device buffer, then cudaMemcpy of the result to
// the host (which waits for the GPU). Inputs rotated over copies (at least 256 MiB in all) so
// that the L2 cache holds none of them; temporary storage allocated once, outside the timing;
// median of --repeat after --warmup.
//
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o roundtrip bench/cuda/roundtrip.cu   (harness.cuh beside it)
// Run:   ./roundtrip --sizes 1048576,33554432 --repeat 100 --warmup 10   (or --sizes 2^20,2^25)
// Output: CSV `what,n,median_us,repeat`.

#include <cub/cub.cuh>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// CUDA_CHECK, median, InputCopies, parse_sizes: shared with reduce_ref.cu and reduce_shapes.cu.
#define HARNESS_PROGRAM "roundtrip"
#include "harness.cuh"

int main(int argc, char** argv) {
    std::vector<uint64_t> sizes = {1u << 20, 1u << 25};
    int repeat = 100, warmup = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--sizes") sizes = parse_sizes(value);
        else if (flag == "--repeat") repeat = std::atoi(value.c_str());
        else if (flag == "--warmup") warmup = std::atoi(value.c_str());
        else { std::fprintf(stderr, "usage: roundtrip [--sizes N,N] [--repeat R] [--warmup W]\n"); return 1; }
    }
    std::printf("what,n,median_us,repeat\n");
    for (size_t n : sizes) {
        std::vector<float> host(n);
        double exact = 0;
        for (size_t i = 0; i < n; ++i) {
            host[i] = (float)((double)(i % 1000) - 499.5) / 1000.0f;
            exact += host[i];
        }
        size_t bytes = n * sizeof(float);
        size_t copies = std::min<size_t>(64, std::max<size_t>(1, ((size_t)256 << 20) / bytes + 1));
        InputCopies inputs(host.data(), bytes, copies);
        float* out;
        CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
        size_t temp_bytes = 0;
        CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, static_cast<const float*>(inputs.copy(0)), out, (int)n));
        void* temp;
        CUDA_CHECK(cudaMalloc(&temp, temp_bytes));
        std::vector<double> samples;
        float result = 0;
        for (int run = 0; run < warmup + repeat; ++run) {
            auto started = std::chrono::steady_clock::now();
            CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, static_cast<const float*>(inputs.next_input()), out, (int)n));
            CUDA_CHECK(cudaMemcpy(&result, out, sizeof(float), cudaMemcpyDeviceToHost));
            auto elapsed = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
            if (run >= warmup) samples.push_back(elapsed);
        }
        if (std::abs(result - exact) > 1e-3 * std::max(1.0, std::abs(exact)) + 1e-2) {
            std::fprintf(stderr, "wrong sum at n = %zu: %f, expected %f\n", n, result, exact);
            return 2;
        }
        std::printf("CUB DeviceReduce::Sum + cudaMemcpy (wall clock),%zu,%.3f,%d\n", n, median(samples), repeat);
        CUDA_CHECK(cudaFree(out));
        CUDA_CHECK(cudaFree(temp));
    }
    return 0;
}
