//! What a second new user hit (issue 27, items 6 to 15), each as the user met it: real
//! servers, the real binary, defaults on (calls go through the daemon), a fresh HOME.

mod support;

use serde_json::json;
use support::{Env, Test};

/// `{"command": ..., "args": [...]}` for a command line of the fixtures.
fn entry(command_line: &str) -> serde_json::Value {
    let mut words = command_line.split_whitespace();
    let command = words.next().unwrap();
    json!({"command": command, "args": words.collect::<Vec<_>>()})
}

// 7. Listings keep what tells tools apart.
#[test]
fn filesystem_listing_tells_its_tools_apart() {
    let env = Env::warm();
    let root = env.path("work");
    Test::with(env)
        .server("fs", entry(&support::filesystem(&root)))
        .args(&["fs"])
        .stdout(
            "read_file(path) - Deprecated, use read_text_file\n\
             read_text_file(path) - Read complete contents of file from file system as text\n\
             read_media_file(path) - Read file and return it as base64-encoded content block\n\
             read_multiple_files(paths) - Read contents of multiple files simultaneously\n\
             write_file(path, content) - Create new file or completely overwrite file with new content\n\
             edit_file(path, edits) - Make line-based edits to text file\n\
             create_directory(path) - Create new directory or ensure directory exists\n\
             list_directory(path) - Get detailed listing of files and directories in path\n\
             list_directory_with_sizes(path) - Get detailed listing of files and directories in path, including sizes\n\
             directory_tree(path) - Get recursive tree view of files\n\
             move_file(source, destination) - Move or rename files and directories\n\
             search_files(path, pattern) - Recursively search for files and directories matching pattern\n\
             get_file_info(path) - Retrieve detailed metadata about file or directory\n\
             list_allowed_directories() - Returns list of directories\n",
        )
        .run();
}

// 7. A tool whose arguments are all optional is not shown as one whose are too long to list.
#[test]
fn optional_arguments_are_marked_in_the_listing() {
    let env = Test::with(Env::warm())
        .server("everything", entry(&support::everything()))
        .scene();
    let listing = env.run(&["everything"]);
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    let line = listing
        .stdout
        .lines()
        .find(|l| l.starts_with("get-resource-links"))
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        line,
        "get-resource-links([count]) - Returns up to ten resource links"
    );
}
