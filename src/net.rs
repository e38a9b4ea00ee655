//! HTTP answers read within a limit: what both the MCP transport and sign-in read from a
//! server, so that neither can be fed without end. It sits below both.

/// Why a body was not read whole.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the answer is over {megabytes} MB")]
    TooLarge { megabytes: usize },
    #[error("{0}")]
    Read(#[from] reqwest::Error),
}

/// Reads a whole body, refusing more than `limit` bytes.
pub async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
) -> std::result::Result<Vec<u8>, BodyError> {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > limit {
                    return Err(BodyError::TooLarge {
                        megabytes: limit / (1024 * 1024),
                    });
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(bytes),
            Err(e) => return Err(e.into()),
        }
    }
}
