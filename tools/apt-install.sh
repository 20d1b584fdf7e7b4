#!/bin/sh
# Install Debian packages for the build or its tools, as root or through
# sudo; without either, say which command to run.
#
# usage: tools/apt-install.sh WHAT PACKAGE...   (WHAT names them in messages)
set -e

what=$1
shift
echo "raymond: installing missing $what packages: $*" >&2
if [ "$(id -u)" = 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "raymond: error: $what packages missing: $*" >&2
	echo "hint: run as root: apt-get install -y $*" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
