//! What a service manager and Prometheus ask of `ferry serve`: readiness (`GET /readyz`) and
//! metrics (`GET /metrics`, Prometheus' text format, written here: it is small), and the W3C
//! trace context a call's `_meta.traceparent` carries into ferry's log lines.
//!
//! The counters are the process's own, as a Prometheus client library's default registry
//! is: one `ferry serve` is one process. Tool names become labels only when the provider
//! serves them, so a client naming tools at random cannot grow the metrics without bound.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The upper bounds of the call duration histogram, seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];
/// The tool label of a call naming no tool the provider serves.
pub const UNKNOWN_TOOL: &str = "(unknown)";

/// How a tool call ended, as the `outcome` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// A result without `isError`.
    Ok,
    /// A result with `isError` (the command failed, timed out or its arguments were bad).
    Error,
    /// A protocol error (an unknown tool, malformed params).
    Rejected,
    /// The request went away before an answer (cancelled, the client left).
    Cancelled,
}

impl Outcome {
    /// The `outcome` label's value.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Rejected => "rejected",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// One tool's call durations.
#[derive(Default, Clone)]
struct Histogram {
    /// Per bucket of `BUCKETS` (not cumulative), then the count and sum of all.
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(at) = BUCKETS.iter().position(|b| seconds <= *b) {
            self.buckets[at] += 1;
        }
        self.count += 1;
        self.sum += seconds;
    }
}

#[derive(Default)]
struct Calls {
    counts: BTreeMap<(String, Outcome), u64>,
    durations: BTreeMap<String, Histogram>,
}

static CALLS: Mutex<Calls> = Mutex::new(Calls {
    counts: BTreeMap::new(),
    durations: BTreeMap::new(),
});
static REFUSALS: Mutex<BTreeMap<&'static str, u64>> = Mutex::new(BTreeMap::new());
static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);
static READY: AtomicBool = AtomicBool::new(false);

/// Records a finished tool call.
pub fn record_call(tool: &str, outcome: Outcome, seconds: f64) {
    let mut calls = CALLS.lock().unwrap_or_else(|e| e.into_inner());
    *calls.counts.entry((tool.to_string(), outcome)).or_default() += 1;
    calls
        .durations
        .entry(tool.to_string())
        .or_default()
        .observe(seconds);
}

/// Records a command's failure on a sandbox rule (a name from a fixed set).
pub fn record_refusal(rule: &'static str) {
    *REFUSALS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(rule)
        .or_default() += 1;
}

/// Serving has started: the manifest is loaded, the sandbox checked, the provider started.
pub fn set_ready() {
    READY.store(true, Ordering::SeqCst);
}

/// Whether `/readyz` answers 200: started and not draining.
pub fn is_ready(draining: bool) -> bool {
    READY.load(Ordering::SeqCst) && !draining
}

/// Counts an open HTTP connection until dropped.
pub struct Connection(());

impl Connection {
    /// A connection was accepted.
    pub fn open() -> Connection {
        CONNECTIONS.fetch_add(1, Ordering::SeqCst);
        Connection(())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        CONNECTIONS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A tool call being timed: recorded when finished, or as cancelled when dropped unfinished.
#[must_use]
pub struct CallTimer {
    tool: String,
    started: Instant,
    done: bool,
}

impl CallTimer {
    /// Starts timing a call of `tool` (a label: a tool served, or [`UNKNOWN_TOOL`]).
    pub fn start(tool: &str) -> CallTimer {
        CallTimer {
            tool: tool.to_string(),
            started: Instant::now(),
            done: false,
        }
    }

    /// Records the call's outcome; returns how long it took, seconds.
    pub fn finish(mut self, outcome: Outcome) -> f64 {
        self.done = true;
        let seconds = self.started.elapsed().as_secs_f64();
        record_call(&self.tool, outcome, seconds);
        seconds
    }
}

impl Drop for CallTimer {
    fn drop(&mut self) {
        if !self.done {
            record_call(
                &self.tool,
                Outcome::Cancelled,
                self.started.elapsed().as_secs_f64(),
            );
        }
    }
}

/// What only the server knows, sampled when metrics are asked for.
pub struct Gauges {
    /// Handshake-era sessions open.
    pub sessions: usize,
    /// Tasks still running.
    pub tasks: usize,
}

/// The metrics in Prometheus' text exposition format (version 0.0.4).
pub fn render(gauges: &Gauges) -> String {
    let mut out = String::new();
    let calls = CALLS.lock().unwrap_or_else(|e| e.into_inner());
    out.push_str("# HELP ferry_tool_calls_total Tool calls answered, by tool and outcome.\n");
    out.push_str("# TYPE ferry_tool_calls_total counter\n");
    for ((tool, outcome), count) in &calls.counts {
        let _ = writeln!(
            out,
            "ferry_tool_calls_total{{tool=\"{}\",outcome=\"{}\"}} {count}",
            escape(tool),
            outcome.label()
        );
    }
    out.push_str("# HELP ferry_tool_call_duration_seconds How long tool calls took, by tool.\n");
    out.push_str("# TYPE ferry_tool_call_duration_seconds histogram\n");
    for (tool, histogram) in &calls.durations {
        let tool = escape(tool);
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(histogram.buckets) {
            cumulative += count;
            let _ = writeln!(
                out,
                "ferry_tool_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"{bound}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "ferry_tool_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"+Inf\"}} {}",
            histogram.count
        );
        let _ = writeln!(
            out,
            "ferry_tool_call_duration_seconds_sum{{tool=\"{tool}\"}} {}",
            histogram.sum
        );
        let _ = writeln!(
            out,
            "ferry_tool_call_duration_seconds_count{{tool=\"{tool}\"}} {}",
            histogram.count
        );
    }
    drop(calls);
    out.push_str(
        "# HELP ferry_sandbox_refusals_total Commands that failed on a sandbox rule, by rule.\n",
    );
    out.push_str("# TYPE ferry_sandbox_refusals_total counter\n");
    for (rule, count) in REFUSALS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        let _ = writeln!(
            out,
            "ferry_sandbox_refusals_total{{rule=\"{rule}\"}} {count}"
        );
    }
    let gauges = [
        (
            "ferry_sessions",
            "Handshake-era sessions open.",
            gauges.sessions,
        ),
        ("ferry_tasks", "Tasks running.", gauges.tasks),
        (
            "ferry_http_connections",
            "HTTP connections open.",
            CONNECTIONS.load(Ordering::SeqCst),
        ),
    ];
    for (name, help, value) in gauges {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
        );
    }
    out
}

/// A label value as the text format quotes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), when `value` is a valid one: only
/// a well-formed one reaches a log line, so a client cannot write into the log.
pub fn traceparent(value: Option<&serde_json::Value>) -> Option<&str> {
    let text = value?.as_str()?;
    let fields: Vec<&str> = text.split('-').collect();
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let zero = |s: &str| s.bytes().all(|b| b == b'0');
    let valid = fields.len() == 4
        && hex(fields[0], 2)
        && fields[0] != "ff"
        && hex(fields[1], 32)
        && !zero(fields[1])
        && hex(fields[2], 16)
        && !zero(fields[2])
        && hex(fields[3], 2);
    valid.then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_well_formed_traceparent_is_kept() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(traceparent(Some(&json!(good))), Some(good));
        for bad in [
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nforged log line",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "",
        ] {
            assert_eq!(traceparent(Some(&json!(bad))), None, "{bad:?}");
        }
        assert_eq!(traceparent(Some(&json!(7))), None);
        assert_eq!(traceparent(None), None);
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn a_histogram_counts_each_call_once_in_its_bucket() {
        let mut histogram = Histogram::default();
        histogram.observe(0.003);
        histogram.observe(0.2);
        histogram.observe(1000.0);
        assert_eq!(histogram.buckets[0], 1);
        assert_eq!(histogram.buckets[5], 1);
        assert_eq!(histogram.buckets.iter().sum::<u64>(), 2);
        assert_eq!(histogram.count, 3);
    }
}
