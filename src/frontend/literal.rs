//! Integer and character literals.

/// Why a literal was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LitError {
    /// A valid C literal the tool does not model (floating point, wide characters...).
    Unsupported(String),
    /// Not a valid C literal.
    Invalid(String),
}

/// Parses a tree-sitter `number_literal` (which may carry a leading sign, digit separators and
/// `u`/`l` suffixes) as a C integer constant, wrapped to 64 bits.
pub(crate) fn parse_number(text: &str) -> Result<i64, LitError> {
    let cleaned: String = text.chars().filter(|c| *c != '\'').collect();
    let (negative, body) = match cleaned.as_bytes().first() {
        Some(b'-') => (true, &cleaned[1..]),
        Some(b'+') => (false, &cleaned[1..]),
        _ => (false, cleaned.as_str()),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if lower.starts_with("0x") {
        (16, &body[2..])
    } else if lower.starts_with("0b") {
        (2, &body[2..])
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    let is_float = if radix == 16 {
        digits.contains(['.', 'p', 'P'])
    } else {
        digits.contains(['.', 'e', 'E', 'f', 'F'])
    };
    if is_float {
        return Err(LitError::Unsupported(format!(
            "floating-point literal `{text}`"
        )));
    }
    let number = digits.trim_end_matches(['u', 'U', 'l', 'L']);
    let suffix = digits[number.len()..].to_ascii_lowercase();
    if !matches!(
        suffix.as_str(),
        "" | "u" | "l" | "ul" | "lu" | "ll" | "ull" | "llu"
    ) {
        return Err(LitError::Invalid(format!(
            "invalid suffix on integer literal `{text}`"
        )));
    }
    if number.is_empty() {
        return Err(LitError::Invalid(format!(
            "invalid integer literal `{text}`"
        )));
    }
    match u64::from_str_radix(number, radix) {
        Ok(v) => {
            let v = v as i64;
            Ok(if negative { v.wrapping_neg() } else { v })
        }
        Err(e) => {
            if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) {
                Err(LitError::Invalid(format!(
                    "integer literal `{text}` is too large"
                )))
            } else {
                Err(LitError::Invalid(format!(
                    "invalid integer literal `{text}`"
                )))
            }
        }
    }
}

/// Parses a character literal such as `'a'`, `'\n'`, `'\x41'` or `'\0'` as a (signed) `char`.
pub(crate) fn parse_char(text: &str) -> Result<i64, LitError> {
    let unsupported = || LitError::Unsupported(format!("character literal {text}"));
    let inner = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .ok_or_else(unsupported)?;
    let bytes = inner.as_bytes();
    let value: u32 = match bytes {
        [c] if *c != b'\\' => u32::from(*c),
        [b'\\', rest @ ..] if !rest.is_empty() => match rest[0] {
            b'n' if rest.len() == 1 => 10,
            b't' if rest.len() == 1 => 9,
            b'r' if rest.len() == 1 => 13,
            b'a' if rest.len() == 1 => 7,
            b'b' if rest.len() == 1 => 8,
            b'f' if rest.len() == 1 => 12,
            b'v' if rest.len() == 1 => 11,
            b'\\' | b'\'' | b'"' | b'?' if rest.len() == 1 => u32::from(rest[0]),
            b'x' if rest.len() > 1 => {
                let hex = std::str::from_utf8(&rest[1..]).map_err(|_| unsupported())?;
                u32::from_str_radix(hex, 16).map_err(|_| unsupported())?
            }
            b'0'..=b'7' if rest.len() <= 3 => {
                let oct = std::str::from_utf8(rest).map_err(|_| unsupported())?;
                u32::from_str_radix(oct, 8).map_err(|_| unsupported())?
            }
            _ => return Err(unsupported()),
        },
        _ => return Err(unsupported()),
    };
    if value > 0xff {
        return Err(unsupported());
    }
    // Plain `char` is signed on the usual targets.
    Ok(i64::from(value as u8 as i8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0"), Ok(0));
        assert_eq!(parse_number("42"), Ok(42));
        assert_eq!(parse_number("-0x10"), Ok(-16));
        assert_eq!(parse_number("0x1F"), Ok(31));
        assert_eq!(parse_number("017"), Ok(15));
        assert_eq!(parse_number("0b101"), Ok(5));
        assert_eq!(parse_number("5ULL"), Ok(5));
        assert_eq!(parse_number("7lu"), Ok(7));
        assert_eq!(parse_number("1'000"), Ok(1000));
        assert_eq!(parse_number("0xFFFFFFFFFFFFFFFF"), Ok(-1));
        assert_eq!(parse_number("-9223372036854775808"), Ok(i64::MIN));
        assert!(matches!(parse_number("1.5"), Err(LitError::Unsupported(_))));
        assert!(matches!(parse_number("1e3"), Err(LitError::Unsupported(_))));
        assert!(matches!(parse_number("09"), Err(LitError::Invalid(_))));
        assert!(matches!(
            parse_number("99999999999999999999"),
            Err(LitError::Invalid(_))
        ));
        assert!(matches!(parse_number("0x"), Err(LitError::Invalid(_))));
        assert!(matches!(parse_number("1w"), Err(LitError::Invalid(_))));
    }

    #[test]
    fn chars() {
        assert_eq!(parse_char("'a'"), Ok(97));
        assert_eq!(parse_char("'\\n'"), Ok(10));
        assert_eq!(parse_char("'\\0'"), Ok(0));
        assert_eq!(parse_char("'\\x41'"), Ok(65));
        assert_eq!(parse_char("'\\xff'"), Ok(-1));
        assert_eq!(parse_char("'\\''"), Ok(39));
        assert!(parse_char("'ab'").is_err());
        assert!(parse_char("L'a'").is_err());
        assert!(parse_char("'é'").is_err());
    }
}
