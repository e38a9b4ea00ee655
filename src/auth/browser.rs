//! The person's side of a sign-in: the browser opened on the authorization page, and the
//! loopback listener (or a pasted address) its answer comes back by.

use super::*;

/// Reads the authorization response (`code`, `state`, `iss`) from a redirect URL.
pub(super) fn callback_params(url: &str) -> Map<String, Value> {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let query = query.split('#').next().unwrap_or("");
    let mut params = Map::new();
    if let Ok(parsed) = reqwest::Url::parse(&format!("http://x/?{query}")) {
        for (k, v) in parsed.query_pairs() {
            params.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    }
    params
}

/// How the person signing in gets to the authorization page, and how its answer comes back.
pub enum Browser {
    /// Open the URL (with `$BROWSER`, else the platform's opener) and catch the redirect on a
    /// loopback listener; the URL is always printed too.
    Open { port: Option<u16> },
    /// Print the URL and read the address the browser was sent back to from stdin.
    Paste,
}

/// Listens on loopback for the browser's return; the redirect URI and a receiver of the
/// request's target (`/callback?code=...`). Anything else asked of it gets a 404; a client
/// that never finishes its headers is dropped.
pub(super) async fn listen(
    port: Option<u16>,
) -> Result<(String, tokio::sync::oneshot::Receiver<String>)> {
    use http_body_util::Full;
    use hyper::{Response, StatusCode};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
        .await
        .map_err(|e| Error::usage(format!("cannot listen for the sign-in's return: {e}")))?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let (sender, receiver) = tokio::sync::oneshot::channel::<String>();
    let sender = Arc::new(std::sync::Mutex::new(Some(sender)));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let waiting = sender.clone();
            let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
                let target = request
                    .uri()
                    .path_and_query()
                    .map_or_else(String::new, |p| p.as_str().to_string());
                let answer = if target.starts_with("/callback") {
                    if let Some(sender) = waiting.lock().ok().and_then(|mut s| s.take()) {
                        let _ = sender.send(target);
                    }
                    Response::builder()
                        .header("Content-Type", "text/plain; charset=utf-8")
                        .body(Full::new(bytes::Bytes::from_static(
                            b"ferry: signed in. You can close this tab.\n",
                        )))
                } else {
                    Response::builder()
                        .status(StatusCode::NOT_FOUND)
                        .body(Full::new(bytes::Bytes::new()))
                };
                async move { answer }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .keep_alive(false)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let _ = connection.await;
            // Once the answer is in, nobody else is listened to.
            if sender.lock().map_or(true, |s| s.is_none()) {
                break;
            }
        }
    });
    Ok((format!("http://127.0.0.1:{port}/callback"), receiver))
}

/// Starts the person's browser on `url` (`$BROWSER`, else the platform's opener).
pub(super) fn open_browser(url: &str) {
    let command = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => shlex::split(&browser).unwrap_or_default(),
        _ if cfg!(target_os = "macos") => vec!["open".into()],
        _ => vec!["xdg-open".into()],
    };
    if let Some((program, args)) = command.split_first() {
        let _ = std::process::Command::new(program)
            .args(args)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}
