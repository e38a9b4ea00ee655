//! The serve manifest (docs/manifest.md): a TOML file that says which commands `ferry
//! serve` exposes as MCP tools, resources, resource templates and prompts, and with what
//! parameters. It compiles into the schema model (each tool's `inputSchema`, draft 2020-12,
//! `additionalProperties: false`), so listing, help, the meter and the checks serve applies
//! all agree. A bad manifest is refused with its file, line and reason.
//!
//! This module describes and checks; it runs no tool (`serve` executes, `cli` meters). The one
//! place here that starts a program is `help`, which runs a CLI with help arguments only to
//! read its `--help`.
//!
//! `model` is what a loaded manifest is, `load` reads and checks one, `listing` turns its tools
//! into `tools/list` JSON, `uri` matches resource template URIs, `files` confines and reads the
//! files it names; `template` is the argv template, `toml_tree` the line-aware TOML reader,
//! `policy` the one table of programs that run code, `quick` the no-manifest mode, `help` reads
//! a CLI's own `--help`, and `draft` drafts a manifest from it.

pub mod draft;
mod files;
pub mod help;
mod listing;
mod load;
mod model;
pub mod policy;
pub mod quick;
pub mod template;
pub mod toml_tree;
mod uri;

pub use files::{confine, mime_for_path, read_confined, PathRefusal};
pub use listing::input_schema;
pub use load::{load, parse};
pub use model::*;
pub use uri::{match_uri, uri_variables};

#[cfg(test)]
mod tests;
