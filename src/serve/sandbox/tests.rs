use super::*;

#[test]
fn a_place_that_does_not_exist_is_resolved_as_far_as_it_goes() {
    let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    assert_eq!(
        canonical_as_far_as_it_exists(&tmp.join("no/such/place")),
        tmp.join("no/such/place")
    );
}

#[test]
fn a_new_git_is_found_in_the_directories_that_changed() {
    let dir = std::env::temp_dir().join(format!("ferry-known-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    std::fs::create_dir_all(dir.join("sub/.git")).unwrap();
    let mut known = namespace::Known::default();
    let found = known.scan(&dir);
    assert_eq!(found, vec![dir.join("sub/.git")]);
    known.git.extend(found);
    let since = std::time::SystemTime::now() - CLOCK_SLACK;
    // Made deep in an old directory, whose time is then set back: its ctime still says so.
    std::fs::write(dir.join("a/b/.git"), "gitdir: /elsewhere\n").unwrap();
    let old = std::fs::FileTimes::new().set_modified(std::time::UNIX_EPOCH);
    std::fs::File::open(dir.join("a/b"))
        .unwrap()
        .set_times(old)
        .unwrap();
    // And in a new directory.
    std::fs::create_dir_all(dir.join("new/deep/.git")).unwrap();
    let mut changed = known.changed_since(since);
    changed.sort();
    assert_eq!(
        changed,
        vec![dir.join("a/b/.git"), dir.join("new/deep/.git")]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
