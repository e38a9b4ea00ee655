use super::*;

// clap: `Commands:` / `Options:`, possible values, defaults, `...`.

const CLAP_TOP: &str = include_str!("../../../../tests/fixtures/help/garden.txt");

const CLAP_PLANT: &str = include_str!("../../../../tests/fixtures/help/garden-plant.txt");

const CLAP_WATER_LONG: &str = include_str!("../../../../tests/fixtures/help/garden-water.txt");

#[test]
fn clap_commands_and_options() {
    assert_eq!(
        subcommands(CLAP_TOP),
        [
            ("plant".to_string(), "Plant seeds in a bed".to_string()),
            ("water".to_string(), "Water one bed or all of them; this summary is long enough that clap wraps it onto a second line".to_string())
        ]
    );
    let opts = options(CLAP_TOP);
    assert_eq!(
        opts[0],
        OptionSpec {
            choices: vec!["a".into(), "b".into()],
            ..valued(
                Some("--name"),
                Some('n'),
                "NAME",
                "Name [default: x] [possible values: a, b]"
            )
        }
    );
    assert_eq!(
        opts[1],
        OptionSpec {
            repeatable: true,
            ..flag(Some("--verbose"), Some('v'), "More output per occurrence")
        }
    );
    let opts = options(CLAP_PLANT);
    assert_eq!(
        opts[1].choices,
        ["human", "short", "json", "json-diagnostic-short"]
    );
    assert_eq!(
        (opts[2].value.as_deref(), opts[2].optional_value),
        (Some("SPEC"), true)
    );
    assert_eq!(options(CLAP_WATER_LONG)[0].choices, ["now", "later"]);
    assert_eq!(options(CLAP_WATER_LONG)[0].description, "When to water");
}

#[test]
fn clap_draft() {
    let helps = [
        help(&[], CLAP_TOP),
        help(&["plant"], CLAP_PLANT),
        help(&["water"], CLAP_WATER_LONG),
    ];
    let tools = check(&draft("garden", &helps));
    assert_eq!(tools.len(), 2);
    let plant = tool(&tools, "plant");
    assert_eq!(
        plant.command_text(),
        r#"["garden", "plant", ["--depth", "{depth}"], ["--message-format", "{message-format}"], "--package={package}", "{dry-run}", "{bed}", "{args*}"]"#
    );
    assert_eq!(plant.kind("depth"), "integer");
    assert_eq!(plant.param("message-format").enum_values.len(), 4);
    assert_eq!(
        plant.param("args").description.as_deref(),
        Some("Further arguments: SEEDS")
    );
    let water = tool(&tools, "water");
    assert_eq!(
        water.param("when").enum_values,
        [json!("now"), json!("later")]
    );
    assert!(!water.params.contains_key("args"));
}
