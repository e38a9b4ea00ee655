//! Turning a tool result into compact text that never drops content: text blocks as they are,
//! structured content once (and not at all when it only repeats the content blocks), binary
//! content to files with a one-line note (binary fields of structured data too), and a token
//! budget that keeps head and tail and says where the full output is.

use super::text::escape_text;
use crate::paths;
use crate::protocol::content::{Content, ContentBlock, ResourceContents};
use crate::protocol::messages::{CallToolResult, ReadResult};
use crate::tokenizer::{Encoding, Tokenizer};
use base64::Engine;
use serde_json::{Map, Value};
use std::fmt::Write;
use std::path::PathBuf;

/// Where binary content goes and how files are named.
pub struct OutputContext {
    pub dir: PathBuf,
    /// A file-name prefix, such as `everything-get_image`.
    pub stem: String,
}

impl OutputContext {
    pub fn new(server: &str, what: &str) -> OutputContext {
        OutputContext {
            dir: paths::output_dir(),
            stem: paths::file_stem(&format!("{server}-{what}")),
        }
    }

    /// Writes bytes to a file named by their content and returns its path: the same bytes
    /// always get the same name, so a warm call and a cold one print the same line, and a
    /// repeated image is not stored twice.
    fn save(&self, bytes: &[u8], extension: &str) -> Result<PathBuf, SaveError> {
        paths::ensure_private_dir(&self.dir).map_err(|source| SaveError::Directory {
            dir: self.dir.clone(),
            source,
        })?;
        let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
        let hash: String = digest.as_ref()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let path = self.dir.join(format!("{}-{hash}.{extension}", self.stem));
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
            return Ok(path);
        }
        // Written beside and renamed, so a reader never sees half a file.
        let temp = paths::temp_beside(&path);
        std::fs::write(&temp, bytes)
            .and_then(|_| std::fs::rename(&temp, &path))
            .map_err(|source| {
                let _ = std::fs::remove_file(&temp);
                SaveError::Write {
                    path: path.clone(),
                    source,
                }
            })?;
        Ok(path)
    }
}

