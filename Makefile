# raymond - build, test, check, bench.
#
#   make          build build/raymond (installs missing Debian packages first)
#   make test     build and run every test; ends with "N passed, N failed"
#   make check    the same tests with AddressSanitizer and UBSan
#   make demo     build and run the example workflow workflows/hello
#   make bench    run the benchmarks in bench/
#   make install  install raymond, its man page and completions (docs/install.md)

CC      ?= cc
BUILD   ?= build
PKGS    := lua5.4 lua5.4-cjson yaml-0.1 libuv libzip libcrypto libmicrohttpd
SAN     ?=
OPT     ?= -O2

# Recursive (=), not :=, so that pkg-config runs when a recipe is expanded,
# after the deps step has installed the packages it asks about.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# The file prefix map keeps the build's folder out of the binary (debug
# information, __FILE__): what is built here may be installed anywhere.
CFLAGS  += -std=c11 -Wall -Wextra -Werror -g $(OPT) -D_GNU_SOURCE $(SAN) \
	   -ffile-prefix-map=$(CURDIR)=.
LDFLAGS += $(SAN)

SRCS     := $(wildcard src/*.c)
MAINS    := src/main.c src/main_follow.c
CORE     := $(filter-out $(MAINS),$(SRCS))
OBJS     := $(BUILD)/obj/main.o $(CORE:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/embedded.o
# The follower of cluster jobs as a program of its own, with libc alone
# (src/main_follow.c): it starts once a launch, and starts 4 ms sooner so.
FOLLOW_OBJS := $(addprefix $(BUILD)/obj/,main_follow.o cmd_follow.o atomicfile.o buf.o ray.o)
CORE_OBJS:= $(CORE:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/embedded.o
LUA_SRCS := $(wildcard lua/raymond/*.lua lua/raymond/*/*.lua) $(wildcard hooks/*.lua)
WEB_SRCS := $(wildcard web/*.html web/*.js web/*.css)
UNIT     := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT:tests/unit/%.c=$(BUILD)/tests/%)

# The man page and the bash and zsh completions, which the binary being
# installed writes from its own command table (tools/gen/raymond/main.lua)
# when make install asks for them.
GEN      := $(BUILD)/gen/raymond.man $(BUILD)/gen/raymond.bash $(BUILD)/gen/raymond.zsh
GEN_SRCS := $(wildcard tools/gen/raymond/*.lua tools/gen/raymond/*/*.lua)

.PHONY: all deps test test-cluster check bench demo clean install install-strip uninstall
.DEFAULT_GOAL := all

all: deps $(BUILD)/raymond $(BUILD)/raymond-launch-follow $(BUILD)/tests/luarun $(UNIT_BIN) $(BUILD)/tests/fake-claude \
    $(BUILD)/tests/mkzip $(BUILD)/tests/faultfs.so $(BUILD)/tests/pty-run \
    $(BUILD)/tests/bridge-peer

# Installs what the build needs when it is missing; a no-op otherwise.
# Every compile and link names it as an order-only prerequisite, so under
# make -jN nothing runs the compiler before the packages are there.
deps:
	@sh tools/install-deps.sh

$(BUILD)/raymond: $(OBJS) | deps
	$(CC) $(LDFLAGS) -o $@ $(OBJS) $(PKG_LIBS) -lm

$(BUILD)/raymond-launch-follow: $(FOLLOW_OBJS) | deps
	$(CC) $(LDFLAGS) -o $@ $(FOLLOW_OBJS)

# Objects depend on the Makefile too: a change of flags compiles again.
$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h) Makefile | deps $(BUILD)/obj
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -c -o $@ $<

# The engine's Lua, the default hooks and the web page are compiled into the
# binary, the engine's as bytecode of the Lua it links (tools/embed.sh).
LUAC    ?= luac5.4
$(BUILD)/gen/embedded.c: $(LUA_SRCS) $(WEB_SRCS) tools/embed.sh | deps $(BUILD)/gen
	LUAC=$(LUAC) LUA_VERSION=$$(pkg-config --modversion lua5.4) \
	    sh tools/embed.sh $(LUA_SRCS) $(WEB_SRCS) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/embedded.o: $(BUILD)/gen/embedded.c Makefile | deps $(BUILD)/obj
	$(CC) $(CFLAGS) -Isrc -c -o $@ $<

# RAYMOND_LUA_DIR lets tools/gen's main.lua stand in for the engine's, so
# the binary just built writes these from the tables compiled into it.
$(BUILD)/gen/raymond.%: $(BUILD)/raymond $(GEN_SRCS) | $(BUILD)/gen
	RAYMOND_LUA_DIR=tools/gen $(BUILD)/raymond $* > $@.tmp && mv $@.tmp $@

# Unit tests link the core.  The atomic file test interposes the system
# calls it makes fail.
WRAP_test_atomicfile := -Wl,--wrap=write,--wrap=fsync,--wrap=rename,--wrap=close
# The interrupt test counts a signal after the N-th read or write it sees.
WRAP_test_interrupt := -Wl,--wrap=read,--wrap=pread,--wrap=write
$(BUILD)/tests/test_%: tests/unit/test_%.c tests/unit/testlib.h $(CORE_OBJS) | deps $(BUILD)/tests
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -o $@ $< $(CORE_OBJS) \
	    $(WRAP_test_$*) $(LDFLAGS) $(PKG_LIBS) -lm

$(BUILD)/tests/luarun: tests/unit/luarun.c $(CORE_OBJS) | deps $(BUILD)/tests
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -o $@ $< $(CORE_OBJS) \
	    $(LDFLAGS) $(PKG_LIBS) -lm

# A fast stand-in for the Claude Code CLI, for the CLI tests (libc only).
$(BUILD)/tests/fake-claude: tests/fake/fake_claude.c | deps $(BUILD)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)

# Runs a command on a pseudo-terminal, for the live view's tests.
$(BUILD)/tests/pty-run: tests/fake/pty-run.c | deps $(BUILD)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) -lutil

# The other end of the hook bridge's socket, byte by byte (libc only).
$(BUILD)/tests/bridge-peer: tests/fake/bridge-peer.c | deps $(BUILD)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)

# Builds zip archives for the CLI tests; a fresh machine has no zip command.
$(BUILD)/tests/mkzip: tests/fake/mkzip.c | deps $(BUILD)/tests
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -o $@ $< $(LDFLAGS) $(PKG_LIBS)

# Makes write, fsync or rename fail on demand (LD_PRELOAD), for disk tests.
# Built without sanitizers: it is preloaded into the binary under test.
$(BUILD)/tests/faultfs.so: tests/fault/faultfs.c | deps $(BUILD)/tests
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared -o $@ $< -ldl

$(BUILD)/obj $(BUILD)/gen $(BUILD)/tests:
	mkdir -p $@

test: all
	@bash tests/run.sh $(BUILD)

# `make test-cluster` tests the launchers against a real single-node Slurm
# (and a local sshd) it installs from Debian packages and starts without
# systemd; see tests/cluster/run.sh.
test-cluster: all
	@sh tests/cluster/install-deps.sh
	@bash tests/cluster/run.sh $(BUILD)

check:
	@$(MAKE) --no-print-directory BUILD=build-san OPT=-O1 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test
	@$(MAKE) --no-print-directory fuzz

# `make fuzz` builds the fuzz targets with clang and libFuzzer and runs each
# for FUZZ_SECONDS (default 20); see fuzz/README.md.
include fuzz/fuzz.mk

bench: all
	@sh bench/run.sh $(BUILD)

demo: all
	cd workflows/hello && ../../$(BUILD)/raymond . --input "world"

# Installation, with the GNU names: make install PREFIX=/usr DESTDIR=/tmp/stage.
# The binary needs nothing else at run time: the engine's Lua and the
# default hooks are compiled into it.  raymond-launch-follow beside it
# makes cluster launches start sooner; without it they still work.  The
# copies under $(DATADIR)/raymond are there to read, to copy and adapt a
# default hook, or to point RAYMOND_LUA_DIR at.  uninstall removes exactly these files, then the
# folders of raymond's own that are left empty.
PREFIX      = /usr/local
BINDIR      = $(PREFIX)/bin
DATADIR     = $(PREFIX)/share
MANDIR      = $(DATADIR)/man
MAN1DIR     = $(MANDIR)/man1
DOCDIR      = $(DATADIR)/doc/raymond
BASHCOMPDIR = $(DATADIR)/bash-completion/completions
ZSHCOMPDIR  = $(DATADIR)/zsh/site-functions
INSTALL         = install
INSTALL_PROGRAM = $(INSTALL) -m 755
INSTALL_DATA    = $(INSTALL) -m 644

SHARE    := $(DESTDIR)$(DATADIR)/raymond
LUA_MODS := $(filter lua/%,$(LUA_SRCS))
LUA_DIRS := $(sort $(dir $(LUA_MODS)))
HOOKS    := $(filter hooks/%,$(LUA_SRCS))
DOCS     := README.md $(wildcard docs/*.md)

install: $(BUILD)/raymond $(BUILD)/raymond-launch-follow $(GEN)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(BASHCOMPDIR) \
	    $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(DOCDIR) $(SHARE)/hooks $(addprefix $(SHARE)/,$(LUA_DIRS))
	$(INSTALL_PROGRAM) $(BUILD)/raymond $(DESTDIR)$(BINDIR)/raymond
	$(INSTALL_PROGRAM) $(BUILD)/raymond-launch-follow $(DESTDIR)$(BINDIR)/raymond-launch-follow
	$(INSTALL_DATA) $(BUILD)/gen/raymond.man $(DESTDIR)$(MAN1DIR)/raymond.1
	$(INSTALL_DATA) $(BUILD)/gen/raymond.bash $(DESTDIR)$(BASHCOMPDIR)/raymond
	$(INSTALL_DATA) $(BUILD)/gen/raymond.zsh $(DESTDIR)$(ZSHCOMPDIR)/_raymond
	$(INSTALL_DATA) $(HOOKS) $(SHARE)/hooks
	for d in $(LUA_DIRS); do $(INSTALL_DATA) $$d*.lua $(SHARE)/$$d || exit 1; done
	$(INSTALL_DATA) $(DOCS) $(DESTDIR)$(DOCDIR)

install-strip:
	$(MAKE) INSTALL_PROGRAM='$(INSTALL_PROGRAM) -s' install

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/raymond $(DESTDIR)$(BINDIR)/raymond-launch-follow $(DESTDIR)$(MAN1DIR)/raymond.1 \
	    $(DESTDIR)$(BASHCOMPDIR)/raymond $(DESTDIR)$(ZSHCOMPDIR)/_raymond \
	    $(addprefix $(SHARE)/,$(HOOKS) $(LUA_MODS)) $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOCS)))
	@for d in $$(printf '%s\n' $(addprefix $(SHARE)/,$(LUA_DIRS:%/=%) lua hooks) | sort -r) \
	    $(SHARE) $(DESTDIR)$(DOCDIR); do \
	    [ ! -d $$d ] || rmdir $$d 2>/dev/null || echo "raymond: kept $$d: it holds files make install did not put there" >&2; \
	done

clean:
	rm -rf build build-san
