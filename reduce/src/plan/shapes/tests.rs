use super::*;

const F32: Sizes = Sizes {
    element: 4,
    accumulator: 4,
};
/// The H100's streaming multiprocessors.
const H100_SMS: u64 = 132;

/// The H100's SMs, as many blocks of each kernel as its threads allow.
fn h100(kernel: ShapeKernel) -> Wave {
    Wave::new(H100_SMS * u64::from(2048 / kernel.block()), H100_SMS)
}

/// The H100's 132 SMs, `blocks` of every kernel resident at once.
fn h100_wave(blocks: u64) -> impl Fn(ShapeKernel) -> Wave + Copy {
    move |_| Wave::new(blocks, H100_SMS)
}

#[test]
fn a_warp_per_row_by_operator() {
    use OpKind::*;
    let warps = 132 * 64;
    for op in OpKind::ALL {
        let limit = match op {
            Sum | Mean => WARP_ROW_BYTES,
            Min | Max => EXTREME_WARP_ROW_BYTES,
            ArgMin | ArgMax => ARG_WARP_ROW_BYTES,
        };
        for bytes in [4096, 4097, 8192, 8193, 65536, 65537] {
            let many = warp_per_row(op, 2, bytes, warps, warps);
            assert_eq!(many, bytes <= limit, "{op:?}, rows of {bytes} bytes");
        }
    }
    // Past 8 KiB, the arg operators need a quarter of the warps in rows; the 4- and 8-byte
    // types a block from 16 KiB on, however many rows.
    assert_eq!(ARG_BLOCK_ROW_BYTES, 16384);
    for op in [ArgMin, ArgMax] {
        assert!(warp_per_row(op, 2, 16384, warps / 4, warps));
        assert!(!warp_per_row(op, 2, 16384, warps / 4 - 1, warps));
        assert!(warp_per_row(op, 2, 8192, 1, warps));
        // From 32 KiB on, the 16-bit floats need as many rows as warps.
        assert_eq!(ARG_FULL_WARPS_ROW_BYTES, 32768);
        assert!(warp_per_row(op, 2, 32767, warps / 4, warps));
        assert!(!warp_per_row(op, 2, 32768, warps - 1, warps));
        assert!(warp_per_row(op, 2, 32768, warps, warps));
        for element in [4, 8] {
            assert!(warp_per_row(op, element, 16383, warps, warps));
            assert!(!warp_per_row(op, element, 16384, warps, warps));
            assert!(!warp_per_row(op, element, 12288, warps / 4 - 1, warps));
            assert!(warp_per_row(op, element, 8192, 1, warps));
        }
    }
}

#[test]
fn chooses_the_kernel_by_shape() {
    // Sums: 8 vectors a lane (`lane_vectors`); max: 4; the arg operators: 16 (128 for
    // the 16-bit floats).
    let short = plan_shape(&Shape::rows(65536, 512), OpKind::Sum, F32, h100);
    assert_eq!((short.kernel, short.split), (ShapeKernel::RowsWarp, 16));
    let short_max = plan_shape(&Shape::rows(65536, 512), OpKind::Max, F32, h100);
    assert_eq!(
        (short_max.kernel, short_max.split),
        (ShapeKernel::RowsWarp, 32)
    );
    let short_argmax = plan_shape(&Shape::rows(65536, 512), OpKind::ArgMax, F32, h100);
    assert_eq!(short_argmax.split, 8);
    let bf16 = Sizes {
        element: 2,
        accumulator: 16,
    };
    let vocabulary_like = plan_shape(&Shape::rows(32768, 4096), OpKind::ArgMax, bf16, h100);
    assert_eq!(
        (vocabulary_like.kernel, vocabulary_like.split),
        (ShapeKernel::RowsWarp, 4)
    );
    let tiny = plan_shape(&Shape::rows(1 << 21, 32), OpKind::Sum, F32, h100);
    assert_eq!((tiny.kernel, tiny.split), (ShapeKernel::RowsWarp, 1));
    let tiny_max = plan_shape(&Shape::rows(1 << 21, 32), OpKind::Max, F32, h100);
    assert_eq!(
        (tiny_max.kernel, tiny_max.split),
        (ShapeKernel::RowsWarp, 2)
    );
    // Few rows of at most 64 KiB (`SPLIT_ROW_BYTES`): a block each; longer ones are cut.
    let few_short = plan_shape(&Shape::rows(64, 512), OpKind::Sum, F32, h100);
    assert_eq!(
        (few_short.kernel, few_short.split),
        (ShapeKernel::RowsBlock, 1)
    );
    let few_64k = plan_shape(&Shape::rows(16, 16384), OpKind::Sum, F32, h100);
    assert_eq!(few_64k.kernel, ShapeKernel::RowsBlock);
    let few_longer = plan_shape(&Shape::rows(64, 32768), OpKind::Sum, F32, h100);
    assert_eq!(
        (few_longer.kernel, few_longer.split),
        (ShapeKernel::RowsSplit, 8)
    );
    let up_to_4k = plan_shape(&Shape::rows(32768, 1024), OpKind::Sum, F32, h100);
    assert_eq!(up_to_4k.kernel, ShapeKernel::RowsWarp);
    let rows_of_8k = plan_shape(&Shape::rows(32768, 2048), OpKind::Sum, F32, h100);
    assert_eq!(rows_of_8k.kernel, ShapeKernel::RowsBlock);
    // Max and argmax keep a warp per row further (`warp_per_row`); f32's arg operators take a
    // block from 16 KiB rows on, the 16-bit floats' a warp up to 64 KiB where rows are many.
    let kernel = |op, rows, cols| plan_shape(&Shape::rows(rows, cols), op, F32, h100).kernel;
    assert_eq!(kernel(OpKind::Max, 32768, 2048), ShapeKernel::RowsWarp);
    assert_eq!(kernel(OpKind::Max, 16384, 4096), ShapeKernel::RowsBlock);
    assert_eq!(kernel(OpKind::ArgMax, 32768, 2048), ShapeKernel::RowsWarp);
    assert_eq!(kernel(OpKind::ArgMax, 16384, 4096), ShapeKernel::RowsBlock);
    assert_eq!(kernel(OpKind::ArgMin, 4096, 16384), ShapeKernel::RowsBlock);
    assert_eq!(kernel(OpKind::ArgMax, 1024, 16384), ShapeKernel::RowsBlock);
    assert_eq!(kernel(OpKind::ArgMax, 2048, 32768), ShapeKernel::RowsBlock);
    let bf16_kernel = |rows, cols| plan_shape(&Shape::rows(rows, cols), OpKind::ArgMax, bf16, h100);
    assert_eq!(bf16_kernel(16384, 8192).kernel, ShapeKernel::RowsWarp);
    // From 32 KiB on, only where the rows outnumber the warps (8448 of this wave).
    assert_eq!(bf16_kernel(16384, 16384).kernel, ShapeKernel::RowsWarp);
    assert_eq!(bf16_kernel(4096, 32768).kernel, ShapeKernel::RowsBlock);
    assert_eq!(bf16_kernel(2048, 16384).kernel, ShapeKernel::RowsBlock);
    let offsets: Vec<usize> = (0..=1000).map(|i| i * 2048).collect();
    let segments = |op| plan_shape(&Shape::segments(&offsets), op, F32, h100).kernel;
    assert_eq!(segments(OpKind::Sum), ShapeKernel::RowsBlock);
    assert_eq!(segments(OpKind::Min), ShapeKernel::RowsWarp);
    let many_long = plan_shape(&Shape::rows(8192, 8192), OpKind::Sum, F32, h100);
    assert_eq!(
        (many_long.kernel, many_long.launch.grid),
        (ShapeKernel::RowsBlock, 8192)
    );
    let few_long = plan_shape(&Shape::rows(16, 1 << 22), OpKind::Sum, F32, h100);
    assert_eq!(few_long.kernel, ShapeKernel::RowsSplit);
    assert_eq!(few_long.launch.grid as usize, 16 * few_long.split);
    assert_eq!(few_long.counters, 16);
    let columns = plan_shape(&Shape::columns(8192, 8192), OpKind::Sum, F32, h100);
    assert_eq!(columns.kernel, ShapeKernel::Columns);
    // Tiles of 64 groups × 4 columns (one f32 vector each): 256 columns.
    assert_eq!(columns.counters, 32);
    assert!(columns.split > 1 && columns.partials == columns.split * 8192);
    let offsets = [0, 10, 10, 500];
    assert_eq!(
        plan_shape(&Shape::segments(&offsets), OpKind::Sum, F32, h100).kernel,
        ShapeKernel::RowsWarp
    );
}

#[test]
fn rows_that_leave_most_warps_idle_spread_over_more_lanes() {
    // This wave holds 8448 warps of `rows_warp` (64 an SM): 270336 lanes, a third 90112.
    assert_eq!((FEW_LANES_DIVISOR, SPREAD_LANES_DIVISOR), (3, 2));
    let bf16 = Sizes {
        element: 2,
        accumulator: 16,
    };
    let plan = |shape: &Shape<'_>, op, sizes| plan_shape(shape, op, sizes, h100);
    // 16 KiB of bf16: 8 lanes a row; 16384 rows of them fill a third, 2560 do not and
    // double to a warp a row (65536 lanes, a warp's 32 the most), a row per warp.
    let many = plan(&Shape::rows(16384, 8192), OpKind::ArgMax, bf16);
    assert_eq!((many.kernel, many.split), (ShapeKernel::RowsWarp, 8));
    let few = plan(&Shape::rows(2560, 8192), OpKind::ArgMax, bf16);
    assert_eq!((few.kernel, few.split), (ShapeKernel::RowsWarp, 32));
    assert_eq!(few.launch.grid, 2560 / 8);
    // 8 KiB: 4 lanes; 22528 rows keep a third busy (90112 lanes), 22527 do not: doubled
    // once, to 8 (180216, past half); 16384 (65536) doubled to 8 (131072, still short of
    // half) and to 16.
    let rows_8k = |rows| plan(&Shape::rows(rows, 4096), OpKind::ArgMin, bf16).split;
    assert_eq!((rows_8k(22528), rows_8k(22527), rows_8k(16384)), (4, 8, 16));
    // Segments by their count; f32 sums of 512: 16 lanes, 1000 rows double to 32.
    let offsets: Vec<usize> = (0..=2500).map(|i| i * 8000).collect();
    let segments = plan(&Shape::segments(&offsets), OpKind::ArgMax, bf16);
    assert_eq!(
        (segments.kernel, segments.split),
        (ShapeKernel::RowsWarp, 32)
    );
    let sums = plan(&Shape::rows(1000, 512), OpKind::Sum, F32);
    assert_eq!((sums.kernel, sums.split), (ShapeKernel::RowsWarp, 32));
    // The reproducible twins keep their count.
    let lanes = Family::Reproducible.lanes_for_rows(OpKind::Sum, 4, 2048, 1, 8448);
    assert_eq!(
        lanes,
        Family::Reproducible.lanes_per_row(OpKind::Sum, 4, 2048)
    );
}

#[test]
fn columns_are_planned_by_the_measured_rules() {
    // The H100's wave of `columns_f32_sum` (62 registers: 4 blocks of 256 per SM).
    let wave = h100_wave(528);
    // The band kernel's plan (narrow matrices are read flat unless it is forced: below).
    let plan = |rows, cols, sizes| {
        let shape = Shape::columns(rows, cols);
        let plan = plan_for(ShapeKernel::Columns, &shape, OpKind::Sum, sizes, wave).unwrap();
        (plan.counters, plan.split)
    };
    let bf16 = Sizes {
        element: 2,
        accumulator: 4,
    };
    // (tiles, bands): four runs per band within one wave.
    assert_eq!(plan(4096, 4096, F32), (16, 32));
    assert_eq!(plan(1 << 20, 8, F32), (1, 256));
    assert_eq!(plan(16384, 1024, F32), (8, 64)); // tiles of 32 groups (√(8 · 256))
    assert_eq!(plan(65536, 256, F32), (4, 128)); // tiles of 16 groups (√(8 · 64))
    assert_eq!(plan(262144, 64, F32), (2, 256));
    // Two runs per band where four would leave under a block per SM.
    assert_eq!(plan(2048, 2048, F32), (8, 32));
    assert_eq!(plan(1 << 20, 2, F32), (1, 256));
    // More runs per band where four would pass one wave.
    assert_eq!(plan(8192, 8192, F32), (32, 16));
    assert_eq!(plan(8192, 8192, bf16), (16, 32));
}

#[test]
fn the_arg_operators_bands_fill_half_a_wave() {
    // The H100's waves of `columns_f32_argmax` (72 registers: 3 blocks of 256 per SM) and of
    // `columns_bf16_argmax` (128: 2 blocks).
    let plan = |rows, cols, op, sizes, wave: u64| {
        let shape = Shape::columns(rows, cols);
        let plan = plan_for(ShapeKernel::Columns, &shape, op, sizes, h100_wave(wave)).unwrap();
        (plan.counters, plan.split)
    };
    let bf16 = Sizes {
        element: 2,
        accumulator: 8,
    };
    let arg = Sizes {
        element: 4,
        accumulator: 8,
    };
    // (tiles, bands): 16 tiles of 4096² f32 in 22 bands (a wave of 396 blocks) for the sum,
    // in 12 for argmax (at most 198 blocks: 11 runs of 32 rows a band, of the 128).
    assert_eq!(plan(4096, 4096, OpKind::Sum, F32, 396), (16, 22));
    assert_eq!(plan(4096, 4096, OpKind::ArgMax, arg, 396), (16, 12));
    assert_eq!(plan(4096, 4096, OpKind::ArgMin, arg, 396), (16, 12));
    assert_eq!(plan(4096, 4096, OpKind::Max, F32, 396), (16, 22));
    // bf16: 8 tiles, 32 bands of a wave of 264, 16 of half of it.
    assert_eq!(plan(4096, 4096, OpKind::ArgMax, bf16, 264), (8, 16));
    assert_eq!(plan(4096, 4096, OpKind::Sum, bf16, 264), (8, 32));
    // Where four runs a band already stay within half a wave, nothing changes.
    assert_eq!(plan(2048, 2048, OpKind::ArgMax, arg, 396), (8, 16));
}

#[test]
fn narrow_matrices_are_read_flat_where_that_was_measured_faster() {
    let bf16 = Sizes {
        element: 2,
        accumulator: 4,
    };
    // The H100's wave of `columns_narrow_f32_sum` (40 registers: 6 blocks of 256 per SM).
    let wave = h100_wave(792);
    let plan =
        |rows, cols, sizes| plan_shape(&Shape::columns(rows, cols), OpKind::Sum, sizes, wave);
    // Up to 12 columns whatever the size: whole batches of four vectors a thread, the fewest
    // that one wave covers (2^20 × 8: 2^21 vectors, three batches, 683 blocks), on a grid
    // that is a multiple of the count's odd part (2^20 × 3: 768 blocks, one batch).
    for (rows, cols, grid) in [
        (1 << 20, 1, 256),
        (1 << 20, 2, 512),
        (1 << 20, 8, 683),
        (4096, 2, 2),
        (1 << 20, 3, 768),
        (1 << 18, 12, 768),
        (1000, 3, 3),
    ] {
        let flat = plan(rows, cols, F32);
        assert_eq!(flat.kernel, ShapeKernel::ColumnsNarrow, "{rows} x {cols}");
        assert_eq!((flat.launch.grid, flat.split), (grid, grid as usize));
        assert_eq!((flat.partials, flat.counters), (grid as usize * cols, 1));
        // One accumulator of shared memory per thread, and the ticket.
        assert_eq!(flat.launch.shared_bytes, 256 * 4 + 4);
    }
    // 16 and 32 columns while the partials stay within 8192 (256 blocks of 32) ...
    assert_eq!(plan(65536, 32, bf16).kernel, ShapeKernel::ColumnsNarrow);
    assert_eq!(plan(131072, 16, bf16).kernel, ShapeKernel::ColumnsNarrow);
    assert_eq!(plan(32768, 32, F32).kernel, ShapeKernel::ColumnsNarrow); // 256 blocks
    assert_eq!(plan(65536, 32, F32).kernel, ShapeKernel::Columns); // 512 blocks
    assert_eq!(plan(1 << 20, 16, F32).kernel, ShapeKernel::Columns);
    assert_eq!(plan(1 << 20, 32, F32).kernel, ShapeKernel::Columns);
    // ... but 16-bit elements at any width up to 32.
    assert_eq!(plan(1 << 20, 32, bf16).kernel, ShapeKernel::ColumnsNarrow);
    // More than 12 columns of 4 bytes, partials past 8192 (2^18 × 24: 768 blocks) on fewer
    // than 2^19 rows, counts whose warp values do not fit (9 `f32` columns), or wider: the
    // bands. From 2^19 rows, counts that are no power of two are read flat.
    assert_eq!(plan(1 << 18, 24, F32).kernel, ShapeKernel::Columns);
    assert_eq!(plan((1 << 19) - 1, 20, F32).kernel, ShapeKernel::Columns);
    assert_eq!(plan(1 << 19, 20, F32).kernel, ShapeKernel::ColumnsNarrow);
    assert_eq!(plan(1 << 20, 24, F32).kernel, ShapeKernel::ColumnsNarrow);
    assert_eq!(plan(1 << 21, 28, F32).kernel, ShapeKernel::ColumnsNarrow);
    // Rows that are no whole number of vectors (14 `f32`: 56 bytes) are read flat at any size.
    assert_eq!(plan(1 << 20, 14, F32).kernel, ShapeKernel::ColumnsNarrow);
    assert_eq!(plan(1 << 20, 9, F32).kernel, ShapeKernel::Columns);
    assert_eq!(plan(1 << 16, 64, F32).kernel, ShapeKernel::Columns);
    // Forced, the flat read takes what it can reduce; the split is its grid.
    let forced = plan_for(
        ShapeKernel::ColumnsNarrow,
        &Shape::columns(1 << 20, 32),
        OpKind::Sum,
        F32,
        wave,
    )
    .unwrap();
    assert_eq!(forced.launch.grid, 745); // 2^23 vectors: 11 batches a thread
    let capped = forced.with_split(64).unwrap();
    assert_eq!((capped.launch.grid, capped.partials), (64, 64 * 32));
    // A grid whose threads' lanes pass 32 bits (256 threads × 8 lanes × 2^21 blocks), which
    // the kernel would refuse by writing nothing, is refused here.
    assert!(forced.with_split((1 << 21) - 1).is_some());
    assert!(forced.with_split(1 << 21).is_none());
    assert!(
        plan_for(
            ShapeKernel::ColumnsNarrow,
            &Shape::columns(100, 9),
            OpKind::Sum,
            F32,
            wave
        )
        .is_none()
    );
}

#[test]
fn splits_rows_by_the_measured_rules() {
    let bf16 = Sizes {
        element: 2,
        accumulator: 8,
    };
    // 132 SMs × 2 blocks of 512 threads (4 for an f32 sum and for the bf16 argmax at 32
    // registers).
    let wave = h100_wave(264);
    let split =
        |rows, cols, sizes| plan_shape(&Shape::rows(rows, cols), OpKind::Sum, sizes, wave).split;
    // One vocabulary row: a vector per thread (128256 / 4096 elements → 32 blocks), not
    // the 264 blocks of a wave.
    assert_eq!(split(1, 128256, bf16), 32);
    assert_eq!(split(8, 128256, bf16), 32);
    // 64 rows: one wave, 4 blocks each (each thread about 8 vectors: no more tiles).
    assert_eq!(split(64, 128256, bf16), 4);
    // 16 rows of 2^22 f32: tiles of 8 vectors per thread (16384 elements), 256 per row.
    assert_eq!(split(16, 1 << 22, F32), 256);
    // The arg operators: a quarter of the wave where each thread still reads a group of
    // loads (132 SMs × 3 blocks of `rows_split_f32_argmax`, 38 registers); the 16-bit floats
    // a block per SM, whatever the blocks an SM holds (`rows_split_bf16_argmax`: 4 at its 32
    // registers, 2 at the 47 the prefetch would give it).
    let arg_split_at = |blocks: u64, op, rows, cols, sizes| {
        plan_shape(&Shape::rows(rows, cols), op, sizes, h100_wave(blocks)).split
    };
    let arg_split = |rows, cols, sizes: Sizes| {
        let blocks = if sizes.element == 2 { 528 } else { 396 };
        arg_split_at(blocks, OpKind::ArgMax, rows, cols, sizes)
    };
    // 64 vocabulary rows: 2 blocks each (about 16 vectors per thread), not a wave's 8; argmin
    // alike; a sum keeps the wave's (6 at 3 blocks an SM).
    assert_eq!(arg_split(64, 128256, bf16), 2);
    assert_eq!(arg_split_at(528, OpKind::ArgMin, 64, 128256, bf16), 2);
    assert_eq!(arg_split_at(396, OpKind::Sum, 64, 128256, bf16), 6);
    // 32 rows of 200000: a block per SM, 4 a row (a third of a wave of 528 would be 5).
    assert_eq!(arg_split(32, 200_000, bf16), 4);
    // 64 rows of 100000 f32: tiles of 16 vectors per thread (32768 elements), 4 per row.
    assert_eq!(arg_split(64, 100_000, F32), 4);
    // 8 rows and 1: a block per SM would give each thread two vectors or fewer; the old
    // rule's 32 (a vector per thread).
    assert_eq!(arg_split(8, 128256, bf16), 32);
    assert_eq!(arg_split(1, 128256, bf16), 32);
    // Long rows: tiles of 16 vectors per thread, many waves of them; for the 16-bit floats
    // a block per SM, two blocks a row at least.
    assert_eq!(arg_split(16, 1 << 22, F32), 128);
    assert_eq!(arg_split(16, 1 << 22, bf16), 8);
    assert_eq!(arg_split(64, 1 << 20, bf16), 2);
    assert_eq!(arg_split(128, 262144, bf16), 2);
    // Two blocks an SM (47 registers, with the prefetch) or four give the same split: the SMs
    // count (at two, a quarter of the wave would give 2 and 4 a row).
    for (rows, cols, split) in [(32, 200_000, 4), (16, 1 << 22, 8)] {
        for blocks in [264, 528] {
            assert_eq!(
                arg_split_at(blocks, OpKind::ArgMax, rows, cols, bf16),
                split
            );
        }
    }
    // A wave capped below the SMs (a grid cap) counts only the SMs its blocks reach.
    let capped = |_| Wave::new(16, H100_SMS);
    assert_eq!(
        plan_shape(&Shape::rows(4, 1 << 22), OpKind::ArgMax, bf16, capped).split,
        4
    );
    // 150 rows of 65536 bf16 (128 KiB): the 16-bit rule's two a row at least (a block per SM
    // gives none; the wave's would be 3).
    assert_eq!(arg_split(150, 65536, bf16), 2);
    // Rows shorter than one vector per thread of one block: one block each, `RowsBlock`.
    assert_eq!(split(4, 1000, F32), 1);
    let short = plan_shape(&Shape::rows(4, 1000), OpKind::Sum, F32, wave);
    assert_eq!(short.kernel, ShapeKernel::RowsBlock);
}

#[test]
fn the_reproducible_twins_give_each_lane_more_of_a_row() {
    let sizes = crate::plan::reproducible::sizes(crate::element::DType::F32);
    let block = |_| 256;
    // 132 SMs × 8 blocks of 256 threads.
    let wave = h100_wave(132 * 8);
    let plan = |shape: &Shape<'_>| {
        plan_reproducible(shape, sizes, block, wave, None).expect("no forced kernel")
    };
    // 512 f32: 4 lanes of 32 vectors (the plain kernel gives 16 lanes of 8), 8 rows a
    // warp.
    let short = plan(&Shape::rows(65536, 512));
    assert_eq!((short.kernel, short.split), (ShapeKernel::RowsWarp, 4));
    assert_eq!(short.launch.grid, 65536 / 64);
    assert_eq!((short.launch.block, short.launch.shared_bytes), (256, 0));
    // 32 KiB rows: still a warp each (the plain kernels take a block of 256).
    let long = plan(&Shape::rows(8192, 8192));
    assert_eq!((long.kernel, long.split), (ShapeKernel::RowsWarp, 32));
    // 256 KiB rows, fewer than the GPU holds warps: a block each, one state per warp of
    // shared memory.
    let longer = plan(&Shape::rows(2000, 65536));
    assert_eq!(longer.kernel, ShapeKernel::RowsBlock);
    assert_eq!(longer.launch.shared_bytes, 8 * 28);
    // More rows than warps: a warp each, however long.
    assert_eq!(
        plan(&Shape::rows(9000, 65536)).kernel,
        ShapeKernel::RowsWarp
    );
    // Few long rows: 66 blocks per row, a state of scratch each.
    let few = plan(&Shape::rows(16, 1 << 22));
    assert_eq!((few.kernel, few.split), (ShapeKernel::RowsSplit, 66));
    assert_eq!((few.partials, few.counters), (16 * 66, 16));
    // Few short rows: as many blocks as give each thread four batches.
    let few_short = plan(&Shape::rows(4, 40_000));
    assert_eq!(
        (few_short.kernel, few_short.split),
        (ShapeKernel::RowsSplit, 3)
    );
    // Columns: tiles of 64 groups of 4 (`MAX_TILE_GROUPS`), half a state per thread of
    // shared memory where a block walks several rows at once (4 here).
    let wide = plan(&Shape::columns(8192, 8192));
    assert_eq!((wide.kernel, wide.counters), (ShapeKernel::Columns, 32));
    assert_eq!(wide.partials, wide.split * 8192);
    assert_eq!(wide.launch.shared_bytes, 128 * 28 + 4);
    let narrow = plan(&Shape::columns(100_000, 24));
    assert_eq!(narrow.launch.shared_bytes, 128 * 28 + 4);
    // Segments: by their average length.
    let offsets = [0, 10, 10, 500];
    assert_eq!(
        plan(&Shape::segments(&offsets)).kernel,
        ShapeKernel::RowsWarp
    );
    let offsets = [0, 100_000, 200_000];
    assert_eq!(
        plan(&Shape::segments(&offsets)).kernel,
        ShapeKernel::RowsBlock
    );
    // A forced kernel that cannot reduce the shape.
    let forced = Some(ShapeKernel::RowsSplit);
    assert!(plan_reproducible(&Shape::columns(4, 4), sizes, block, wave, forced).is_none());
    assert_eq!(
        Family::Reproducible.entry(ShapeKernel::RowsSplit, "f64", "sum"),
        "reproducible_rows_split_f64_sum"
    );
}

#[test]
fn the_flat_grid_gives_whole_batches_on_a_multiple_of_the_count_s_odd_part() {
    use super::narrow_grid;
    // 2^20 × 8 f32: 2^21 vectors, 2048 blocks of one batch; three batches a thread cover them
    // in one wave of 792: 683 blocks.
    assert_eq!(narrow_grid(8 << 20, 4, 256, 792, 1), 683);
    // 300000 × 5: 367 blocks of one batch, rounded up to a multiple of 5 ...
    assert_eq!(narrow_grid(300_000 * 5, 4, 256, 792, 5), 370);
    // ... but down where that would pass the wave (647680 × 5: 791 blocks, 795 > 792).
    assert_eq!(narrow_grid(647_680 * 5, 4, 256, 792, 5), 790);
    // A few rows: one block for each residue of the odd part, however little they read; at
    // least that many where a wave holds fewer (the planner then keeps the bands).
    assert_eq!(narrow_grid(10 * 7, 4, 256, 792, 7), 7);
    assert_eq!(narrow_grid(1 << 20, 4, 256, 4, 7), 7);
}
