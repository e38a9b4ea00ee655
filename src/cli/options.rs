//! Values of ferry's own options that more than one place reads: `--timeout` and
//! `--max-tokens` (before the server, after it, or after the tool name).

use crate::{Error, Result};

/// Budgets below this cannot hold the cut marker and some output.
pub const MIN_MAX_TOKENS: usize = 64;

/// The value of `--max-tokens`.
pub fn parse_max_tokens(text: &str) -> Result<usize> {
    match text.parse::<usize>() {
        Ok(n) if n >= MIN_MAX_TOKENS => Ok(n),
        Ok(_) => Err(Error::usage(format!(
            "--max-tokens must be at least {MIN_MAX_TOKENS}: the line that reports a cut takes about 40"
        ))
        .with_hint(format!("give --max-tokens {MIN_MAX_TOKENS} or more"))),
        Err(_) => Err(Error::usage(format!(
            "--max-tokens must be a whole number, not {text:?}"
        ))
        .with_hint("for example: --max-tokens 2000")),
    }
}

/// The value of `--timeout`, in seconds.
pub fn parse_timeout(text: &str) -> Result<f64> {
    let max = crate::words::MAX_TIMEOUT_SECS;
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= max)
        .ok_or_else(|| {
            Error::usage(format!(
                "--timeout must be a number of seconds above 0 and at most {max}, not {text:?}"
            ))
            .with_hint("for example: --timeout 120")
        })
}
