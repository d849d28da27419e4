// reduce_ref.cu — the classic CUDA reduction series in CUDA C++, as the reference for the
// Rust kernels in kernels-gpu/src/reduce_v*.rs, plus NVIDIA CUB and a pure-read kernel.
//
// Every version below is the technique of Mark Harris, "Optimizing Parallel Reduction in
// CUDA", numbered from 0 as in this project (v0 = Harris's kernel 1, ..., v6 = his kernel 7),
// then v7 (warp shuffles, the Kepler-era follow-up), cub::DeviceReduce::Sum, and `read`
// (loads every element once and nothing else: the bandwidth ceiling).
//
// Each version's kernel writes one partial per block; the host runs the same kernel again
// over the partials until one value is left (as the Rust host does). All versions handle
// any n: positions past the end contribute 0, the identity of the sum.
//
// Build:  nvcc -O3 -arch=sm_90 -std=c++17 -o reduce_ref reduce_ref.cu   (harness.cuh beside it)
// Run:    ./reduce_ref --help
//
// Limits: n <= 2^31 - 1 (CUB's num_items and the kernels' indices are 32-bit);
//         block in {64, 128, 256, 512, 1024} (v4/v5 unroll the last 64 elements).

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

// CUDA_CHECK, fail, the pre-roll kernel `spin`, splitmix64, median, InputCopies, parse_sizes:
// shared with reduce_shapes.cu and roundtrip.cu.
#define HARNESS_PROGRAM "reduce_ref"
#include "harness.cuh"

// ---------------------------------------------------------------------------------------
// Kernels. Inputs are plain `const T*` (no __restrict__ / __ldg), as in the original.
// ---------------------------------------------------------------------------------------

// Dynamic shared memory typed as T (an `extern __shared__ T[]` cannot be declared with
// different T in one program, so every kernel takes the same raw array and casts it).
template <typename T>
__device__ __forceinline__ T* shared_array() {
    extern __shared__ __align__(16) unsigned char shared_raw[];
    return reinterpret_cast<T*>(shared_raw);
}

