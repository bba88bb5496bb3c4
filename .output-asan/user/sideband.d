.output-asan/user/sideband.o: user/sideband.c user/elf_util.h user/util.h \
 user/sideband.h user/profile.h
user/elf_util.h:
user/util.h:
user/sideband.h:
user/profile.h:
