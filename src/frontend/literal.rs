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
    // The suffix first: `0u` is the decimal zero with a suffix, not an octal number.
    let unsuffixed = body.trim_end_matches(['u', 'U', 'l', 'L']);
    let raw_suffix = &body[unsuffixed.len()..];
    let suffix = raw_suffix.to_ascii_lowercase();
    let lower = unsuffixed.to_ascii_lowercase();
    let (radix, number) = if lower.starts_with("0x") {
        (16, &unsuffixed[2..])
    } else if lower.starts_with("0b") {
        (2, &unsuffixed[2..])
    } else if unsuffixed.len() > 1 && unsuffixed.starts_with('0') {
        (8, &unsuffixed[1..])
    } else {
        (10, unsuffixed)
    };
    let is_float = if radix == 16 {
        number.contains(['.', 'p', 'P'])
    } else {
        number.contains(['.', 'e', 'E', 'f', 'F'])
    };
    if is_float {
        return Err(LitError::Unsupported(format!(
            "floating-point literal `{text}`"
        )));
    }
    if !matches!(
        suffix.as_str(),
        "" | "u" | "l" | "ul" | "lu" | "ll" | "ull" | "llu"
    ) || raw_suffix.contains("lL")
        || raw_suffix.contains("Ll")
    {
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

    /// Every suffix spelling on zero (which starts with the `0` of an octal prefix), on a
    /// decimal, an octal, a hexadecimal and a binary number.
    #[test]
    fn suffixes_on_every_radix() {
        let suffixes = [
            "u", "U", "l", "L", "ul", "uL", "Ul", "UL", "lu", "lU", "Lu", "LU", "ll", "LL", "ull",
            "uLL", "Ull", "ULL", "llu", "llU", "LLu", "LLU",
        ];
        for s in suffixes {
            for (digits, v) in [
                ("0", 0),
                ("00", 0),
                ("42", 42),
                ("017", 15),
                ("0x1F", 31),
                ("0X1f", 31),
                ("0b101", 5),
                ("0B11", 3),
            ] {
                let text = format!("{digits}{s}");
                assert_eq!(parse_number(&text), Ok(v), "{text}");
            }
        }
        // Mixed-case `lL`, a suffix twice, and `u` between the `l`s are not C.
        for bad in ["0lL", "1Ll", "0uu", "0lul", "7lll", "0x1Fuu", "0b1lLu"] {
            assert!(
                matches!(parse_number(bad), Err(LitError::Invalid(_))),
                "{bad}"
            );
        }
        // An octal literal is still checked after its suffix is taken off.
        assert!(matches!(parse_number("08u"), Err(LitError::Invalid(_))));
        assert!(matches!(parse_number("0xu"), Err(LitError::Invalid(_))));
        assert!(matches!(parse_number("0bu"), Err(LitError::Invalid(_))));
        assert!(matches!(parse_number("0b2"), Err(LitError::Invalid(_))));
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
