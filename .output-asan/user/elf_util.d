.output-asan/user/elf_util.o: user/elf_util.c user/elf_util.h user/util.h
user/elf_util.h:
user/util.h:
