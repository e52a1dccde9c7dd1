//! RFC 3339 UTC timestamps (`2026-11-22T09:30:00.123Z`) for the catalog: text that sorts in time
//! order and reads the same in every time zone.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in UTC, to the millisecond.
pub fn now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_millis(since.as_millis())
}

/// `after` from now, in UTC, to the millisecond.
pub fn after(after: std::time::Duration) -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_millis((since + after).as_millis())
}

/// Seconds since the Unix epoch, now.
pub fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// A Unix time in seconds, as RFC 3339 UTC.
pub fn from_unix_seconds(seconds: u64) -> String {
    format_millis(u128::from(seconds) * 1000)
}

/// Days since 1970-01-01 as (year, month, day), by Howard Hinnant's civil-from-days.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

fn format_millis(millis: u128) -> String {
    let seconds = i64::try_from(millis / 1000).unwrap_or(i64::MAX);
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        millis % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::format_millis;

    #[test]
    fn known_instants_format_as_rfc3339() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(format_millis(1_795_341_600_000), "2026-11-22T10:00:00.000Z");
    }
}
