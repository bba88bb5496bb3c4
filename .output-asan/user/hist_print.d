.output-asan/user/hist_print.o: user/hist_print.c user/bblock.h \
 user/elf_image.h user/util.h user/containers.h user/hist.h \
 user/profile.h user/symbolizer.h user/json_writer.h
user/bblock.h:
user/elf_image.h:
user/util.h:
user/containers.h:
user/hist.h:
user/profile.h:
user/symbolizer.h:
user/json_writer.h:
