//! Content blocks (text, image, audio, embedded resource, resource link) as serde types, for
//! the results of `tools/call`, `prompts/get` and `resources/read`.
//!
//! Nothing a server sends is lost: fields ferry does not know stay in each block's `extra`
//! (`annotations`, `_meta`, anything newer), and a block of a type ferry does not know, or one
//! whose fields are not the types the specification gives, is kept whole as
//! [`Content::Other`]. Serialising writes the fields in the order ferry has always written
//! them, so the bytes on the wire do not change.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One entry of a `content` list: a block ferry knows, or any other JSON kept as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Block(ContentBlock),
    Other(Value),
}

/// A content block, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text(TextContent),
    Image(MediaContent),
    Audio(MediaContent),
    Resource(EmbeddedResource),
    ResourceLink(ResourceLink),
}

/// `{"type": "text", "text": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    pub text: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An image or audio block: base64 `data` and its media type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaContent {
    pub data: String,
    #[serde(
        rename = "mimeType",
        default,
        deserialize_with = "super::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub mime_type: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{"type": "resource", "resource": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    pub resource: ResourceContents,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{"type": "resource_link", "uri": ..., "name": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceLink {
    pub uri: String,
    pub name: String,
    #[serde(
        rename = "mimeType",
        default,
        deserialize_with = "super::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub mime_type: Option<String>,
    #[serde(
        default,
        deserialize_with = "super::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource's contents (`resources/read`, an embedded resource): text, a base64 blob, or
/// anything else kept as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    Text(TextResource),
    Blob(BlobResource),
    Other(Value),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextResource {
    #[serde(
        default,
        deserialize_with = "super::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub uri: Option<String>,
    #[serde(
        rename = "mimeType",
        default,
        deserialize_with = "super::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub mime_type: Option<String>,
    pub text: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlobResource {
    #[serde(
        default,
        deserialize_with = "super::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub uri: Option<String>,
    #[serde(
        rename = "mimeType",
        default,
        deserialize_with = "super::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub mime_type: Option<String>,
    pub blob: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Content {
    /// Reads one entry of a `content` list; anything unreadable is kept as [`Content::Other`].
    pub fn read(value: &Value) -> Content {
        ContentBlock::deserialize(value)
            .map(Content::Block)
            .unwrap_or_else(|_| Content::Other(value.clone()))
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Block(ContentBlock::Text(TextContent {
            text: text.into(),
            extra: Map::new(),
        }))
    }

    /// An image block.
    pub fn image(data: impl Into<String>, mime: impl Into<String>) -> Content {
        Content::Block(ContentBlock::Image(MediaContent::new(data, mime)))
    }

    /// An audio block.
    pub fn audio(data: impl Into<String>, mime: impl Into<String>) -> Content {
        Content::Block(ContentBlock::Audio(MediaContent::new(data, mime)))
    }

    /// An embedded resource block.
    pub fn resource(resource: ResourceContents) -> Content {
        Content::Block(ContentBlock::Resource(EmbeddedResource {
            resource,
            extra: Map::new(),
        }))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Block(ContentBlock::Text(block)) => Some(&block.text),
            _ => None,
        }
    }

    /// As JSON, exactly as it would be sent.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl MediaContent {
    pub fn new(data: impl Into<String>, mime: impl Into<String>) -> MediaContent {
        MediaContent {
            data: data.into(),
            mime_type: Some(mime.into()),
            extra: Map::new(),
        }
    }
}

impl ResourceContents {
    /// Reads a resource's contents; anything unreadable is kept as [`ResourceContents::Other`].
    pub fn read(value: &Value) -> ResourceContents {
        ResourceContents::deserialize(value)
            .unwrap_or_else(|_| ResourceContents::Other(value.clone()))
    }

    /// Text contents.
    pub fn text(uri: impl Into<String>, mime: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text(TextResource {
            uri: Some(uri.into()),
            mime_type: Some(mime.into()),
            text: text.into(),
            extra: Map::new(),
        })
    }

    /// Binary contents, `blob` in base64.
    pub fn blob(uri: impl Into<String>, mime: impl Into<String>, blob: impl Into<String>) -> Self {
        ResourceContents::Blob(BlobResource {
            uri: Some(uri.into()),
            mime_type: Some(mime.into()),
            blob: blob.into(),
            extra: Map::new(),
        })
    }

    /// Whether the contents say their URI and carry text or a blob.
    pub fn is_complete(&self) -> bool {
        match self {
            ResourceContents::Text(r) => r.uri.is_some(),
            ResourceContents::Blob(r) => r.uri.is_some(),
            ResourceContents::Other(_) => false,
        }
    }

    /// The URI, `""` when there is none.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(r) => r.uri.as_deref().unwrap_or(""),
            ResourceContents::Blob(r) => r.uri.as_deref().unwrap_or(""),
            ResourceContents::Other(_) => "",
        }
    }

    /// As JSON, exactly as it would be sent.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Only a block's `type`, for checking a block before reading it whole.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct BlockKind {
    #[serde(rename = "type", default, deserialize_with = "super::lenient::opt")]
    pub kind: Option<String>,
}

