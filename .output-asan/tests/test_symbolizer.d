.output-asan/tests/test_symbolizer.o: tests/test_symbolizer.c \
 user/elf_util.h user/util.h tests/helpers.h user/profile.h bpf/hsbpf.h \
 user/symbolizer.h user/profile.h
user/elf_util.h:
user/util.h:
tests/helpers.h:
user/profile.h:
bpf/hsbpf.h:
user/symbolizer.h:
user/profile.h:
