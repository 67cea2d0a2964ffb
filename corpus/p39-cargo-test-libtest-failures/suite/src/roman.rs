//! Roman numerals 1..=3999.

const TABLE: [(u32, &str); 13] = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
];

/// Writes `n` in roman numerals; `None` outside 1..=3999.
pub fn to_roman(mut n: u32) -> Option<String> {
    if n == 0 || n > 3999 {
        return None;
    }
    let mut out = String::new();
    for &(value, digits) in &TABLE {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    Some(out)
}

/// Reads a roman numeral; `None` when it is not one.
pub fn from_roman(text: &str) -> Option<u32> {
    let value = |c| match c {
        'I' => Some(1),
        'V' => Some(5),
        'X' => Some(10),
        'L' => Some(50),
        'C' => Some(100),
        'D' => Some(500),
        'M' => Some(1000),
        _ => None,
    };
    let digits: Vec<u32> = text.chars().map(value).collect::<Option<_>>()?;
    if digits.is_empty() {
        return None;
    }
    // BUG: non-canonical forms such as IIII or VX are accepted instead of rejected.
    let mut total: i64 = 0;
    for (i, d) in digits.iter().enumerate() {
        match digits.get(i + 1) {
            Some(next) if next > d => total -= i64::from(*d),
            _ => total += i64::from(*d),
        }
    }
    u32::try_from(total).ok()
}
