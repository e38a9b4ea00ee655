//! Framing for both directions: newline-delimited JSON (stdio) and server-sent events (HTTP),
//! reading and writing, each with a size limit, and a lenient decoder for what peers send.
//!
//! Everything a peer sends is untrusted: a line without an end, an endless event, invalid
//! UTF-8 or JSON nested past serde's recursion limit must each cost a clear error or one
//! message, never the process's memory or the other messages.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The largest message accepted unless a server's config says otherwise (`maxMessageMB`).
pub const DEFAULT_MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// How deep JSON may nest before deeper values are replaced by `null` (serde_json refuses
/// more than 128 levels; the envelope of a `tools/list` result takes five).
const MAX_JSON_DEPTH: usize = 100;

/// Why a frame could not be read.
#[derive(Debug, PartialEq)]
pub enum FrameError {
    /// The peer sent more than the limit without ending the message.
    TooLong(usize),
    /// The stream failed.
    Io(String),
}

/// Reads one newline-terminated line into `line` (without the newline), refusing lines longer
/// than `limit`. `Ok(false)` is the end of the stream.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> Result<bool, FrameError> {
    line.clear();
    loop {
        let available = reader
            .fill_buf()
            .await
            .map_err(|e| FrameError::Io(e.to_string()))?;
        if available.is_empty() {
            return Ok(!line.is_empty());
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(end) => {
                if line.len() + end > limit {
                    return Err(FrameError::TooLong(limit));
                }
                line.extend_from_slice(&available[..end]);
                reader.consume(end + 1);
                return Ok(true);
            }
            None => {
                let n = available.len();
                if line.len() + n > limit {
                    return Err(FrameError::TooLong(limit));
                }
                line.extend_from_slice(available);
                reader.consume(n);
            }
        }
    }
}

/// Decodes one JSON text leniently: invalid UTF-8 is replaced (a reply is still a reply), and
/// nesting past what serde can take is cut to `null` at depth 100 instead of losing the whole
/// message (one hostile tool schema must not take a server's other tools with it).
pub fn decode(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => Ok(value),
        Err(error) => {
            let text = String::from_utf8_lossy(bytes);
            let capped = cap_depth(text.as_bytes(), MAX_JSON_DEPTH);
            serde_json::from_slice::<Value>(&capped).map_err(|_| error)
        }
    }
}

/// Copies a JSON text, replacing every array or object that starts deeper than `max` with
/// `null`. It only tracks strings and brackets, so it never recurses and is linear.
fn cap_depth(bytes: &[u8], max: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut depth = 0usize;
    let mut skip_from: Option<usize> = None;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            if skip_from.is_none() {
                out.push(b);
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max && skip_from.is_none() {
                    skip_from = Some(depth);
                    out.extend_from_slice(b"null");
                }
            }
            b']' | b'}' => {
                if skip_from == Some(depth) {
                    skip_from = None;
                    depth = depth.saturating_sub(1);
                    continue;
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        if skip_from.is_none() {
            out.push(b);
        }
    }
    out
}

/// One message as a newline-terminated JSON line.
pub fn encode_line(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}

/// One server-sent event carrying a JSON-RPC message, with an optional event id.
pub fn encode_event(id: Option<&str>, message: &Value) -> String {
    let data = serde_json::to_string(message).unwrap_or_default();
    match id {
        Some(id) => format!("id: {id}\nevent: message\ndata: {data}\n\n"),
        None => format!("event: message\ndata: {data}\n\n"),
    }
}

/// An event of a `text/event-stream`: its data, and its id if it had one.
#[derive(Debug, PartialEq)]
pub struct SseEvent {
    pub data: String,
    pub id: Option<String>,
}

/// Incremental `text/event-stream` parser: yields the data of each complete `message` event.
/// A line or an event longer than the limit is an error, not a reason to buffer forever.
pub struct SseParser {
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line end, so it is not scanned again.
    scanned: usize,
    data: Vec<String>,
    data_len: usize,
    event: Option<String>,
    id: Option<String>,
    /// The last `retry:` the server asked for, in milliseconds.
    pub retry_ms: Option<u64>,
    /// The last event id seen, for `Last-Event-ID` on reconnection.
    pub last_id: Option<String>,
    /// The data of the last `endpoint` event (the 2024 HTTP+SSE transport's POST address).
    pub endpoint: Option<String>,
    limit: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::with_limit(DEFAULT_MAX_MESSAGE)
    }
}

impl SseParser {
    pub fn with_limit(limit: usize) -> Self {
        SseParser {
            buffer: Vec::new(),
            scanned: 0,
            data: Vec::new(),
            data_len: 0,
            event: None,
            id: None,
            retry_ms: None,
            last_id: None,
            endpoint: None,
            limit,
        }
    }

    /// Feeds bytes; returns the data of every `message` event completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, FrameError> {
        Ok(self
            .feed_events(bytes)?
            .into_iter()
            .map(|e| e.data)
            .collect())
    }

    /// Feeds bytes; returns every `message` event completed by them, with its id.
    pub fn feed_events(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, FrameError> {
        self.buffer.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buffer[start.max(self.scanned)..]
            .iter()
            .position(|&b| b == b'\n')
        {
            let end = start.max(self.scanned) + offset;
            let line = String::from_utf8_lossy(&self.buffer[start..end]).into_owned();
            start = end + 1;
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if self.event.as_deref() == Some("endpoint") && !self.data.is_empty() {
                    self.endpoint = Some(self.data.join(""));
                }
                let is_message = matches!(self.event.as_deref(), None | Some("message"));
                if let Some(id) = self.id.take() {
                    self.last_id = Some(id.clone());
                    if !self.data.is_empty() && is_message {
                        out.push(SseEvent {
                            data: self.data.join("\n"),
                            id: Some(id),
                        });
                    }
                } else if !self.data.is_empty() && is_message {
                    out.push(SseEvent {
                        data: self.data.join("\n"),
                        id: None,
                    });
                }
                self.data.clear();
                self.data_len = 0;
                self.event = None;
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "data" => {
                    self.data_len += value.len() + 1;
                    if self.data_len > self.limit {
                        return Err(FrameError::TooLong(self.limit));
                    }
                    self.data.push(value.to_string());
                }
                "event" => self.event = Some(value.to_string()),
                "id" if !value.contains('\0') => self.id = Some(value.to_string()),
                "retry" => {
                    if let Ok(ms) = value.trim().parse::<u64>() {
                        self.retry_ms = Some(ms);
                    }
                }
                _ => {}
            }
        }
        // One shift per chunk, not per line; what is left has no line end.
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        if self.buffer.len() > self.limit {
            return Err(FrameError::TooLong(self.limit));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_split_across_chunks() {
        let mut parser = SseParser::default();
        assert!(parser
            .feed(b"event: message\ndata: {\"a\"")
            .unwrap()
            .is_empty());
        assert_eq!(
            parser
                .feed(b":1}\n\n: comment\n\ndata: x\r\ndata: y\r\n\r\n")
                .unwrap(),
            vec!["{\"a\":1}", "x\ny"]
        );
        assert!(parser.feed(b"event: ping\ndata: z\n\n").unwrap().is_empty());
        // A long line arriving in many small chunks.
        let long = "x".repeat(100_000);
        let mut events = Vec::new();
        let body = format!("data: {long}\n\n");
        for chunk in body.as_bytes().chunks(7) {
            events.extend(parser.feed(chunk).unwrap());
        }
        assert_eq!(events, vec![long]);
    }

    #[test]
    fn sse_ids_and_retry_are_kept() {
        let mut parser = SseParser::default();
        let events = parser
            .feed_events(b"retry: 1500\nid: 7\ndata: {}\n\nid: 8\n\n")
            .unwrap();
        assert_eq!(
            events,
            vec![SseEvent {
                data: "{}".into(),
                id: Some("7".into())
            }]
        );
        assert_eq!(parser.retry_ms, Some(1500));
        assert_eq!(parser.last_id.as_deref(), Some("8"));
    }

    #[test]
    fn an_endless_event_is_refused() {
        let mut parser = SseParser::with_limit(1000);
        assert_eq!(
            parser.feed(&[b'x'; 2000]),
            Err(FrameError::TooLong(1000)),
            "a line with no end"
        );
        let mut parser = SseParser::with_limit(1000);
        let mut outcome = Ok(Vec::new());
        for _ in 0..100 {
            outcome = parser.feed(b"data: 0123456789012345678901234567890123456789\n");
            if outcome.is_err() {
                break;
            }
        }
        assert_eq!(
            outcome,
            Err(FrameError::TooLong(1000)),
            "an event with no end"
        );
    }

    #[tokio::test]
    async fn lines_are_limited() {
        let input: &[u8] = b"{\"a\":1}\n{\"b\":2}";
        let mut reader = tokio::io::BufReader::new(input);
        let mut line = Vec::new();
        assert_eq!(read_line(&mut reader, &mut line, 100).await, Ok(true));
        assert_eq!(line, b"{\"a\":1}");
        assert_eq!(read_line(&mut reader, &mut line, 100).await, Ok(true));
        assert_eq!(line, b"{\"b\":2}");
        assert_eq!(read_line(&mut reader, &mut line, 100).await, Ok(false));
        let long = vec![b'x'; 5000];
        let mut reader = tokio::io::BufReader::with_capacity(64, long.as_slice());
        assert_eq!(
            read_line(&mut reader, &mut line, 1000).await,
            Err(FrameError::TooLong(1000))
        );
    }

    #[test]
    fn decoding_is_lenient_with_bad_utf8_and_deep_nesting() {
        let bad = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"caf\xe9\"}}";
        assert_eq!(decode(bad).unwrap()["result"]["t"], "caf\u{fffd}");
        let deep = format!(
            "{{\"tools\":[{{\"name\":\"deep\",\"s\":{}{}}},{{\"name\":\"ok\"}}]}}",
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let value = decode(deep.as_bytes()).unwrap();
        assert_eq!(value["tools"][1]["name"], "ok");
        assert_eq!(value["tools"][0]["name"], "deep");
        // Brackets inside strings are text, not nesting.
        let quoted = format!(
            "{{\"s\":\"{}\",\"n\":{}1{}}}",
            "[".repeat(200),
            "[".repeat(200),
            "]".repeat(200)
        );
        let value = decode(quoted.as_bytes()).unwrap();
        assert_eq!(value["s"].as_str().unwrap().len(), 200);
        assert!(decode(b"not json").is_err());
    }
}
