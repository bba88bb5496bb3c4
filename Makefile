# hsbpf build: bpf/*.bpf.c -> .bpf.o -> bpftool skeletons -> libhsbpf.a -> hsbpf and the tests.
# Everything generated lives under $(OUTPUT); `make V=1` shows full commands.

OUTPUT ?= .output
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config

ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

LIBS_PC := libbpf libelf libdw ncursesw
PC_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(LIBS_PC) 2>/dev/null)
PC_LIBS := $(shell $(PKG_CONFIG) --libs $(LIBS_PC) 2>/dev/null)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror -Wno-missing-field-initializers
# `make SANITIZE=1` builds everything under .output-asan with ASan and UBSan
ifeq ($(SANITIZE),1)
OUTPUT := .output-asan
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
BIN := $(OUTPUT)/hsbpf
else
BIN := hsbpf
endif
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP \
	-I$(OUTPUT) -Ibpf -Iuser -Iref $(PC_CFLAGS)
LDLIBS := $(PC_LIBS) -lcapstone -lz -lm -lpthread

BPF_CFLAGS := -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) \
	-Ivmlinux -Ibpf -I$(OUTPUT)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

# user/accuracy/: the accuracy harness (truth, the reference run, eval, the experiments), the
# instrument that measures the profiler, in the same library
LIB_SRCS := $(filter-out user/main.c,$(wildcard user/*.c user/accuracy/*.c))
# the virtual PMU's timing model: built into the plugin, and into the library for the tool
# (parameter checks) and the tests
TIMING_SRCS := ref/timing.c ref/timing_decode.c
LIB_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(LIB_SRCS)) \
	$(patsubst ref/%.c,$(OUTPUT)/ref/%.o,$(TIMING_SRCS))
LIB := $(OUTPUT)/libhsbpf.a

TEST_SRCS := $(wildcard tests/test_*.c tests/accuracy/test_*.c) tests/helpers.c tests/callgrind.c
TEST_OBJS := $(patsubst tests/%.c,$(OUTPUT)/tests/%.o,$(TEST_SRCS))
TEST_BIN := $(OUTPUT)/tests/hsbpf-tests

REF_PLUGIN := $(OUTPUT)/ref/libhsbpf-ref.so
REF_CRASH := $(OUTPUT)/ref/libhsbpf-crash.so

FIXTURE_SRCS := $(wildcard tests/fixtures/*.c)
FIXTURES := $(patsubst tests/fixtures/%.c,$(OUTPUT)/fixtures/%,$(FIXTURE_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(WORKLOAD_SRCS))

.DELETE_ON_ERROR:
.SECONDARY: $(BPF_OBJS)
.PHONY: all clean test check test-asan stress-test bench bench-periods bench-overhead bench-truth bench-top bench-stat bench-stacks vmlinux fixtures deps demo fuzz

all: $(BIN) fixtures $(REF_PLUGIN) $(REF_CRASH)

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/user $(OUTPUT)/user/accuracy $(OUTPUT)/tests $(OUTPUT)/tests/accuracy \
		$(OUTPUT)/fixtures:
	$(Q)mkdir -p $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o | $(OUTPUT)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Only the skeleton users need the skeletons, but generating them first is cheap and keeps
# the dependency files honest on a clean tree.
$(LIB_OBJS): | $(SKELS)
$(OUTPUT)/user/%.o: user/%.c | $(OUTPUT)/user $(OUTPUT)/user/accuracy
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/ref/%.o: ref/%.c ref/timing.h
	$(Q)mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BIN): $(OUTPUT)/user/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The reference collector: a QEMU plugin, loaded by `hsbpf truth`; never sanitized, since it
# is loaded into QEMU, which is not
$(REF_PLUGIN): ref/hsbpf-ref.c ref/qemu-plugin-api.h $(TIMING_SRCS) ref/timing.h
	$(Q)mkdir -p $(dir $@)
	$(call msg,PLUGIN,$@)
	$(Q)$(CC) -O2 -g $(WARN) -std=gnu11 -D_GNU_SOURCE -fPIC -shared -fvisibility=hidden \
		-Iref ref/hsbpf-ref.c $(TIMING_SRCS) -o $@ -lpthread -lcapstone

$(REF_CRASH): ref/hsbpf-crash.c
	$(Q)mkdir -p $(dir $@)
	$(call msg,PLUGIN,$@)
	$(Q)$(CC) -O2 $(WARN) -fPIC -shared $< -o $@

# Fixtures: small programs with known hot spots; -O1 and noinline keep their shape.
$(OUTPUT)/fixtures/%: tests/fixtures/%.c | $(OUTPUT)/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@ -lpthread -lm

# Stack fixtures: -O2 without frame pointers, as Debian builds programs and libraries
STACK_FIXTURES := $(OUTPUT)/fixtures/stacks/callpaths $(OUTPUT)/fixtures/stacks/libstacks.so
STACK_CFLAGS := -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror

$(OUTPUT)/fixtures/stacks/libstacks.so: tests/fixtures/stacks/libstacks.c tests/fixtures/stacks/stacks.h
	$(Q)mkdir -p $(dir $@)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(STACK_CFLAGS) -fPIC -shared $< -o $@

$(OUTPUT)/fixtures/stacks/callpaths: tests/fixtures/stacks/callpaths.c tests/fixtures/stacks/stacks.h \
		$(OUTPUT)/fixtures/stacks/libstacks.so
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(STACK_CFLAGS) $< -o $@ -L$(dir $@) -lstacks -Wl,-rpath,'$$ORIGIN' -lpthread

# C++ fixtures (exceptions): -O1 as the C ones
CXX_FIXTURES := $(OUTPUT)/fixtures/cct_exc
$(OUTPUT)/fixtures/%: tests/fixtures/%.cc | $(OUTPUT)/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CXX) -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@

fixtures: $(FIXTURES) $(WORKLOADS) $(STACK_FIXTURES) $(CXX_FIXTURES)

# The seed paper's kernels: plain -O2, as a benchmark would be built
$(OUTPUT)/workloads/%: tests/workloads/%.c
	$(Q)mkdir -p $(dir $@)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -O2 -g -Wall -Wextra -Werror $< -o $@

$(TEST_OBJS): | $(SKELS)
$(OUTPUT)/tests/%.o: tests/%.c | $(OUTPUT)/tests $(OUTPUT)/tests/accuracy
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -c $< -o $@

# the real LBR recordings: shared/ beside the checkout (CI, the workplace), or LBR_DATA=DIR
LBR_DATA ?= $(abspath $(CURDIR)/../shared/data/lbr)

# one binary for every suite, so that Criterion prints one synthesis
$(TEST_BIN): $(TEST_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcriterion -o $@

# `make test`: build, then run every suite; live suites need root and the fixtures.
test: $(BIN) $(FIXTURES) $(WORKLOADS) $(STACK_FIXTURES) $(CXX_FIXTURES) $(TEST_BIN) $(REF_PLUGIN) $(REF_CRASH)
	$(Q)LBR_DATA=$(LBR_DATA) HSBPF=$(CURDIR)/$(BIN) FIXTURES=$(CURDIR)/$(OUTPUT)/fixtures OUTPUT=$(CURDIR)/$(OUTPUT) \
		$(TEST_BIN) --jobs 1 $(TEST_ARGS)

# the live suites N times beside CPU hogs on the other cores: pass counts per test
N ?= 10
stress-test: $(BIN) $(FIXTURES) $(WORKLOADS) $(STACK_FIXTURES) $(CXX_FIXTURES) $(TEST_BIN) $(REF_PLUGIN) $(REF_CRASH)
	$(Q)LBR_DATA=$(LBR_DATA) HSBPF=$(CURDIR)/$(BIN) FIXTURES=$(CURDIR)/$(OUTPUT)/fixtures OUTPUT=$(CURDIR)/$(OUTPUT) \
		TEST_BIN=$(TEST_BIN) scripts/stress-test.sh $(N)

# the whole suite again with ASan and UBSan (slower; separate output folder)
test-asan:
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 test

# what CI runs: the suite, then the suite under the sanitizers
check:
	$(Q)$(MAKE) --no-print-directory test
	$(Q)$(MAKE) --no-print-directory test-asan

# the README's first command: record the bundled workload and show the report
demo: $(BIN) $(FIXTURES)
	./$(BIN) record -o $(OUTPUT)/demo.data -- $(OUTPUT)/fixtures/hot7030 2
	./$(BIN) report -i $(OUTPUT)/demo.data
	./$(BIN) report -i $(OUTPUT)/demo.data --sort line --limit 5

$(OUTPUT)/bench/floor: bench/floor.c $(LIB)
	$(Q)mkdir -p $(dir $@)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB) $(LDLIBS) -o $@

bench: bench-overhead bench-truth bench-top bench-periods bench-stat bench-stacks

# call stacks beside perf and bpftrace (bench/stacks.sh); the workload built as Debian builds
$(OUTPUT)/bench/deep: bench/deep.c
	$(Q)mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -fomit-frame-pointer $< -o $@

$(OUTPUT)/bench/unwind_tables: bench/unwind_tables.c $(LIB)
	$(Q)mkdir -p $(dir $@)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB) $(LDLIBS) -o $@

bench-stacks: $(BIN) $(OUTPUT)/bench/deep $(OUTPUT)/bench/unwind_tables
	$(Q)HSBPF=$(CURDIR)/$(BIN) OUTPUT=$(CURDIR)/$(OUTPUT) DEEP=$(CURDIR)/$(OUTPUT)/bench/deep \
		TABLES=$(CURDIR)/$(OUTPUT)/bench/unwind_tables bench/stacks.sh

bench-overhead: $(BIN) $(FIXTURES) $(OUTPUT)/bench/floor
	$(Q)HSBPF=$(CURDIR)/$(BIN) FIXTURES=$(CURDIR)/$(OUTPUT)/fixtures OUTPUT=$(CURDIR)/$(OUTPUT) \
		bench/overhead.sh

$(OUTPUT)/bench/sled: bench/sled.S
	$(Q)mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) -DSLED_NOPS=64 $< -o $@

bench-top: $(BIN) $(OUTPUT)/bench/sled
	$(Q)HSBPF=$(CURDIR)/$(BIN) OUTPUT=$(CURDIR)/$(OUTPUT) bench/top.sh

bench-periods: $(BIN) $(FIXTURES)
	$(Q)HSBPF=$(CURDIR)/$(BIN) FIXTURES=$(CURDIR)/$(OUTPUT)/fixtures bench/periods.sh

# counting: ns per call of enable, disable, read; per-cgroup counting in the kernel against
# perf's per-cgroup events on a context-switch-heavy workload
$(OUTPUT)/bench/stat_cost: bench/stat_cost.c $(LIB)
	$(Q)mkdir -p $(dir $@)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(OUTPUT)/bench/pingpong: bench/pingpong.c
	$(Q)mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror $< -o $@

bench-stat: $(BIN) $(OUTPUT)/bench/stat_cost $(OUTPUT)/bench/pingpong
	$(Q)HSBPF=$(CURDIR)/$(BIN) OUTPUT=$(CURDIR)/$(OUTPUT) bench/stat.sh

bench-truth: $(BIN) $(FIXTURES) $(REF_PLUGIN) $(REF_CRASH)
	$(Q)HSBPF=$(CURDIR)/$(BIN) FIXTURES=$(CURDIR)/$(OUTPUT)/fixtures OUTPUT=$(CURDIR)/$(OUTPUT) \
		bench/truth.sh

# libFuzzer on the perf.data reader; the corpus is kept in tests/fuzz/corpus, minimized: the
# run's new inputs go to a scratch folder, then -merge=1 keeps only the inputs that add
# coverage, into a fresh folder that replaces the corpus (a failed merge leaves it as it was)
FUZZ_SECONDS ?= 60
FUZZ_CORPUS := tests/fuzz/corpus
$(OUTPUT)/fuzz_perf_data: tests/fuzz/fuzz_perf_data.c user/perf_data.c user/file_format.c user/util.c
	$(Q)mkdir -p $(dir $@)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iuser -Ibpf $^ -lz -o $@

# ... and on the unwind table builder; its corpus is kept in tests/fuzz/unwind-corpus
$(OUTPUT)/fuzz_unwind_table: tests/fuzz/fuzz_unwind_table.c user/unwind_table.c user/util.c
	$(Q)mkdir -p $(dir $@)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iuser -Ibpf $^ -ldw -lelf -lz -lm -o $@

# Each fuzzer runs, then its corpus is minimized in place (libFuzzer's -merge).
define fuzz_run
	$(Q)rm -rf $(OUTPUT)/fuzz-new $(OUTPUT)/fuzz-min && mkdir -p $(OUTPUT)/fuzz-new $(OUTPUT)/fuzz-min
	$(1) -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=2 -max_len=65536 $(OUTPUT)/fuzz-new $(2)
	$(1) -merge=1 -close_fd_mask=2 -max_len=65536 $(OUTPUT)/fuzz-min $(2) $(OUTPUT)/fuzz-new
	$(Q)rm -rf $(2) && mv $(OUTPUT)/fuzz-min $(2) && rm -rf $(OUTPUT)/fuzz-new
	$(Q)echo "fuzz: $$(ls $(2) | wc -l) inputs in $(2)"
endef

fuzz: $(OUTPUT)/fuzz_perf_data $(OUTPUT)/fuzz_unwind_table
	$(call fuzz_run,$(OUTPUT)/fuzz_perf_data,$(FUZZ_CORPUS))
	$(call fuzz_run,$(OUTPUT)/fuzz_unwind_table,tests/fuzz/unwind-corpus)

# Regenerate the committed vmlinux.h from this machine's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

# Install the Debian packages the build, the tests and the benchmark need.
deps:
	$(Q)scripts/install-deps.sh

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf .output .output-asan hsbpf

-include $(wildcard $(OUTPUT)/user/*.d $(OUTPUT)/user/accuracy/*.d $(OUTPUT)/tests/*.d \
	$(OUTPUT)/tests/accuracy/*.d $(OUTPUT)/ref/*.d)
