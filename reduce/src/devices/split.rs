//! Cutting one input into shards: even pieces, in order.

use std::ops::Range;

/// `len` elements cut into `parts` contiguous pieces, in order, whose lengths differ by at most
/// one (the first `len % parts` pieces get one more): how `--devices N` splits an input, and how
/// a caller may place its data. Some pieces are empty when `len < parts`.
///
/// ```
/// use reduce_rs::devices::even_split;
/// assert_eq!(even_split(10, 3), [0..4, 4..7, 7..10]);
/// assert_eq!(even_split(1, 2), [0..1, 1..1]);
/// ```
pub fn even_split(len: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let (base, extra) = (len / parts, len % parts);
    let mut start = 0;
    (0..parts)
        .map(|k| {
            let piece = base + usize::from(k < extra);
            let range = start..start + piece;
            start += piece;
            range
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_input_in_order() {
        for len in [0, 1, 2, 7, 64, 1001] {
            for parts in 1..=6 {
                let pieces = even_split(len, parts);
                assert_eq!(pieces.len(), parts);
                assert_eq!(pieces[0].start, 0);
                assert_eq!(pieces[parts - 1].end, len);
                assert!(pieces.windows(2).all(|w| w[0].end == w[1].start));
                let lens: Vec<usize> = pieces.iter().map(|p| p.len()).collect();
                assert!(lens.iter().max().unwrap() - lens.iter().min().unwrap() <= 1);
            }
        }
    }
}