/// Why output was not saved to a file (the listing says so in its line instead).
#[derive(Debug, thiserror::Error)]
enum SaveError {
    #[error("cannot create {}: {source}", dir.display())]
    Directory {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Renders a `tools/call` result (or a `prompts/get`/`resources/read` result) as text, with
/// control characters escaped.
pub fn render_result(result: &Value, ctx: &OutputContext) -> String {
    let out = render_unescaped(result, ctx);
    match escape_text(&out) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

fn render_unescaped(result: &Value, ctx: &OutputContext) -> String {
    let mut out = String::new();
    let mut texts: Vec<&str> = Vec::new();
    let call = CallToolResult::read(result);
    let blocks = &call.content;
    let structured = call.structured_content.as_ref();
    // Structured data with binary fields is shown once with those fields in files, also
    // where a text block carries it as its JSON (the Python SDK's dict results do).
    let binary = structured.filter(|s| has_binary(s));
    let mut structured_shown = false;
    for block in blocks {
        if let Some(text) = block.as_text() {
            texts.push(text);
            if let Some(structured) = binary {
                if serde_json::from_str::<Value>(text).is_ok_and(|v| &v == structured) {
                    if !structured_shown {
                        separate(&mut out);
                        out.push_str(&render_structured(structured, ctx));
                        structured_shown = true;
                    }
                    continue;
                }
            }
        }
        render_block(block, ctx, &mut out);
    }
    if let Some(structured) = structured {
        let repeated = structured_shown
            || text_carries(&texts, structured)
            || repeats_blocks(structured, blocks);
        if !repeated {
            separate(&mut out);
            out.push_str(&render_structured(structured, ctx));
        }
    }
    let read = ReadResult::read(result);
    // prompts/get: messages with one content block each.
    for message in read.messages() {
        let role = message.role.as_deref().unwrap_or("message");
        separate(&mut out);
        let _ = writeln!(out, "[{role}]");
        message
            .blocks()
            .iter()
            .for_each(|b| render_block(b, ctx, &mut out));
    }
    // resources/read: contents with text or blob.
    let contents = read.contents();
    let several = contents.len() > 1;
    for content in &contents {
        render_resource(content, ctx, &mut out, several);
    }
    out
}

/// True when the text blocks already carry the structured data: one of them is the same JSON,
/// or every leaf of it is a string found verbatim in the text (`{"content": "<the text>"}`).
fn text_carries(texts: &[&str], structured: &Value) -> bool {
    if texts
        .iter()
        .any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == structured))
    {
        return true;
    }
    fn leaves_in(value: &Value, texts: &[&str]) -> bool {
        match value {
            Value::String(s) => texts.iter().any(|t| t.contains(s.as_str())),
            Value::Array(items) => items.iter().all(|v| leaves_in(v, texts)),
            Value::Object(map) => !map.is_empty() && map.values().all(|v| leaves_in(v, texts)),
            _ => false,
        }
    }
    !texts.is_empty() && leaves_in(structured, texts)
}

/// True when structured content only repeats the content blocks, as server-filesystem's
/// `read_media_file` does (`{"content": [<its image block>]}`): every content-block-like
/// object in it is one of the result's blocks, and it holds nothing else.
fn repeats_blocks(structured: &Value, blocks: &[Content]) -> bool {
    let blocks: Vec<Value> = blocks.iter().map(Content::to_value).collect();
    // The same block, though one side may leave out annotations or `_meta`.
    fn same_block(value: &Map<String, Value>, block: &Value) -> bool {
        let Some(block) = block.as_object() else {
            return false;
        };
        let payload = |map: &Map<String, Value>| {
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "annotations" | "_meta"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        value.contains_key("type") && payload(value) == payload(block)
    }
    fn repeats(value: &Value, blocks: &[Value]) -> bool {
        match value {
            Value::Array(items) => !items.is_empty() && items.iter().all(|v| repeats(v, blocks)),
            Value::Object(map) if map.contains_key("type") => {
                blocks.iter().any(|b| same_block(map, b))
            }
            Value::Object(map) => !map.is_empty() && map.values().all(|v| repeats(v, blocks)),
            _ => false,
        }
    }
    !blocks.is_empty() && repeats(structured, &blocks)
}

/// The shortest base64 text taken for binary data: shorter strings (ids, cursors, hashes)
/// read as text, and print in a few tokens anyway.
const MIN_BASE64_FIELD: usize = 256;

/// The bytes, and the media type if it says one, of a string that is binary data: a base64
/// `data:` URL, or base64 text of at least [`MIN_BASE64_FIELD`] characters (not all hex
/// digits, which is how hashes are written) that decodes.
fn binary_field(text: &str) -> Option<(Vec<u8>, Option<&str>)> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
    if let Some(rest) = text.strip_prefix("data:") {
        let (head, data) = rest.split_once(',')?;
        let mime = head.strip_suffix(";base64")?;
        let bytes = STANDARD.decode(data.trim()).ok()?;
        return Some((bytes, Some(mime).filter(|m| !m.is_empty())));
    }
    if text.len() < MIN_BASE64_FIELD {
        return None;
    }
    let compact: String = text.split(['\n', '\r']).collect();
    let alphabet = |c: char| c.is_ascii_alphanumeric() || "+/-_=".contains(c);
    if !compact.chars().all(alphabet) || compact.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = STANDARD
        .decode(&compact)
        .or_else(|_| URL_SAFE.decode(&compact))
        .or_else(|_| URL_SAFE_NO_PAD.decode(&compact))
        .ok()?;
    Some((bytes, None))
}

/// Whether any string in `value` is binary data ([`binary_field`]).
fn has_binary(value: &Value) -> bool {
    match value {
        Value::String(text) => binary_field(text).is_some(),
        Value::Array(items) => items.iter().any(has_binary),
        Value::Object(map) => map.values().any(has_binary),
        _ => false,
    }
}

/// The media type an object gives for its binary field, under any of the usual names.
fn sibling_mime(map: &Map<String, Value>) -> Option<&str> {
    [
        "mimeType",
        "mime_type",
        "mimetype",
        "contentType",
        "content_type",
        "mediaType",
        "media_type",
    ]
    .iter()
    .find_map(|key| map.get(*key).and_then(Value::as_str))
}

/// The media type of bytes from their first bytes, for the few kinds tools return.
fn sniff_mime(bytes: &[u8]) -> &'static str {
    let riff = |kind: &[u8]| bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == kind;
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF8") {
        "image/gif"
    } else if riff(b"WEBP") {
        "image/webp"
    } else if riff(b"WAVE") {
        "audio/wav"
    } else if bytes.starts_with(b"%PDF-") {
        "application/pdf"
    } else if bytes.starts_with(b"PK\x03\x04") {
        "application/zip"
    } else if std::str::from_utf8(bytes).is_ok() {
        "text/plain"
    } else {
        "application/octet-stream"
    }
}

