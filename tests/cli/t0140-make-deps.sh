#!/bin/bash
# make -j8 on a machine without the build packages: nothing is compiled or
# linked before tools/install-deps.sh has installed them, and pkg-config is
# asked for the flags only after that.
#
# The machine is simulated on PATH: `pkg-config` knows no package (and
# fails) until the install has finished, `apt-get install` takes 2 s and
# then leaves the mark "installed", and the compiler is a stub that writes
# down, for each call, whether the mark was there, and creates its output.
# The real Makefile and tools/install-deps.sh run unchanged.
. "$(dirname "$0")/lib.sh"

fresh_machine() {
	mkdir -p bin
	cat >bin/pkg-config <<-EOS
	#!/bin/sh
	[ -e "$PWD/installed" ] || exit 1
	case " \$* " in
	*" --cflags "*) echo "-DPKG_CFLAGS_AFTER_INSTALL" ;;
	*" --libs "*) echo "-lpkg_libs_after_install" ;;
	esac
	EOS
	cat >bin/apt-get <<-EOS
	#!/bin/sh
	echo "apt-get \$*" >>"$PWD/apt.log"
	case "\$1" in install) sleep 2; touch "$PWD/installed" ;; esac
	EOS
	# Stands in for sudo when the test does not run as root.
	cat >bin/sudo <<-\EOS
	#!/bin/sh
	exec "$@"
	EOS
	cat >bin/cc <<-EOS
	#!/bin/sh
	if [ -e "$PWD/installed" ]; then when=after; else when=BEFORE; fi
	echo "\$when install: cc \$*" >>"$PWD/cc.log"
	while [ \$# -gt 1 ]; do
		if [ "\$1" = -o ]; then : >"\$2"; fi
		shift
	done
	EOS
	chmod +x bin/*
}

# make -j8 all into ./build on that machine, from the real source tree.
make_on_fresh_machine() {
	fresh_machine
	unset MAKEFLAGS MFLAGS MAKELEVEL
	PATH="$PWD/bin:$PATH" make -C "$TESTS_TOP" -j8 --no-print-directory \
		BUILD="$PWD/build" CC="$PWD/bin/cc" all >make.out 2>&1 ||
		{ cat make.out; return 1; }
}

test_expect_success 'make -j8 compiles and links nothing before the packages are installed' '
	make_on_fresh_machine &&
	test -e installed &&
	grep -c "^apt-get install" apt.log | grep -qx 1 &&
	test -e build/raymond &&
	! grep "^BEFORE" cc.log &&
	grep -q "^after install: cc .*-o $PWD/build/raymond " cc.log
'

test_expect_success 'every compile and link that uses pkg-config gets the flags of the installed packages' '
	make_on_fresh_machine &&
	n=$(ls "$TESTS_TOP"/src/*.c | wc -l) &&
	test "$(grep -c -- "-DPKG_CFLAGS_AFTER_INSTALL -Isrc -c -o $PWD/build/obj/" cc.log)" = "$n" &&
	grep -- "-o $PWD/build/raymond " cc.log | grep -q -- "-lpkg_libs_after_install" &&
	grep -- "-o $PWD/build/tests/luarun " cc.log | grep -q -- "-lpkg_libs_after_install"
'

test_done
