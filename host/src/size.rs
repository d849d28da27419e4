//! Element counts as users write them (`33554432`, `2^25`, `32M`, `1e6`, `2^32+3`) and as the
//! program writes them back (`2^25`).

/// Parses `text` as an element count; the error says which forms are accepted, or that the
/// count is negative or too large to address.
pub fn parse_len(text: &str) -> Result<usize, String> {
    let cleaned: String = text.trim().chars().filter(|c| *c != '_').collect();
    if cleaned.starts_with('-') {
        return Err(format!("`{text}`: the value must be a non-negative count"));
    }
    count(&cleaned).map_err(|problem| match problem {
        Problem::Form => format!(
            "`{text}` is not an element count (write e.g. 1000000, 1e6, 2^25, 2^25+7, 32M or 4Ki)"
        ),
        Problem::TooLarge => format!(
            "`{text}` is too large: an element count must be below 2^{}",
            usize::BITS
        ),
        Problem::Negative => {
            format!("`{text}` is negative: the value must be a non-negative count")
        }
    })
}

/// Why a count did not parse.
enum Problem {
    Form,
    TooLarge,
    Negative,
}

/// A whole number; overflow is `TooLarge`, anything else not a number is `Form`.
fn number<T: std::str::FromStr<Err = std::num::ParseIntError>>(text: &str) -> Result<T, Problem> {
    text.parse()
        .map_err(|e: std::num::ParseIntError| match e.kind() {
            std::num::IntErrorKind::PosOverflow => Problem::TooLarge,
            _ => Problem::Form,
        })
}

fn count(cleaned: &str) -> Result<usize, Problem> {
    if cleaned.is_empty() {
        return Err(Problem::Form);
    }
    // `a+b` and `a-b`, for sizes such as 2^25+7 or 2^32-1.
    if let Some(at) = cleaned
        .rfind(['+', '-'])
        .filter(|&at| at > 0 && !cleaned[..at].ends_with(['e', 'E']))
    {
        let (left, right) = (count(&cleaned[..at])?, count(&cleaned[at + 1..])?);
        return if cleaned.as_bytes()[at] == b'+' {
            left.checked_add(right).ok_or(Problem::TooLarge)
        } else {
            left.checked_sub(right).ok_or(Problem::Negative)
        };
    }
    if let Some((base, exponent)) = cleaned.split_once('^') {
        let base: usize = number(base)?;
        // An exponent too large for u32 makes a count too large for anything.
        let exponent: u32 = number(exponent)?;
        return base.checked_pow(exponent).ok_or(Problem::TooLarge);
    }
    if let Some((mantissa, exponent)) = cleaned.split_once(['e', 'E']) {
        let mantissa: usize = number(mantissa)?;
        let exponent: u32 = number(exponent)?;
        return 10usize
            .checked_pow(exponent)
            .and_then(|p| p.checked_mul(mantissa))
            .ok_or(Problem::TooLarge);
    }
    // Binary suffixes in any case (`32M`, `32m`, `4Ki`, `4KI`): one rule for every word the
    // command line reads.
    let suffixes = [
        ("ki", 1usize << 10),
        ("mi", 1 << 20),
        ("gi", 1 << 30),
        ("k", 1 << 10),
        ("m", 1 << 20),
        ("g", 1 << 30),
    ];
    let lower = cleaned.to_ascii_lowercase();
    for (suffix, scale) in suffixes {
        if let Some(digits) = lower.strip_suffix(suffix) {
            let digits: usize = number(digits)?;
            return digits.checked_mul(scale).ok_or(Problem::TooLarge);
        }
    }
    number(cleaned)
}

/// A range's exponent step when none is given: every power of 4.
pub const DEFAULT_EXPONENT_STEP: u32 = 2;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeList(pub Vec<usize>);

