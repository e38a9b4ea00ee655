//! ferry: any MCP server as CLI commands, command-line tools as an MCP server, and a meter of
//! what each path costs in context tokens.
//!
//! Layers, from the bottom: `protocol` (JSON-RPC and MCP message shapes, either direction),
//! `schema` (the tool schema model and argument validation), `tokenizer`, `signals`, `paths`,
//! `procfs`, `clock`, `net` (HTTP answers within a limit), `words` and `escape` (control
//! characters made visible) use nothing above them, `console` only the error type and
//! `escape`; `auth` signs in to remote servers;
//! `transport` moves messages over stdio, HTTP or memory, calling `auth` for credentials;
//! `render` turns tools and results into text; `client` holds the registry, sessions, the
//! tools cache, the warm pool and the client workflow (MCP to CLI), a command's session held
//! by one `lease`; `daemon` keeps servers warm for the CLI, with that pool (as the proxy does);
//! `manifest` reads and drafts the TOML that describes command-line tools, and `serve` answers
//! MCP clients with them (CLI to MCP); `tokens` is the meter, `find` and skills; `cli` parses
//! and dispatches ferry's commands.
//! Each layer uses only those before it.

pub mod auth;
pub mod cli;
pub mod client;
pub mod clock;
pub mod console;
pub mod daemon;
pub mod error;
pub mod escape;
pub mod manifest;
pub mod net;
pub mod paths;
pub mod procfs;
pub mod protocol;
pub mod render;
pub mod schema;
pub mod serve;
pub mod signals;
pub mod tokenizer;
pub mod tokens;
pub mod transport;
pub mod words;

pub use error::{exit_code, Error, ErrorKind, Outcome, Result};
