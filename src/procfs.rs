//! What `/proc` says about a process group: whether all of it sleeps, and how much CPU it has
//! used. Both directions ask: serve, to tell when a command that asks questions has asked all
//! it will at once; the client, to tell a server still starting from one that will not answer.

/// Each process of `/proc` as (its process group, its state, its CPU time in ticks).
fn processes() -> impl Iterator<Item = (i32, String, u64)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|entry| {
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // pid (comm) state ppid pgrp ... utime stime: comm may hold anything, so read
            // after the last ')'.
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            let group = fields.get(2)?.parse().ok()?;
            let ticks =
                fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
            Some((group, fields.first()?.to_string(), ticks))
        })
}

/// Whether every process of `group` sleeps (or is gone): none runs or waits for the disk.
pub fn group_sleeps(group: i32) -> bool {
    processes()
        .filter(|(g, _, _)| *g == group)
        .all(|(_, state, _)| matches!(state.as_str(), "S" | "Z" | "X" | "T" | "t" | "I"))
}

/// The CPU time `group`'s living processes have used, in clock ticks.
pub fn group_cpu_ticks(group: i32) -> u64 {
    processes()
        .filter(|(g, _, _)| *g == group)
        .map(|(_, _, ticks)| ticks)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_group_uses_cpu_and_a_sleeping_one_sleeps() {
        use std::os::unix::process::CommandExt;
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .process_group(0)
            .spawn()
            .unwrap();
        let group = busy.id() as i32;
        let before = group_cpu_ticks(group);
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(group_cpu_ticks(group) > before);
        assert!(!group_sleeps(group));
        busy.kill().unwrap();
        busy.wait().unwrap();
        let mut idle = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let group = idle.id() as i32;
        assert!((0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            group_sleeps(group)
        }));
        idle.kill().unwrap();
        idle.wait().unwrap();
    }
}
