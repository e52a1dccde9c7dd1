//! The rate limiter: a fixed one-minute window per caller (API key or user; the peer address
//! when anonymous), opened by the caller's first request. Counters live in this process
//! (`memory://`) or in Redis (`redis://`, one atomic script per request, shared by every server).
//! If Redis cannot be reached the request passes and the failure is logged: the limiter
//! protects the service, it must not take it down (/health reports Redis as unavailable).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Length of a window.
pub const WINDOW: Duration = Duration::from_secs(60);
/// Counters kept in memory before expired ones are dropped.
const PRUNE_ABOVE: usize = 10_000;

/// Where counters live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    Memory,
    Redis(String),
}

impl Storage {
    /// `memory://` or a `redis://` URL (TLS `rediss://` is not built in).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text == "memory://" || text == "memory" {
            return Some(Self::Memory);
        }
        let parsed = reqwest::Url::parse(text).ok()?;
        (parsed.scheme() == "redis" && parsed.host_str().is_some())
            .then(|| Self::Redis(text.to_owned()))
    }
}

/// The outcome of one request's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window ends.
    pub reset_s: u64,
}

enum Store {
    Memory(Mutex<HashMap<String, (Instant, u32)>>),
    Redis {
        client: redis::Client,
        connection: tokio::sync::OnceCell<redis::aio::ConnectionManager>,
    },
}

/// Counts requests per caller.
pub struct RateLimiter {
    limit: u32,
    store: Store,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// Counts one request and answers the count and the window's remaining milliseconds; the first
/// request of a window starts its expiry.
const SCRIPT: &str = r"
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}
";

impl RateLimiter {
    /// A limiter of `limit` requests per minute (0: no limit).
    pub fn new(limit: u32, storage: &Storage) -> Result<Self, redis::RedisError> {
        let store = match storage {
            Storage::Memory => Store::Memory(Mutex::new(HashMap::new())),
            Storage::Redis(url) => Store::Redis {
                client: redis::Client::open(url.as_str())?,
                connection: tokio::sync::OnceCell::new(),
            },
        };
        Ok(Self { limit, store })
    }

    /// Counts a request of `caller`; `None` when there is no limit or the store failed.
    pub async fn hit(&self, caller: &str) -> Option<Decision> {
        if self.limit == 0 {
            return None;
        }
        let (count, remaining_ms) = match &self.store {
            Store::Memory(counters) => count_in_memory(counters, caller),
            Store::Redis { client, connection } => {
                match count_in_redis(client, connection, caller).await {
                    Ok(counted) => counted,
                    Err(error) => {
                        tracing::warn!(%error, "rate limiter: Redis unreachable, request let through");
                        return None;
                    }
                }
            }
        };
        Some(Decision {
            allowed: count <= u64::from(self.limit),
            limit: self.limit,
            remaining: u32::try_from(u64::from(self.limit).saturating_sub(count)).unwrap_or(0),
            reset_s: remaining_ms.div_ceil(1000).max(1),
        })
    }
}

fn count_in_memory(counters: &Mutex<HashMap<String, (Instant, u32)>>, caller: &str) -> (u64, u64) {
    let now = Instant::now();
    let mut counters = counters
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if counters.len() > PRUNE_ABOVE {
        counters.retain(|_, (start, _)| now.duration_since(*start) < WINDOW);
    }
    let entry = counters.entry(caller.to_owned()).or_insert((now, 0));
    if now.duration_since(entry.0) >= WINDOW {
        *entry = (now, 0);
    }
    entry.1 = entry.1.saturating_add(1);
    let left = WINDOW.saturating_sub(now.duration_since(entry.0));
    (
        u64::from(entry.1),
        u64::try_from(left.as_millis()).unwrap_or(0),
    )
}

/// How long the limiter waits for Redis before letting a request through uncounted.
const REDIS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

async fn count_in_redis(
    client: &redis::Client,
    connection: &tokio::sync::OnceCell<redis::aio::ConnectionManager>,
    caller: &str,
) -> Result<(u64, u64), redis::RedisError> {
    // Redis answers in microseconds; the client's default 500 ms is left on a loaded machine,
    // and a request counted nowhere is let through without its rate headers.
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_response_timeout(Some(REDIS_TIMEOUT))
        .set_connection_timeout(Some(REDIS_TIMEOUT));
    let manager = connection
        .get_or_try_init(|| client.get_connection_manager_with_config(config))
        .await?;
    let mut manager = manager.clone();
    let window_ms = u64::try_from(WINDOW.as_millis()).unwrap_or(60_000);
    let (count, ttl): (u64, i64) = redis::Script::new(SCRIPT)
        .key(format!("geomill:ratelimit:{caller}"))
        .arg(window_ms)
        .invoke_async(&mut manager)
        .await?;
    Ok((count, u64::try_from(ttl).unwrap_or(window_ms)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn exactly_the_limit_passes_per_caller() {
        let limiter = RateLimiter::new(3, &Storage::Memory).unwrap_or_else(|e| unreachable!("{e}"));
        let mut allowed = 0;
        for _ in 0..5 {
            if limiter.hit("a").await.is_some_and(|d| d.allowed) {
                allowed += 1;
            }
        }
        assert_eq!(allowed, 3);
        let other = limiter.hit("b").await.unwrap_or_else(|| unreachable!());
        assert!(other.allowed);
        assert_eq!(other.remaining, 2);
        assert!(other.reset_s <= 60);
    }

    #[test]
    fn storages_parse() {
        assert_eq!(Storage::parse("memory://"), Some(Storage::Memory));
        assert!(matches!(
            Storage::parse("redis://127.0.0.1:6379/0"),
            Some(Storage::Redis(_))
        ));
        assert_eq!(Storage::parse("http://x"), None);
        assert_eq!(Storage::parse("redis://"), None);
    }
}
