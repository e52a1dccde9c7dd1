//! The accepted API keys: parsed once from `GEOMILL_API_KEYS` / `GEOMILL_API_KEY`, looked up
//! in constant time, and named by a hash so that logs and `/admin/users` never show a key.

use ring::digest::{SHA256, digest};

use super::Role;

/// Shortest key accepted: a shorter one is guessable.
const MIN_KEY_LENGTH: usize = 8;

/// One configured key and the user it stands for.
#[derive(Clone)]
pub struct ApiKey {
    /// `key-` and the first 12 hex digits of the key's SHA-256: stable, never the key.
    pub id: String,
    pub name: String,
    pub role: Role,
    secret: Vec<u8>,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// Every accepted key; empty means the API is open.
#[derive(Debug, Clone, Default)]
pub struct KeyRing {
    keys: Vec<ApiKey>,
}

/// A key entry that cannot be used, named by its position (never by its text).
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error(
        "GEOMILL_API_KEYS entry {0}: write KEY or NAME:ROLE:KEY (ROLE viewer, editor or admin)"
    )]
    Shape(usize),
    #[error("GEOMILL_API_KEYS entry {0}: role {1:?} is not viewer, editor or admin")]
    Role(usize, String),
    #[error("GEOMILL_API_KEYS entry {0}: a key needs at least {MIN_KEY_LENGTH} characters")]
    Short(usize),
    #[error("GEOMILL_API_KEYS entry {0}: the same key is listed twice")]
    Duplicate(usize),
}

/// Equal in time whatever the inputs' common prefix (only the lengths can show).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn key_id(secret: &[u8]) -> String {
    let hash = digest(&SHA256, secret);
    let hex: String = hash.as_ref()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("key-{hex}")
}

fn parse_entry(position: usize, entry: &str) -> Result<ApiKey, KeysError> {
    let parts: Vec<&str> = entry.splitn(3, ':').collect();
    let (name, role, secret) = match parts.as_slice() {
        [secret] => (None, Role::Admin, *secret),
        [name, role, secret] => {
            let role =
                Role::parse(role).ok_or_else(|| KeysError::Role(position, (*role).into()))?;
            (Some(*name), role, *secret)
        }
        _ => return Err(KeysError::Shape(position)),
    };
    if secret.len() < MIN_KEY_LENGTH {
        return Err(KeysError::Short(position));
    }
    let id = key_id(secret.as_bytes());
    Ok(ApiKey {
        name: name.filter(|n| !n.is_empty()).unwrap_or(&id).to_owned(),
        id,
        role,
        secret: secret.as_bytes().to_vec(),
    })
}

impl KeyRing {
    /// Reads both variables; blank entries are skipped.
    pub fn parse(keys: Option<&str>, single: Option<&str>) -> Result<Self, KeysError> {
        let entries = keys
            .unwrap_or_default()
            .split(',')
            .chain(single)
            .map(str::trim)
            .filter(|e| !e.is_empty());
        let mut ring = Self::default();
        for (index, entry) in entries.enumerate() {
            let key = parse_entry(index + 1, entry)?;
            if ring.keys.iter().any(|k| k.secret == key.secret) {
                return Err(KeysError::Duplicate(index + 1));
            }
            ring.keys.push(key);
        }
        Ok(ring)
    }

    /// Whether keys are configured (otherwise the API is open).
    pub fn is_enabled(&self) -> bool {
        !self.keys.is_empty()
    }

    /// The key equal to `presented`; every key is compared, so the time does not tell which.
    pub fn find(&self, presented: &[u8]) -> Option<&ApiKey> {
        let mut found = None;
        for key in &self.keys {
            if constant_time_eq(&key.secret, presented) && found.is_none() {
                found = Some(key);
            }
        }
        found
    }

    /// The key with this id (for sessions logged in with a key that may since be removed).
    pub fn by_id(&self, id: &str) -> Option<&ApiKey> {
        self.keys.iter().find(|k| k.id == id)
    }

    pub fn keys(&self) -> &[ApiKey] {
        &self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_take_a_role_or_default_to_admin() {
        let ring = KeyRing::parse(Some(" ana:viewer:aaaaaaaa1 , bbbbbbbb2"), Some("cccccccc3"))
            .unwrap_or_else(|e| unreachable!("{e}"));
        let roles: Vec<(String, Role)> = ring
            .keys()
            .iter()
            .map(|k| (k.name.clone(), k.role))
            .collect();
        assert_eq!(roles[0], ("ana".into(), Role::Viewer));
        assert_eq!(roles[1].1, Role::Admin);
        assert!(roles[1].0.starts_with("key-"));
        assert_eq!(ring.find(b"cccccccc3").map(|k| k.role), Some(Role::Admin));
        assert!(ring.find(b"cccccccc").is_none());
        assert!(!format!("{ring:?}").contains("aaaaaaaa1"));
    }

    #[test]
    fn bad_entries_are_named_by_position() {
        for (keys, expected) in [
            ("a:b", "entry 1"),
            ("goodkey123,x:owner:longenough", "entry 2"),
            ("short", "at least 8"),
            ("samekey99,samekey99", "twice"),
        ] {
            let message = KeyRing::parse(Some(keys), None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(message.contains(expected), "{keys}: {message}");
        }
        assert!(!KeyRing::parse(None, None).unwrap_or_default().is_enabled());
    }
}
