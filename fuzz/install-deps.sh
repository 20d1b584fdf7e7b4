#!/bin/sh
# Install what the fuzz targets need, if any is missing: clang 14 with
# libFuzzer and the sanitizer runtimes (libclang-rt-14-dev), and
# llvm-symbolizer for readable stack traces.  Like tools/install-deps.sh
# (which installs the build's own packages) it prints nothing when
# everything is present.
#
# usage: fuzz/install-deps.sh [CC]     (default clang-14)
set -e

cc=${1:-clang-14}
need=""

# Can CC link a libFuzzer target with ASan and UBSan?
works() {
	command -v "$cc" >/dev/null 2>&1 || return 1
	dir=$(mktemp -d "${TMPDIR:-/tmp}/raymond-fuzzdeps.XXXXXX") || return 1
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
	    '{ (void)d; (void)n; return 0; }' > "$dir/t.c"
	"$cc" -fsanitize=fuzzer,address,undefined -o "$dir/t" "$dir/t.c" \
	    >/dev/null 2>&1
	ok=$?
	rm -rf "$dir"
	return $ok
}

works || need="clang-14 libclang-rt-14-dev"
[ -x /usr/lib/llvm-14/bin/llvm-symbolizer ] ||
    command -v llvm-symbolizer >/dev/null 2>&1 || need="$need llvm-14"

[ -n "$need" ] || exit 0
# shellcheck disable=SC2086
sh "$(dirname "$0")/../tools/apt-install.sh" fuzzing $need
if ! works; then
	echo "raymond: error: $cc cannot build libFuzzer targets (-fsanitize=fuzzer,address,undefined)" >&2
	echo "hint: install clang 14 and libclang-rt-14-dev, or run: make fuzz FUZZ_CC=clang" >&2
	exit 1
fi
