//! Vector tiles kept in memory, keyed by the layer's table, its data version and z/x/y, so a
//! layer whose data changes (a new version) is never served stale; the least recently used
//! tiles go first when the cache is full.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Which tile of which data.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TileKey {
    pub table: String,
    /// Changes whenever the layer's rows do (load time, fetch time of a remote layer).
    pub version: String,
    pub zxy: (u32, u32, u32),
}

impl TileKey {
    /// A strong ETag: FNV-1a of the key, stable across restarts.
    pub fn etag(&self) -> String {
        let text = format!(
            "{}|{}|{}/{}/{}",
            self.table, self.version, self.zxy.0, self.zxy.1, self.zxy.2
        );
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
        format!("\"{hash:016x}\"")
    }
}

#[derive(Debug, Default)]
struct Entries {
    tiles: HashMap<TileKey, (Arc<Vec<u8>>, u64)>,
    bytes: usize,
    clock: u64,
}

/// A bounded in-memory tile cache.
#[derive(Debug)]
pub struct TileCache {
    entries: Mutex<Entries>,
    limit_bytes: usize,
}

impl TileCache {
    pub fn new(limit_bytes: usize) -> Self {
        Self {
            entries: Mutex::new(Entries::default()),
            limit_bytes,
        }
    }

    pub fn get(&self, key: &TileKey) -> Option<Arc<Vec<u8>>> {
        let mut entries = self.entries.lock().ok()?;
        entries.clock += 1;
        let now = entries.clock;
        let (tile, used) = entries.tiles.get_mut(key)?;
        *used = now;
        Some(Arc::clone(tile))
    }

    pub fn put(&self, key: TileKey, tile: Arc<Vec<u8>>) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if tile.len() > self.limit_bytes {
            return;
        }
        entries.clock += 1;
        let now = entries.clock;
        entries.bytes += tile.len();
        if let Some((old, _)) = entries.tiles.insert(key, (tile, now)) {
            entries.bytes -= old.len();
        }
        while entries.bytes > self.limit_bytes {
            let Some(oldest) = entries
                .tiles
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            if let Some((evicted, _)) = entries.tiles.remove(&oldest) {
                entries.bytes -= evicted.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{TileCache, TileKey};

    fn key(version: &str, x: u32) -> TileKey {
        TileKey {
            table: "l_1_0".into(),
            version: version.into(),
            zxy: (3, x, 1),
        }
    }

    #[test]
    fn the_least_recently_used_tile_goes_first_and_versions_do_not_mix() {
        let cache = TileCache::new(10);
        cache.put(key("v1", 0), Arc::new(vec![0; 4]));
        cache.put(key("v1", 1), Arc::new(vec![1; 4]));
        assert!(cache.get(&key("v1", 0)).is_some());
        cache.put(key("v1", 2), Arc::new(vec![2; 4]));
        assert!(cache.get(&key("v1", 1)).is_none(), "evicted");
        assert!(cache.get(&key("v1", 0)).is_some());
        assert!(cache.get(&key("v2", 0)).is_none(), "another version");
        assert_ne!(key("v1", 0).etag(), key("v2", 0).etag());
        assert_eq!(key("v1", 0).etag(), key("v1", 0).etag());
    }
}
