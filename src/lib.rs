//! ferry: any MCP server as CLI commands, command-line tools as an MCP server, and a meter of
//! what each path costs in context tokens.
//!
//! Layers, from the bottom; each uses only those before it:
//! - `error` (one [`Error`] whose display is the user's line, the [`error::Failure`] trait each
//!   layer's error enum implements, and the one mapping to exit codes), `protocol` (JSON-RPC
//!   and MCP messages as types, either direction, and the question a `confirm` sends),
//!   `schema` (the tool schema model and argument validation, with `words`), `tokenizer`,
//!   `signals`, `paths`, `procfs`, `clock`, `net` (HTTP answers within a limit) and `escape`
//!   (control characters made visible) use nothing above them; `console` writes ferry's output
//!   and error lines with only `error` and `escape`.
//! - `auth` signs in to remote servers and keeps their tokens; `transport` moves messages over
//!   stdio, HTTP or memory (and says where the daemon's socket lives), calling `auth` for
//!   credentials.
//! - `render` turns tools and results into text.
//! - `client` holds the registry (config, imports, trust, pins), sessions, the tools cache, the
//!   warm pool and the client workflow (MCP to CLI), a command's session held by one `lease`;
//!   `tokens` is the meter, `find` and skills; `manifest` reads and drafts the TOML that
//!   describes command-line tools.
//! - `daemon` keeps servers warm for the CLI with the client's pool (as serve's proxy does);
//!   `serve` answers MCP clients with manifests, quick mode or configured servers (CLI to
//!   MCP); `cli` parses and dispatches ferry's commands, and the binary joins `cli`, `serve`
//!   and `daemon`.

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
