#!/usr/bin/env bash
# Captures the `--help` of common CLIs into tests/fixtures/help/corpus/ (the corpus the draft
# tests read), with each CLI's version in VERSIONS. Run it where the CLIs are installed; the
# tests need only the captured texts.
set -u
cd "$(dirname "$0")/.."
out=tests/fixtures/help/corpus
mkdir -p "$out"
clis=(awk sh base64 basename cat chmod cmp comm cp curl cut date df diff dirname du env file find
  git grep gzip head jq join ls make md5sum mkdir mv nl node od paste python3 readlink realpath
  rg rm rsync sed seq sha256sum sort sqlite3 ssh stat tail tar tee touch tr uniq unzip wc wget
  xargs xz zip)
: >"$out/VERSIONS"
for cli in "${clis[@]}"; do
  command -v "$cli" >/dev/null || continue
  (cd /tmp && timeout 5 "$cli" --help </dev/null >"$OLDPWD/$out/$cli.txt" 2>&1)
  # The package that installed it (Debian), else what --version says.
  path=$(realpath "$(command -v "$cli")")
  package=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
  if [ -n "$package" ]; then
    version="$package $(dpkg-query -W -f '${Version}' "$package" 2>/dev/null)"
  else
    version=$(timeout 5 "$cli" --version </dev/null 2>&1 | head -1)
  fi
  printf '%s\t%s\n' "$cli" "$version" >>"$out/VERSIONS"
done
wc -l "$out/VERSIONS"