impl BlockKind {
    pub fn read(block: &Value) -> BlockKind {
        super::lenient::view(block)
    }
}

/// The text of a text block, read in place (for code that passes blocks on as they came).
pub fn text_of(block: &Value) -> Option<&str> {
    #[derive(Deserialize)]
    struct Text<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        text: &'a str,
    }
    Text::deserialize(block)
        .ok()
        .filter(|t| t.kind == "text")
        .map(|t| t.text)
}

/// Whether a block is a text block (`"type": "text"`), whatever else it holds.
pub fn is_text(block: &Value) -> bool {
    BlockKind::read(block).kind.as_deref() == Some("text")
}

/// The URI a resource link or an embedded resource names, read in place.
pub fn uri_of(block: &Value) -> Option<&str> {
    #[derive(Deserialize)]
    struct Uri<'a> {
        #[serde(default, borrow)]
        uri: Option<&'a str>,
    }
    #[derive(Deserialize)]
    struct Block<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        #[serde(default, borrow)]
        uri: Option<&'a str>,
        #[serde(default, borrow)]
        resource: Option<Uri<'a>>,
    }
    let block = Block::deserialize(block).ok()?;
    match block.kind {
        "resource_link" => block.uri,
        "resource" => block.resource.and_then(|r| r.uri),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_read_and_write_back_the_same() {
        for block in [
            json!({"type": "text", "text": "hi"}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav", "annotations": {"audience": ["user"]}}),
            json!({"type": "resource", "resource": {"uri": "a://b", "mimeType": "text/plain", "text": "x"}}),
            json!({"type": "resource", "resource": {"uri": "a://b", "mimeType": "image/png", "blob": "AAAA"}, "_meta": {"k": 1}}),
            json!({"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain", "description": "d"}),
        ] {
            let read = Content::read(&block);
            assert!(matches!(read, Content::Block(_)), "{block}");
            assert_eq!(serde_json::to_string(&read).unwrap(), block.to_string());
        }
    }

    #[test]
    fn odd_blocks_are_kept_whole() {
        for odd in [
            json!({"type": "video", "url": "x"}),
            json!({"type": "text", "text": 5}),
            json!({"type": "resource"}),
            json!("just text"),
        ] {
            assert_eq!(Content::read(&odd), Content::Other(odd.clone()));
        }
        let odd = json!({"type": "resource", "resource": {"uri": "a://b"}});
        let Content::Block(ContentBlock::Resource(embedded)) = Content::read(&odd) else {
            panic!("an embedded resource");
        };
        assert_eq!(
            embedded.resource,
            ResourceContents::Other(json!({"uri": "a://b"}))
        );
    }

    #[test]
    fn built_blocks_are_the_bytes_ferry_always_sent() {
        assert_eq!(
            Content::text("hi").to_value().to_string(),
            json!({"type": "text", "text": "hi"}).to_string()
        );
        assert_eq!(
            Content::image("AA", "image/png").to_value().to_string(),
            json!({"type": "image", "data": "AA", "mimeType": "image/png"}).to_string()
        );
        assert_eq!(
            Content::resource(ResourceContents::blob("u", "m", "AA"))
                .to_value()
                .to_string(),
            json!({"type": "resource", "resource": {"uri": "u", "mimeType": "m", "blob": "AA"}})
                .to_string()
        );
    }
}
