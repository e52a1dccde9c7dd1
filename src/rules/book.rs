//! The rule book: the rules kept in the catalog, behind their repository, with names kept
//! unique. `store` checks what a client writes and hands it here.

use std::sync::Arc;

use geomill_backends::store::{Repository, RuleRecord};

use crate::blocking::blocking;
use crate::error::{AppError, ErrorKind};

/// The rules kept in the catalog, names unique among them. Writes are one at a time, so two
/// clients cannot both take a name.
#[derive(Debug)]
pub struct RuleBook {
    records: Arc<dyn Repository<RuleRecord>>,
    writes: tokio::sync::Mutex<()>,
}

impl RuleBook {
    pub fn new(records: Arc<dyn Repository<RuleRecord>>) -> Self {
        Self {
            records,
            writes: tokio::sync::Mutex::new(()),
        }
    }

    /// Every rule, oldest first.
    pub async fn all(&self) -> Result<Vec<RuleRecord>, AppError> {
        let records = Arc::clone(&self.records);
        blocking(move || records.list()).await
    }

    /// The rule `id`: 400 unless a UUID, 404 when there is none.
    pub async fn find(&self, id: &str) -> Result<RuleRecord, AppError> {
        uuid::Uuid::parse_str(id)
            .map_err(|_| AppError::bad_request(format!("rule id {id:?} is not a UUID")))?;
        let records = Arc::clone(&self.records);
        let key = id.to_owned();
        blocking(move || records.get(&key))
            .await?
            .ok_or_else(|| AppError::not_found(format!("no rule {id}")))
    }

    /// Writes `rule` unless another rule has its name (409).
    pub(super) async fn put_unique(&self, rule: RuleRecord) -> Result<RuleRecord, AppError> {
        let _one_writer = self.writes.lock().await;
        if let Some(other) = self
            .all()
            .await?
            .into_iter()
            .find(|r| r.name == rule.name && r.id != rule.id)
        {
            return Err(AppError::new(
                ErrorKind::Conflict,
                "duplicate",
                format!("rule {} already has the name {:?}", other.id, rule.name),
            ));
        }
        let records = Arc::clone(&self.records);
        let stored = rule.clone();
        blocking(move || records.put(&stored)).await?;
        Ok(rule)
    }

    /// Deletes the rule `id` (404 when there is none).
    pub async fn delete(&self, id: &str) -> Result<(), AppError> {
        self.find(id).await?;
        let records = Arc::clone(&self.records);
        let key = id.to_owned();
        blocking(move || records.delete(&key)).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The rule book over a fake repository: the seam between the rules and where they are kept.

    use std::sync::Mutex;

    use geomill_backends::BackendError;
    use serde_json::json;

    use super::*;

    /// Rules kept in memory, with the writes it was asked for counted.
    #[derive(Debug, Default)]
    struct InMemoryRules {
        rules: Mutex<Vec<RuleRecord>>,
        writes: Mutex<usize>,
    }

    impl Repository<RuleRecord> for InMemoryRules {
        fn put(&self, record: &RuleRecord) -> Result<(), BackendError> {
            *self.writes.lock().unwrap() += 1;
            let mut rules = self.rules.lock().unwrap();
            rules.retain(|r| r.id != record.id);
            rules.push(record.clone());
            Ok(())
        }

        fn get(&self, id: &str) -> Result<Option<RuleRecord>, BackendError> {
            Ok(self
                .rules
                .lock()
                .unwrap()
                .iter()
                .find(|r| r.id == id)
                .cloned())
        }

        fn list(&self) -> Result<Vec<RuleRecord>, BackendError> {
            Ok(self.rules.lock().unwrap().clone())
        }

        fn delete(&self, id: &str) -> Result<bool, BackendError> {
            let mut rules = self.rules.lock().unwrap();
            let before = rules.len();
            rules.retain(|r| r.id != id);
            Ok(rules.len() < before)
        }
    }

    fn rule(name: &str) -> RuleRecord {
        let id = uuid::Uuid::new_v4().to_string();
        let rule = json!({ "name": name, "capability": "buffer", "config": { "distance": 1 } });
        super::super::store::record(id, rule.as_object().unwrap(), crate::timestamp::now())
    }

    #[tokio::test]
    async fn a_second_rule_with_a_taken_name_is_refused_and_nothing_is_written() {
        let kept = Arc::new(InMemoryRules::default());
        let book = RuleBook::new(kept.clone());
        let first = book.put_unique(rule("roads")).await.unwrap();
        let refused = book.put_unique(rule("roads")).await.unwrap_err();
        assert_eq!(refused.kind, ErrorKind::Conflict);
        assert!(refused.message.contains(&first.id), "{}", refused.message);
        assert_eq!(*kept.writes.lock().unwrap(), 1);
        // The rule itself may be written again under its own name.
        book.put_unique(first.clone()).await.unwrap();
        assert_eq!(book.all().await.unwrap(), vec![first.clone()]);
        book.delete(&first.id).await.unwrap();
        let gone = book.find(&first.id).await.unwrap_err();
        assert_eq!(gone.kind, ErrorKind::NotFound);
    }
}
