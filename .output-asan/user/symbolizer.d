.output-asan/user/symbolizer.o: user/symbolizer.c user/bblock.h \
 user/elf_image.h user/util.h user/elf_util.h bpf/hsbpf.h \
 user/symbolizer.h user/profile.h
user/bblock.h:
user/elf_image.h:
user/util.h:
user/elf_util.h:
bpf/hsbpf.h:
user/symbolizer.h:
user/profile.h:
