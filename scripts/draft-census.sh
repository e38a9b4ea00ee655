#!/usr/bin/env bash
# Counts how many of the CLIs installed here `ferry serve init` drafts into a manifest that
# loads: every program in /usr/bin whose `--help` prints a usage or option list.
#   scripts/draft-census.sh [FERRY] [DIR]     (FERRY: target/debug/ferry; DIR: /usr/bin)
# Prints one line per CLI (ok, refused = exit 2 with a reason, BUG = anything else) and a
# total. Help is read with stdin closed, in a fresh temporary directory, 5 seconds at most.
set -u
ferry=$(realpath "${1:-target/debug/ferry}")
dir=${2:-/usr/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# Programs whose help is not asked: they act on the machine whatever their arguments say.
skip='^(reboot|shutdown|halt|poweroff|init|telinit|runlevel|systemctl|login|su|sudo|passwd|chsh|chfn|newgrp|sg|X|Xorg|yes|cat|tee|ed|vi|vim|ex|less|more|top|watch)$'
total=0 ok=0 refused=0 bug=0
for path in "$dir"/*; do
  name=$(basename "$path")
  [ -x "$path" ] && [ -f "$path" ] || continue
  [[ $name =~ $skip ]] && continue
  help=$(timeout -k 1 5 "$path" --help </dev/null 2>&1 | head -c 65536 | tr -d '\0')
  grep -qiE '(usage|^ *-[a-zA-Z-])' <<<"$help" || continue
  total=$((total + 1))
  HOME=$work timeout -k 1 60 "$ferry" serve init "$path" </dev/null >draft.toml 2>err.txt
  code=$?
  case $code in
    0) ok=$((ok + 1)); echo "ok       $name" ;;
    2) refused=$((refused + 1)); echo "refused  $name: $(head -1 err.txt)" ;;
    *) bug=$((bug + 1)); echo "BUG($code)  $name: $(head -1 err.txt)" ;;
  esac
done
echo "drafted and loaded: $ok of $total CLIs with a --help ($refused refused with a reason, $bug failed)"
