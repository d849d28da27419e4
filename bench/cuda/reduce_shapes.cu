// reduce_shapes.cu — NVIDIA CUB on reductions other than the whole-array f32 sum: whole-array
// Sum/Max/ArgMax/ArgMin over six element types, per-row reductions of a row-major matrix,
// reductions of ragged CSR segments, and per-column sums (no CUB primitive: a plain CUDA C++
// kernel here). The timing method is the one of reduce_ref.cu: a GPU pre-roll kernel before
// each timed run, inputs rotated among copies so that L2 holds none of them, exactly two CUDA
// events around the one call that is timed, the median of --repeat runs after --warmup, and a
// CPU check of every run's result (warm-up runs included).
//
// Build:  nvcc -O3 -arch=sm_90 -std=c++17 -o reduce_shapes reduce_shapes.cu   (CUDA 13.0; harness.cuh beside it)
// Run:    ./reduce_shapes --help
//
// What each case calls (CUB from the toolkit, CCCL 3.0):
//   whole     sum     cub::DeviceReduce::Sum (f32, f64, i64, u64: accumulates in the element
//                     type); f16 and bf16: cub::DeviceReduce::Reduce with a float operator and
//                     a float initial value, so the accumulator and the result are float
//             max     cub::DeviceReduce::Max
//             argmax  cub::DeviceReduce::ArgMax, the CCCL 3 overload with two output
//             argmin  iterators (value, int64 index) and an int64 count; ArgMin likewise
//   rows      sum     cub::DeviceSegmentedReduce::Sum (f16/bf16: ::Reduce with the float
//             max     operator, as above), ::Max, ::ArgMax (KeyValuePair<int, T>: key = the
//             argmax  column); segment offsets come from a transform of a counting iterator
//                     (row r begins at r * cols), so no offsets array is read
//   segments  sum, max, argmax: the same three calls on ragged CSR segments; offsets are an
//                     int array of segments + 1 entries (begin = offsets, end = offsets + 1)
//   columns   sum     no CUB primitive: column_sum_partials / column_sum_finish below, a plain
//                     two-kernel CUDA C++ column reduction (impl "cuda" in the output)
//   read      -       a read-only kernel over the same bytes (the bandwidth ceiling), per
//                     case, dtype and shape unless --no-read
//
// NaN policy (from CCCL 3.0's source; --nan-at shows it on the GPU): CUB's Max uses
// cuda::maximum, `(a < b) ? b : a`, and ArgMax keeps `a` unless `b.value > a.value` (or equal
// with a smaller index). Every comparison with a NaN is false, so a NaN survives only while it
// is the left operand: whether the result is NaN depends on CUB's reduction order, which is
// not specified. Sum propagates NaN (IEEE addition). PyTorch's max/argmax always propagate NaN.
//
// Limits: the total element count is at most 2^31 - 1 (CUB's Sum/Max and the segmented
// reductions take int counts and offsets here).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/limits>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

// CUDA_CHECK, fail, the pre-roll kernel `spin`, splitmix64, median, InputCopies, parse_sizes:
// shared with reduce_ref.cu and roundtrip.cu.
#define HARNESS_PROGRAM "reduce_shapes"
#include "harness.cuh"

// ---------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------

// Sum: the type CUB's sum accumulates in and writes (float for f16/bf16).
template <typename T> struct Type;
template <> struct Type<float> {
    static constexpr const char* name = "f32";
    using Sum = float;
    static constexpr bool is_float = true, half_like = false;
};
template <> struct Type<double> {
    static constexpr const char* name = "f64";
    using Sum = double;
    static constexpr bool is_float = true, half_like = false;
};
template <> struct Type<__half> {
    static constexpr const char* name = "f16";
    using Sum = float;
    static constexpr bool is_float = true, half_like = true;
};
template <> struct Type<__nv_bfloat16> {
    static constexpr const char* name = "bf16";
    using Sum = float;
    static constexpr bool is_float = true, half_like = true;
};
template <> struct Type<int64_t> {
    static constexpr const char* name = "i64";
    using Sum = int64_t;
    static constexpr bool is_float = false, half_like = false;
};
template <> struct Type<uint64_t> {
    static constexpr const char* name = "u64";
    using Sum = uint64_t;
    static constexpr bool is_float = false, half_like = false;
};

// Host view of a floating value as double (exact for every type here).
template <typename T>
static double to_double(T v) {
    if constexpr (std::is_same<T, __half>::value) return double(__half2float(v));
    else if constexpr (std::is_same<T, __nv_bfloat16>::value) return double(__bfloat162float(v));
    else return static_cast<double>(v);
}

// Equal values (floats: numerically, so a NaN equals nothing; integers: exactly).
template <typename T>
static bool same_value(T a, T b) {
    if constexpr (Type<T>::is_float) return to_double(a) == to_double(b);
    else return a == b;
}

template <typename T>
static bool is_nan_value(T v) {
    if constexpr (Type<T>::is_float) return std::isnan(to_double(v));
    else return false;
}

template <typename T>
static std::string show(T v) {
    char buf[64];
    if constexpr (Type<T>::is_float) std::snprintf(buf, sizeof buf, "%.17g", to_double(v));
    else if constexpr (std::is_signed<T>::value) std::snprintf(buf, sizeof buf, "%lld", (long long)v);
    else std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return buf;
}

template <typename T>
static T lowest_value() { return ::cuda::std::numeric_limits<T>::lowest(); }
template <typename T>
static T max_value() { return ::cuda::std::numeric_limits<T>::max(); }
template <typename T>
static T nan_value() { return ::cuda::std::numeric_limits<T>::quiet_NaN(); }

// ---------------------------------------------------------------------------------------
// Inputs: element i is a hash of i (the same generator as reduce_ref.cu for f32 and f64, and
// as bench/torch/reduce_torch.py for all types), so every program reduces the same data.
// ---------------------------------------------------------------------------------------

// Floats are uniform on a grid in [-1, 1), exact in their type (mixed signs, many ties at the
// maximum, which tests the first-occurrence rule of argmax):
//   f32:  (h >> 40) - 2^23, times 2^-23      (2^24 values)
//   f64:  (h >> 11) times 2^-52, minus 1     (2^53 values)
//   f16:  (h >> 53) - 2^10, times 2^-10      (2^11 values)
//   bf16: (h >> 56) - 2^7, times 2^-7        (2^8 values)
// Integers are the 64 hash bits (i64: reinterpreted as two's complement); sums wrap.
template <typename T>
static T input_value(uint64_t i) {
    const uint64_t h = splitmix64(i);
    if constexpr (std::is_same<T, float>::value) {
        return float(int32_t(h >> 40) - (int32_t(1) << 23)) * (1.0f / 8388608.0f);
    } else if constexpr (std::is_same<T, double>::value) {
        return double(h >> 11) * (1.0 / 4503599627370496.0) - 1.0;
    } else if constexpr (std::is_same<T, __half>::value) {
        return __float2half_rn(float(int32_t(h >> 53) - 1024) * (1.0f / 1024.0f));
    } else if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        return __float2bfloat16_rn(float(int32_t(h >> 56) - 128) * (1.0f / 128.0f));
    } else if constexpr (std::is_same<T, int64_t>::value) {
        int64_t v;
        std::memcpy(&v, &h, sizeof v);
        return v;
    } else {
        return h;
    }
}

// Ragged segment s: empty when (u & 15) == 0 (1 in 16), else 1 + (u >> 4) % hi, where
// u = splitmix64(splitmix64(seed) + s) and hi = max(1, round(2 * mean_len * 16 / 15) - 1),
// so the mean length is close to mean_len. reduce_torch.py builds the same lengths.
static std::vector<int> segment_offsets(uint64_t segments, double mean_len, uint64_t seed) {
    const uint64_t base = splitmix64(seed);
    const long long hi = std::max<long long>(1, std::llround(2.0 * mean_len * 16.0 / 15.0) - 1);
    std::vector<int> offsets(segments + 1);
    uint64_t total = 0;
    offsets[0] = 0;
    for (uint64_t s = 0; s < segments; ++s) {
        const uint64_t u = splitmix64(base + s);
        const uint64_t len = (u & 15) == 0 ? 0 : 1 + (u >> 4) % uint64_t(hi);
        total += len;
        if (total > uint64_t(INT_MAX)) fail("segments: more than 2^31 - 1 elements in all");
        offsets[s + 1] = static_cast<int>(total);
    }
    return offsets;
}

// ---------------------------------------------------------------------------------------
// Kernels: read probe, column sums (the pre-roll, `spin`, is harness.cuh's)
// ---------------------------------------------------------------------------------------

// Loads `bytes` bytes once (grid-stride 16-byte vectors, then the tail bytes) and writes only
// when the folded bits equal `sentinel` (practically never): the read ceiling for this input.
__global__ void read_probe(const unsigned char* in, size_t bytes, unsigned int* out,
                           unsigned int sentinel) {
    const uint4* vin = reinterpret_cast<const uint4*>(in);
    const size_t vectors = bytes / 16;
    const size_t thread = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t threads = size_t(blockDim.x) * gridDim.x;
    unsigned int acc = 0;
    for (size_t k = thread; k < vectors; k += threads) {
        const uint4 v = vin[k];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    const size_t tail = vectors * 16 + thread;  // fewer than 16 bytes
    if (tail < bytes) acc ^= in[tail];
    if (acc == sentinel) out[blockIdx.x] = acc;
}

template <typename Acc, typename T>
__device__ __forceinline__ Acc to_acc(T v) {
    if constexpr (std::is_same<T, __half>::value) return __half2float(v);
    else if constexpr (std::is_same<T, __nv_bfloat16>::value) return __bfloat162float(v);
    else return static_cast<Acc>(v);
}

// The accumulator of the column kernels: float for f16/bf16, uint64 for i64 (wrapping is
// defined), the element type otherwise.
template <typename T>
using ColumnAcc = typename std::conditional<std::is_same<T, int64_t>::value, uint64_t,
                                            typename Type<T>::Sum>::type;

constexpr int kColX = 32;  // columns per block (one warp reads 32 adjacent elements of a row)
constexpr int kColY = 8;   // row lanes per block

// Per-column sums, pass 1: block (32, 8) covers 32 adjacent columns and the rows of chunk
// blockIdx.y; thread (x, y) sums rows y, y+8, ... of its column (coalesced: a warp reads 32
// adjacent elements of one row), the 8 lanes are then added in shared memory, and the chunk's
// sum of each column goes to out[blockIdx.y * cols + col].
template <typename T, typename Acc, typename Out>
__global__ void __launch_bounds__(kColX * kColY)
column_sum_partials(const T* __restrict__ x, Out* __restrict__ out, int rows, int cols,
                    int rows_per_chunk) {
    __shared__ Acc lanes[kColY][kColX + 1];
    const int col = blockIdx.x * kColX + threadIdx.x;
    const int r_begin = blockIdx.y * rows_per_chunk;
    const int r_end = min(rows, r_begin + rows_per_chunk);
    Acc acc = Acc(0);
    if (col < cols) {
#pragma unroll 4
        for (int r = r_begin + int(threadIdx.y); r < r_end; r += kColY)
            acc += to_acc<Acc>(x[size_t(r) * cols + col]);
    }
    lanes[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < cols) {
        Acc sum = lanes[0][threadIdx.x];
#pragma unroll
        for (int k = 1; k < kColY; ++k) sum += lanes[k][threadIdx.x];
        out[size_t(blockIdx.y) * cols + col] = static_cast<Out>(sum);
    }
}

// Pass 2 (only when there is more than one chunk): one thread per column adds the chunks.
template <typename Acc, typename Out>
__global__ void column_sum_finish(const Acc* __restrict__ partials, Out* __restrict__ out,
                                  int chunks, int cols) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    Acc sum = partials[col];
    for (int k = 1; k < chunks; ++k) sum += partials[size_t(k) * cols + col];
    out[col] = static_cast<Out>(sum);
}

// ---------------------------------------------------------------------------------------
// CUB operators and offset iterators
// ---------------------------------------------------------------------------------------

// The float accumulator of the f16/bf16 sums: both operands are converted to float (an f16 or
// bf16 input converts implicitly), so CUB accumulates, and writes, float.
struct PlusFloat {
    __host__ __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

// Row r of a row-major rows x cols matrix begins at r * cols.
struct RowStart {
    int cols;
    __host__ __device__ __forceinline__ int operator()(int r) const { return r * cols; }
};
using RowOffsetIt = thrust::transform_iterator<RowStart, thrust::counting_iterator<int>>;

// ---------------------------------------------------------------------------------------
// Problem layout and CPU references
// ---------------------------------------------------------------------------------------

enum class Case { Whole, Rows, Columns, Segments };
enum class OpKind { Sum, Max, ArgMax, ArgMin };

static const char* case_name(Case c) {
    static const char* const names[] = {"whole", "rows", "columns", "segments"};
    return names[static_cast<int>(c)];
}
static const char* op_name(OpKind o) {
    static const char* const names[] = {"sum", "max", "argmax", "argmin"};
    return names[static_cast<int>(o)];
}

// The elements that feed output j, in order: whole: all; rows: row j; columns: column j;
// segments: [offsets[j], offsets[j+1]).
struct Layout {
    Case kind = Case::Whole;
    uint64_t rows = 1, cols = 0, n = 0;
    std::vector<int> offsets;  // segments only

    size_t outputs() const {
        switch (kind) {
            case Case::Whole: return 1;
            case Case::Rows: return rows;
            case Case::Columns: return cols;
            case Case::Segments: return offsets.size() - 1;
        }
        return 0;
    }
    uint64_t flat(size_t j, uint64_t pos) const {  // element index of position pos of output j
        switch (kind) {
            case Case::Whole: return pos;
            case Case::Rows: return uint64_t(j) * cols + pos;
            case Case::Columns: return pos * cols + j;
            case Case::Segments: return uint64_t(offsets[j]) + pos;
        }
        return 0;
    }
};

// Everything the checks need about one output's elements, gathered in one pass.
template <typename T>
struct RefAcc {
    uint64_t len = 0;
    double sum = 0, comp = 0, abs_sum = 0;  // floats: Neumaier sum in double, sum |x|
    uint64_t wrap = 0;                      // integers: the sum mod 2^64
    bool any = false;                       // a non-NaN element was seen
    T mx{}, mn{};                           // over the non-NaN elements
    int64_t amax = -1, amin = -1;           // their first positions
    int64_t first_nan = -1;

