//! A job's live feed: log lines and progress events kept in order, replayed to a subscriber that
//! comes late, then followed live; closed when the job ends. Log lines are also appended to
//! `jobs/<id>/log.jsonl`, so a job's log outlives the server.

use std::io::Write;
use std::path::PathBuf;

use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::watch;

/// Which of a feed's two sequences a stream follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// `/jobs/{id}/stream`: `{timestamp, level, step, message}`.
    Logs,
    /// `/jobs/{id}/events`: state changes and progress.
    Events,
}

#[derive(Debug, Default)]
pub struct FeedState {
    logs: Vec<Value>,
    events: Vec<Value>,
    done: bool,
}

impl FeedState {
    fn items(&self, channel: Channel) -> &[Value] {
        match channel {
            Channel::Logs => &self.logs,
            Channel::Events => &self.events,
        }
    }
}

/// The JSON lines of a log file (none when it is missing).
fn read_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[derive(Debug)]
pub struct JobFeed {
    state: watch::Sender<FeedState>,
    log_file: Option<PathBuf>,
}

impl JobFeed {
    /// A live feed whose log lines are appended to `log_file`, starting with the lines already
    /// there (a job taken up again after a restart keeps its history).
    pub fn new(log_file: Option<PathBuf>) -> Self {
        if let Some(folder) = log_file.as_ref().and_then(|f| f.parent()) {
            let _ = std::fs::create_dir_all(folder);
        }
        let logs = log_file.as_ref().map(|f| read_lines(f)).unwrap_or_default();
        Self {
            state: watch::Sender::new(FeedState {
                logs,
                ..FeedState::default()
            }),
            log_file,
        }
    }

    /// An ended feed holding the log lines stored in `log_file` (for jobs of an earlier run
    /// of the server) and one event with the job's final state.
    pub fn replay(log_file: PathBuf, final_event: Value) -> Self {
        Self {
            state: watch::Sender::new(FeedState {
                logs: read_lines(&log_file),
                events: vec![final_event],
                done: true,
            }),
            log_file: None,
        }
    }

    /// Adds a log line.
    pub fn log(&self, level: &str, step: Option<&str>, message: &str) {
        let line = json!({
            "timestamp": crate::timestamp::now(),
            "level": level,
            "step": step,
            "message": message,
        });
        if let Some(path) = &self.log_file
            && let Ok(mut file) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        {
            let _ = writeln!(file, "{line}");
        }
        self.state.send_modify(|s| s.logs.push(line));
    }

    /// Adds an event (`type` and its fields); a timestamp is added.
    pub fn event(&self, mut event: Value) {
        if let Value::Object(fields) = &mut event {
            fields.insert("timestamp".into(), Value::String(crate::timestamp::now()));
        }
        self.state.send_modify(|s| s.events.push(event));
    }

    /// Ends the feed: streams end once they have sent everything.
    pub fn finish(&self) {
        self.state.send_modify(|s| s.done = true);
    }

    /// Everything so far on `channel`, then each new item, until the feed ends.
    pub fn stream(&self, channel: Channel) -> impl Stream<Item = Value> + Send + 'static {
        let receiver = self.state.subscribe();
        futures_util::stream::unfold(
            (receiver, 0_usize),
            move |(mut receiver, sent)| async move {
                loop {
                    {
                        let state = receiver.borrow_and_update();
                        if let Some(item) = state.items(channel).get(sent) {
                            let item = item.clone();
                            drop(state);
                            return Some((item, (receiver, sent + 1)));
                        }
                        if state.done {
                            return None;
                        }
                    }
                    if receiver.changed().await.is_err() {
                        return None;
                    }
                }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;
    use serde_json::json;

    use super::{Channel, JobFeed};

    #[tokio::test]
    async fn late_subscribers_get_everything_then_live_items_then_the_end() {
        let feed = std::sync::Arc::new(JobFeed::new(None));
        feed.log("info", None, "first");
        let stream = feed.stream(Channel::Logs);
        let writer = feed.clone();
        tokio::spawn(async move {
            writer.log("info", Some("buffer"), "second");
            writer.event(json!({"type": "state"}));
            writer.finish();
        });
        let messages: Vec<String> = stream
            .map(|line| line["message"].as_str().unwrap_or_default().to_owned())
            .collect()
            .await;
        assert_eq!(messages, ["first", "second"]);
        let events: Vec<_> = feed.stream(Channel::Events).collect().await;
        assert_eq!(events.len(), 1);
    }
}
