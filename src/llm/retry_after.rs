//! Reading the `Retry-After` header: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The wait a `Retry-After` value asks for, measured from `now`. A date in the past means "no
/// wait"; a value that is neither form is ignored.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if value.bytes().all(|b| b.is_ascii_digit()) && !value.is_empty() {
        // More digits than a u64 holds is still "a very long time".
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = parse_imf_fixdate(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses the one date format senders must use, `Sun, 06 Nov 1994 08:49:37 GMT`. The obsolete
/// RFC 850 and asctime forms are rejected (ignored as a hint), which costs at most one
/// backoff-timed retry instead of the asked-for one.
fn parse_imf_fixdate(value: &str) -> Option<SystemTime> {
    let mut parts = value.split(' ');
    let weekday = parts.next()?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month = parts.next()?;
    let year: i64 = parts.next()?.parse().ok()?;
    let time = parts.next()?;
    let zone = parts.next()?;
    if parts.next().is_some() || !weekday.ends_with(',') || zone != "GMT" {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as u32 + 1;
    let mut clock = time.split(':').map(|part| part.parse::<u32>().ok());
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if clock.next().is_some() || hour > 23 || minute > 59 || second > 60 || !(1..=31).contains(&day)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
    let seconds = u64::try_from(seconds).ok()?;
    UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn reads_delay_seconds() {
        assert_eq!(
            parse_retry_after(" 120 ", at(0)),
            Some(Duration::from_secs(120))
        );
    }

    #[test]
    fn reads_an_http_date_relative_to_now() {
        // 784111777 is Sun, 06 Nov 1994 08:49:37 GMT.
        let wait = parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at(784_111_770));
        assert_eq!(wait, Some(Duration::from_secs(7)));
    }

    #[test]
    fn a_date_in_the_past_means_no_wait() {
        let wait = parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at(784_111_800));
        assert_eq!(wait, Some(Duration::ZERO));
    }

    #[test]
    fn dates_across_leap_years_are_exact() {
        // 1709251199 is Thu, 29 Feb 2024 23:59:59 GMT.
        let wait = parse_retry_after("Thu, 29 Feb 2024 23:59:59 GMT", at(1_709_251_198));
        assert_eq!(wait, Some(Duration::from_secs(1)));
    }

    #[test]
    fn huge_delays_saturate_instead_of_failing() {
        let wait = parse_retry_after("99999999999999999999999", at(0));
        assert_eq!(wait, Some(Duration::from_secs(u64::MAX)));
    }

    #[test]
    fn ignores_values_that_are_neither_form() {
        for value in [
            "",
            "-5",
            "1.5",
            "soon",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 32 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_retry_after(value, at(0)), None, "{value}");
        }
    }
}
