//! ferry: any MCP server as CLI commands, command-line tools as an MCP server, and a meter of
//! what each path costs in context tokens.
//!
//! Layers, from the bottom: `protocol` (JSON-RPC and MCP message shapes, either direction),
//! `schema` (the tool schema model and argument validation) and `tokenizer` use nothing of
//! ferry's; `transport` moves messages over stdio, HTTP or memory; `render` turns tools and
//! results into text; `client` holds the registry, sessions, the tools cache and the client
//! workflow; `tokens` is the meter, `find` and skills; `cli` parses and dispatches ferry's
//! commands. Each layer uses only those before it.

pub mod cli;
pub mod client;
pub mod demo;
pub mod error;
pub mod paths;
pub mod protocol;
pub mod render;
pub mod schema;
pub mod tokenizer;
pub mod tokens;
pub mod transport;

pub use error::{exit_code, Error, ErrorKind, Outcome, Result};
