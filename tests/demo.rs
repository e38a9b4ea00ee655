//! `ferry demo`, the README's first command, works with nothing installed: it serves safe
//! commands with `ferry serve --demo` and uses them through ferry, and every command it shows
//! works as typed.

mod support;

use support::*;

#[test]
fn the_tour_runs_both_directions_and_its_commands_work_as_shown() {
    let env = Env::new();
    env.write("work/notes.txt", "one two three\nfour\n");
    let tour = env.run(&["demo"]);
    assert_eq!(tour.code, 0, "{}", tour.stderr);
    assert!(
        tour.stdout.contains(
            "$ ferry demo --tools\ndate([utc, format]) - Show current date and time\nword_count(path) - Count lines, words and bytes of file under current directory\n"
        ),
        "{}",
        tour.stdout
    );
    assert!(tour.stdout.contains("$ ferry demo list_files --help\nList the files of a directory under the current directory, one per line.\n--dir str =. [format path]: The directory, relative to the current directory\n"), "{}", tour.stdout);
    assert!(
        tour.stdout
            .contains("$ ferry demo list_files --sort extension\nnotes.txt\n"),
        "{}",
        tour.stdout
    );
    // The path as given: wc runs in the served directory.
    let wc = "$ ferry demo word_count notes.txt\n 2  4 19 notes.txt\n".to_string();
    assert!(tour.stdout.contains(&wc), "{}", tour.stdout);
    assert!(
        tour.stdout
            .contains("$ ferry demo pixel\n[image image/png 69 B] "),
        "{}",
        tour.stdout
    );
    assert!(tour.stdout.contains("Invalid arguments for word_count: path \"/etc/passwd\": it is outside the served roots\n"), "{}", tour.stdout);
    assert!(tour.stdout.contains("(exit code 1)"));
    assert!(tour.stdout.contains("(exit code 2)"));
    assert_eq!(
        tour.stderr,
        "error: --sort expects one of size, time, extension, version, not \"newest\"\nhint: see: ferry demo list_files --help\n"
    );
    let commands: Vec<&str> = tour
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("$ ferry "))
        .collect();
    assert_eq!(commands.len(), 8);
    for command in commands {
        let words = shlex::split(command).unwrap();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let run = env.run(&words);
        let expected = if command.ends_with("/etc/passwd") {
            1
        } else if command.ends_with("newest") {
            2
        } else {
            0
        };
        assert_eq!(run.code, expected, "ferry {command}: {}", run.stderr);
    }
}
