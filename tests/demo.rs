//! `ferry demo`, the README's first command, works with nothing installed, and every command it
//! shows works as typed.

mod support;

use support::*;

#[test]
fn the_tour_runs_and_its_commands_work_as_shown() {
    let env = Env::new();
    let tour = env.run(&["demo"]);
    assert_eq!(tour.code, 0, "{}", tour.stderr);
    assert!(
        tour.stdout.contains(
            "$ ferry demo --tools\nword_count(text) - Count words, lines and characters of text\n"
        ),
        "{}",
        tour.stdout
    );
    assert!(tour.stdout.contains("$ ferry demo convert_temperature --help\nConvert a temperature between Celsius, Fahrenheit and Kelvin.\n--value num required\n"));
    assert!(tour.stdout.contains("$ ferry demo convert_temperature --value 451 --from F\n{\"value\":232.78,\"unit\":\"C\"}\n"));
    assert!(tour.stdout.contains("(exit code 2)"));
    assert_eq!(
        tour.stderr,
        "error: --from expects one of C, F, K, not \"X\"\n"
    );
    let commands: Vec<&str> = tour
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("$ ferry "))
        .collect();
    assert_eq!(commands.len(), 6);
    for command in commands {
        let words = shlex::split(command).unwrap();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let run = env.run(&words);
        let expected = if command.ends_with("--from X") { 2 } else { 0 };
        assert_eq!(run.code, expected, "ferry {command}: {}", run.stderr);
    }
}