/// A comma list of element counts (anything `parse_len` reads) and ranges `a..b[:s]`: the powers
/// of two from `a` to `b` (both powers of two), exponent step `s` (default 2). Sorted, repeats
/// dropped.
pub fn parse_sizes(text: &str) -> Result<SizeList, String> {
    let mut sizes = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!(
                "`{text}` has an empty entry (write e.g. 2^10..2^28 or 2^20,1e6)"
            ));
        }
        let Some((from, rest)) = item.split_once("..") else {
            let n = parse_len(item)?;
            if n == 0 {
                return Err("sizes must be at least 1".into());
            }
            sizes.push(n);
            continue;
        };
        let (to, step) = match rest.split_once(':') {
            Some((to, step)) => {
                let step: u32 = step
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&s| s >= 1)
                    .ok_or_else(|| {
                        format!("`{step}` in `{item}` is not an exponent step (a whole number ≥ 1)")
                    })?;
                (to, step)
            }
            None => (rest, DEFAULT_EXPONENT_STEP),
        };
        let exponent = |end: &str| -> Result<u32, String> {
            let n = parse_len(end)?;
            if n.is_power_of_two() {
                Ok(n.trailing_zeros())
            } else {
                Err(format!(
                    "`{end}` in `{item}`: a range runs over powers of two, so both ends must be powers of two (e.g. 2^10..2^28:2)"
                ))
            }
        };
        let (low, high) = (exponent(from)?, exponent(to)?);
        if low > high {
            return Err(format!("`{item}` is empty: its start is above its end"));
        }
        sizes.extend((low..=high).step_by(step as usize).map(|k| 1usize << k));
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(SizeList(sizes))
}

/// `2^k` for powers of two, else the number.
pub fn size_label(n: usize) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_len, parse_sizes};

    #[test]
    fn accepts_the_usual_forms() {
        assert_eq!(parse_len("33554432"), Ok(1 << 25));
        assert_eq!(parse_len("2^25"), Ok(1 << 25));
        assert_eq!(parse_len("2^25+7"), Ok((1 << 25) + 7));
        assert_eq!(parse_len("2^32-1"), Ok((1 << 32) - 1));
        assert_eq!(parse_len("32M"), Ok(1 << 25));
        assert_eq!(parse_len("4Ki"), Ok(4096));
        assert_eq!(parse_len("1e6"), Ok(1_000_000));
        assert_eq!(parse_len("1_000"), Ok(1000));
        assert_eq!(parse_len("0"), Ok(0));
    }

    #[test]
    fn suffixes_take_any_case() {
        assert_eq!(parse_len("32m"), Ok(1 << 25));
        assert_eq!(parse_len("4KI"), Ok(4096));
        assert_eq!(parse_len("1E3"), Ok(1000));
    }

    #[test]
    fn negative_and_too_large_counts_say_so() {
        for negative in ["-1", " -3", "-2^10"] {
            let err = parse_len(negative).unwrap_err();
            assert!(
                err.contains("must be a non-negative count"),
                "{negative}: {err}"
            );
        }
        assert!(parse_len("3-5").unwrap_err().contains("is negative"));
        for large in [
            "2^64",
            "2^99",
            "2^64+1",
            "2^63+2^63",
            "99999999999999999999999",
            "1e20",
            "2^4294967296",
            "99999999999999999999G",
        ] {
            let err = parse_len(large).unwrap_err();
            assert!(err.contains("is too large"), "{large}: {err}");
        }
        assert!(parse_len("2^64").unwrap_err().contains("below 2^64"));
    }

    #[test]
    fn rejects_everything_else_with_the_accepted_forms() {
        for bad in ["", "abc", "2^", "1.5", "2^x", "e5", "M"] {
            let err = parse_len(bad).unwrap_err();
            assert!(
                err.contains("is not an element count") && err.contains("2^25"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn sizes_take_lists_ranges_and_steps() {
        assert_eq!(
            parse_sizes("2^20..2^23:1").unwrap().0,
            [1 << 20, 1 << 21, 1 << 22, 1 << 23]
        );
        assert_eq!(
            parse_sizes("1e6, 2^20,32M,2^20").unwrap().0,
            [1_000_000, 1 << 20, 1 << 25]
        );
        assert_eq!(
            parse_sizes("2^10..2^16:3,1000").unwrap().0,
            [1000, 1 << 10, 1 << 13, 1 << 16]
        );
        assert_eq!(parse_sizes("4Ki..4Ki").unwrap().0, [4096]);
        for (bad, says) in [
            ("", "empty entry"),
            ("2^10,,2^12", "empty entry"),
            ("1000..2^20", "powers of two"),
            ("2^20..2^10", "start is above its end"),
            ("2^10..2^20:0", "exponent step"),
            ("2^10..2^20:x", "exponent step"),
            ("0", "at least 1"),
            ("lots", "not an element count"),
        ] {
            let error = parse_sizes(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
