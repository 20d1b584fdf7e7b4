# fuzz/fuzz.mk - fuzz targets for raymond's input parsers (see fuzz/README.md).
# Included by the Makefile, which defines CORE, LUA_SRCS, PKG_CFLAGS and
# PKG_LIBS.
#
#   make fuzz                 build every target and run each for FUZZ_SECONDS
#   make fuzz FUZZ_SECONDS=60
#   make fuzz-build           only build them (build-fuzz/fuzz_NAME)
#
# The core is compiled again with clang, libFuzzer's coverage and the same
# sanitizers as `make check`, into build-fuzz/.  Each run works on a copy of
# fuzz/corpus/NAME, so the checked-in corpus never changes; any crash, leak,
# timeout or out-of-memory fails the make.

FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := tagparse claude frontmatter runstate archive journal termsafe bridge http
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -g -O1 -D_GNU_SOURCE $(FUZZ_SAN)
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
FUZZ_OBJS    := $(CORE:src/%.c=$(FUZZ_BUILD)/obj/%.o) $(FUZZ_BUILD)/obj/embedded.o

.PHONY: fuzz fuzz-build fuzz-deps fuzz-clean

fuzz: fuzz-build
	@sh fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-build: $(FUZZ_OBJS) $(FUZZ_BINS)

# The build's packages, then clang and libFuzzer when missing.
fuzz-deps: deps
	@sh fuzz/install-deps.sh $(FUZZ_CC)

# The core: coverage for libFuzzer, no main; warnings as the main build
# checks them (with gcc), not as errors.
$(FUZZ_BUILD)/obj/%.o: src/%.c $(wildcard src/*.h) | fuzz-deps $(FUZZ_BUILD)/obj
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Wall -Wextra \
	    $(PKG_CFLAGS) -Isrc -c -o $@ $<

$(FUZZ_BUILD)/gen/embedded.c: $(LUA_SRCS) tools/embed.sh | $(FUZZ_BUILD)/gen
	sh tools/embed.sh $(LUA_SRCS) > $@.tmp && mv $@.tmp $@

$(FUZZ_BUILD)/obj/embedded.o: $(FUZZ_BUILD)/gen/embedded.c | fuzz-deps $(FUZZ_BUILD)/obj
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Isrc -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(wildcard fuzz/*.h) $(wildcard src/*.h) \
    $(FUZZ_OBJS) | fuzz-deps
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Wall -Wextra -Werror \
	    $(PKG_CFLAGS) -Isrc -o $@ $< $(FUZZ_OBJS) $(PKG_LIBS) -lm

$(FUZZ_BUILD)/obj $(FUZZ_BUILD)/gen:
	mkdir -p $@

clean: fuzz-clean
fuzz-clean:
	rm -rf $(FUZZ_BUILD)
