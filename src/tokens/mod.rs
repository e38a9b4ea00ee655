//! The token economy: the three-path meter (`meter`), tool search over the cache (`find`) and
//! skill files (`skill`). Counting itself is `crate::tokenizer`.

pub mod find;
pub mod meter;
pub mod round_trips;
pub mod skill;
pub mod svg;
