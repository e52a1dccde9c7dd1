//! Which job results are published as datasets (`meta.published_results`): a job marked for
//! publication at submission has a row without a dataset until it completes.

use super::Store;
use crate::BackendError;
use crate::duckdb::query_error;

/// A job's publication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Publication {
    /// Not asked for.
    None,
    /// Asked for at submission; the result is published when the job completes.
    Pending,
    /// The dataset the result was published as.
    Dataset(String),
}

impl Store {
    /// Asks for `job_id`'s result to be published when the job completes.
    pub fn mark_for_publication(&self, job_id: &str) -> Result<(), BackendError> {
        let sql = "INSERT OR IGNORE INTO meta.published_results (job_id) VALUES (?)";
        self.connection()?
            .execute(sql, [job_id])
            .map_err(query_error(sql))?;
        Ok(())
    }

    /// Records that `job_id`'s result is the dataset `dataset_id`.
    pub fn record_publication(&self, job_id: &str, dataset_id: &str) -> Result<(), BackendError> {
        let sql =
            "INSERT OR REPLACE INTO meta.published_results (job_id, dataset_id) VALUES (?, ?)";
        self.connection()?
            .execute(sql, [job_id, dataset_id])
            .map_err(query_error(sql))?;
        Ok(())
    }

    /// The publication of `job_id`'s result.
    pub fn publication(&self, job_id: &str) -> Result<Publication, BackendError> {
        let sql = "SELECT dataset_id FROM meta.published_results WHERE job_id = ?";
        match self
            .connection()?
            .query_row(sql, [job_id], |r| r.get::<_, Option<String>>(0))
        {
            Ok(Some(dataset)) => Ok(Publication::Dataset(dataset)),
            Ok(None) => Ok(Publication::Pending),
            Err(duckdb::Error::QueryReturnedNoRows) => Ok(Publication::None),
            Err(e) => Err(query_error(sql)(e)),
        }
    }
}
