use super::*;

// curl: `curl --help all`, values in angle brackets, descriptions after one blank.

const CURL: &str = include_str!("../../../../tests/fixtures/help/curl.txt");

#[test]
fn curl_options() {
    let opts = options(CURL);
    assert_eq!(opts.len(), 17);
    assert_eq!(
        opts[0],
        valued(
            Some("--abstract-unix-socket"),
            None,
            "path",
            "Connect via abstract Unix domain socket"
        )
    );
    assert_eq!(
        opts[1],
        flag(
            Some("--append"),
            Some('a'),
            "Append to target file when uploading"
        )
    );
    assert_eq!(
        opts[2],
        valued(
            Some("--aws-sigv4"),
            None,
            "provider1[:provider2[:region[:service]]]",
            "Use AWS V4 signature authentication"
        )
    );
    assert_eq!(opts[3].value.as_deref(), Some("fractional seconds"));
    assert_eq!(find(&opts, "--progress-bar").short, Some('#'));
    assert_eq!(find(&opts, "--next").short, Some(':'));
    assert_eq!(
        find(&opts, "--http1.1"),
        &flag(Some("--http1.1"), None, "Use HTTP 1.1")
    );

    let tools = check(&draft("curl", &[help(&[], CURL)]));
    let curl = &tools[0];
    let drafted: Vec<&str> = curl.params.keys().map(String::as_str).collect();
    assert_eq!(
        drafted,
        [
            "abstract-unix-socket",
            "append",
            "aws-sigv4",
            "connect-timeout",
            "header",
            "http1_1",
            "next",
            "progress-bar",
            "request",
            "url",
            "verbose"
        ]
    );
    assert_eq!(curl.kind("connect-timeout"), "number");
    assert_eq!(curl.kind("abstract-unix-socket"), "path");
    assert_eq!(curl.param("http1_1").flag.as_deref(), Some("--http1.1"));
    assert!(curl
        .command_text()
        .contains(r#"["--request", "{request}"]"#));
    assert!(curl.def.annotations.is_empty());
}
