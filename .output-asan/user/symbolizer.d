.output-asan/user/symbolizer.o: user/symbolizer.c user/elf_util.h \
 user/util.h bpf/hsbpf.h user/symbolizer.h user/profile.h
user/elf_util.h:
user/util.h:
bpf/hsbpf.h:
user/symbolizer.h:
user/profile.h:
