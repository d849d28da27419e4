// harness.cuh — what the CUDA C++ peers of the Rust bench share (reduce_ref.cu,
// reduce_shapes.cu, roundtrip.cu): error checks, the GPU pre-roll kernel, the median, the
// input generator's hash, the command line's size lists, and input copies rotated so that no
// timed run finds its input in the L2 cache.
//
// Each program defines HARNESS_PROGRAM (its name, for its error lines) before including it:
//
//     #define HARNESS_PROGRAM "reduce_ref"
//     #include "harness.cuh"
//
// nvcc finds it beside the program's source (`#include "…"` looks in the including file's
// folder first), so `nvcc … bench/cuda/reduce_ref.cu` builds as before.

#pragma once

#ifndef HARNESS_PROGRAM
#error "define HARNESS_PROGRAM (the program's name, for its error lines) before including harness.cuh"
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// ---------------------------------------------------------------------------------------
// Error checking
// ---------------------------------------------------------------------------------------

#define CUDA_CHECK(call)                                                                   \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d: CUDA error %s: %s\n    in: %s\n", __FILE__,       \
                         __LINE__, cudaGetErrorName(err_), cudaGetErrorString(err_), #call); \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// After every kernel launch: catches bad launch configurations at once.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// A usage or environment error: one line on stderr, exit status 1.
[[noreturn]] static inline void fail(const std::string& message) {
    std::fprintf(stderr, HARNESS_PROGRAM ": %s\n", message.c_str());
    std::exit(1);
}

static const size_t kMiB = size_t(1) << 20;

static inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------------------------------
// Inputs and timing
// ---------------------------------------------------------------------------------------

// The hash behind every program's input: element i is made from splitmix64(i), so every
// program (and bench/torch/reduce_torch.py) reduces the same data.
static inline uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Spins one thread for `ns` nanoseconds. Launched before each timed run so that the start
// event and the timed work queue up behind it: the events then time the GPU, not the CPU's
// launch path (the Rust host does the same, kernels-gpu/src/spin.rs).
__global__ void spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

// The median of the timed runs (an even count: the mean of the middle two).
template <typename F>
static inline double median(std::vector<F> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (double(v[m - 1]) + double(v[m]));
}

// Copies of one input on the GPU, each starting on a 256-byte boundary, read in turn: every
// run reads the copy after the last one read (one counter for everything timed on it), so a
// copy is read again only after all the others. How many copies is the program's choice.
struct InputCopies {
    unsigned char* base = nullptr;
    size_t stride_bytes = 0;  // 256-byte aligned copies
    size_t copies = 1;
    size_t next = 0;          // the copy the next run reads

    // The distance between copies of an input of `bytes` bytes.
    static size_t stride_for(size_t bytes) { return ceil_div(std::max<size_t>(bytes, 1), 256) * 256; }

    // `copies` copies of the `bytes` bytes at `host`; the padding of the first copy is zeroed.
    InputCopies(const void* host, size_t bytes, size_t copies_)
        : stride_bytes(stride_for(bytes)), copies(std::max<size_t>(copies_, 1)) {
        CUDA_CHECK(cudaMalloc(&base, copies * stride_bytes));
        CUDA_CHECK(cudaMemset(base, 0, stride_bytes));
        CUDA_CHECK(cudaMemcpy(base, host, bytes, cudaMemcpyHostToDevice));
        for (size_t filled = 1; filled < copies;) {  // double the filled copies each step
            const size_t count = std::min(filled, copies - filled);
            CUDA_CHECK(cudaMemcpy(base + filled * stride_bytes, base, count * stride_bytes,
                                  cudaMemcpyDeviceToDevice));
            filled += count;
        }
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    ~InputCopies() { CUDA_CHECK(cudaFree(base)); }
    InputCopies(const InputCopies&) = delete;
    InputCopies& operator=(const InputCopies&) = delete;

    const void* copy(size_t k) const { return base + k * stride_bytes; }
    const void* next_input() {
        const void* p = copy(next);
        next = (next + 1) % copies;
        return p;
    }
    size_t total_bytes() const { return copies * stride_bytes; }
};

// ---------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------

static inline uint64_t parse_count(const std::string& s, const char* what) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
        fail(std::string("bad ") + what + ": '" + s + "'");
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
    if (errno == ERANGE) fail(std::string("bad ") + what + ": '" + s + "'");
    return v;
}

// "1048576" or "2^20"
static inline uint64_t parse_size(const std::string& s, const char* what = "size") {
    const size_t caret = s.find('^');
    if (caret == std::string::npos) return parse_count(s, what);
    if (s.substr(0, caret) != "2") fail("bad " + std::string(what) + " '" + s + "': only 2^k is understood");
    const uint64_t k = parse_count(s.substr(caret + 1), "exponent");
    if (k > 31) fail("bad " + std::string(what) + " '" + s + "': too large");
    return uint64_t(1) << k;
}

static inline std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        const size_t end = s.find(sep, start);
        parts.push_back(s.substr(start, end - start));
        if (end == std::string::npos) return parts;
        start = end + 1;
    }
}

static inline bool is_power_of_two(uint64_t x) { return x && !(x & (x - 1)); }

// A comma list of sizes (1048576, 2^20) and ranges of powers of two (2^10..2^28, inclusive).
static inline std::vector<uint64_t> parse_sizes(const std::string& arg) {
    std::vector<uint64_t> sizes;
    for (const std::string& item : split(arg, ',')) {
        const size_t dots = item.find("..");
        if (dots == std::string::npos) {
            sizes.push_back(parse_size(item));
            continue;
        }
        const uint64_t lo = parse_size(item.substr(0, dots));
        const uint64_t hi = parse_size(item.substr(dots + 2));
        if (!is_power_of_two(lo) || !is_power_of_two(hi) || lo > hi)
            fail("bad range '" + item + "': want 2^a..2^b with a <= b");
        for (uint64_t n = lo; n <= hi; n *= 2) sizes.push_back(n);
    }
    return sizes;
}
