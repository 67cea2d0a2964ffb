//! Human-readable byte sizes (binary units).

const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/// Formats a byte count with one decimal in the largest unit that keeps it ≥ 1.
pub fn format_bytes(n: u64) -> String {
    let mut value = n as f64;
    let mut unit = 0;
    // BUG: `>` instead of `>=`: exactly 1024 stays in the smaller unit.
    while value > 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Parses sizes such as `10K`, `1.5M`, `3 GiB`, `512`.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let value: f64 = num.parse().ok()?;
    let unit = unit.trim().to_ascii_uppercase();
    let power = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 1,
        "M" => 2,
        "G" => 3,
        "T" => 4,
        _ => return None,
    };
    Some((value * 1024f64.powi(power)) as u64)
}
