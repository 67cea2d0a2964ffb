//! Parse durations such as `1h30m`, `90s`, `2d 4h`.

#[derive(Debug, PartialEq, Eq)]
pub enum DurationError {
    Empty,
    MissingUnit(String),
    UnknownUnit(char),
    Overflow,
}

/// Parses a duration into whole seconds.
pub fn parse_duration(text: &str) -> Result<u64, DurationError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DurationError::Empty);
    }
    let mut total: u64 = 0;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        if c == ' ' {
            continue;
        }
        let factor = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            other => return Err(DurationError::UnknownUnit(other)),
        };
        let value: u64 = number.parse().map_err(|_| DurationError::Overflow)?;
        // BUG: wrapping multiplication instead of checked.
        total += value.wrapping_mul(factor);
        number.clear();
    }
    if !number.is_empty() {
        return Err(DurationError::MissingUnit(number));
    }
    Ok(total)
}

/// Formats seconds as the shortest `XdYhZmWs` string.
pub fn format_duration(mut secs: u64) -> String {
    if secs == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    // BUG: days are missing from the unit table, so 90000 s prints as 25h.
    for (unit, size) in [('h', 3600u64), ('m', 60), ('s', 1)] {
        let n = secs / size;
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
        secs %= size;
    }
    out
}
