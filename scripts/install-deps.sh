#!/usr/bin/env bash
# Install the Debian packages hsbpf needs to build, test and benchmark, when any is missing.
# Debian 12 (bookworm); run as root. Quiet when everything is already there.
set -euo pipefail

pkgs=(
	make gcc g++ clang llvm pkg-config binutils
	libbpf-dev bpftool libelf-dev libdw-dev libdebuginfod-dev debuginfod zlib1g-dev libzstd-dev
	libcriterion-dev libcapstone-dev libncurses-dev libiberty-dev qemu-user valgrind tmux
	gnuplot-nox sqlite3 bzip2 xz-utils gzip time python3
	linux-perf bpftrace libc6-dbg python3.11 python3.11-dbg gdb openjdk-17-jdk-headless
	heaptrack zstd libjemalloc2 libtcmalloc-minimal4 musl-tools libbpf-tools jq
	libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libcurl4-openssl-dev curl openssl golang-go chromium nodejs
)
# npm comes with NodeSource's nodejs, which conflicts with Debian's npm package
command -v npm >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# the flame graph pages' browser tests drive chromium with playwright-core (npm, pinned by
# the committed package-lock.json, into the git-ignored tests/browser/node_modules)
browser_deps() {
	local dir
	dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/browser"
	if [ ! -e "$dir/node_modules/.package-lock.json" ] ||
	   [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
	fi
}

if [ ${#missing[@]} -eq 0 ]; then
	browser_deps
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
browser_deps