    void add(T v) {
        const int64_t pos = int64_t(len++);
        if constexpr (Type<T>::is_float) {
            const double d = to_double(v);
            if (std::isnan(d)) {
                if (first_nan < 0) first_nan = pos;
                return;
            }
            const double t = sum + d;
            comp += (std::fabs(sum) >= std::fabs(d)) ? (sum - t) + d : (d - t) + sum;
            sum = t;
            abs_sum += std::fabs(d);
            if (!any || d > to_double(mx)) { mx = v; amax = pos; }
            if (!any || d < to_double(mn)) { mn = v; amin = pos; }
        } else {
            wrap += static_cast<uint64_t>(v);
            if (!any || v > mx) { mx = v; amax = pos; }
            if (!any || v < mn) { mn = v; amin = pos; }
        }
        any = true;
    }
    double value() const { return sum + comp; }
};

template <typename T>
static std::vector<RefAcc<T>> compute_refs(const std::vector<T>& x, const Layout& L) {
    std::vector<RefAcc<T>> refs(L.outputs());
    switch (L.kind) {
        case Case::Whole:
            for (uint64_t i = 0; i < L.n; ++i) refs[0].add(x[i]);
            break;
        case Case::Rows:
            for (uint64_t r = 0; r < L.rows; ++r)
                for (uint64_t c = 0; c < L.cols; ++c) refs[r].add(x[r * L.cols + c]);
            break;
        case Case::Columns:  // row by row, so memory is walked in order
            for (uint64_t r = 0; r < L.rows; ++r)
                for (uint64_t c = 0; c < L.cols; ++c) refs[c].add(x[r * L.cols + c]);
            break;
        case Case::Segments:
            for (size_t s = 0; s + 1 < L.offsets.size(); ++s)
                for (int i = L.offsets[s]; i < L.offsets[s + 1]; ++i) refs[s].add(x[i]);
            break;
    }
    return refs;
}

// One output as read back from the GPU.
template <typename T>
struct Got {
    typename Type<T>::Sum sum{};  // sum
    T value{};                    // max, argmax, argmin
    int64_t index = 0;            // argmax, argmin: the position within the output's elements
};

enum class Outcome { Ok, Bad, NanPropagated, NanPropagatedLater, NanIgnored };

static const char* outcome_label(Outcome o) {
    switch (o) {
        case Outcome::NanPropagated: return "nan-propagated";
        case Outcome::NanPropagatedLater: return "nan-propagated-not-first";
        case Outcome::NanIgnored: return "nan-ignored";
        case Outcome::Ok: return "PASS";
        case Outcome::Bad: return "FAIL";
    }
    return "?";
}

// chain: the longest chain of additions assumed for the sum's error bound (see README).
template <typename T>
static Outcome classify(OpKind op, const Got<T>& g, const RefAcc<T>& r, uint64_t chain,
                        const std::vector<T>& x, const Layout& L, size_t j) {
    using S = typename Type<T>::Sum;
    const bool has_nan = r.first_nan >= 0;
    switch (op) {
        case OpKind::Sum:
            if constexpr (Type<T>::is_float) {
                const double got = static_cast<double>(g.sum);
                if (has_nan) return std::isnan(got) ? Outcome::NanPropagated : Outcome::Bad;
                const double eps = std::numeric_limits<S>::epsilon();
                const double tol = (double(chain) * eps + 4.0 * DBL_EPSILON) * r.abs_sum;
                return std::fabs(got - r.value()) <= tol ? Outcome::Ok : Outcome::Bad;  // NaN: Bad
            } else {
                return static_cast<uint64_t>(g.sum) == r.wrap ? Outcome::Ok : Outcome::Bad;
            }
        case OpKind::Max:
            if (r.len == 0) return same_value(g.value, lowest_value<T>()) ? Outcome::Ok : Outcome::Bad;
            if (has_nan) {
                if (is_nan_value(g.value)) return Outcome::NanPropagated;
                const T clean = r.any ? r.mx : lowest_value<T>();
                return same_value(g.value, clean) ? Outcome::NanIgnored : Outcome::Bad;
            }
            return same_value(g.value, r.mx) ? Outcome::Ok : Outcome::Bad;
        case OpKind::ArgMax:
        case OpKind::ArgMin: {
            const bool is_max = op == OpKind::ArgMax;
            if (r.len == 0) {  // CUB's documented result for an empty segment: {1, identity}
                const T identity = is_max ? lowest_value<T>() : max_value<T>();
                return g.index == 1 && same_value(g.value, identity) ? Outcome::Ok : Outcome::Bad;
            }
            const T best = is_max ? r.mx : r.mn;
            const int64_t at = is_max ? r.amax : r.amin;
            if (has_nan) {
                if (is_nan_value(g.value)) {
                    if (g.index == r.first_nan) return Outcome::NanPropagated;
                    const bool in_range = g.index >= 0 && uint64_t(g.index) < r.len;
                    return in_range && is_nan_value(x[L.flat(j, uint64_t(g.index))])
                               ? Outcome::NanPropagatedLater
                               : Outcome::Bad;
                }
                if (!r.any) return Outcome::Bad;
                return g.index == at && same_value(g.value, best) ? Outcome::NanIgnored : Outcome::Bad;
            }
            return g.index == at && same_value(g.value, best) ? Outcome::Ok : Outcome::Bad;
        }
    }
    return Outcome::Bad;
}

// ---------------------------------------------------------------------------------------
// Device input copies, rotated so that no run finds its input in L2
// ---------------------------------------------------------------------------------------

static const size_t kRotateTotalBytes = 256 * kMiB;  // the copies add up to at least this

// The copies of an input of `bytes` bytes: at least kRotateTotalBytes in all, within 60% of the
// GPU's free memory (room for outputs and CUB temp storage).
static size_t rotation_copies(size_t bytes) {
    const size_t stride_bytes = InputCopies::stride_for(bytes);
    size_t copies = std::max<size_t>(1, ceil_div(kRotateTotalBytes, stride_bytes));
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const size_t budget = free_bytes / 10 * 6;  // leave room for outputs and CUB temp
    if (copies * stride_bytes > budget) copies = std::max<size_t>(1, budget / stride_bytes);
    if (copies * stride_bytes > free_bytes) fail("input does not fit in GPU memory");
    return copies;
}

// The rotated copies of one case's input; one counter for every op.
struct Inputs : InputCopies {
    Inputs(const void* host, size_t bytes) : InputCopies(host, bytes, rotation_copies(bytes)) {}
};

// A device allocation freed on scope exit.
struct DeviceBuffer {
    void* ptr = nullptr;
    explicit DeviceBuffer(size_t bytes) { CUDA_CHECK(cudaMalloc(&ptr, std::max<size_t>(bytes, 1))); }
    ~DeviceBuffer() { CUDA_CHECK(cudaFree(ptr)); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    template <typename U> U* as() const { return static_cast<U*>(ptr); }
};

// ---------------------------------------------------------------------------------------
// The timed calls. Each op owns its outputs and temp storage (allocated outside the timing),
// launches its one call on `in`, and reads its outputs back.
// ---------------------------------------------------------------------------------------

template <typename T>
struct Op {
    virtual ~Op() = default;
    virtual const char* impl() const { return "cub"; }
    virtual void launch(const T* in, cudaStream_t stream) = 0;
    virtual void fetch(std::vector<Got<T>>& got) = 0;  // synchronous copies
    // The chain of additions assumed for output j's error bound (sums only).
    virtual uint64_t chain(const RefAcc<T>& r) const { return r.len; }
};

// Query the temp size with a null input (CUB reads nothing then), then allocate it.
#define QUERY_TEMP(call_with_null)                                                         \
    do {                                                                                   \
        void* d_temp_storage = nullptr;                                                    \
        size_t& temp_storage_bytes = temp_bytes;                                           \
        const T* in = nullptr;                                                             \
        cudaStream_t stream = 0;                                                           \
        CUDA_CHECK(call_with_null);                                                        \
        temp = std::make_unique<DeviceBuffer>(temp_bytes);                                 \
    } while (0)

template <typename T>
struct WholeSum : Op<T> {
    using S = typename Type<T>::Sum;
    int n;
    DeviceBuffer out{sizeof(S)};
    size_t temp_bytes = 0;
    std::unique_ptr<DeviceBuffer> temp;

    cudaError_t call(void* d_temp_storage, size_t& temp_storage_bytes, const T* in,
                     cudaStream_t stream) {
        if constexpr (Type<T>::half_like)
            return cub::DeviceReduce::Reduce(d_temp_storage, temp_storage_bytes, in, out.as<S>(),
                                             n, PlusFloat{}, 0.0f, stream);
        else
            return cub::DeviceReduce::Sum(d_temp_storage, temp_storage_bytes, in, out.as<S>(), n,
                                          stream);
    }
    explicit WholeSum(uint64_t count) : n(static_cast<int>(count)) {
        QUERY_TEMP(call(d_temp_storage, temp_storage_bytes, in, stream));
    }
    void launch(const T* in, cudaStream_t stream) override {
        size_t bytes = temp_bytes;
        CUDA_CHECK(call(temp->ptr, bytes, in, stream));
    }
    void fetch(std::vector<Got<T>>& got) override {
        CUDA_CHECK(cudaMemcpy(&got[0].sum, out.ptr, sizeof(S), cudaMemcpyDeviceToHost));
    }
};

template <typename T>
struct WholeMax : Op<T> {
    int n;
    DeviceBuffer out{sizeof(T)};
    size_t temp_bytes = 0;
    std::unique_ptr<DeviceBuffer> temp;

    explicit WholeMax(uint64_t count) : n(static_cast<int>(count)) {
        QUERY_TEMP(cub::DeviceReduce::Max(d_temp_storage, temp_storage_bytes, in, out.as<T>(), n,
                                          stream));
    }
    void launch(const T* in, cudaStream_t stream) override {
        size_t bytes = temp_bytes;
        CUDA_CHECK(cub::DeviceReduce::Max(temp->ptr, bytes, in, out.as<T>(), n, stream));
    }
    void fetch(std::vector<Got<T>>& got) override {
        CUDA_CHECK(cudaMemcpy(&got[0].value, out.ptr, sizeof(T), cudaMemcpyDeviceToHost));
    }
};

template <typename T, bool IsMax>
struct WholeArg : Op<T> {
    int64_t n;
    DeviceBuffer value{sizeof(T)};
    DeviceBuffer index{sizeof(int64_t)};
    size_t temp_bytes = 0;
    std::unique_ptr<DeviceBuffer> temp;

    cudaError_t call(void* d_temp_storage, size_t& temp_storage_bytes, const T* in,
                     cudaStream_t stream) {
        if constexpr (IsMax)
            return cub::DeviceReduce::ArgMax(d_temp_storage, temp_storage_bytes, in, value.as<T>(),
                                             index.as<int64_t>(), n, stream);
        else
            return cub::DeviceReduce::ArgMin(d_temp_storage, temp_storage_bytes, in, value.as<T>(),
                                             index.as<int64_t>(), n, stream);
    }
    explicit WholeArg(uint64_t count) : n(static_cast<int64_t>(count)) {
        QUERY_TEMP(call(d_temp_storage, temp_storage_bytes, in, stream));
    }
    void launch(const T* in, cudaStream_t stream) override {
        size_t bytes = temp_bytes;
        CUDA_CHECK(call(temp->ptr, bytes, in, stream));
    }
    void fetch(std::vector<Got<T>>& got) override {
        CUDA_CHECK(cudaMemcpy(&got[0].value, value.ptr, sizeof(T), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(&got[0].index, index.ptr, sizeof(int64_t), cudaMemcpyDeviceToHost));
    }
};

// Segmented ops: rows (RowOffsetIt) or ragged segments (const int*).
template <typename T, typename OffsetIt>
struct SegSum : Op<T> {
    using S = typename Type<T>::Sum;
    int64_t segments;
    OffsetIt begin, end;
    DeviceBuffer out;
    size_t temp_bytes = 0;
    std::unique_ptr<DeviceBuffer> temp;
    std::vector<S> host;

    cudaError_t call(void* d_temp_storage, size_t& temp_storage_bytes, const T* in,
                     cudaStream_t stream) {
        if constexpr (Type<T>::half_like)
            return cub::DeviceSegmentedReduce::Reduce(d_temp_storage, temp_storage_bytes, in,
                                                      out.as<S>(), segments, begin, end,
                                                      PlusFloat{}, 0.0f, stream);
        else
            return cub::DeviceSegmentedReduce::Sum(d_temp_storage, temp_storage_bytes, in,
                                                   out.as<S>(), segments, begin, end, stream);
    }
    SegSum(int64_t segs, OffsetIt b, OffsetIt e)
        : segments(segs), begin(b), end(e), out(size_t(segs) * sizeof(S)), host(size_t(segs)) {
        QUERY_TEMP(call(d_temp_storage, temp_storage_bytes, in, stream));
    }
    void launch(const T* in, cudaStream_t stream) override {
        size_t bytes = temp_bytes;
        CUDA_CHECK(call(temp->ptr, bytes, in, stream));
    }
    void fetch(std::vector<Got<T>>& got) override {
        CUDA_CHECK(cudaMemcpy(host.data(), out.ptr, host.size() * sizeof(S), cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < host.size(); ++j) got[j].sum = host[j];
    }
};

template <typename T, typename OffsetIt>
struct SegMax : Op<T> {
    int64_t segments;
    OffsetIt begin, end;
    DeviceBuffer out;
    size_t temp_bytes = 0;
    std::unique_ptr<DeviceBuffer> temp;
    std::vector<T> host;

    SegMax(int64_t segs, OffsetIt b, OffsetIt e)
        : segments(segs), begin(b), end(e), out(size_t(segs) * sizeof(T)), host(size_t(segs)) {
        QUERY_TEMP(cub::DeviceSegmentedReduce::Max(d_temp_storage, temp_storage_bytes, in,
                                                   out.as<T>(), segments, begin, end, stream));
    }
    void launch(const T* in, cudaStream_t stream) override {
        size_t bytes = temp_bytes;
        CUDA_CHECK(cub::DeviceSegmentedReduce::Max(temp->ptr, bytes, in, out.as<T>(), segments,
                                                   begin, end, stream));
    }
    void fetch(std::vector<Got<T>>& got) override {
        CUDA_CHECK(cudaMemcpy(host.data(), out.ptr, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < host.size(); ++j) got[j].value = host[j];
    }
};

template <typename T, typename OffsetIt, bool IsMax>
struct SegArg : Op<T> {
    using Pair = cub::KeyValuePair<int, T>;  // key: the position within the segment
    int64_t segments;
    OffsetIt begin, end;
    DeviceBuffer out;
    size_t temp_bytes = 0;
    std::unique_ptr<DeviceBuffer> temp;
    std::vector<Pair> host;

