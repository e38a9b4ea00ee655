//! ferry: any MCP server as CLI commands.
//!
//! Layers, from the bottom: `protocol` (JSON-RPC and MCP message shapes) and `schema` (the tool
//! schema model) use nothing of ferry's; `transport` moves messages over stdio or HTTP; `client`
//! holds sessions, the server registry and the tools cache; `cli` parses, renders and dispatches.

pub mod cli;
pub mod client;
pub mod demo;
pub mod error;
pub mod paths;
pub mod protocol;
pub mod render;
pub mod schema;
pub mod tokens;
pub mod transport;

pub use error::{Error, ErrorKind, Result};