/// A binary field written to a file, as its one-line note; `None` for any other text.
/// `mime` is what the field's object says its media type is.
fn binary_note(text: &str, mime: Option<&str>, ctx: &OutputContext) -> Option<String> {
    let (bytes, said) = binary_field(text)?;
    let mime = said.or(mime).unwrap_or_else(|| sniff_mime(&bytes));
    let major = mime.split('/').next().unwrap_or_default();
    let kind = if matches!(major, "image" | "audio" | "video") {
        major
    } else {
        "data"
    };
    Some(save_bytes(&bytes, mime, kind, ctx))
}

/// `value` with every binary field written to a file and replaced by its one-line note.
fn without_binary(value: &Value, mime: Option<&str>, ctx: &OutputContext) -> Value {
    match value {
        Value::String(text) => {
            binary_note(text, mime, ctx).map_or_else(|| value.clone(), Value::String)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| without_binary(v, mime, ctx)).collect())
        }
        Value::Object(map) => {
            let mime = sibling_mime(map);
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), without_binary(v, mime, ctx)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

fn separate(out: &mut String) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

fn render_block(block: &Content, ctx: &OutputContext, out: &mut String) {
    separate(out);
    let block = match block {
        Content::Block(block) => block,
        // A content type ferry does not know yet: pass it through rather than lose it.
        Content::Other(other) => {
            out.push_str(&compact_json(other));
            out.push('\n');
            return;
        }
    };
    match block {
        ContentBlock::Text(block) => match compact_json_text(&block.text) {
            Some(compact) => out.push_str(&compact),
            None => out.push_str(&block.text),
        },
        ContentBlock::Image(media) | ContentBlock::Audio(media) => {
            let kind = match block {
                ContentBlock::Image(_) => "image",
                _ => "audio",
            };
            let mime = media
                .mime_type
                .as_deref()
                .unwrap_or("application/octet-stream");
            out.push_str(&save_base64(&media.data, mime, kind, ctx));
            out.push('\n');
        }
        ContentBlock::ResourceLink(link) => {
            let _ = write!(out, "[resource link] {} {}", link.name, link.uri);
            if let Some(mime) = &link.mime_type {
                let _ = write!(out, " ({mime})");
            }
            if let Some(description) = &link.description {
                let _ = write!(out, " - {}", super::text::collapse_whitespace(description));
            }
            out.push('\n');
        }
        ContentBlock::Resource(embedded) => render_resource(&embedded.resource, ctx, out, true),
    }
}

fn render_resource(
    resource: &ResourceContents,
    ctx: &OutputContext,
    out: &mut String,
    header: bool,
) {
    separate(out);
    match resource {
        ResourceContents::Text(resource) => {
            if header {
                let _ = writeln!(
                    out,
                    "[resource {}{}]",
                    resource.uri.as_deref().unwrap_or(""),
                    resource
                        .mime_type
                        .as_deref()
                        .map(|m| format!(" ({m})"))
                        .unwrap_or_default()
                );
            }
            out.push_str(&resource.text);
            separate(out);
        }
        ResourceContents::Blob(resource) => {
            let line = save_base64(
                &resource.blob,
                resource
                    .mime_type
                    .as_deref()
                    .unwrap_or("application/octet-stream"),
                "resource",
                ctx,
            );
            let _ = writeln!(out, "{line} {}", resource.uri.as_deref().unwrap_or(""));
        }
        ResourceContents::Other(other) => {
            out.push_str(&compact_json(other));
            out.push('\n');
        }
    }
}

/// Decodes base64 content to a file: `[image image/png 12.3 KB] /path`.
fn save_base64(data: &str, mime: &str, kind: &str, ctx: &OutputContext) -> String {
    match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
        Ok(bytes) => save_bytes(&bytes, mime, kind, ctx),
        Err(e) => format!("[{kind} {mime}: invalid base64 data ({e})]"),
    }
}

/// Writes bytes to a file and says so in one line: `[image image/png 12.3 KB] /path`.
fn save_bytes(bytes: &[u8], mime: &str, kind: &str, ctx: &OutputContext) -> String {
    match ctx.save(bytes, extension_for(mime)) {
        Ok(path) => format!(
            "[{kind} {mime} {}] {}",
            human_size(bytes.len()),
            path.display()
        ),
        Err(why) => format!(
            "[{kind} {mime} {}: not saved: {why}]",
            human_size(bytes.len())
        ),
    }
}

fn extension_for(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or("").trim() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        "application/zip" => "zip",
        "application/gzip" | "application/x-gzip" => "gz",
        _ => "bin",
    }
}

/// `1.2 KB`, `3.4 MB`.
pub fn human_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Structured content as compact text: an object's top-level keys one per line (`key: value`),
/// strings unquoted unless that would be ambiguous, multi-line strings as indented blocks
/// rather than escaped `\n`, anything nested as compact JSON, and binary fields written to
/// files, shown by their one-line note. `--json` keeps the exact JSON.
pub fn render_structured(value: &Value, ctx: &OutputContext) -> String {
    let Value::Object(map) = value else {
        return compact_json(&without_binary(value, None, ctx)) + "\n";
    };
    if map.is_empty() {
        return "{}\n".to_string();
    }
    let mut out = String::new();
    let mime = sibling_mime(map);
    for (key, value) in map {
        let key = if is_plain_key(key) {
            key.clone()
        } else {
            compact_json(&Value::String(key.clone()))
        };
        let note = value.as_str().and_then(|text| binary_note(text, mime, ctx));
        if let Some(note) = note {
            let _ = writeln!(out, "{key}: {note}");
            continue;
        }
        match value {
            Value::String(text) if text.contains('\n') => {
                let _ = writeln!(out, "{key}: |");
                for line in text.lines() {
                    let _ = writeln!(out, "  {line}");
                }
            }
            Value::String(text) if is_plain_text(text) => {
                let _ = writeln!(out, "{key}: {text}");
            }
            other => {
                let _ = writeln!(
                    out,
                    "{key}: {}",
                    compact_json(&without_binary(other, mime, ctx))
                );
            }
        }
    }
    out
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || "_-.".contains(c))
}

/// A string that reads the same unquoted: not empty, no edge spaces, not a JSON literal.
fn is_plain_text(text: &str) -> bool {
    !text.is_empty()
        && text.trim() == text
        && !matches!(text, "true" | "false" | "null" | "|")
        && serde_json::from_str::<Value>(text).map_or(true, |v| v.is_string())
        && !text.starts_with(['"', '{', '['])
}

/// A text block that is indented JSON, without the indentation: the same characters of every
/// key, string and number (never re-serialised), at about half the tokens. `None` for any
/// other text.
fn compact_json_text(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if !trimmed.starts_with(['{', '[']) || !trimmed.contains('\n') {
        return None;
    }
    serde_json::from_str::<serde::de::IgnoredAny>(trimmed).ok()?;
    let mut out = String::with_capacity(trimmed.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in trimmed.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if !c.is_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    Some(out)
}

/// JSON without the spaces and escapes of pretty printing.
pub fn compact_json(value: &Value) -> String {
    super::text::json_for_terminal(serde_json::to_string(value).unwrap_or_default())
}

/// Keeps `text` within `max_tokens` (o200k_base): head and tail are kept, and one marker line
/// says how many tokens were cut and where the full text is. A token is at least one byte, so
/// text with no more bytes than the budget is printed without counting (or building the
/// tokenizer) at all.
pub fn apply_budget(text: String, max_tokens: usize, ctx: &OutputContext) -> String {
    if text.len() <= max_tokens {
        return text;
    }
    match Tokenizer::get(Encoding::O200kBase) {
        Ok(tokenizer) => fit(text, max_tokens, ctx, &|s| tokenizer.count(s), "tokens"),
        // Bytes bound tokens from above, so the budget still holds without a tokenizer.
        Err(_) => fit(text, max_tokens, ctx, &|s| s.len(), "bytes"),
    }
}

/// The longest bytes a token of o200k_base or cl100k_base is likely to span; it only bounds
/// the searches below, which count what they keep.
const SEARCH_BYTES_PER_TOKEN: usize = 32;

fn fit(
    text: String,
    max: usize,
    ctx: &OutputContext,
    count: &dyn Fn(&str) -> usize,
    unit: &str,
) -> String {
    let total = count(&text);
    if total <= max {
        return text;
    }
    let place = match ctx.save(text.as_bytes(), "txt") {
        Ok(path) => format!("full output: {}", path.display()),
        Err(why) => format!("full output not saved: {why}"),
    };
    let lines = text.lines().count();
    let widest = marker(total, unit, text.len(), lines, max, &place);
    let budget = max.saturating_sub(count(&widest) + 2);
    let head_end = longest_prefix(&text, budget * 2 / 3, count);
    let mut tail_goal = budget.saturating_sub(count(&text[..head_end]));
    loop {
        let tail_start = head_end + shortest_suffix(&text[head_end..], tail_goal, count);
        let mut out = String::with_capacity(tail_goal * 4 + head_end + widest.len());
        out.push_str(&text[..head_end]);
        separate(&mut out);
        let cut = &text[head_end..tail_start];
        out.push_str(&marker(
            count(cut),
            unit,
            cut.len(),
            cut.lines().count(),
            max,
            &place,
        ));
        out.push_str(&text[tail_start..]);
        // Tokens can merge across the joins; shrink the tail until the whole fits.
        if count(&out) <= max || tail_goal == 0 {
            return out;
        }
        tail_goal = tail_goal * 9 / 10;
    }
}

/// The end of the longest prefix within `goal`, at a line end when one is near.
fn longest_prefix(text: &str, goal: usize, count: &dyn Fn(&str) -> usize) -> usize {
    let (mut low, mut high) = (
        0,
        floor_boundary(text, goal.saturating_mul(SEARCH_BYTES_PER_TOKEN) + 64),
    );
    while low < high {
        let mid = ceil_boundary(text, low + (high - low).div_ceil(2));
        if mid > high {
            high = floor_boundary(text, high - 1).max(low);
            continue;
        }
        if count(&text[..mid]) <= goal {
            low = mid;
        } else {
            high = floor_boundary(text, mid - 1);
        }
    }
    match text[..low].rfind('\n') {
        Some(newline) if newline + 1 >= low / 2 => newline + 1,
        _ => low,
    }
}

/// The start of the longest suffix within `goal`, at a line start when one is near.
fn shortest_suffix(text: &str, goal: usize, count: &dyn Fn(&str) -> usize) -> usize {
    let reach = goal.saturating_mul(SEARCH_BYTES_PER_TOKEN) + 64;
    let (mut low, mut high) = (
        ceil_boundary(text, text.len().saturating_sub(reach)),
        text.len(),
    );
    while low < high {
        let mid = floor_boundary(text, low + (high - low) / 2);
        if mid < low {
            low = ceil_boundary(text, low + 1).min(high);
            continue;
        }
        if count(&text[mid..]) <= goal {
            high = mid;
        } else {
            low = ceil_boundary(text, mid + 1);
        }
    }
    let kept = text.len() - high;
    match text[high..].find('\n') {
        Some(newline) if newline < kept / 2 => high + newline + 1,
        _ => high,
    }
}

fn marker(
    cut: usize,
    unit: &str,
    bytes: usize,
    lines: usize,
    max_tokens: usize,
    place: &str,
) -> String {
    format!(
        "[ferry: cut {cut} {unit} ({}, {lines} lines) to fit --max-tokens {max_tokens}; {place}]\n",
        human_size(bytes)
    )
}

fn floor_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> OutputContext {
        OutputContext {
            dir: std::env::temp_dir().join(format!("ferry-output-test-{}", std::process::id())),
            stem: "t".into(),
        }
    }

    #[test]
    fn structured_content_equal_to_a_text_block_is_printed_once() {
        let result = json!({"content": [{"type": "text", "text": "{\"a\": 1}"}], "structuredContent": {"a": 1}});
        assert_eq!(render_result(&result, &ctx()), "{\"a\": 1}");
        let result = json!({"content": [{"type": "text", "text": "sum is 3"}], "structuredContent": {"sum": 3}});
        assert_eq!(render_result(&result, &ctx()), "sum is 3\nsum: 3\n");
        let result = json!({"content": [{"type": "text", "text": "a\nb"}], "structuredContent": {"content": "a\nb"}});
        assert_eq!(render_result(&result, &ctx()), "a\nb");
    }

    #[test]
    fn structured_content_reads_as_compact_text() {
        let value = json!({"city": "Oslo", "temp": 3.5, "ok": true, "note": "line 1\nline 2", "code": "42",
            "empty": "", "tags": ["a", "b"], "two words": null});
        assert_eq!(
            render_structured(&value, &ctx()),
            "city: Oslo\ntemp: 3.5\nok: true\nnote: |\n  line 1\n  line 2\ncode: \"42\"\nempty: \"\"\ntags: [\"a\",\"b\"]\n\"two words\": null\n"
        );
        assert_eq!(render_structured(&json!([1, 2]), &ctx()), "[1,2]\n");
    }

    #[test]
    fn images_go_to_files_and_links_are_one_line() {
        let result = json!({"content": [
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "test://r/1", "mimeType": "text/plain", "text": "hello"}},
            {"type": "future_kind", "x": 1}
        ]});
        let text = render_result(&result, &ctx());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("[image image/png 8 B] "), "{text}");
        let path = lines[0].rsplit(' ').next().unwrap();
        assert_eq!(std::fs::read(path).unwrap(), b"\x89PNG\r\n\x1a\n");
        assert_eq!(lines[1], "[resource link] a.txt file:///a.txt (text/plain)");
        assert_eq!(lines[2], "[resource test://r/1 (text/plain)]");
        assert_eq!(lines[3], "hello");
        assert_eq!(lines[4], "{\"type\":\"future_kind\",\"x\":1}");
    }

    #[test]
    fn structured_content_that_only_repeats_the_blocks_is_left_out() {
        let image = json!({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="});
        let annotated = json!({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo=",
            "annotations": {"audience": ["user"]}});
        for structured in [
            json!({"content": [image]}),
            json!([image]),
            json!({"content": [annotated]}),
        ] {
            let result = json!({"content": [image], "structuredContent": structured});
            let text = render_result(&result, &ctx());
            assert_eq!(text.lines().count(), 1, "{text}");
        }
        // More than the blocks, or other blocks: printed.
        let more =
            json!({"content": [image], "structuredContent": {"content": [image], "page": 2}});
        assert!(render_result(&more, &ctx()).ends_with("page: 2\n"));
        let other = json!({"type": "text", "text": "elsewhere"});
        let differs = json!({"content": [image], "structuredContent": {"content": [other]}});
        assert!(render_result(&differs, &ctx())
            .ends_with("content: [{\"type\":\"text\",\"text\":\"elsewhere\"}]\n"));
    }

    #[test]
    fn only_binary_fields_go_to_files() {
        use base64::Engine;
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 37 % 256) as u8).collect();
        let long = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let hex = "ab12".repeat(80);
        let value = json!({"blob": long, "sha": hex, "cursor": "eyJwYWdlIjogMn0=", "name": "x"});
        let text = render_structured(&value, &ctx());
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("blob: [data application/octet-stream 300 B] "),
            "{text}"
        );
        assert_eq!(
            std::fs::read(lines[0].rsplit(' ').next().unwrap()).unwrap(),
            bytes
        );
        assert_eq!(lines[1], format!("sha: {hex}"));
        assert_eq!(lines[2], "cursor: eyJwYWdlIjogMn0=");
        assert_eq!(lines[3], "name: x");
        // Nested, with the media type its object gives; a data: URL of any length.
        let nested = json!({"items": [{"mime_type": "image/webp", "bytes": long}], "icon": "data:image/png;base64,iVBORw0KGgo="});
        let text = render_structured(&nested, &ctx());
        assert!(
            text.starts_with(
                "items: [{\"mime_type\":\"image/webp\",\"bytes\":\"[image image/webp 300 B] "
            ),
            "{text}"
        );
        assert!(
            text.contains(".webp\"}]\nicon: [image image/png 8 B] "),
            "{text}"
        );
    }

    #[test]
    fn budget_keeps_head_and_tail_within_the_limit() {
        let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        let out = apply_budget(text.clone(), 1000, &ctx());
        let tokens = Tokenizer::get(Encoding::O200kBase).unwrap();
        assert!(tokens.count(&out) <= 1000, "{}", tokens.count(&out));
        assert!(
            out.len() > 1500,
            "the budget is used, not just its bytes: {}",
            out.len()
        );
        assert!(out.starts_with("line 0\n"));
        assert!(out.ends_with("line 9999\n"));
        let marker = out.lines().find(|l| l.starts_with("[ferry: cut")).unwrap();
        let cut: usize = marker.split(' ').nth(2).unwrap().parse().unwrap();
        assert_eq!(
            cut + tokens.count(&out.replace(&format!("{marker}\n"), "")),
            tokens.count(&text),
            "{marker}"
        );
        let path = marker
            .rsplit("full output: ")
            .next()
            .unwrap()
            .trim_end_matches(']');
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
        assert_eq!(apply_budget("short".into(), 1000, &ctx()), "short");
    }
}
