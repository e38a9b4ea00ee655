//! The token economy: counting (`tokenizer`), the three-path meter (`meter`), tool search over
//! the cache (`find`) and skill files (`skill`).

pub mod find;
pub mod meter;
pub mod skill;
pub mod tokenizer;

pub use tokenizer::{Encoding, Tokenizer};