    cudaError_t call(void* d_temp_storage, size_t& temp_storage_bytes, const T* in,
                     cudaStream_t stream) {
        if constexpr (IsMax)
            return cub::DeviceSegmentedReduce::ArgMax(d_temp_storage, temp_storage_bytes, in,
                                                      out.as<Pair>(), segments, begin, end, stream);
        else
            return cub::DeviceSegmentedReduce::ArgMin(d_temp_storage, temp_storage_bytes, in,
                                                      out.as<Pair>(), segments, begin, end, stream);
    }
    SegArg(int64_t segs, OffsetIt b, OffsetIt e)
        : segments(segs), begin(b), end(e), out(size_t(segs) * sizeof(Pair)), host(size_t(segs)) {
        QUERY_TEMP(call(d_temp_storage, temp_storage_bytes, in, stream));
    }
    void launch(const T* in, cudaStream_t stream) override {
        size_t bytes = temp_bytes;
        CUDA_CHECK(call(temp->ptr, bytes, in, stream));
    }
    void fetch(std::vector<Got<T>>& got) override {
        CUDA_CHECK(cudaMemcpy(host.data(), out.ptr, host.size() * sizeof(Pair), cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < host.size(); ++j) {
            got[j].value = host[j].value;
            got[j].index = host[j].key;
        }
    }
};

// Per-column sums with the two kernels above (impl "cuda").
template <typename T>
struct ColumnSum : Op<T> {
    using Acc = ColumnAcc<T>;
    using S = typename Type<T>::Sum;  // what is written: float for f16/bf16, T otherwise
    int rows, cols, rows_per_chunk, chunks;
    DeviceBuffer out;
    std::unique_ptr<DeviceBuffer> partials;  // chunks x cols, when chunks > 1
    std::vector<S> host;

    ColumnSum(uint64_t r, uint64_t c, unsigned int sms)
        : rows(int(r)), cols(int(c)), out(size_t(c) * sizeof(S)), host(size_t(c)) {
        // About two waves of 256-thread blocks (8 resident per SM on sm_90): split the rows
        // into chunks when the columns alone give fewer blocks.
        const uint64_t blocks_x = ceil_div(c, kColX);
        const uint64_t target = 2ull * sms * 8;
        uint64_t want = std::max<uint64_t>(1, ceil_div(target, blocks_x));
        want = std::min<uint64_t>(want, std::max<uint64_t>(1, ceil_div(r, kColY)));
        rows_per_chunk = int(ceil_div(ceil_div(r, want), kColY) * kColY);
        chunks = int(ceil_div(r, uint64_t(rows_per_chunk)));
        if (chunks > 1) partials = std::make_unique<DeviceBuffer>(size_t(chunks) * cols * sizeof(Acc));
    }
    const char* impl() const override { return "cuda"; }
    void launch(const T* in, cudaStream_t stream) override {
        const dim3 block(kColX, kColY);
        const dim3 grid(unsigned(ceil_div(cols, kColX)), unsigned(chunks));
        if (chunks == 1) {
            column_sum_partials<T, Acc, S><<<grid, block, 0, stream>>>(in, out.as<S>(), rows, cols,
                                                                       rows_per_chunk);
            CUDA_CHECK_LAUNCH();
        } else {
            column_sum_partials<T, Acc, Acc><<<grid, block, 0, stream>>>(in, partials->as<Acc>(),
                                                                         rows, cols, rows_per_chunk);
            CUDA_CHECK_LAUNCH();
            column_sum_finish<Acc, S><<<unsigned(ceil_div(cols, 256)), 256, 0, stream>>>(
                partials->as<Acc>(), out.as<S>(), chunks, cols);
            CUDA_CHECK_LAUNCH();
        }
    }
    void fetch(std::vector<Got<T>>& got) override {
        CUDA_CHECK(cudaMemcpy(host.data(), out.ptr, host.size() * sizeof(S), cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < host.size(); ++j) got[j].sum = host[j];
    }
    // Exact for this kernel: a thread's run of rows, the 8 lanes, then the chunks.
    uint64_t chain(const RefAcc<T>&) const override {
        return ceil_div(uint64_t(rows_per_chunk), kColY) + kColY + uint64_t(chunks);
    }
};

// ---------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------

struct Config {
    Case kind = Case::Whole;
    std::vector<OpKind> ops;  // empty: every op of the case
    std::vector<std::string> dtypes{"f32"};
    std::vector<uint64_t> sizes{uint64_t(1) << 25};                    // whole
    std::vector<std::pair<uint64_t, uint64_t>> shapes{{8192, 8192}};  // rows, columns
    uint64_t segments = 100000;                                        // segments
    double mean_len = 300;
    uint64_t seed = 1;
    int repeat = 20;
    int warmup = 3;
    unsigned long long preroll_ns = 50000;
    std::vector<uint64_t> nan_at;
    bool read = true;
    std::string csv_path;
    bool csv_append = false;
};

struct Row {
    std::string impl, op;
    double ms = 0, gbps = 0, max_err = -1;
    size_t late = 0;     // timed runs whose enqueue took longer than the pre-roll
    std::string check;   // PASS, FAIL, a nan-* label, or n/a (read)
};

struct Events {
    cudaEvent_t start, end;
    Events() {
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&end));
    }
    ~Events() {
        CUDA_CHECK(cudaEventDestroy(end));
        CUDA_CHECK(cudaEventDestroy(start));
    }
};

// warmup + repeat runs, each on the next input copy: pre-roll, start event, the one call,
// end event (exactly two events: a third one in between would add to the interval). `after`
// runs after each run's end event has completed (the check). Returns the median of the timed
// runs and counts those whose host-side enqueue took longer than the pre-roll (then the GPU
// may have waited for the CPU inside the interval).
template <typename Launch, typename After>
static double time_runs(Inputs& inputs, const Config& cfg, cudaStream_t stream, Events& ev,
                        Launch&& launch, After&& after, size_t& late) {
    std::vector<float> ms;
    late = 0;
    for (int run = 0; run < cfg.warmup + cfg.repeat; ++run) {
        const void* in = inputs.next_input();
        const auto t0 = std::chrono::steady_clock::now();
        spin<<<1, 1, 0, stream>>>(cfg.preroll_ns);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(ev.start, stream));
        launch(in);
        CUDA_CHECK(cudaEventRecord(ev.end, stream));
        const auto t1 = std::chrono::steady_clock::now();
        CUDA_CHECK(cudaEventSynchronize(ev.end));
        after();
        if (run >= cfg.warmup) {
            float t = 0;
            CUDA_CHECK(cudaEventElapsedTime(&t, ev.start, ev.end));
            ms.push_back(t);
            const auto host_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
            if (static_cast<unsigned long long>(host_ns) >= cfg.preroll_ns) ++late;
        }
    }
    return median(ms);
}

template <typename T>
static Row bench_op(Op<T>& op, OpKind kind, Inputs& inputs, const std::vector<T>& x,
                    const Layout& L, const std::vector<RefAcc<T>>& refs, const Config& cfg,
                    cudaStream_t stream, Events& ev) {
    Row row;
    row.impl = op.impl();
    row.op = op_name(kind);
    std::vector<Got<T>> got(L.outputs());
    size_t bad_runs = 0;
    std::string first_bad;
    bool seen[5] = {false, false, false, false, false};
    double max_err = -1;
    int run = 0;
    auto after = [&]() {
        op.fetch(got);
        bool bad = false;
        for (size_t j = 0; j < got.size(); ++j) {
            const Outcome o = classify(kind, got[j], refs[j], op.chain(refs[j]), x, L, j);
            if (o == Outcome::Bad) {
                if (!bad && first_bad.empty()) {
                    char buf[512];
                    const RefAcc<T>& r = refs[j];
                    if (kind == OpKind::Sum) {
                        const std::string want = Type<T>::is_float ? show(r.value()) : show(r.wrap);
                        std::snprintf(buf, sizeof buf, "run %d, output %zu (%llu elements): sum %s, expected %s",
                                      run, j, (unsigned long long)r.len,
                                      show(got[j].sum).c_str(), want.c_str());
                    } else {
                        const bool mx = kind != OpKind::ArgMin;
                        std::snprintf(buf, sizeof buf,
                                      "run %d, output %zu (%llu elements): value %s index %lld, expected %s index %lld",
                                      run, j, (unsigned long long)r.len, show(got[j].value).c_str(),
                                      (long long)got[j].index, show(mx ? r.mx : r.mn).c_str(),
                                      (long long)(kind == OpKind::Max ? -1 : (mx ? r.amax : r.amin)));
                    }
                    first_bad = buf;
                }
                bad = true;
            }
            seen[static_cast<int>(o)] = true;
            if constexpr (Type<T>::is_float) {
                if (kind == OpKind::Sum && o == Outcome::Ok && refs[j].abs_sum > 0)
                    max_err = std::max(max_err, std::fabs(double(got[j].sum) - refs[j].value()) /
                                                    refs[j].abs_sum);
            }
        }
        if (bad) ++bad_runs;
        ++run;
    };
    row.ms = time_runs(inputs, cfg, stream, ev,
                       [&](const void* in) { op.launch(static_cast<const T*>(in), stream); },
                       after, row.late);
    row.gbps = double(L.n) * sizeof(T) / (row.ms * 1e6);
    row.max_err = max_err;
    if (bad_runs) {
        row.check = "FAIL";
        std::fprintf(stderr, "FAIL %s %s %s %s n=%llu: %zu of %d runs wrong; first: %s\n",
                     row.impl.c_str(), case_name(L.kind), row.op.c_str(), Type<T>::name,
                     (unsigned long long)L.n, bad_runs, cfg.warmup + cfg.repeat, first_bad.c_str());
    } else {
        std::vector<std::string> labels;
        for (Outcome o : {Outcome::NanPropagated, Outcome::NanPropagatedLater, Outcome::NanIgnored})
            if (seen[static_cast<int>(o)]) labels.push_back(outcome_label(o));
        row.check = labels.empty() ? "PASS" : labels.size() == 1 ? labels[0] : "nan-mixed";
    }
    return row;
}

static Row bench_read(Inputs& inputs, size_t bytes, const Config& cfg, const cudaDeviceProp& prop,
                      cudaStream_t stream, Events& ev) {
    const unsigned int block = 256;
    const uint64_t device_grid = uint64_t(prop.multiProcessorCount) *
                                 (unsigned(prop.maxThreadsPerMultiProcessor) / block);
    const unsigned int grid = unsigned(std::max<uint64_t>(1, std::min(ceil_div(bytes / 16, block), device_grid)));
    DeviceBuffer sink(size_t(grid) * sizeof(unsigned int));
    Row row;
    row.impl = "read";
    row.op = "read";
    row.check = "n/a";
    row.ms = time_runs(inputs, cfg, stream, ev,
                       [&](const void* in) {
                           read_probe<<<grid, block, 0, stream>>>(static_cast<const unsigned char*>(in),
                                                                  bytes, sink.as<unsigned int>(),
                                                                  0x5EADBEEFu);
                           CUDA_CHECK_LAUNCH();
                       },
                       [] {}, row.late);
    row.gbps = double(bytes) / (row.ms * 1e6);
    return row;
}

// ---------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------

struct Output {
    FILE* csv = nullptr;
    bool any_fail = false;
};

static void print_table_header() {
    std::printf("%-5s %-8s %-6s %-5s %10s %10s %12s %11s %9s %6s %4s %-14s %s\n", "impl", "case",
                "op", "dtype", "rows", "cols", "n", "ms", "GB/s", "%read", "late", "check",
                "max|err|/sum|x|");
}

static void emit(Output& out, const Row& r, const Layout& L, const char* dtype, double read_gbps) {
    char pct[16], err[32];
    if (read_gbps > 0 && r.impl != "read") std::snprintf(pct, sizeof pct, "%.1f", 100.0 * r.gbps / read_gbps);
    else std::snprintf(pct, sizeof pct, "-");
    if (r.max_err >= 0) std::snprintf(err, sizeof err, "%.2e", r.max_err);
    else std::snprintf(err, sizeof err, "-");
    const unsigned long long rows = L.kind == Case::Segments ? L.outputs() : L.rows;
    const unsigned long long cols = L.kind == Case::Segments ? 0 : L.cols;
    std::printf("%-5s %-8s %-6s %-5s %10llu %10llu %12llu %11.4f %9.1f %6s %4zu %-14s %s\n",
                r.impl.c_str(), case_name(L.kind), r.op.c_str(), dtype, rows, cols,
                (unsigned long long)L.n, r.ms, r.gbps, pct, r.late, r.check.c_str(), err);
    if (out.csv)
        std::fprintf(out.csv, "%s,%s,%s,%s,%llu,%llu,%llu,%.6f,%.3f,%s\n", r.impl.c_str(),
                     case_name(L.kind), r.op.c_str(), dtype, rows, cols, (unsigned long long)L.n,
                     r.ms, r.gbps, r.check.c_str());
    if (r.check == "FAIL") out.any_fail = true;
}

static std::vector<OpKind> case_ops(Case c) {
    switch (c) {
        case Case::Whole: return {OpKind::Sum, OpKind::Max, OpKind::ArgMax, OpKind::ArgMin};
        case Case::Rows: case Case::Segments: return {OpKind::Sum, OpKind::Max, OpKind::ArgMax};
        case Case::Columns: return {OpKind::Sum};
    }
    return {};
}

template <typename T>
static std::unique_ptr<Op<T>> make_op(OpKind kind, const Layout& L, const int* d_offsets,
                                      const cudaDeviceProp& prop) {
    switch (L.kind) {
        case Case::Whole:
            switch (kind) {
                case OpKind::Sum: return std::make_unique<WholeSum<T>>(L.n);
                case OpKind::Max: return std::make_unique<WholeMax<T>>(L.n);
                case OpKind::ArgMax: return std::make_unique<WholeArg<T, true>>(L.n);
                case OpKind::ArgMin: return std::make_unique<WholeArg<T, false>>(L.n);
            }
            break;
        case Case::Rows: {
            const RowOffsetIt begin = thrust::make_transform_iterator(thrust::counting_iterator<int>(0),
                                                                      RowStart{int(L.cols)});
            const RowOffsetIt end = begin + 1;
            const int64_t segs = int64_t(L.rows);
            switch (kind) {
                case OpKind::Sum: return std::make_unique<SegSum<T, RowOffsetIt>>(segs, begin, end);
                case OpKind::Max: return std::make_unique<SegMax<T, RowOffsetIt>>(segs, begin, end);
                case OpKind::ArgMax: return std::make_unique<SegArg<T, RowOffsetIt, true>>(segs, begin, end);
                default: break;
            }
            break;
        }
        case Case::Segments: {
            const int64_t segs = int64_t(L.outputs());
            switch (kind) {
                case OpKind::Sum: return std::make_unique<SegSum<T, const int*>>(segs, d_offsets, d_offsets + 1);
                case OpKind::Max: return std::make_unique<SegMax<T, const int*>>(segs, d_offsets, d_offsets + 1);
                case OpKind::ArgMax:
                    return std::make_unique<SegArg<T, const int*, true>>(segs, d_offsets, d_offsets + 1);
                default: break;
            }
            break;
        }
        case Case::Columns:
            if (kind == OpKind::Sum)
                return std::make_unique<ColumnSum<T>>(L.rows, L.cols, unsigned(prop.multiProcessorCount));
            break;
    }
    fail(std::string("op ") + op_name(kind) + " is not offered for case " + case_name(L.kind));
}

// One case, dtype and shape: inputs, references, the read probe, then every op.
template <typename T>
static void run_layout(const Layout& L, const Config& cfg, const cudaDeviceProp& prop,
                       cudaStream_t stream, Events& ev, Output& out) {
    std::vector<T> x(L.n);
    for (uint64_t i = 0; i < L.n; ++i) x[i] = input_value<T>(i);
    size_t planted = 0;
    for (uint64_t i : cfg.nan_at) {
        if (i < L.n) {
            x[i] = nan_value<T>();
            ++planted;
        }
    }
    const std::vector<RefAcc<T>> refs = compute_refs(x, L);
    const size_t bytes = L.n * sizeof(T);
    Inputs inputs(x.data(), bytes);
    std::unique_ptr<DeviceBuffer> offsets;
    if (L.kind == Case::Segments) {
        offsets = std::make_unique<DeviceBuffer>(L.offsets.size() * sizeof(int));
        CUDA_CHECK(cudaMemcpy(offsets->ptr, L.offsets.data(), L.offsets.size() * sizeof(int),
                              cudaMemcpyHostToDevice));
    }

    std::printf("\n# %s %s: ", case_name(L.kind), Type<T>::name);
    switch (L.kind) {
        case Case::Whole: std::printf("n = %llu", (unsigned long long)L.n); break;
        case Case::Rows: case Case::Columns:
            std::printf("%llu rows x %llu cols (row-major)", (unsigned long long)L.rows,
                        (unsigned long long)L.cols);
            break;
        case Case::Segments: {
            size_t empty = 0;
            for (size_t s = 0; s < L.outputs(); ++s) empty += L.offsets[s] == L.offsets[s + 1];
            std::printf("%zu segments (%zu empty), mean length %.1f asked, %.2f got, seed %llu, n = %llu",
                        L.outputs(), empty, cfg.mean_len, double(L.n) / double(L.outputs()),
                        (unsigned long long)cfg.seed, (unsigned long long)L.n);
            break;
        }
    }
    std::printf(", %.3f MiB; rotated among %zu copies (%.1f MiB)%s", double(bytes) / kMiB,
                inputs.copies, double(inputs.total_bytes()) / kMiB,
                inputs.total_bytes() < kRotateTotalBytes ? " [WARNING: under 256 MiB, GPU memory short]" : "");
    if (planted) std::printf("; %zu NaN planted", planted);
    std::printf("\n");
    print_table_header();

    std::vector<Row> rows;
    double read_gbps = 0;
    if (cfg.read) {
        rows.push_back(bench_read(inputs, bytes, cfg, prop, stream, ev));
        read_gbps = rows.back().gbps;
    }
    const std::vector<OpKind> ops = cfg.ops.empty() ? case_ops(L.kind) : cfg.ops;
    for (OpKind kind : ops) {
        std::unique_ptr<Op<T>> op = make_op<T>(kind, L, offsets ? offsets->as<int>() : nullptr, prop);
        rows.push_back(bench_op(*op, kind, inputs, x, L, refs, cfg, stream, ev));
    }
    for (const Row& r : rows) {
        emit(out, r, L, Type<T>::name, read_gbps);
        if (r.late)
            std::fprintf(stderr, "WARNING %s %s %s %s: %zu of %d timed runs took the CPU longer than the "
                         "%.0f us pre-roll to enqueue (raise --preroll-us)\n", r.impl.c_str(),
                         case_name(L.kind), r.op.c_str(), Type<T>::name, r.late, cfg.repeat,
                         cfg.preroll_ns / 1000.0);
    }
    std::fflush(stdout);
    if (out.csv) std::fflush(out.csv);
}

static void run_dtype(const std::string& dtype, const Layout& L, const Config& cfg,
                      const cudaDeviceProp& prop, cudaStream_t stream, Events& ev, Output& out) {
    if (dtype == "f32") run_layout<float>(L, cfg, prop, stream, ev, out);
    else if (dtype == "f64") run_layout<double>(L, cfg, prop, stream, ev, out);
    else if (dtype == "f16") run_layout<__half>(L, cfg, prop, stream, ev, out);
    else if (dtype == "bf16") run_layout<__nv_bfloat16>(L, cfg, prop, stream, ev, out);
    else if (dtype == "i64") run_layout<int64_t>(L, cfg, prop, stream, ev, out);
    else run_layout<uint64_t>(L, cfg, prop, stream, ev, out);
}

// ---------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------

static void usage(FILE* f) {
    std::fprintf(f,
        "usage: reduce_shapes --case whole|rows|columns|segments [--op LIST] [--dtype LIST]\n"
        "                     [--n LIST] [--rows R --cols C | --shapes RxC,...]\n"
        "                     [--segments S --mean-len L --seed K] [--repeat N] [--warmup N]\n"
        "                     [--preroll-us U] [--nan-at LIST] [--no-read]\n"
        "                     [--csv FILE | --csv-append FILE]\n"
        "  --case       whole: the whole array; rows: one result per row of a row-major matrix;\n"
        "               columns: one per column; segments: one per ragged CSR segment\n"
        "  --op         comma list; whole: sum,max,argmax,argmin; rows and segments: sum,max,argmax;\n"
        "               columns: sum. Default: all of the case's ops\n"
        "  --dtype      comma list of f32, f64, f16, bf16, i64, u64 (default f32)\n"
        "  --n          whole: sizes, as 1000003, 2^28 or 2^20..2^28 (powers of two, inclusive);\n"
        "               default 2^25 (--sizes is the same option)\n"
        "  --rows/--cols  rows and columns (default 8192 x 8192); --shapes 8192x8192,2^20x16 for several\n"
        "  --segments   number of ragged segments (default 100000), --mean-len their mean length\n"
        "               (default 300; 1 in 16 is empty), --seed the lengths' seed (default 1)\n"
        "  --repeat     timed runs, median reported (default 20); --warmup untimed runs first (3)\n"
        "  --preroll-us GPU spin before each timed run, microseconds (default 50)\n"
        "  --nan-at     comma list of element indices set to NaN (float dtypes): shows CUB's NaN policy\n"
        "  --no-read    skip the read-only kernel row\n"
        "  --csv        write the rows as CSV (impl,case,op,dtype,rows,cols,n,ms,gbps,check);\n"
        "               --csv-append appends, writing the header only to a new or empty file\n"
        "  Every count is at most 2^31 - 1 elements in all.\n");
}

static std::vector<std::pair<uint64_t, uint64_t>> parse_shapes(const std::string& arg) {
    std::vector<std::pair<uint64_t, uint64_t>> shapes;
    for (const std::string& item : split(arg, ',')) {
        const size_t x = item.find('x');
        if (x == std::string::npos) fail("bad shape '" + item + "': want RxC, e.g. 8192x8192");
        shapes.emplace_back(parse_size(item.substr(0, x), "rows"), parse_size(item.substr(x + 1), "cols"));
    }
    return shapes;
}

static Case parse_case(const std::string& s) {
    if (s == "whole") return Case::Whole;
    if (s == "rows") return Case::Rows;
    if (s == "columns") return Case::Columns;
    if (s == "segments") return Case::Segments;
    fail("unknown --case '" + s + "' (whole, rows, columns, segments)");
}

static std::vector<OpKind> parse_ops(const std::string& arg) {
    std::vector<OpKind> ops;
    for (const std::string& item : split(arg, ',')) {
        bool found = false;
        for (OpKind o : {OpKind::Sum, OpKind::Max, OpKind::ArgMax, OpKind::ArgMin}) {
            if (item == op_name(o)) {
                ops.push_back(o);
                found = true;
            }
        }
        if (!found) fail("unknown op '" + item + "' (sum, max, argmax, argmin)");
    }
    return ops;
}

static Config parse_args(int argc, char** argv) {
    Config cfg;
    uint64_t rows = 0, cols = 0;
    bool have_case = false;
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i], value;
        if (flag == "-h" || flag == "--help") {
            usage(stdout);
            std::exit(0);
        }
        if (flag == "--no-read") {
            cfg.read = false;
            continue;
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
        if (flag == "--case") { cfg.kind = parse_case(value); have_case = true; }
        else if (flag == "--op" || flag == "--ops") cfg.ops = parse_ops(value);
        else if (flag == "--dtype" || flag == "--dtypes") cfg.dtypes = split(value, ',');
        else if (flag == "--n" || flag == "--sizes") cfg.sizes = parse_sizes(value);
        else if (flag == "--rows") rows = parse_size(value, "rows");
        else if (flag == "--cols") cols = parse_size(value, "cols");
        else if (flag == "--shapes") cfg.shapes = parse_shapes(value);
        else if (flag == "--segments") cfg.segments = parse_size(value, "segments");
        else if (flag == "--mean-len") {
            char* end = nullptr;
            cfg.mean_len = std::strtod(value.c_str(), &end);
            if (!end || *end || !(cfg.mean_len >= 0.5) || cfg.mean_len > 1e9) fail("bad --mean-len '" + value + "'");
        }
        else if (flag == "--seed") cfg.seed = parse_count(value, "seed");
        else if (flag == "--repeat") cfg.repeat = int(std::min<uint64_t>(parse_count(value, "repeat"), 1000000));
        else if (flag == "--warmup") cfg.warmup = int(std::min<uint64_t>(parse_count(value, "warmup"), 1000000));
        else if (flag == "--preroll-us") cfg.preroll_ns = std::min<uint64_t>(parse_count(value, "preroll-us"), 10000000) * 1000;
        else if (flag == "--nan-at") {
            cfg.nan_at.clear();
            for (const std::string& item : split(value, ',')) cfg.nan_at.push_back(parse_size(item, "index"));
        }
        else if (flag == "--csv") { cfg.csv_path = value; cfg.csv_append = false; }
        else if (flag == "--csv-append") { cfg.csv_path = value; cfg.csv_append = true; }
        else {
            usage(stderr);
            fail("unknown option " + flag);
        }
    }
    if (!have_case) {
        usage(stderr);
        fail("--case is required");
    }
    if ((rows != 0) != (cols != 0)) fail("give both --rows and --cols");
    if (rows) cfg.shapes = {{rows, cols}};
    for (const std::string& d : cfg.dtypes)
        if (d != "f32" && d != "f64" && d != "f16" && d != "bf16" && d != "i64" && d != "u64")
            fail("bad --dtype '" + d + "' (f32, f64, f16, bf16, i64, u64)");
    const std::vector<OpKind> offered = case_ops(cfg.kind);
    for (OpKind o : cfg.ops)
        if (std::find(offered.begin(), offered.end(), o) == offered.end())
            fail(std::string("op ") + op_name(o) + " is not offered for case " + case_name(cfg.kind));
    if (!cfg.nan_at.empty())
        for (const std::string& d : cfg.dtypes)
            if (d == "i64" || d == "u64") fail("--nan-at needs float dtypes");
    if (cfg.repeat < 1) fail("--repeat must be at least 1");
    for (uint64_t n : cfg.sizes)
        if (n < 1 || n > uint64_t(INT_MAX)) fail("size " + std::to_string(n) + " out of range: 1 <= n <= 2^31-1");
    for (const auto& s : cfg.shapes)
        if (s.first < 1 || s.second < 1 || s.first * s.second > uint64_t(INT_MAX))
            fail("shape " + std::to_string(s.first) + "x" + std::to_string(s.second) +
                 " out of range: rows, cols >= 1 and rows*cols <= 2^31-1");
    if (cfg.segments < 1 || cfg.segments > uint64_t(INT_MAX) - 1) fail("--segments out of range");
    return cfg;
}

int main(int argc, char** argv) {
    const Config cfg = parse_args(argc, argv);

    cudaDeviceProp prop;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("# device: %s, sm_%d%d, %d SMs, L2 %.1f MiB, %.1f GiB; driver %d, runtime %d, CUB %d\n",
                prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                double(prop.l2CacheSize) / kMiB, double(prop.totalGlobalMem) / (1024.0 * kMiB), driver,
                runtime, CUB_VERSION);
    std::printf("# timing: a %.0f us GPU pre-roll, then exactly two CUDA events (start, end) around the one "
                "timed call; %d warm-up + %d timed runs; the MEDIAN is reported; late = timed runs whose "
                "CPU enqueue outlasted the pre-roll\n", cfg.preroll_ns / 1000.0, cfg.warmup, cfg.repeat);
    std::printf("# L2: each run reads the next of several input copies adding up to at least %zu MiB; "
                "GB/s = input bytes (n * sizeof(T); no offsets, no outputs) / ms\n", kRotateTotalBytes / kMiB);
    std::printf("# f16/bf16 sums: CUB Reduce with a float operator and init, so float accumulation and a float "
                "result; columns: the CUDA C++ kernel of this file (impl cuda), not CUB\n");
    std::printf("# check: every run on the CPU; sums within chain*eps*sum|x| (chain = the segment length, as CUB's "
                "order is unknown; columns: this kernel's exact chain), integers exact mod 2^64; max/argmax exact, "
                "argmax/argmin the first occurrence; nan-* labels show what CUB did with --nan-at NaNs\n");

    Output out;
    if (!cfg.csv_path.empty()) {
        bool need_header = true;
        if (cfg.csv_append) {
            if (FILE* f = std::fopen(cfg.csv_path.c_str(), "r")) {
                need_header = std::fgetc(f) == EOF;
                std::fclose(f);
            }
        }
        out.csv = std::fopen(cfg.csv_path.c_str(), cfg.csv_append ? "a" : "w");
        if (!out.csv) fail("cannot open " + cfg.csv_path + " for writing");
        if (need_header) std::fprintf(out.csv, "impl,case,op,dtype,rows,cols,n,ms,gbps,check\n");
    }

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    {
        Events ev;
        std::vector<Layout> layouts;
        switch (cfg.kind) {
            case Case::Whole:
                for (uint64_t n : cfg.sizes) {
                    Layout L;
                    L.kind = Case::Whole;
                    L.rows = 1;
                    L.cols = n;
                    L.n = n;
                    layouts.push_back(L);
                }
                break;
            case Case::Rows: case Case::Columns:
                for (const auto& s : cfg.shapes) {
                    Layout L;
                    L.kind = cfg.kind;
                    L.rows = s.first;
                    L.cols = s.second;
                    L.n = s.first * s.second;
                    layouts.push_back(L);
                }
                break;
            case Case::Segments: {
                Layout L;
                L.kind = Case::Segments;
                L.offsets = segment_offsets(cfg.segments, cfg.mean_len, cfg.seed);
                L.rows = cfg.segments;
                L.cols = 0;
                L.n = uint64_t(L.offsets.back());
                if (L.n == 0) fail("segments: every segment is empty");
                layouts.push_back(L);
                break;
            }
        }
        for (const Layout& L : layouts)
            for (const std::string& dtype : cfg.dtypes) run_dtype(dtype, L, cfg, prop, stream, ev, out);
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    if (out.csv) std::fclose(out.csv);
    return out.any_fail ? 2 : 0;
}
