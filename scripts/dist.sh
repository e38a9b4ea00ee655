#!/usr/bin/env bash
# Builds ferry's packages into target/dist/, from this machine and the package registries
# alone (DESIGN.md section 10):
#   ferry-VERSION-x86_64-linux.tar.gz   a static x86_64 Linux binary, the README and licenses
#   wheel/ferry_mcp-VERSION-py3-none-*.whl
#                                       the binary as a Python wheel (pip install / uvx ferry-mcp)
#   npm/ferry-mcp-VERSION.tgz, npm/ferry-mcp-linux-x64-VERSION.tgz
#                                       npm's main package (bin: ferry, ferry-mcp) and the
#                                       platform package it depends on (npx -y ferry-mcp)
#   ferry-VERSION-oci.tar               an OCI image archive built by buildah from Containerfile
# Needs cargo, python3, npm, buildah, file and ldd (buildah: apt-get install buildah).
# FERRY_SERVER_NAME sets the image's io.modelcontextprotocol.server.name label.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

# The names ferry ships under, the same as src/serve/registry.rs says.
PACKAGE=ferry-mcp
IMAGE=ghcr.io/ferry-mcp/ferry
SERVER_NAME=${FERRY_SERVER_NAME:-io.github.ferry-mcp/ferry}
TARGET=x86_64-unknown-linux-gnu
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
DIST=target/dist
WORK=target/dist-work

for tool in cargo python3 npm buildah file ldd; do
  if ! command -v "$tool" >/dev/null; then
    echo "error: scripts/dist.sh needs $tool" >&2
    [ "$tool" = buildah ] && echo "hint: apt-get install buildah (or run tests/fixtures/setup.sh)" >&2
    exit 1
  fi
done

rm -rf "$DIST" "$WORK"
mkdir -p "$DIST" "$WORK"

# 1. A static binary: glibc linked in (crt-static), so it runs on any x86_64 Linux, older
# glibc or none.
echo "dist: building the static release binary (cargo build --release --target $TARGET)" >&2
RUSTFLAGS='-C target-feature=+crt-static' cargo build --quiet --release --locked --target "$TARGET"
BIN=${CARGO_TARGET_DIR:-target}/$TARGET/release/ferry
described=$(file -b "$BIN")
case "$described" in
  *interpreter*) echo "error: $BIN is static but names a dynamic loader (it would crash): $described" >&2; exit 1 ;;
  *"statically linked"* | *"static-pie linked"*) ;;
  *) echo "error: $BIN is not static: $described" >&2; exit 1 ;;
esac
if ldd "$BIN" 2>&1 | grep -q '=>'; then
  echo "error: ldd lists shared libraries for $BIN" >&2
  exit 1
fi
ran=$("$BIN" --version)
case "$ran" in
  "ferry $VERSION"*) ;;
  *) echo "error: $BIN --version said: $ran" >&2; exit 1 ;;
esac

# 2. The archive: the binary with the README and the licenses.
stem=ferry-$VERSION-x86_64-linux
mkdir -p "$WORK/$stem"
cp "$BIN" README.md LICENSE-MIT LICENSE-APACHE "$WORK/$stem/"
tar -C "$WORK" --owner=0 --group=0 --numeric-owner -czf "$DIST/$stem.tar.gz" "$stem"

# 3. The wheel: the binary as a script (ferry), and ferry-mcp starting it (uvx ferry-mcp runs
# the command named after the package). The binary is static: it runs on glibc and musl.
mkdir -p "$DIST/wheel"
python3 - "$BIN" "$DIST/wheel" "$VERSION" "$SERVER_NAME" <<'PY'
import base64, hashlib, sys, zipfile
binary, out, version, server_name = sys.argv[1:5]
dist = "ferry_mcp"
tags = ["py3-none-manylinux_2_17_x86_64", "py3-none-manylinux2014_x86_64", "py3-none-musllinux_1_1_x86_64"]
platforms = ".".join(t.split("-", 2)[2] for t in tags)
wheel = f"{out}/{dist}-{version}-py3-none-{platforms}.whl"
info = f"{dist}-{version}.dist-info"
data = f"{dist}-{version}.data"
readme = open("README.md", encoding="utf-8").read()
metadata = "\n".join([
    "Metadata-Version: 2.1",
    "Name: ferry-mcp",
    f"Version: {version}",
    "Summary: Use any MCP server as CLI commands, expose CLIs as MCP servers, and measure what each costs in tokens.",
    "License: MIT OR Apache-2.0",
    "Classifier: License :: OSI Approved :: MIT License",
    "Classifier: License :: OSI Approved :: Apache Software License",
    "Classifier: Operating System :: POSIX :: Linux",
    "Description-Content-Type: text/markdown",
    "",
    # The MCP Registry finds its name in the description to prove the package is this server.
    f"<!-- mcp-name: {server_name} -->",
    "",
    readme,
])
shim = b'#!/bin/sh\n# ferry-mcp: the command uvx ferry-mcp runs; ferry sits beside it.\nexec "$(dirname "$(readlink -f "$0")")/ferry" "$@"\n'
files = [
    (f"{data}/scripts/ferry", open(binary, "rb").read(), 0o755),
    (f"{data}/scripts/ferry-mcp", shim, 0o755),
    (f"{info}/METADATA", metadata.encode(), 0o644),
    (f"{info}/WHEEL", ("Wheel-Version: 1.0\nGenerator: ferry scripts/dist.sh\nRoot-Is-Purelib: false\n"
                       + "".join(f"Tag: {t}\n" for t in tags)).encode(), 0o644),
    (f"{info}/licenses/LICENSE-MIT", open("LICENSE-MIT", "rb").read(), 0o644),
    (f"{info}/licenses/LICENSE-APACHE", open("LICENSE-APACHE", "rb").read(), 0o644),
]
record = []
for name, content, _ in files:
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    record.append(f"{name},sha256={digest},{len(content)}")
record.append(f"{info}/RECORD,,")
files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
    for name, content, mode in files:
        entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        entry.external_attr = (0o100000 | mode) << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(entry, content)
