//! HTTP answers read within a limit: what both the MCP transport and sign-in read from a
//! server, so that neither can be fed without end. It sits below both.

/// Reads a whole body, refusing more than `limit` bytes.
pub async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
) -> std::result::Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > limit {
                    return Err(format!("the answer is over {} MB", limit / (1024 * 1024)));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(bytes),
            Err(e) => return Err(e.to_string()),
        }
    }
}
