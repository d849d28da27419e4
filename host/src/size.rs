//! Parsing element counts as users write them: `33554432`, `2^25`, `32M`, `1e6`, `2^32+3`.

/// Parses `text` as an element count; the error says which forms are accepted.
pub fn parse_len(text: &str) -> Result<usize, String> {
    let cleaned: String = text.trim().chars().filter(|c| *c != '_').collect();
    let invalid = || {
        format!(
            "`{text}` is not an element count (write e.g. 1000000, 1e6, 2^25, 2^25+7, 32M or 4Ki)"
        )
    };
    if cleaned.is_empty() {
        return Err(invalid());
    }
    // `a+b` and `a-b`, for sizes such as 2^25+7 or 2^32-1.
    if let Some(at) = cleaned
        .rfind(['+', '-'])
        .filter(|&at| at > 0 && !cleaned[..at].ends_with(['e', 'E']))
    {
        let (left, right) = (parse_len(&cleaned[..at])?, parse_len(&cleaned[at + 1..])?);
        return if cleaned.as_bytes()[at] == b'+' {
            left.checked_add(right)
        } else {
            left.checked_sub(right)
        }
        .ok_or_else(invalid);
    }
    if let Some((base, exponent)) = cleaned.split_once('^') {
        let base: usize = base.parse().map_err(|_| invalid())?;
        let exponent: u32 = exponent.parse().map_err(|_| invalid())?;
        return base.checked_pow(exponent).ok_or_else(invalid);
    }
    if let Some((mantissa, exponent)) = cleaned.split_once(['e', 'E']) {
        let mantissa: usize = mantissa.parse().map_err(|_| invalid())?;
        let exponent: u32 = exponent.parse().map_err(|_| invalid())?;
        return 10usize
            .checked_pow(exponent)
            .and_then(|p| p.checked_mul(mantissa))
            .ok_or_else(invalid);
    }
    let suffixes = [
        ("Ki", 1usize << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("K", 1 << 10),
        ("M", 1 << 20),
        ("G", 1 << 30),
    ];
    for (suffix, scale) in suffixes {
        if let Some(number) = cleaned.strip_suffix(suffix) {
            let number: usize = number.parse().map_err(|_| invalid())?;
            return number.checked_mul(scale).ok_or_else(invalid);
        }
    }
    cleaned.parse().map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::parse_len;

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
    fn rejects_everything_else_with_the_accepted_forms() {
        for bad in ["", "abc", "-5", "2^", "1.5", "2^99", "3-5"] {
            let err = parse_len(bad).unwrap_err();
            assert!(
                err.contains("is not an element count") && err.contains("2^25"),
                "{bad}: {err}"
            );
        }
    }
}
