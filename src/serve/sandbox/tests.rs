use super::*;

#[test]
fn a_place_that_does_not_exist_is_resolved_as_far_as_it_goes() {
    let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    assert_eq!(
        canonical_as_far_as_it_exists(&tmp.join("no/such/place")),
        tmp.join("no/such/place")
    );
}