PY

# 4. npm: a platform package holding the binary (installed only where os and cpu match), and
# the main package whose bin starts it (the optional-dependencies pattern of Biome and Codex).
platform=$PACKAGE-linux-x64
mkdir -p "$WORK/npm/$platform/bin" "$WORK/npm/$PACKAGE/bin" "$DIST/npm"
cp "$BIN" "$WORK/npm/$platform/bin/ferry"
cp LICENSE-MIT LICENSE-APACHE "$WORK/npm/$platform/"
cp LICENSE-MIT LICENSE-APACHE README.md "$WORK/npm/$PACKAGE/"
cat > "$WORK/npm/$platform/package.json" <<JSON
{
  "name": "$platform",
  "version": "$VERSION",
  "description": "ferry's binary for Linux x64 (installed by the ferry-mcp package).",
  "license": "MIT OR Apache-2.0",
  "os": ["linux"],
  "cpu": ["x64"],
  "files": ["bin/ferry", "LICENSE-MIT", "LICENSE-APACHE"],
  "preferUnplugged": true
}
JSON
cat > "$WORK/npm/$PACKAGE/package.json" <<JSON
{
  "name": "$PACKAGE",
  "version": "$VERSION",
  "description": "Use any MCP server as CLI commands, expose CLIs as MCP servers, and measure what each costs in tokens.",
  "license": "MIT OR Apache-2.0",
  "mcpName": "$SERVER_NAME",
  "bin": {
    "ferry": "bin/ferry.js",
    "ferry-mcp": "bin/ferry.js"
  },
  "files": ["bin/ferry.js", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
  "engines": {"node": ">=16"},
  "optionalDependencies": {
    "$platform": "$VERSION"
  }
}
JSON
cat > "$WORK/npm/$PACKAGE/bin/ferry.js" <<'JS'
#!/usr/bin/env node
// Starts the ferry binary of this platform's package, passing arguments, standard streams,
// signals and the exit status through.
"use strict";
const { spawn } = require("node:child_process");
const platforms = { "linux x64": "ferry-mcp-linux-x64" };
const name = platforms[`${process.platform} ${process.arch}`];
if (!name) {
  console.error(`error: ferry has no build for ${process.platform} ${process.arch}`);
  console.error("hint: build it from source: cargo install --git https://github.com/ferry-mcp/ferry");
  process.exit(1);
}
let binary;
try {
  binary = require.resolve(`${name}/bin/ferry`);
} catch {
  console.error(`error: the package ${name} is not installed (optional dependencies were skipped?)`);
  console.error(`hint: npm install ${name}, or install without --no-optional / --omit=optional`);
  process.exit(1);
}
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (e) => {
  console.error(`error: cannot start ${binary}: ${e.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code);
  }
});
JS
chmod 755 "$WORK/npm/$PACKAGE/bin/ferry.js" "$WORK/npm/$platform/bin/ferry"
for package in "$platform" "$PACKAGE"; do
  (cd "$WORK/npm/$package" && npm pack --silent --pack-destination "$OLDPWD/$DIST/npm" >/dev/null)
done

# 5. The OCI image: buildah from the repository's Containerfile (FROM scratch: the static
# binary alone), written as an OCI archive. Storage stays under target/, nothing is pulled.
context=$WORK/image
mkdir -p "$context/rootfs/usr/local/bin" "$context/rootfs/tmp" "$context/rootfs/home/ferry" "$context/rootfs/srv/ferry"
chmod 1777 "$context/rootfs/tmp"
cp "$BIN" "$context/rootfs/usr/local/bin/ferry"
cp Containerfile "$context/"
store=(--root "$PWD/$WORK/buildah/root" --runroot "$PWD/$WORK/buildah/run" --storage-driver vfs)
tag=$IMAGE:$VERSION
buildah "${store[@]}" bud --quiet --isolation chroot --timestamp 0 \
  --build-arg "SERVER_NAME=$SERVER_NAME" --build-arg "VERSION=$VERSION" \
  -f "$context/Containerfile" -t "$tag" "$context" >/dev/null
buildah "${store[@]}" push --quiet "$tag" "oci-archive:$DIST/ferry-$VERSION-oci.tar:$tag" >/dev/null
buildah "${store[@]}" rmi --all >/dev/null 2>&1 || true
rm -rf "$WORK"

elapsed=$(($(date +%s) - started))
echo "dist: built in ${elapsed}s into $DIST/:"
(cd "$DIST" && find . -type f -printf '%P\n' | sort | while read -r f; do
  printf '  %-72s %8s KB\n' "$f" "$(( $(stat -c %s "$f") / 1024 ))"
done)
echo "dist: binary: $described"
echo "dist: image $tag, label io.modelcontextprotocol.server.name=$SERVER_NAME"