// v0: interleaved addressing; `tid % (2*s) == 0` picks the active threads (divergent warps).
template <typename T>
__global__ void reduce_v0(const T* g_idata, T* g_odata, unsigned int n) {
    T* sdata = shared_array<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : T(0);
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// v1: strided index `index = 2*s*tid`: contiguous active threads, but shared-memory bank conflicts.
template <typename T>
__global__ void reduce_v1(const T* g_idata, T* g_odata, unsigned int n) {
    T* sdata = shared_array<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : T(0);
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// v2: sequential addressing: stride halves from blockDim/2, thread tid adds tid + s (no conflicts).
template <typename T>
__global__ void reduce_v2(const T* g_idata, T* g_odata, unsigned int n) {
    T* sdata = shared_array<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : T(0);
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// v3: first add during load: each thread loads and adds 2 elements, so half the blocks.
template <typename T>
__global__ void reduce_v3(const T* g_idata, T* g_odata, unsigned int n) {
    T* sdata = shared_array<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    T sum = (i < n) ? g_idata[i] : T(0);
    if (i + blockDim.x < n) sum += g_idata[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// The classic last-warp unroll, literally: `volatile`, no __syncwarp, relying on the warp
// running in lockstep. Since Volta this is formally a data race (compute-sanitizer racecheck
// reports it; the Rust v4 adds __syncwarp); it is kept verbatim because it is what the
// published figures were measured with. Needs blockDim.x >= 64.
template <typename T>
__device__ void warpReduce(volatile T* sdata, unsigned int tid) {
    sdata[tid] += sdata[tid + 32];
    sdata[tid] += sdata[tid + 16];
    sdata[tid] += sdata[tid + 8];
    sdata[tid] += sdata[tid + 4];
    sdata[tid] += sdata[tid + 2];
    sdata[tid] += sdata[tid + 1];
}

// The same six steps made correct for independent thread scheduling, as the Rust v4/v5 do
// it: read, __syncwarp, write, __syncwarp (NVIDIA, "Using CUDA Warp-Level Primitives").
// The `-sync` versions (v4-sync, v5-sync) use it: the fair twins of the Rust kernels.
template <unsigned int blockSize, typename T>
__device__ void warpReduceSynced(T* sdata, unsigned int tid) {
    T value = sdata[tid];
#pragma unroll
    for (unsigned int offset = 32; offset > 0; offset >>= 1) {
        if (blockSize >= 2 * offset) value += sdata[tid + offset];
        __syncwarp();
        sdata[tid] = value;
        __syncwarp();
    }
}

// v4: v3 + unrolled last warp: barriers only while s > 32, then warp 0 finishes alone.
template <typename T, bool Sync = false>
__global__ void reduce_v4(const T* g_idata, T* g_odata, unsigned int n) {
    T* sdata = shared_array<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    T sum = (i < n) ? g_idata[i] : T(0);
    if (i + blockDim.x < n) sum += g_idata[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        if (Sync) warpReduceSynced<64>(sdata, tid);
        else warpReduce(sdata, tid);
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// warpReduce with the block size known at compile time (same volatile idiom as v4).
template <unsigned int blockSize, typename T>
__device__ void warpReduceUnrolled(volatile T* sdata, unsigned int tid) {
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}

// The completely unrolled shared-memory tree of v5 (reused by v6): every `if (blockSize >= ...)`
// is decided at compile time, so no loop and no dead steps remain.
template <unsigned int blockSize, typename T, bool Sync = false>
__device__ __forceinline__ void treeReduceUnrolled(T* sdata, unsigned int tid) {
    if (blockSize >= 1024) { if (tid < 512) sdata[tid] += sdata[tid + 512]; __syncthreads(); }
    if (blockSize >= 512) { if (tid < 256) sdata[tid] += sdata[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) sdata[tid] += sdata[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        if (Sync) warpReduceSynced<blockSize>(sdata, tid);
        else warpReduceUnrolled<blockSize>(sdata, tid);
    }
}

// v5: complete unroll: v4 with template<blockSize>, the whole tree unrolled at compile time.
template <unsigned int blockSize, typename T, bool Sync = false>
__global__ void reduce_v5(const T* g_idata, T* g_odata, unsigned int n) {
    T* sdata = shared_array<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    T sum = (i < n) ? g_idata[i] : T(0);
    if (i + blockSize < n) sum += g_idata[i + blockSize];
    sdata[tid] = sum;
    __syncthreads();
    treeReduceUnrolled<blockSize, T, Sync>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// v6: multiple adds per thread: grid-stride loop over pairs with a device-sized grid, then v5's tree.
template <unsigned int blockSize, typename T>
__global__ void reduce_v6(const T* g_idata, T* g_odata, unsigned int n) {
    T* sdata = shared_array<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    T sum = T(0);
    while (i < n) {
        T second = (i + blockSize < n) ? g_idata[i + blockSize] : T(0);
        sum += g_idata[i] + second;
        i += gridSize;
    }
    sdata[tid] = sum;
    __syncthreads();
    treeReduceUnrolled<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Sum over the 32 lanes of a warp with shuffles; lane 0 gets the total.
template <typename T>
__device__ __forceinline__ T warpReduceShfl(T value) {
    for (int offset = 16; offset > 0; offset >>= 1)
        value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

// v7: warp shuffle: register grid-stride sum, shuffle tree per warp, one shared slot per warp,
// first warp reduces the slots.
template <unsigned int blockSize, typename T>
__global__ void reduce_v7(const T* g_idata, T* g_odata, unsigned int n) {
    constexpr unsigned int kWarps = blockSize / 32;
    __shared__ T warp_sums[kWarps];
    unsigned int tid = threadIdx.x;
    unsigned int lane = tid % 32;
    unsigned int warp = tid / 32;
    unsigned int i = blockIdx.x * blockSize + threadIdx.x;
    unsigned int gridSize = blockSize * gridDim.x;
    T sum = T(0);
    while (i < n) {
        sum += g_idata[i];
        i += gridSize;
    }
    sum = warpReduceShfl(sum);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = (lane < kWarps) ? warp_sums[lane] : T(0);
        sum = warpReduceShfl(sum);
        if (lane == 0) g_odata[blockIdx.x] = sum;
    }
}

// The 16-byte vector type of each element type, and the sum of its lanes.
template <typename T> struct Vec16;
template <> struct Vec16<float> {
    using type = float4;
    __device__ static float sum(const float4& v) { return (v.x + v.y) + (v.z + v.w); }
};
template <> struct Vec16<double> {
    using type = double2;
    __device__ static double sum(const double2& v) { return v.x + v.y; }
};
template <> struct Vec16<int> {
    using type = int4;
    __device__ static int sum(const int4& v) { return (v.x + v.y) + (v.z + v.w); }
};
template <> struct Vec16<unsigned int> {
    using type = uint4;
    __device__ static unsigned int sum(const uint4& v) { return (v.x + v.y) + (v.z + v.w); }
};

// read: loads every element once (grid-stride 16-byte vectors, then the scalar tail) and
// writes only if the sum equals `sentinel` (never, in practice), so the loads stay: the
// bandwidth floor. Needs g_idata 16-byte aligned (cudaMalloc + 256-byte strides here).
template <typename T>
__global__ void read_probe(const T* g_idata, T* g_odata, unsigned int n, T sentinel) {
    using V = typename Vec16<T>::type;
    constexpr unsigned int kLanes = sizeof(V) / sizeof(T);
    const V* vin = reinterpret_cast<const V*>(g_idata);
    unsigned int vectors = n / kLanes;
    unsigned int thread = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int threads = blockDim.x * gridDim.x;
    T acc = T(0);
    for (unsigned int k = thread; k < vectors; k += threads) acc += Vec16<T>::sum(vin[k]);
    unsigned int tail = vectors * kLanes + thread;  // fewer than kLanes elements
    if (tail < n) acc += g_idata[tail];
    if (acc == sentinel) g_odata[blockIdx.x] = acc;
}

// ---------------------------------------------------------------------------------------
// Versions and their launch shapes
// ---------------------------------------------------------------------------------------

enum class Version { V0, V1, V2, V3, V4, V5, V6, V7, Cub, Read, V4Sync, V5Sync };

static const Version kAllVersions[] = {Version::V0, Version::V1, Version::V2, Version::V3,
                                       Version::V4, Version::V5, Version::V6, Version::V7,
                                       Version::Cub, Version::Read};
// Also accepted by --versions, not part of `all`: v4/v5 with __syncwarp (warpReduceSynced).
static const Version kExtraVersions[] = {Version::V4Sync, Version::V5Sync};

static const char* version_name(Version v) {
    static const char* const names[] = {"v0", "v1", "v2", "v3", "v4",
                                        "v5", "v6", "v7", "cub", "read",
                                        "v4-sync", "v5-sync"};
    return names[static_cast<int>(v)];
}

struct Config {
    std::string dtype = "f32";
    std::vector<uint64_t> sizes{uint64_t(1) << 25};
    int repeat = 20;
    int warmup = 3;
    unsigned int block = 256;
    unsigned int grid = 0;  // 0: SMs x (max threads per SM / block)
    std::string csv_path;
    std::vector<Version> versions{std::begin(kAllVersions), std::end(kAllVersions)};
};

struct DeviceInfo {
    cudaDeviceProp prop;
    unsigned int sms;
    unsigned int threads_per_sm;  // 2048 on sm_90
};

// The grid of v6, v7 and read when the work does not limit it: --grid, or the "best grid
// size", as many blocks as the device keeps resident: SMs x (2048 / block) on an H100.
static uint64_t device_grid(const Config& cfg, const DeviceInfo& dev) {
    return cfg.grid ? cfg.grid : uint64_t(dev.sms) * (dev.threads_per_sm / cfg.block);
}

// Blocks of one pass over `len` elements (never 0; for v6/v7 capped by the work, so the
// passes over the partials shrink to one block).
static unsigned int pass_grid(Version v, uint64_t len, const Config& cfg, const DeviceInfo& dev) {
    const uint64_t b = cfg.block;
    uint64_t grid = 1;
    switch (v) {
        case Version::V0: case Version::V1: case Version::V2:
            grid = ceil_div(len, b); break;                                   // 1 element / thread
        case Version::V3: case Version::V4: case Version::V5:
        case Version::V4Sync: case Version::V5Sync:
            grid = ceil_div(len, 2 * b); break;                               // 2 elements / thread
        case Version::V6: grid = std::min(ceil_div(len, 2 * b), device_grid(cfg, dev)); break;
        case Version::V7: grid = std::min(ceil_div(len, b), device_grid(cfg, dev)); break;
        case Version::Read: break;  // sized by vectors in read_grid
        case Version::Cub: break;   // CUB chooses
    }
    return static_cast<unsigned int>(std::max<uint64_t>(grid, 1));
}

template <typename T>
static unsigned int read_grid(uint64_t len, const Config& cfg, const DeviceInfo& dev) {
    const uint64_t vectors = len / (16 / sizeof(T));
    return static_cast<unsigned int>(
        std::max<uint64_t>(std::min(ceil_div(vectors, cfg.block), device_grid(cfg, dev)), 1));
}

struct Pass {
    unsigned int len;
    unsigned int grid;
};

// The first pass over n elements, then the same kernel over the partials until one is left.
static std::vector<Pass> plan_passes(Version v, uint64_t n, const Config& cfg, const DeviceInfo& dev) {
    std::vector<Pass> passes;
    uint64_t len = n;
    for (;;) {
        unsigned int grid = pass_grid(v, len, cfg, dev);
        passes.push_back({static_cast<unsigned int>(len), grid});
        if (grid == 1) return passes;
        len = grid;
    }
}

// Longest chain of additions any element goes through: per pass, the elements a thread
// folds in a row plus log2(block) tree levels. |error| <= chain * eps(T) * sum|x| for floats.
static uint64_t addition_chain(const std::vector<Pass>& passes, unsigned int block) {
    uint64_t levels = 0;
    while ((1u << levels) < block) ++levels;
    uint64_t chain = 0;
    for (const Pass& p : passes) chain += ceil_div(p.len, uint64_t(p.grid) * block) + levels;
    return chain;
}

// One launch of version v (v0..v7). Block-size templates are instantiated for 64..1024.
template <typename T, unsigned int B>
static void launch_fixed_block(Version v, unsigned int grid, const T* in, T* out, unsigned int n,
                               cudaStream_t stream) {
    switch (v) {
        case Version::V5: reduce_v5<B, T><<<grid, B, B * sizeof(T), stream>>>(in, out, n); break;
        case Version::V5Sync:
            reduce_v5<B, T, true><<<grid, B, B * sizeof(T), stream>>>(in, out, n);
            break;
        case Version::V6: reduce_v6<B, T><<<grid, B, B * sizeof(T), stream>>>(in, out, n); break;
        case Version::V7: reduce_v7<B, T><<<grid, B, 0, stream>>>(in, out, n); break;
        default: fail("launch_fixed_block: not a block-templated version");
    }
}

template <typename T>
static void launch_pass(Version v, unsigned int grid, unsigned int block, const T* in, T* out,
                        unsigned int n, cudaStream_t stream) {
    const size_t shared = size_t(block) * sizeof(T);
    switch (v) {
        case Version::V0: reduce_v0<T><<<grid, block, shared, stream>>>(in, out, n); break;
        case Version::V1: reduce_v1<T><<<grid, block, shared, stream>>>(in, out, n); break;
        case Version::V2: reduce_v2<T><<<grid, block, shared, stream>>>(in, out, n); break;
        case Version::V3: reduce_v3<T><<<grid, block, shared, stream>>>(in, out, n); break;
        case Version::V4: reduce_v4<T><<<grid, block, shared, stream>>>(in, out, n); break;
        case Version::V4Sync: reduce_v4<T, true><<<grid, block, shared, stream>>>(in, out, n); break;
        case Version::V5: case Version::V5Sync: case Version::V6: case Version::V7:
            switch (block) {
                case 64: launch_fixed_block<T, 64>(v, grid, in, out, n, stream); break;
                case 128: launch_fixed_block<T, 128>(v, grid, in, out, n, stream); break;
                case 256: launch_fixed_block<T, 256>(v, grid, in, out, n, stream); break;
                case 512: launch_fixed_block<T, 512>(v, grid, in, out, n, stream); break;
                case 1024: launch_fixed_block<T, 1024>(v, grid, in, out, n, stream); break;
                default: fail("unsupported block size");
            }
            break;
        default: fail("launch_pass: not a kernel version");
    }
    CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------
// Element types: names, inputs, CPU reference, result check
// ---------------------------------------------------------------------------------------

template <typename T> struct Type;
template <> struct Type<float> { static const char* name() { return "f32"; } };
template <> struct Type<double> { static const char* name() { return "f64"; } };
template <> struct Type<int> { static const char* name() { return "i32"; } };
template <> struct Type<unsigned int> { static const char* name() { return "u32"; } };

// Element i: a hash of i. Floats uniform in [-1, 1) (exactly representable), integers over
// their whole 32-bit range (signed ones mixed-sign; sums wrap, as on the GPU).
template <typename T>
static T input_value(uint64_t i) {
    const uint64_t h = splitmix64(i);
    if constexpr (std::is_same<T, float>::value) {
        return std::ldexp(float(int32_t(h >> 40) - (int32_t(1) << 23)), -23);
    } else if constexpr (std::is_same<T, double>::value) {
        return std::ldexp(double(h >> 11), -52) - 1.0;
    } else {
        return static_cast<T>(static_cast<uint32_t>(h));
    }
}

template <typename T>
struct Reference {
    T exact = T(0);       // integers: the 32-bit wrapping sum
    double value = 0.0;   // floats: the sum, compensated summation in double
    double abs_sum = 0.0; // floats: sum |x|
};

template <typename T>
static Reference<T> reference_sum(const std::vector<T>& x) {
    Reference<T> ref;
    if constexpr (std::is_floating_point<T>::value) {
        double sum = 0.0, compensation = 0.0, abs_sum = 0.0;  // Neumaier summation
        for (T v : x) {
            const double d = static_cast<double>(v);
            const double t = sum + d;
            compensation += (std::fabs(sum) >= std::fabs(d)) ? (sum - t) + d : (d - t) + sum;
            sum = t;
            abs_sum += std::fabs(d);
        }
        ref.value = sum + compensation;
        ref.abs_sum = abs_sum;
    } else {
        uint64_t sum = 0;  // int64-wide, then wrapped to 32 bits
        for (T v : x) sum += static_cast<uint64_t>(static_cast<int64_t>(v));
        ref.exact = static_cast<T>(static_cast<uint32_t>(sum));
    }
    return ref;
}

// Floats: |got - ref| <= chain * eps(T) * sum|x| (plus the reference's own tiny error).
// Integers: exact.
template <typename T>
static bool result_ok(T got, const Reference<T>& ref, uint64_t chain) {
    if constexpr (std::is_floating_point<T>::value) {
        const double eps = std::numeric_limits<T>::epsilon();
        const double tolerance = (double(chain) * eps + 4.0 * DBL_EPSILON) * ref.abs_sum;
        return std::fabs(static_cast<double>(got) - ref.value) <= tolerance;  // NaN fails
    } else {
        return got == ref.exact;
    }
}

template <typename T>
static std::string show(T v) {
    char buf[64];
    if constexpr (std::is_floating_point<T>::value) std::snprintf(buf, sizeof buf, "%.17g", double(v));
    else if constexpr (std::is_signed<T>::value) std::snprintf(buf, sizeof buf, "%lld", (long long)v);
    else std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return buf;
}

// A value the read probe's sum never equals: NaN for floats (== is always false); for
// integers a fixed pattern (a chance hit costs one store, nothing measurable).
template <typename T>
static T read_sentinel() {
    if constexpr (std::is_floating_point<T>::value) return std::numeric_limits<T>::quiet_NaN();
    else return static_cast<T>(0x5EADBEEFu);
}

// ---------------------------------------------------------------------------------------
// Device buffers of one size: rotated input copies, partials, CUB's temp storage
// ---------------------------------------------------------------------------------------

static const size_t kRotateBelowBytes = 64 * kMiB;  // inputs smaller than this are rotated...
static const size_t kRotateTotalBytes = 200 * kMiB; // ...among copies totalling more than this

// The copies of an input of `bytes` bytes (InputCopies' 256-byte aligned strides).
static size_t rotation_copies(size_t bytes) {
    return bytes < kRotateBelowBytes ? kRotateTotalBytes / InputCopies::stride_for(bytes) + 1 : 1;
}

template <typename T>
struct Workspace {
    InputCopies inputs;       // the rotated copies; one counter for all versions
    T* partials[2] = {nullptr, nullptr};
    T* result = nullptr;      // CUB's output
    void* cub_temp = nullptr;
    size_t cub_temp_bytes = 0;

    Workspace(const std::vector<T>& host, unsigned int block, cudaStream_t stream)
        : inputs(host.data(), host.size() * sizeof(T), rotation_copies(host.size() * sizeof(T))) {
        const size_t n = host.size();
        const size_t max_partials = ceil_div(n, block) + 1;  // v0's first pass is the largest
        CUDA_CHECK(cudaMalloc(&partials[0], max_partials * sizeof(T)));
        CUDA_CHECK(cudaMalloc(&partials[1], max_partials * sizeof(T)));
        CUDA_CHECK(cudaMalloc(&result, sizeof(T)));
        CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_temp_bytes, static_cast<const T*>(inputs.copy(0)),
                                          result, static_cast<int>(n), stream));
        CUDA_CHECK(cudaMalloc(&cub_temp, std::max<size_t>(cub_temp_bytes, 1)));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    ~Workspace() {
        CUDA_CHECK(cudaFree(cub_temp));
        CUDA_CHECK(cudaFree(result));
        CUDA_CHECK(cudaFree(partials[1]));
        CUDA_CHECK(cudaFree(partials[0]));
    }
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;

    const T* next_input() { return static_cast<const T*>(inputs.next_input()); }
};

// ---------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------

struct Row {
    Version version;
    uint64_t n;
    unsigned int grid = 0, block = 0;  // first pass; 0 for cub
    size_t passes = 1;
    double first_ms = 0, first_gbps = 0, scalar_ms = 0;
    std::string check;  // PASS, FAIL or - (read)
};

struct Events {
    cudaEvent_t start, first_done, all_done;
    Events() {
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&first_done));
        CUDA_CHECK(cudaEventCreate(&all_done));
    }
    ~Events() {
        CUDA_CHECK(cudaEventDestroy(all_done));
        CUDA_CHECK(cudaEventDestroy(first_done));
        CUDA_CHECK(cudaEventDestroy(start));
    }
};

// GPU time spun before each timed run (see `spin`): longer than the CPU needs to enqueue it.
constexpr unsigned long long kPrerollNs = 50000;

// warmup + repeat runs of one version, each on the next input copy; every run's result is
// checked; medians of the timed runs.
template <typename T>
static Row bench_version(Version v, const Reference<T>& ref, Workspace<T>& ws, uint64_t n,
                         const Config& cfg, const DeviceInfo& dev, cudaStream_t stream,
                         Events& ev) {
    Row row;
    row.version = v;
    row.n = n;
    const bool is_kernel = v != Version::Cub && v != Version::Read;
    std::vector<Pass> passes;
    if (is_kernel) passes = plan_passes(v, n, cfg, dev);
    const unsigned int grid_read = read_grid<T>(n, cfg, dev);
    row.passes = is_kernel ? passes.size() : 1;
    row.block = v == Version::Cub ? 0 : cfg.block;
    row.grid = v == Version::Cub ? 0 : v == Version::Read ? grid_read : passes[0].grid;
    const uint64_t chain = is_kernel ? addition_chain(passes, cfg.block) : n;  // CUB: any order

    std::vector<float> first_ms, scalar_ms;
    size_t wrong = 0;
    T bad_value = T(0);
    for (int run = 0; run < cfg.warmup + cfg.repeat; ++run) {
        const T* in = ws.next_input();
        const T* out = nullptr;
        spin<<<1, 1, 0, stream>>>(kPrerollNs);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(ev.start, stream));
        if (v == Version::Cub) {
            CUDA_CHECK(cub::DeviceReduce::Sum(ws.cub_temp, ws.cub_temp_bytes, in, ws.result,
                                              static_cast<int>(n), stream));
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaEventRecord(ev.first_done, stream));
            out = ws.result;
        } else if (v == Version::Read) {
            read_probe<T><<<grid_read, cfg.block, 0, stream>>>(in, ws.partials[0],
                                                               static_cast<unsigned int>(n),
                                                               read_sentinel<T>());
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaEventRecord(ev.first_done, stream));
        } else {
            const T* src = in;
            for (size_t p = 0; p < passes.size(); ++p) {
                T* dst = ws.partials[p % 2];
                launch_pass(v, passes[p].grid, cfg.block, src, dst, passes[p].len, stream);
                if (p == 0) CUDA_CHECK(cudaEventRecord(ev.first_done, stream));
                src = dst;
            }
            out = src;
        }
        CUDA_CHECK(cudaEventRecord(ev.all_done, stream));
        CUDA_CHECK(cudaEventSynchronize(ev.all_done));

        if (out) {
            T got;
            CUDA_CHECK(cudaMemcpy(&got, out, sizeof(T), cudaMemcpyDeviceToHost));
            if (!result_ok(got, ref, chain)) {
                if (wrong++ == 0) bad_value = got;
            }
        }
        if (run >= cfg.warmup) {
            float first = 0, all = 0;
            CUDA_CHECK(cudaEventElapsedTime(&first, ev.start, ev.first_done));
            CUDA_CHECK(cudaEventElapsedTime(&all, ev.start, ev.all_done));
            first_ms.push_back(first);
            scalar_ms.push_back(all);
        }
    }
    row.first_ms = median(first_ms);
    row.scalar_ms = median(scalar_ms);
    row.first_gbps = double(n) * sizeof(T) / (row.first_ms * 1e6);
    if (v == Version::Read) {
        row.check = "-";
    } else if (wrong == 0) {
        row.check = "PASS";
    } else {
        row.check = "FAIL";
        const std::string expected = std::is_floating_point<T>::value ? show(ref.value) : show(ref.exact);
        std::fprintf(stderr, "FAIL %s %s n=%llu: %zu of %d runs wrong; first wrong result %s, expected %s\n",
                     version_name(v), Type<T>::name(), (unsigned long long)n, wrong,
                     cfg.warmup + cfg.repeat, show(bad_value).c_str(), expected.c_str());
    }
    return row;
}

// ---------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------

static void print_table_header() {
    std::printf("%-7s %12s %14s %6s %12s %9s %12s %6s  %s\n", "version", "n", "grid x block",
                "passes", "first_ms", "GB/s", "scalar_ms", "%read", "check");
}

static void print_row(const Row& r, double read_gbps) {
    char shape[32], pct[16];
    if (r.version == Version::Cub) std::snprintf(shape, sizeof shape, "-");
    else std::snprintf(shape, sizeof shape, "%ux%u", r.grid, r.block);
    if (read_gbps > 0) std::snprintf(pct, sizeof pct, "%.1f", 100.0 * r.first_gbps / read_gbps);
    else std::snprintf(pct, sizeof pct, "-");
    std::printf("%-7s %12llu %14s %6zu %12.4f %9.1f %12.4f %6s  %s\n", version_name(r.version),
                (unsigned long long)r.n, shape, r.passes, r.first_ms, r.first_gbps, r.scalar_ms,
                pct, r.check.c_str());
}

static void write_csv_row(FILE* f, const Row& r, const char* dtype) {
    std::fprintf(f, "cuda,%s,%s,%llu,%u,%u,%.6f,%.3f,%.6f,%s\n", version_name(r.version), dtype,
                 (unsigned long long)r.n, r.block, r.grid, r.first_ms, r.first_gbps, r.scalar_ms,
                 r.check == "-" ? "n/a" : r.check.c_str());
}

template <typename T>
static bool run_all(const Config& cfg, const DeviceInfo& dev) {
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    Events ev;
    FILE* csv = nullptr;
    if (!cfg.csv_path.empty()) {
        csv = std::fopen(cfg.csv_path.c_str(), "w");
        if (!csv) fail("cannot open " + cfg.csv_path + " for writing");
        std::fprintf(csv, "impl,version,dtype,n,block,grid,first_pass_ms,first_pass_gbps,scalar_ms,check\n");
    }
    bool all_ok = true;
    for (uint64_t n : cfg.sizes) {
        std::vector<T> host(n);
        for (uint64_t i = 0; i < n; ++i) host[i] = input_value<T>(i);
        const Reference<T> ref = reference_sum(host);
        Workspace<T> ws(host, cfg.block, stream);
        const double mib = double(n * sizeof(T)) / kMiB;
        if (ws.inputs.copies > 1)
            std::printf("\n# n = %llu (%.3f MiB): input rotated among %zu copies (%.1f MiB), one per run\n",
                        (unsigned long long)n, mib, ws.inputs.copies,
                        double(ws.inputs.total_bytes()) / kMiB);
        else
            std::printf("\n# n = %llu (%.3f MiB): one input buffer (larger than L2)\n",
                        (unsigned long long)n, mib);
        print_table_header();

        std::vector<Row> rows;
        double read_gbps = 0;
        for (Version v : cfg.versions) {
            rows.push_back(bench_version(v, ref, ws, n, cfg, dev, stream, ev));
            if (v == Version::Read) read_gbps = rows.back().first_gbps;
        }
        for (const Row& r : rows) {
            print_row(r, read_gbps);
            if (csv) write_csv_row(csv, r, Type<T>::name());
            all_ok = all_ok && r.check != "FAIL";
        }
        std::fflush(stdout);
    }
    if (csv) std::fclose(csv);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return all_ok;
}

// ---------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------

static void usage(FILE* f) {
    std::fprintf(f,
        "usage: reduce_ref [--dtype f32|f64|i32|u32] [--sizes LIST] [--repeat N] [--warmup N]\n"
        "                  [--block B] [--grid G] [--csv FILE] [--versions LIST]\n"
        "  --sizes     comma list of sizes and ranges: 1024,1048576 or 2^10..2^28 (powers of two,\n"
        "              inclusive) or 2^20,1000003; default 2^25; each 1 <= n <= 2^31-1\n"
        "  --repeat    timed runs per version and size, median reported (default 20)\n"
        "  --warmup    untimed runs first (default 3)\n"
        "  --block     threads per block: 64, 128, 256, 512 or 1024 (default 256)\n"
        "  --grid      blocks of v6, v7 and read (default SMs x (max threads per SM / block))\n"
        "  --csv       also write the rows as CSV\n"
        "  --versions  comma list of v0..v7, cub, read, or all (default all); also v4-sync and\n"
        "              v5-sync: v4/v5 with __syncwarp in the last warp, as the Rust kernels\n");
}

// --sizes: each 1 <= n <= 2^31 - 1.
static std::vector<uint64_t> parse_cub_sizes(const std::string& arg) {
    std::vector<uint64_t> sizes = parse_sizes(arg);
    for (uint64_t n : sizes)
        if (n < 1 || n > uint64_t(INT_MAX))
            fail("size " + std::to_string(n) + " out of range: 1 <= n <= 2^31-1 (CUB takes an int count)");
    return sizes;
}

static std::vector<Version> parse_versions(const std::string& arg) {
    std::vector<Version> versions;
    std::vector<Version> known{std::begin(kAllVersions), std::end(kAllVersions)};
    known.insert(known.end(), std::begin(kExtraVersions), std::end(kExtraVersions));
    for (const std::string& item : split(arg, ',')) {
        if (item == "all") {
            versions.insert(versions.end(), std::begin(kAllVersions), std::end(kAllVersions));
            continue;
        }
        bool found = false;
        for (Version v : known) {
            if (item == version_name(v)) {
                versions.push_back(v);
                found = true;
            }
        }
        if (!found) fail("unknown version '" + item + "' (v0..v7, v4-sync, v5-sync, cub, read, all)");
    }
    return versions;
}

static Config parse_args(int argc, char** argv) {
    Config cfg;
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i], value;
        if (flag == "-h" || flag == "--help") {
            usage(stdout);
            std::exit(0);
        }
        const size_t eq = flag.find('=');
        if (eq != std::string::npos) {  // --flag=value
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
        } else {
            if (i + 1 >= argc) {
                usage(stderr);
                fail("missing value for " + flag);
            }
            value = argv[++i];
        }
        if (flag == "--dtype") cfg.dtype = value;
        else if (flag == "--sizes") cfg.sizes = parse_cub_sizes(value);
        else if (flag == "--repeat") cfg.repeat = static_cast<int>(std::min<uint64_t>(parse_count(value, "repeat"), 1000000));
        else if (flag == "--warmup") cfg.warmup = static_cast<int>(std::min<uint64_t>(parse_count(value, "warmup"), 1000000));
        else if (flag == "--block") cfg.block = static_cast<unsigned int>(std::min<uint64_t>(parse_count(value, "block"), 1u << 20));
        else if (flag == "--grid") cfg.grid = static_cast<unsigned int>(std::min<uint64_t>(parse_count(value, "grid"), INT_MAX));
        else if (flag == "--csv") cfg.csv_path = value;
        else if (flag == "--versions") cfg.versions = parse_versions(value);
        else {
            usage(stderr);
            fail("unknown option " + flag);
        }
    }
    if (cfg.dtype != "f32" && cfg.dtype != "f64" && cfg.dtype != "i32" && cfg.dtype != "u32")
        fail("bad --dtype '" + cfg.dtype + "' (f32, f64, i32, u32)");
    if (cfg.repeat < 1) fail("--repeat must be at least 1");
    if (!is_power_of_two(cfg.block) || cfg.block < 64 || cfg.block > 1024)
        fail("--block must be 64, 128, 256, 512 or 1024");
    return cfg;
}

int main(int argc, char** argv) {
    const Config cfg = parse_args(argc, argv);

    DeviceInfo dev;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&dev.prop, device));
    dev.sms = static_cast<unsigned int>(dev.prop.multiProcessorCount);
    dev.threads_per_sm = static_cast<unsigned int>(dev.prop.maxThreadsPerMultiProcessor);

    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("# device: %s, sm_%d%d, %u SMs, %u threads/SM, L2 %.1f MiB, %.1f GiB; "
                "driver %d, runtime %d, CUB %d\n",
                dev.prop.name, dev.prop.major, dev.prop.minor, dev.sms, dev.threads_per_sm,
                double(dev.prop.l2CacheSize) / kMiB, double(dev.prop.totalGlobalMem) / (1024.0 * kMiB),
                driver, runtime, CUB_VERSION);
    std::printf("# timing: CUDA events on one stream around the launches; %d warm-up + %d timed runs "
                "per version and size; the MEDIAN is reported\n", cfg.warmup, cfg.repeat);
    std::printf("# first_ms: first kernel pass (cub, read: the whole call); GB/s = n*sizeof(T)/first_ms; "
                "scalar_ms: every pass until one value is left (host-driven launches)\n");
    std::printf("# L2: inputs under %zu MiB are rotated among copies totalling over %zu MiB, a fresh "
                "copy per run (all versions share the rotation), so runs read DRAM, not L2\n",
                kRotateBelowBytes / kMiB, kRotateTotalBytes / kMiB);
    std::printf("# dtype %s, block %u; v6/v7/read grid: %s = %llu (capped by the work); "
                "%%read = GB/s as a share of read's; check: every run's result, "
                "floats within chain*eps*sum|x|, integers exact\n",
                cfg.dtype.c_str(), cfg.block,
                cfg.grid ? "--grid" : "SMs x (threads/SM / block)",
                (unsigned long long)device_grid(cfg, dev));

    bool ok = false;
    if (cfg.dtype == "f32") ok = run_all<float>(cfg, dev);
    else if (cfg.dtype == "f64") ok = run_all<double>(cfg, dev);
    else if (cfg.dtype == "i32") ok = run_all<int>(cfg, dev);
    else ok = run_all<unsigned int>(cfg, dev);
    return ok ? 0 : 2;
}
