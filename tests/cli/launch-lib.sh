# Helpers for the tests of launchers (docs/cluster.md), sourced after lib.sh.
#
#   the fake ssh and kubectl of tests/fake/launch come first on PATH
#   box_config   the project's config defines the launcher box: ssh to build1

export PATH="${TESTS_TOP:?}/tests/fake/launch:$PATH"

box_config() {
	mkdir -p .raymond &&
	printf "raymond:\n  launchers:\n    box:\n      base: ssh\n      host: build1\n" >.raymond/config.yaml
}
